// The gateway's wire protocol (contract section 4), typed once: JSON text frames, the connect handshake,
// scopes, every method's params and result, every event's payload, and errors that tell a person what to
// do next. The server, the Control UI and the extension all take their types from here (z.infer), so this
// file imports nothing but zod and the shapes it shares with the rest of the server (contract/wire.ts, zod
// only): no node: module, so Vite and esbuild bundle it for the browser as it is.
//
// Its parts are in protocol/ (the frames, handshake and errors; what methods and events carry; the brake's and
// the audit trail's shapes), re-exported here; this file holds the method and event tables. Import from here.
import { z } from 'zod';
import {
  actionEntry,
  approvalRequest,
  approvalResolved,
  brakeState,
  evidenceItem,
  panelInput,
  sessionRow,
} from '../contract/wire.js';
import {
  auditEntry,
  auditExportParams,
  auditImageParams,
  auditPage,
  auditQueryParams,
  auditSession,
  brakeParams,
  fleetView,
  sessionKey,
} from './protocol/audit.js';
import type { connectParams, HelloOk, Scope } from './protocol/frames.js';
import {
  pairingRow,
  panelViewport,
  policySummary,
  relayCommand,
  screencastFrame,
  sessionsDelta,
  sharedTab,
  uiCommand,
} from './protocol/payloads.js';

// The shapes that cross more than the gateway's boundary are declared once in contract/wire.ts.
export { actionEntry, approvalRequest, approvalResolved, brakeState, evidenceItem, panelInput, sessionRow };
export type {
  ActionEntry,
  ApprovalRequest,
  ApprovalResolved,
  BrakeStatus,
  EvidenceItem,
  PanelInput,
  SessionRow,
} from '../contract/wire.js';

// The protocol's parts, each in its own file under protocol/: this file is the one import point for the
// server, the Control UI and the extension.
export * from './protocol/frames.js';
export * from './protocol/payloads.js';
export * from './protocol/audit.js';

// ---- methods: params and results ----

const none = z.strictObject({}).optional();
const ok = z.strictObject({ ok: z.literal(true) });

/**
 * Every method after connect: its params (checked by the gateway before the handler runs) and its result.
 * The gateway's method table (methods.ts) must name exactly these, with a handler returning the result.
 */
