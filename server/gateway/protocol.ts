// The gateway's wire protocol (contract section 4), typed once: JSON text frames, the connect handshake,
// scopes, every method's params and result, every event's payload, and errors that tell a person what to
// do next. The server, the Control UI and the extension all take their types from here (z.infer), so this
// file imports nothing but zod and the shapes it shares with the rest of the server (contract/wire.ts, zod
// only): no node: module, so Vite and esbuild bundle it for the browser as it is.
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

export const SCOPES = ['operator.read', 'operator.write', 'operator.admin', 'operator.approvals'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Who a credential is, and the scopes it holds (the server grants the intersection with what connect
 * asks for). The agent credential holds none here: it reaches /mcp only and is refused at the gateway.
 * A relay is a paired extension presenting its pairing's relay secret.
 */
export type Role = 'operator' | 'relay';
export const ROLE_SCOPES: Record<Role | 'agent', readonly Scope[]> = {
  operator: SCOPES,
  relay: ['operator.read', 'operator.write'],
  agent: [],
};

/** Frames larger than this are refused (before connect: much smaller). */
export const MAX_FRAME_BYTES = 1024 * 1024;
export const MAX_PRECONNECT_BYTES = 64 * 1024;

// ---- frames ----

export const requestId = z.union([z.string().min(1).max(128), z.number().int()]);

export const requestFrame = z.strictObject({
  type: z.literal('req'),
  id: requestId,
  method: z.string().min(1).max(128),
  params: z.unknown().optional(),
});
export type RequestFrame = z.infer<typeof requestFrame>;

/** TOO_MANY: a bound on a table a client grows (links, connections, ...) was reached; details.limit says which. */
export const ERROR_CODES = [
  'INVALID_REQUEST',
  'FORBIDDEN',
  'UNAUTHORIZED',
  'UNAVAILABLE',
  'NOT_FOUND',
  'TOO_LARGE',
  'TOO_MANY',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const errorShape = z.strictObject({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** The answer to a request; id is null when the request could not even be read. */
export const responseFrame = z.union([
  z.strictObject({ type: z.literal('res'), id: requestId.nullable(), ok: z.literal(true), payload: z.unknown() }),
  z.strictObject({ type: z.literal('res'), id: requestId.nullable(), ok: z.literal(false), error: errorShape }),
]);
export type ResponseFrame = z.infer<typeof responseFrame>;

/** An event; seq counts the events of one connection (1, 2, 3, ...). */
export const eventFrame = z.strictObject({
  type: z.literal('event'),
  event: z.string(),
  payload: z.unknown(),
  seq: z.number().int(),
});
export type EventFrame = z.infer<typeof eventFrame>;

/** Every frame the gateway sends. */
export type ServerFrame = ResponseFrame | EventFrame;

// ---- connect ----

export const connectParams = z.strictObject({
  client: z.strictObject({
    id: z.string().min(1).max(128),
    version: z.string().max(64),
    mode: z.string().min(1).max(32),
    displayName: z.string().max(128).optional(),
  }),
  caps: z.array(z.string().max(64)).max(64).default([]),
  role: z.literal('operator'),
  scopes: z.array(z.enum(SCOPES)).max(8),
  auth: z.strictObject({ token: z.string().min(1).max(512) }),
});
export type ConnectParams = z.infer<typeof connectParams>;

/**
 * The one frame before connect, sent only to a socket opened as `/gateway?challenge=1`: a nonce the
 * client proves the operator credential with (`auth.token` = `proof.` + hex HMAC-SHA256(credential,
 * nonce)) instead of sending it, so whatever answers on the port in the gateway's absence never sees it.
 */
export const CONNECT_CHALLENGE = 'connect.challenge' as const;
export const connectChallenge = z.strictObject({
  type: z.literal('event'),
  event: z.literal(CONNECT_CHALLENGE),
  payload: z.strictObject({ nonce: z.string() }),
  seq: z.literal(0),
});
export const PROOF_PREFIX = 'proof.' as const;

export const helloOk = z.strictObject({
  type: z.literal('hello-ok'),
  connId: z.string(),
  scopes: z.array(z.string()),
  /** The methods and events this connection's scopes reach. */
  methods: z.array(z.string()),
  events: z.array(z.string()),
  policy: z.strictObject({ maxPayload: z.number().int() }),
  /**
   * Operator connections: a single-use ticket that connects once more in place of the credential (as
   * `auth.token`), for a reloaded page that keeps no credential in web storage (gateway/resume.ts).
   */
  resume_token: z.string().optional(),
});
export type HelloOk = z.infer<typeof helloOk>;

// ---- what methods and events carry ----

/** sessions.changed: a delta against the rows sent before (sessions.list gives the whole list). */
export const sessionsDelta = z.strictObject({
  added: z.array(sessionRow),
  updated: z.array(sessionRow),
  removed: z.array(z.string()),
});
export type SessionsDelta = z.infer<typeof sessionsDelta>;

/** How the layout of one Control UI changes: an agent's `screen` call or the operator's own click. */
export const uiCommand = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('split'),
    direction: z.enum(['right', 'down']),
    sessionKey: z.string().max(512).optional(),
  }),
  z.strictObject({ kind: z.enum(['close-pane', 'focus', 'navigate']), sessionKey: z.string().max(512).optional() }),
  z.strictObject({ kind: z.literal('sidebar'), visible: z.boolean() }),
  z.strictObject({
    kind: z.literal('panel'),
    panel: z.enum(['terminal', 'browser']),
    open: z.boolean(),
    dock: z.enum(['bottom', 'right']).optional(),
  }),
]);
export type UiCommand = z.infer<typeof uiCommand>;

