// The gateway's method table: each method names its scope, its params schema and its handler. Methods
// not in this table are refused; scopes are checked before params are even read. Handlers see the gateway
// through MethodContext (only what they use), which the Gateway builds: a new method goes here, and
// whatever new it needs of the gateway goes into MethodContext.
import { z } from 'zod';
import type { Activity } from '../activity.js';
import type { Approvals } from '../approvals.js';
import type { BrowserHost } from '../cdp/browser.js';
import type { Tab } from '../cdp/tab.js';
import type { SessionManager } from '../sessions/manager.js';
import type { GatewayConnection } from './connection.js';
import type { Links } from './links.js';
import type { Pairings } from './origins.js';
import { GatewayError, type Scope } from './protocol.js';
import type { Relay } from './relay.js';
import { openTerminal, type Terminal } from './terminal.js';
import { forwardInput, startScreencast } from './screencast.js';
import type { SessionRow } from '../sessions/summary.js';
import type { Brake } from '../sessions/brake.js';
import type { AuditStore } from '../audit/store.js';
import { BRAKE_METHODS, logOperatorInput, operatorName } from './brake-methods.js';

/** What the method handlers use of the gateway and the core behind it. */
export interface MethodContext {
  readonly activity: Pick<Activity, 'list'>;
  readonly approvals: Pick<Approvals, 'list' | 'resolve'>;
  readonly browser: Pick<BrowserHost, 'running' | 'tabs_' | 'findTab'>;
  readonly sessions: Pick<SessionManager, 'all' | 'keyOf' | 'list' | 'end'>;
  /** The operator's brake on agents, the audit trail, and whether an agent (MCP connection) is connected. */
  readonly brake: Brake;
  readonly audit: AuditStore;
  agentConnected(connectionId: string): boolean;
  /** The operator gives a tab to a session's connection. */
  assignTab(tabId: string, connectionId: string): void;
  sessionList(): SessionRow[];
  dispatchUiCommand(connId: string, command: UiCommand): boolean;
  readonly links: Pick<Links, 'mint'>;
  /** The agent credential: what the terminal's shells carry, never the operator's. */
  readonly agentToken: string;
  readonly terminals: Map<string, { term: Terminal; owner: string }>;
  ownTerminal(id: string, conn: GatewayConnection): Terminal;
  readonly pairings: Pick<Pairings, 'load' | 'all'>;
  /** The pairing ids of the extension connections open now. */
  connectedPairings(): Set<string>;
  revokePairing(id: string): boolean;
  tabFor(tabId: string | undefined, sessionKey: string | undefined): Promise<Tab>;
  readonly screencasts: Map<string, () => void>;
  stopScreencast(conn: GatewayConnection): void;
  readonly relay: Pick<Relay, 'announce' | 'result' | 'event'>;
}

export interface MethodSpec<P extends z.ZodType = z.ZodType> {
  scope: Scope;
  params: P;
  handler(params: z.infer<P>, conn: GatewayConnection, gw: MethodContext): Promise<unknown> | unknown;
}

function method<P extends z.ZodType>(spec: MethodSpec<P>): MethodSpec { return spec as unknown as MethodSpec; }

export const uiCommand = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('split'), direction: z.enum(['right', 'down']), sessionKey: z.string().max(512).optional() }),
  z.strictObject({ kind: z.enum(['close-pane', 'focus', 'navigate']), sessionKey: z.string().max(512).optional() }),
  z.strictObject({ kind: z.literal('sidebar'), visible: z.boolean() }),
  z.strictObject({ kind: z.literal('panel'), panel: z.enum(['terminal', 'browser']), open: z.boolean(), dock: z.enum(['bottom', 'right']).optional() }),
]);
export type UiCommand = z.infer<typeof uiCommand>;

const none = z.strictObject({}).optional();

const sharedTab = z.strictObject({
  targetId: z.string().min(1).max(128), tabId: z.number().int(), url: z.string().max(8192), title: z.string().max(1024),
  attachId: z.number().int(),
});