export const METHOD_SCHEMAS = {
  'sessions.list': { params: none, result: z.strictObject({ sessions: z.array(sessionRow) }) },
  'actions.list': {
    params: z.strictObject({ sessionKey: z.string().max(512).optional() }).optional(),
    result: z.strictObject({ actions: z.array(actionEntry) }),
  },
  'ui.command': { params: z.strictObject({ command: uiCommand }), result: ok },
  // link_token: the link this page held before a reload, asked back; else a new one.
  'agent.link': {
    params: z.strictObject({ link_token: z.string().min(1).max(128).optional() }).optional(),
    result: z.strictObject({ mcp_url: z.string(), link_token: z.string(), expires_at: z.string() }),
  },
  'approvals.list': { params: none, result: z.strictObject({ approvals: z.array(approvalRequest) }) },
  'approvals.resolve': { params: z.strictObject({ id: z.string().min(1).max(64), approve: z.boolean() }), result: ok },
  // A call held on any gateway of a shared audit store, decided from this console: the decision travels
  // through the database and the holding gateway acts on it; `by` names the operator and this gateway.
  // The brake for the fleet: stop, pause or resume every agent of every live gateway (or of the gateway
  // named, or the one session named); each gateway applies it to its own agents and its trail names `by`.
  'fleet.brake': {
    params: z.strictObject({
      verb: z.enum(['stop', 'pause', 'resume']),
      gateway: z.string().min(1).max(256).optional(),
      sessionKey: sessionKey.optional(),
    }),
    result: z.strictObject({ ok: z.literal(true), by: z.string(), gateways: z.number().int() }),
  },
  'fleet.resolve': {
    params: z.strictObject({
      gateway: z.string().min(1).max(256),
      id: z.string().min(1).max(64),
      approve: z.boolean(),
    }),
    result: z.strictObject({ ok: z.literal(true), by: z.string() }),
  },
  'terminal.open': {
    params: z.strictObject({
      cols: z.number().int().min(10).max(500).default(100),
      rows: z.number().int().min(4).max(200).default(30),
    }),
    result: z.strictObject({ terminalId: z.string(), pid: z.number().int() }),
  },
  // A hidden terminal keeps its shell (detached, killed after VERITY_TERMINAL_DETACH_MS); attach returns its output tail.
  'terminal.detach': { params: z.strictObject({ terminalId: z.string().max(64) }), result: ok },
  'terminal.attach': {
    params: z.strictObject({
      terminalId: z.string().max(64),
      cols: z.number().int().min(10).max(500).optional(),
      rows: z.number().int().min(4).max(200).optional(),
    }),
    result: z.strictObject({ terminalId: z.string(), pid: z.number().int(), tail: z.string() }),
  },
  'terminal.input': { params: z.strictObject({ terminalId: z.string(), data: z.string().max(65536) }), result: ok },
  'terminal.resize': {
    params: z.strictObject({
      terminalId: z.string(),
      cols: z.number().int().min(10).max(500),
      rows: z.number().int().min(4).max(200),
    }),
    result: ok,
  },
  'terminal.close': { params: z.strictObject({ terminalId: z.string() }), result: ok },
  'pairings.list': { params: none, result: z.strictObject({ pairings: z.array(pairingRow) }) },
  'policy.get': { params: none, result: policySummary },
  'pairings.revoke': { params: z.strictObject({ id: z.string().min(1).max(64) }), result: ok },
  'browser.tabs': {
    params: z.strictObject({ sessionKey: z.string().max(512).optional() }).optional(),
    result: z.strictObject({
      tabs: z.array(z.strictObject({ tab_id: z.string(), url: z.string(), title: z.string() })),
    }),
  },
  'tabs.assign': {
    params: z.strictObject({ tabId: z.string().min(1).max(128), sessionKey: z.string().min(1).max(512) }),
    result: z.strictObject({ ok: z.literal(true), tabId: z.string(), sessionKey: z.string() }),
  },
  'browser.screencast.start': {
    params: z.strictObject({
      tab_id: z.string().optional(),
      sessionKey: z.string().max(512).optional(),
      viewport: panelViewport.optional(),
    }),
    result: z.strictObject({
      tab_id: z.string(),
      url: z.string(),
      title: z.string(),
      /** Whose tab the panel shows: the session driving it (its label and agent), or null for a tab no session drives. */
      owner: z
        .strictObject({
          sessionKey: z.string(),
          session: z.string().nullable(),
          client: z.string(),
          transport: z.string(),
        })
        .nullable()
        .optional(),
    }),
  },
  'browser.screencast.resize': { params: z.strictObject({ viewport: panelViewport }), result: ok },
  // The operator's URL bar: history steps, or an http(s)/about:blank address.
  'browser.navigate': {
    params: z.strictObject({
      tab_id: z.string().min(1).max(128),
      action: z.enum(['back', 'forward', 'reload', 'go']),
      url: z.string().max(8192).optional(),
    }),
    result: z.strictObject({ ok: z.literal(true), url: z.string().optional() }),
  },
  'browser.screencast.stop': { params: none, result: ok },
  'browser.input': { params: panelInput, result: ok },
  // The extension relay (cap tab-relay): shared tabs, command results, debugger events.
  'relay.tabs': {
    params: z.strictObject({ tabs: z.array(sharedTab).max(500) }),
    result: z.strictObject({ shared: z.number().int() }),
  },
  // `code` (optional) says what a failure means for delivery: not_delivered = it never reached the page.
  'relay.result': {
    params: z.strictObject({
      id: z.string().min(1).max(128),
      result: z.unknown().optional(),
      error: z.string().max(65536).optional(),
      code: z.enum(['not_delivered']).optional(),
    }),
    result: ok,
  },
  'relay.event': {
    params: z.strictObject({
      targetId: z.string().min(1).max(128),
      sessionId: z.string().max(128).optional(),
      method: z.string().min(1).max(128),
      params: z.unknown().optional(),
    }),
    result: ok,
  },
  // The brake (scope operator.write): the agent's brake state after the change.
  'sessions.stop': { params: brakeParams, result: brakeState },
  'sessions.pause': { params: brakeParams, result: brakeState },
  'sessions.resume': { params: brakeParams, result: brakeState },
  // As if the agent had called end_session.
  'sessions.end': {
    params: brakeParams,
    result: z.strictObject({ ok: z.literal(true), sessionKey: z.string() }),
  },
  // The audit trail (scope operator.read).
  'audit.query': { params: auditQueryParams, result: auditPage },
  'audit.sessions': {
    params: none,
    result: z.strictObject({
      sessions: z.array(auditSession),
      bytes: z.number().int(),
      /** The cap (--audit-max-mb) and one session's share of it. */
      max_bytes: z.number().int(),
      share_bytes: z.number().int(),
      dir: z.string().nullable(),
    }),
  },
  // Every gateway's sessions, with a shared audit store (scope operator.read).
  'fleet.sessions': { params: none, result: fleetView },
  'audit.image': {
    params: auditImageParams,
    result: z.strictObject({ mimeType: z.literal('image/png'), data: z.string() }),
  },
  'audit.export': {
    params: auditExportParams,
    result: z.strictObject({ url: z.string(), filename: z.string(), expiresInMs: z.number().int() }),
  },
} satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