export const pairingRow = z.strictObject({
  id: z.string(),
  origin: z.string(),
  createdAt: z.string(),
  /** When its relay last connected or disconnected; unused for --pairing-max-idle-days, it is removed. */
  lastUsedAt: z.string(),
  connected: z.boolean(),
});
export type PairingRow = z.infer<typeof pairingRow>;

/** A tab the extension shares (in its "Verity" tab group); attachId changes when it is attached afresh. */
export const sharedTab = z.strictObject({
  targetId: z.string().min(1).max(128),
  tabId: z.number().int(),
  url: z.string().max(8192),
  title: z.string().max(1024),
  attachId: z.number().int(),
});
export type SharedTab = z.infer<typeof sharedTab>;

/** A CDP command the gateway asks the extension to run once on a shared tab (answered with relay.result). */
export const relayCommand = z.strictObject({
  id: z.string(),
  targetId: z.string(),
  sessionId: z.string().optional(),
  method: z.string(),
  params: z.unknown(),
});
export type RelayCommand = z.infer<typeof relayCommand>;

export const screencastFrame = z.strictObject({
  data: z.string(),
  width: z.number(),
  height: z.number(),
  tab_id: z.string(),
});
export type ScreencastFrame = z.infer<typeof screencastFrame>;

/** The browser panel's size in CSS pixels and its device pixel ratio (bounded again in screencast.ts). */
export const panelViewport = z.strictObject({
  width: z.number().finite().min(1).max(10_000),
  height: z.number().finite().min(1).max(10_000),
  dpr: z.number().finite().min(0.25).max(8),
});
export type PanelViewport = z.infer<typeof panelViewport>;

// ---- the brake and the audit trail (sessions/brake.ts, audit/) ----

const sessionKey = z.string().min(1).max(512);
/** sessions.stop / sessions.pause / sessions.resume / sessions.end (scope operator.write). */
export const brakeParams = z.strictObject({ sessionKey });
export type BrakeParams = z.infer<typeof brakeParams>;