export const METHODS: Record<string, MethodSpec> = {
  'sessions.list': method({
    scope: 'operator.read', params: none,
    handler: (_p, _c, gw) => ({ sessions: gw.sessionList() }),
  }),
  'actions.list': method({
    scope: 'operator.read', params: z.strictObject({ sessionKey: z.string().max(512).optional() }).optional(),
    handler: (p, _c, gw) => ({ actions: gw.activity.list(p?.sessionKey) }),
  }),
  'ui.command': method({
    scope: 'operator.write', params: z.strictObject({ command: uiCommand }),
    // A command a Control UI sends for itself comes back only to itself: one code path for both.
    handler: (p, conn, gw) => {
      if (!gw.dispatchUiCommand(conn.connId, p.command)) throw new GatewayError('UNAVAILABLE', 'that Control UI is no longer connected');
      return { ok: true };
    },
  }),
  'agent.link': method({
    scope: 'operator.write', params: none,
    handler: (_p, conn, gw) => gw.links.mint(conn),
  }),
  'approvals.list': method({
    scope: 'operator.approvals', params: none,
    handler: (_p, _c, gw) => ({ approvals: gw.approvals.list() }),
  }),
  'approvals.resolve': method({
    scope: 'operator.approvals', params: z.strictObject({ id: z.string().min(1).max(64), approve: z.boolean() }),
    // Only the operator credential holds operator.approvals, and calls come only over /mcp or stdio, which
    // never take it: no caller can approve its own call. The role check says so again, explicitly.
    handler: (p, conn, gw) => {
      if (conn.role !== 'operator') throw new GatewayError('FORBIDDEN', 'approvals are accepted only from a connection with the operator credential', { missingScope: 'operator.approvals' });
      if (!gw.approvals.resolve(p.id, p.approve, operatorName(conn))) throw new GatewayError('NOT_FOUND', `no pending approval ${p.id}; it may have timed out`);
      return { ok: true };
    },
  }),
  'terminal.open': method({
    scope: 'operator.admin', params: z.strictObject({ cols: z.number().int().min(10).max(500).default(100), rows: z.number().int().min(4).max(200).default(30) }),
    handler: (p, conn, gw) => {
      const link = gw.links.mint(conn);
      const term = openTerminal({
        cols: p.cols, rows: p.rows,
        env: { VERITY_MCP_URL: link.mcp_url, VERITY_LINK: link.link_token, VERITY_TOKEN: gw.agentToken },
        onData: (data) => conn.event('terminal.data', { terminalId: term.id, data }),
        onExit: (code) => { conn.event('terminal.exit', { terminalId: term.id, code }); gw.terminals.delete(term.id); },
      });
      gw.terminals.set(term.id, { term, owner: conn.connId });
      conn.disposers.add(() => { try { term.pty.kill(); } catch { /* exited */ } gw.terminals.delete(term.id); });
      return { terminalId: term.id, pid: term.pty.pid };
    },
  }),
  'terminal.input': method({
    scope: 'operator.admin', params: z.strictObject({ terminalId: z.string(), data: z.string().max(65536) }),
    handler: (p, conn, gw) => { gw.ownTerminal(p.terminalId, conn).pty.write(p.data); return { ok: true }; },
  }),
  'terminal.resize': method({
    scope: 'operator.admin', params: z.strictObject({ terminalId: z.string(), cols: z.number().int().min(10).max(500), rows: z.number().int().min(4).max(200) }),
    handler: (p, conn, gw) => { gw.ownTerminal(p.terminalId, conn).pty.resize(p.cols, p.rows); return { ok: true }; },
  }),
  'terminal.close': method({
    scope: 'operator.admin', params: z.strictObject({ terminalId: z.string() }),
    handler: (p, conn, gw) => { gw.ownTerminal(p.terminalId, conn).pty.kill(); gw.terminals.delete(p.terminalId); return { ok: true }; },
  }),
  // Pairings of the extension: listed and revoked by the operator (the Control UI's "Paired extensions").
  'pairings.list': method({
    scope: 'operator.admin', params: none,
    handler: (_p, _c, gw) => {
      gw.pairings.load();
      const live = gw.connectedPairings();
      return { pairings: gw.pairings.all().map((p) => ({ ...p, connected: live.has(p.id) })) };
    },
  }),
  'pairings.revoke': method({
    scope: 'operator.admin', params: z.strictObject({ id: z.string().min(1).max(64) }),
    handler: (p, _c, gw) => {
      gw.pairings.load();
      if (!gw.revokePairing(p.id)) throw new GatewayError('NOT_FOUND', `no pairing ${p.id}; pairings.list shows the current ones`);
      return { ok: true };
    },
  }),
  'browser.tabs': method({
    scope: 'operator.read', params: none,
    handler: async (_p, _c, gw) => {
      if (!gw.browser.running) return { tabs: [] };
      const tabs = await gw.browser.tabs_();
      return { tabs: tabs.map((t) => ({ tab_id: t.id, url: t.page.url() })) };
    },
  }),
  // The operator gives a tab (one an agent may not otherwise reach: another session's, or an orphan of a
  // session that ended) to one session: from then it is that session's connection's alone.
  'tabs.assign': method({
    scope: 'operator.write', params: z.strictObject({ tabId: z.string().min(1).max(128), sessionKey: z.string().min(1).max(512) }),
    handler: async (p, _c, gw) => {
      const session = gw.sessions.all().find((s) => s.state === 'active' && gw.sessions.keyOf(s) === p.sessionKey);
      if (!session) throw new GatewayError('NOT_FOUND', `no active session ${p.sessionKey}; sessions.list names them`);
      await gw.browser.findTab(p.tabId).catch(() => { throw new GatewayError('NOT_FOUND', `no tab ${p.tabId}; browser.tabs lists them`); });
      gw.assignTab(p.tabId, session.connectionId);
      return { ok: true, tabId: p.tabId, sessionKey: p.sessionKey };
    },
  }),
  'browser.screencast.start': method({
    scope: 'operator.read', params: z.strictObject({ tab_id: z.string().optional(), sessionKey: z.string().max(512).optional() }),
    handler: async (p, conn, gw) => {
      const tab = await gw.tabFor(p.tab_id, p.sessionKey);
      gw.stopScreencast(conn);
      const stop = await startScreencast(tab, (frame) => conn.event('browser.frame', frame));
      gw.screencasts.set(conn.connId, stop);
      conn.disposers.add(() => gw.stopScreencast(conn));
      return { tab_id: tab.id, url: tab.page.url() };
    },
  }),
  'browser.screencast.stop': method({
    scope: 'operator.read', params: none,
    handler: (_p, conn, gw) => { gw.stopScreencast(conn); return { ok: true }; },
  }),
  // The extension relay (cap tab-relay; see relay.ts): shared tabs, command results, debugger events.
  'relay.tabs': method({
    scope: 'operator.write', params: z.strictObject({ tabs: z.array(sharedTab).max(500) }),
    handler: (p, conn, gw) => gw.relay.announce(conn, p.tabs),
  }),
  'relay.result': method({
    scope: 'operator.write',
    // `code` (optional) says what a failure means for delivery: not_delivered = it never reached the page.
    params: z.strictObject({ id: z.string().min(1).max(128), result: z.unknown().optional(), error: z.string().max(65536).optional(), code: z.enum(['not_delivered']).optional() }),
    handler: (p, conn, gw) => gw.relay.result(conn, p.id, p.result, p.error, p.code),
  }),
  'relay.event': method({
    scope: 'operator.write',
    params: z.strictObject({ targetId: z.string().min(1).max(128), sessionId: z.string().max(128).optional(), method: z.string().min(1).max(128), params: z.unknown().optional() }),
    handler: (p, conn, gw) => gw.relay.event(conn, p.targetId, p.sessionId, p.method, p.params),
  }),
  'browser.input': method({
    scope: 'operator.write',
    params: z.strictObject({
      tab_id: z.string(), type: z.enum(['click', 'wheel', 'key', 'text']),
      x: z.number().finite().optional(), y: z.number().finite().optional(), deltaY: z.number().finite().optional(),
      key: z.string().max(32).optional(), text: z.string().max(10_000).optional(),
    }),
    handler: async (p, conn, gw) => { await forwardInput(await gw.browser.findTab(p.tab_id), p); logOperatorInput(gw, conn, p); return { ok: true }; },
  }),
  ...BRAKE_METHODS,
};