export type Method = keyof typeof METHOD_SCHEMAS;
/** What a client sends (defaults not yet applied: `terminal.open` may leave cols and rows out). */
export type Params<M extends Method> = z.input<(typeof METHOD_SCHEMAS)[M]['params']>;
/** What the handler receives (checked, defaults applied). */
export type ParsedParams<M extends Method> = z.output<(typeof METHOD_SCHEMAS)[M]['params']>;
export type Result<M extends Method> = z.infer<(typeof METHOD_SCHEMAS)[M]['result']>;

/** The connect request is special (it comes first, and only once); its types line up with the others'. */
export interface ConnectMethod {
  params: z.input<typeof connectParams>;
  result: HelloOk;
}

// ---- events ----

/** Every event: the scope a connection needs to hear it, and its payload. A connection only hears what its scopes allow. */
export const EVENT_SCHEMAS = {
  'sessions.changed': { scope: 'operator.read', payload: sessionsDelta },
  action: { scope: 'operator.read', payload: actionEntry },
  'approval.requested': { scope: 'operator.approvals', payload: approvalRequest },
  'approval.resolved': { scope: 'operator.approvals', payload: approvalResolved },
  'ui.command': { scope: 'operator.write', payload: z.strictObject({ command: uiCommand }) },
  'terminal.data': { scope: 'operator.admin', payload: z.strictObject({ terminalId: z.string(), data: z.string() }) },
  'terminal.exit': {
    scope: 'operator.admin',
    payload: z.strictObject({ terminalId: z.string(), code: z.number().int().nullable() }),
  },
  'browser.frame': { scope: 'operator.read', payload: screencastFrame },
  // The browser panel's tab navigated (its URL bar follows); only to the panel's connection.
  'browser.location': {
    scope: 'operator.read',
    payload: z.strictObject({ tab_id: z.string(), url: z.string(), title: z.string() }),
  },
  // Sent only to the extension's relay connection (cap tab-relay), never broadcast.
  'relay.command': { scope: 'operator.write', payload: relayCommand },
  // Each new audit trail entry (audit/store.ts), for the Control UI's log view.
  'audit.entry': { scope: 'operator.read', payload: auditEntry },
  // The fleet's sessions changed (a gateway published its rows, or one's heartbeat went stale).
  'fleet.changed': { scope: 'operator.read', payload: fleetView },
  tick: { scope: null, payload: z.unknown() },
} satisfies Record<string, { scope: Scope | null; payload: z.ZodType }>;

export type EventName = keyof typeof EVENT_SCHEMAS;
export type EventPayload<E extends EventName> = z.infer<(typeof EVENT_SCHEMAS)[E]['payload']>;

/** Which scope each event needs (null: any connection). */
export const EVENT_SCOPES: Record<string, Scope | null> = Object.fromEntries(
  Object.entries(EVENT_SCHEMAS).map(([name, e]) => [name, e.scope]),
);