/**
 * Who acted, as the trail keeps it for good (the session may end, the gateway restart): the MCP client's
 * name and version (initialize's clientInfo), the credential it connected with (an id, never the secret),
 * its connection and the session label.
 */
export const auditActor = z.strictObject({
  client: z.string(),
  client_version: z.string(),
  /** `agent` (the agent credential over /mcp), `agent+link:<id>` (with an agent link; the id is a hash, not the link), `stdio` (started by its client). */
  credential: z.string(),
  connection: z.string(),
  /** The session label; `implicit` for the connection's default session. */
  session: z.string(),
  transport: z.string(),
});
export type AuditActor = z.infer<typeof auditActor>;

export const auditKinds = ['call', 'approval', 'brake', 'operator_input'] as const;
export type AuditKind = (typeof auditKinds)[number];

/**
 * One entry of the audit trail: audit/store.ts writes it as one JSONL line, audit.query pages through
 * them, and the audit.entry event carries each new one (without its result).
 */
export const auditEntry = z.strictObject({
  id: z.number().int(),
  at: z.string(),
  kind: z.enum(auditKinds),
  sessionKey: z.string(),
  /** The tool of a call or approval; the brake's verb (stop, pause, resume, end); browser.input for operator input. */
  tool: z.string(),
  /**
   * A call: its effect (confirmed, mismatch, ...), `refused`, `ok` or `failed`. An approval: requested,
   * approved, denied, timed_out, cancelled. The brake: stopped, paused, resumed, ended. Input: input.
   */
  verdict: z.string(),
  /** One line for the log: the arguments with element tokens shown as their labels. */
  summary: z.string(),
  args: z.record(z.string(), z.unknown()).optional(),
  result: z.unknown().optional(),
  isError: z.boolean().optional(),
  refusal: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  evidence: z.array(evidenceItem).optional(),
  /** element_token -> `role "name"` at the time of the call. */
  labels: z.record(z.string(), z.string()).optional(),
  /** Who did it, for what an operator did (approve, deny, stop, input). */
  by: z.string().optional(),
  /** The agent whose session this is (every entry of a session that had a connection). */
  actor: auditActor.optional(),
  /** An approval: the page or app the held call acted on. */
  target: approvalRequest.shape.target,
  /** The approval a call went through, and who gave it. */
  approval: z.strictObject({ id: z.string(), by: z.string().optional() }).optional(),
  duration_ms: z.number().optional(),
  /** With a shared audit store (--audit-store postgres://…): the gateway that wrote it (its own id is local to that gateway). */
  gateway: z.string().optional(),
  /** The call's recording step: the folder and its before/after PNG file names. */
  recording: z
    .strictObject({
      dir: z.string(),
      step: z.number().int(),
      before: z.string().optional(),
      after: z.string().optional(),
      /** Where the call's target element was in the images (CSS pixels of the page), when a token named it. */
      target: z.strictObject({ x: z.number(), y: z.number(), w: z.number(), h: z.number() }).optional(),
    })
    .optional(),
});
export type AuditEntry = z.infer<typeof auditEntry>;

const when = z.union([z.string().max(64), z.number()]).optional();
/** audit.query: newest first, paged back with `before` (the previous page's next_before). Times are ISO strings or epoch ms. */
export const auditQueryParams = z
  .strictObject({
    sessionKey: sessionKey.optional(),
    tool: z.string().max(128).optional(),
    verdict: z.string().max(64).optional(),
    kind: z.enum(auditKinds).optional(),
    /** The agent: entries whose actor's client (clientInfo name) is this, across its sessions. */
    client: z.string().max(256).optional(),
    /** With a shared audit store: only the entries this gateway wrote (entry.gateway). */
    gateway: z.string().max(256).optional(),
    text: z.string().max(500).optional(),
    from: when,
    to: when,
    before: z.number().int().min(1).optional(),
    limit: z.number().int().min(1).max(500).default(100),
  })
  .optional();
export type AuditQueryParams = z.infer<typeof auditQueryParams>;
/** A page of audit.query: `next_before` continues the search (null: the beginning of the trail). */
export const auditPage = z.strictObject({
  entries: z.array(auditEntry),
  next_before: z.number().int().nullable(),
  total: z.number().int(),
});
export type AuditPage = z.infer<typeof auditPage>;
/** The sessions the trail knows, newest first. */
export const auditSession = z.strictObject({
  sessionKey: z.string(),
  entries: z.number().int(),
  /** What its entries take of the trail (each session may hold up to the result's share_bytes). */
  bytes: z.number().int(),
  /** Its calls that were refused and not kept because it or the trail had no room (too_many_audit_bytes). */
  refused: z.number().int().optional(),
  last: z.string(),
  /** Who the session's agent was (kept after it ended). */
  actor: auditActor.optional(),
});
export type AuditSession = z.infer<typeof auditSession>;
/**
 * The fleet's sessions (fleet.sessions, fleet.changed): with a shared audit store every gateway publishes its
 * session rows and a heartbeat to the database; a gateway whose heartbeat is older than the bound is gone,
 * and its sessions are shown ended (`ended_reason: "gateway gone"`). Without one: `shared` false, this
 * gateway alone (its own rows are sessions.list).
 */
export const fleetView = z.strictObject({
  shared: z.boolean(),
  /** This gateway's name in the shared trail (entry.gateway), null without one. */
  gateway: z.string().nullable(),
  /** A gateway is gone when its heartbeat is older than this. */
  gone_after_ms: z.number().int(),
  gateways: z.array(z.strictObject({ gateway: z.string(), heartbeat: z.string(), live: z.boolean() })),
  sessions: z.array(
    z.strictObject({
      gateway: z.string(),
      live: z.boolean(),
      ended_reason: z.literal('gateway gone').optional(),
      row: sessionRow,
    }),
  ),
  /** Calls held for an operator on every live gateway (this one's too): any console may decide them (fleet.resolve). */
  approvals: z.array(z.strictObject({ gateway: z.string(), request: approvalRequest })),
});
export type FleetView = z.infer<typeof fleetView>;

/** audit.image: a recorded call's before or after PNG, base64. */
export const auditImageParams = z.strictObject({ id: z.number().int().min(1), which: z.enum(['before', 'after']) });
/** audit.export: a one-time download URL (GET, valid 60 s) for a session's trail as JSONL or a zip with its images. */
export const auditExportParams = z.strictObject({ sessionKey, format: z.enum(['jsonl', 'zip']).default('jsonl') });
export type AuditExportParams = z.infer<typeof auditExportParams>;

// ---- methods: params and results ----

/** The active policy as the operator's console shows it (server/policy.ts summary()): null lists mean "any". */
export const policySummary = z.strictObject({
  source: z.string(),
  allowed_origins: z.array(z.string()).nullable(),
  blocked_origins: z.array(z.string()),
  url_schemes: z.array(z.string()),
  allowed_apps: z.array(z.string()).nullable(),
  blocked_apps: z.array(z.string()),
  require_approval: z.array(z.string()),
  always_refused: z.array(z.string()),
});
export type PolicySummary = z.infer<typeof policySummary>;

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

// ---- errors and scopes ----

export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Whether granted scopes satisfy a required one: admin satisfies everything, write satisfies read. */
export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (granted.includes('operator.admin')) return true;
  if (required === 'operator.read' && granted.includes('operator.write')) return true;
  return granted.includes(required);
}

export function missingScope(method: string, required: Scope): GatewayError {
  return new GatewayError(
    'FORBIDDEN',
    `${method} needs the ${required} scope; reconnect with "${required}" in connect.scopes (the Control UI asks for it; scopes come from the credential: operator.admin and operator.approvals only from the operator credential)`,
    { missingScope: required, requiredScopes: [required] },
  );
}
