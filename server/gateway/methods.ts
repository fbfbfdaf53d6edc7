// The gateway's method table: each method names its scope and its handler; its params and result are
// declared once in protocol.ts (METHOD_SCHEMAS), and the table must hold exactly those methods. Methods
// not in this table are refused; scopes are checked before params are even read. Handlers see the gateway
// through MethodContext (only what they use), which the Gateway builds: a new method goes here, and
// whatever new it needs of the gateway goes into MethodContext.
import type { z } from 'zod';
import type { Activity } from '../activity.js';
import type { Approvals } from '../approvals.js';
import type { Policy } from '../policy.js';
import type { SessionManager } from '../sessions/manager.js';
import type { GatewayConnection } from './connection.js';
import type { Links } from './links.js';
import type { Pairings } from './origins.js';
import {
  GatewayError,
  METHOD_SCHEMAS,
  type Method,
  type Params,
  type ParsedParams,
  type Result,
  type Scope,
  type UiCommand,
} from './protocol.js';
import type { MethodHandler } from './method-handler.js';
import type { Relay } from './relay.js';
import type { OperatorTabs } from './tabs.js';
import { openTerminal, type Terminals } from './terminal.js';
import { forwardInput, operatorUrl, startScreencast, stepHistory, type Screencast } from './screencast.js';
import type { SessionRow } from '../sessions/summary.js';
import type { Brake } from '../sessions/brake.js';
import type { AuditStore } from '../audit/store.js';
import { BRAKE_HANDLERS, logOperatorInput, operatorName } from './brake-methods.js';

/** What the method handlers use of the gateway and the core behind it. */
export interface MethodContext {
  readonly activity: Pick<Activity, 'list'>;
  readonly approvals: Pick<Approvals, 'list' | 'resolve'>;
  readonly sessions: Pick<SessionManager, 'all' | 'keyOf' | 'list' | 'end'>;
  /** The operator's brake on agents, the audit trail, and whether an agent (MCP connection) is connected. */
  readonly brake: Brake;
  readonly audit: AuditStore;
  agentConnected(connectionId: string): boolean;
  /** The tabs the operator shows, drives and gives to a session: through the router's ownership (tabs.ts). */
  readonly tabs: OperatorTabs;
  /** Runs the operator's input to a tab in that tab's action line (an agent's action in flight finishes first). */
  operatorInput<T>(tabId: string, work: () => Promise<T>): Promise<T>;
  sessionList(): SessionRow[];
  dispatchUiCommand(connId: string, command: UiCommand): boolean;
  readonly links: Pick<Links, 'mint' | 'reclaim'>;
  /** The agent credential: what the terminal's shells carry, never the operator's. */
  readonly agentToken: string;
  readonly terminals: Terminals;
  readonly pairings: Pick<Pairings, 'load' | 'all'>;
  /** The pairing ids of the extension connections open now. */
  connectedPairings(): Set<string>;
  revokePairing(id: string): boolean;
  readonly screencasts: Map<string, Screencast>;
  stopScreencast(conn: GatewayConnection): void;
  readonly relay: Pick<Relay, 'announce' | 'result' | 'event'>;
  /** The permission policy in force (shown to the operator; agents are held to it by the router). */
  readonly policy: Pick<Policy, 'summary'>;
}

export { uiCommand, type UiCommand } from './protocol.js';

/**
 * Every method of protocol.ts, each with its handler typed by the method's params and result: the build
 * fails when one is missing, named twice or answers the wrong shape. The brake's and the audit trail's
 * handlers are in brake-methods.ts.
 */
const HANDLERS: { [M in Method]: MethodHandler<M, MethodContext> } = {
  'sessions.list': {
    scope: 'operator.read',
    handler: (_p, _c, gw) => ({ sessions: gw.sessionList() }),
  },
  'actions.list': {
    scope: 'operator.read',
    handler: (p, _c, gw) => ({ actions: gw.activity.list(p?.sessionKey) }),
  },
  'ui.command': {
    scope: 'operator.write',
    // A command a Control UI sends for itself comes back only to itself: one code path for both.
    handler: (p, conn, gw) => {
      if (!gw.dispatchUiCommand(conn.connId, p.command))
        throw new GatewayError('UNAVAILABLE', 'that Control UI is no longer connected');
      return { ok: true };
    },
  },
  'agent.link': {
    // link_token: the link this page held before a reload, asked back (see Links.reclaim); else a new one.
    scope: 'operator.write',
    handler: (p, conn, gw) => (p?.link_token && gw.links.reclaim(p.link_token, conn)) || gw.links.mint(conn),
  },
  'approvals.list': {
    scope: 'operator.approvals',
    handler: (_p, _c, gw) => ({ approvals: gw.approvals.list() }),
  },
  'approvals.resolve': {
    scope: 'operator.approvals',
    // Only the operator credential holds operator.approvals, and calls come only over /mcp or stdio, which
    // never take it: no caller can approve its own call. The role check says so again, explicitly.
    handler: (p, conn, gw) => {
      if (conn.role !== 'operator')
        throw new GatewayError(
          'FORBIDDEN',
          'approvals are accepted only from a connection with the operator credential',
          { missingScope: 'operator.approvals' },
        );
      if (!gw.approvals.resolve(p.id, p.approve, operatorName(conn)))
        throw new GatewayError('NOT_FOUND', `no pending approval ${p.id}; it may have timed out`);
      return { ok: true };
    },
  },
  'fleet.resolve': {
    scope: 'operator.approvals',
    handler: async (p, conn, gw) => {
      if (conn.role !== 'operator')
        throw new GatewayError(
          'FORBIDDEN',
          'approvals are accepted only from a connection with the operator credential',
          { missingScope: 'operator.approvals' },
        );
      const here = gw.audit.fleetName;
      // Who decided, and from which gateway's console: the holding gateway's trail keeps both.
      const by = `${operatorName(conn)} on ${here ?? 'this gateway'}`;
      const found =
        p.gateway === here
          ? gw.approvals.resolve(p.id, p.approve, by)
          : await gw.audit.decide(p.gateway, p.id, p.approve, by);
      if (!found)
        throw new GatewayError(
          'NOT_FOUND',
          here
            ? `no pending approval ${p.id} on gateway ${p.gateway}; it may have been decided or timed out`
            : 'fleet.resolve needs a shared audit store (--audit-store postgres://…); use approvals.resolve',
        );
      return { ok: true as const, by };
    },
  },
  'terminal.open': {
    scope: 'operator.admin',
    handler: (p, conn, gw) => {
      const link = gw.links.mint(conn);
      const term = openTerminal({
        cols: p.cols,
        rows: p.rows,
        env: { VERITY_MCP_URL: link.mcp_url, VERITY_LINK: link.link_token, VERITY_TOKEN: gw.agentToken },
        base: gw.terminals.baseEnv(),
      });
      gw.terminals.add(term, conn.connId, link.link_token);
      return { terminalId: term.id, pid: term.pty.pid };
    },
  },
  'terminal.detach': {
    scope: 'operator.admin',
    handler: (p, conn, gw) => {
      gw.terminals.detach(p.terminalId, conn.connId);
      return { ok: true };
    },
  },
  'terminal.attach': {
    scope: 'operator.admin',
    handler: (p, conn, gw) => {
      const { term, tail, link } = gw.terminals.attach(p.terminalId, conn.connId);
      gw.links.reclaim(link, conn);
      if (p.cols && p.rows) term.pty.resize(p.cols, p.rows);
      return { terminalId: term.id, pid: term.pty.pid, tail };
    },
  },
  'terminal.input': {
    scope: 'operator.admin',
    handler: (p, conn, gw) => {
      gw.terminals.owned(p.terminalId, conn.connId).pty.write(p.data);
      return { ok: true };
    },
  },
  'terminal.resize': {
    scope: 'operator.admin',
    handler: (p, conn, gw) => {
      gw.terminals.owned(p.terminalId, conn.connId).pty.resize(p.cols, p.rows);
      return { ok: true };
    },
  },
  'terminal.close': {
    scope: 'operator.admin',
    handler: (p, conn, gw) => {
      gw.terminals.owned(p.terminalId, conn.connId);
      gw.terminals.kill(p.terminalId);
      return { ok: true };
    },
  },
  // The active policy, for the Control UI's Policy view: what agents may reach, read-only here.
  'policy.get': {
    scope: 'operator.read',
    handler: (_p, _c, gw) => gw.policy.summary(),
  },
  // Pairings of the extension: listed and revoked by the operator (the Control UI's "Paired extensions").
  'pairings.list': {
    scope: 'operator.admin',
    handler: (_p, _c, gw) => {
      gw.pairings.load();
      const live = gw.connectedPairings();
      return { pairings: gw.pairings.all().map((p) => ({ ...p, connected: live.has(p.id) })) };
    },
  },
  'pairings.revoke': {
    scope: 'operator.admin',
    handler: (p, _c, gw) => {
      gw.pairings.load();
      if (!gw.revokePairing(p.id))
        throw new GatewayError('NOT_FOUND', `no pairing ${p.id}; pairings.list shows the current ones`);
      return { ok: true };
    },
  },
  'browser.tabs': {
    // sessionKey: only that session's tabs (the browser panel's tab strip). Never launches a browser.
    scope: 'operator.read',
    handler: async (p, _c, gw) => {
      const tabs = await gw.tabs.list(p?.sessionKey);
      return {
        tabs: await Promise.all(
          tabs.map(async (t) => ({ tab_id: t.id, url: t.page.url(), title: await t.page.title().catch(() => '') })),
        ),
      };
    },
  },
  // The operator gives a tab (one an agent may not otherwise reach: another session's, or an orphan of a
  // session that ended) to one session: from then it is that session's connection's alone.
  'tabs.assign': {
    scope: 'operator.write',
    handler: async (p, _c, gw) => {
      await gw.tabs.assign(p.tabId, p.sessionKey);
      return { ok: true, tabId: p.tabId, sessionKey: p.sessionKey };
    },
  },
  'browser.screencast.start': {
    // viewport: the panel's size; the tab is shown at that size (see screencast.ts). Refused NOT_FOUND
    // "no browser yet" rather than launching one: opening the panel starts nothing.
    scope: 'operator.read',
    handler: async (p, conn, gw) => {
      const tab = await gw.tabs.toShow(p.tab_id, p.sessionKey);
      gw.stopScreencast(conn);
      const cast = await startScreencast(
        tab,
        p.viewport,
        (frame) => conn.event('browser.frame', frame),
        (location) => conn.event('browser.location', location),
      );
      gw.screencasts.set(conn.connId, cast);
      conn.disposers.add(() => gw.stopScreencast(conn));
      const owner = gw.tabs.owner(tab.id);
      return {
        tab_id: tab.id,
        url: tab.page.url(),
        title: await tab.page.title().catch(() => ''),
        owner: owner && {
          sessionKey: owner.sessionKey,
          session: owner.session,
          client: owner.client,
          transport: owner.transport,
        },
      };
    },
  },
  'browser.screencast.resize': {
    scope: 'operator.read',
    handler: async (p, conn, gw) => {
      const cast = gw.screencasts.get(conn.connId);
      if (!cast)
        throw new GatewayError('NOT_FOUND', 'no screencast on this connection; browser.screencast.start begins one');
      await cast.resize(p.viewport);
      return { ok: true };
    },
  },
  'browser.navigate': {
    scope: 'operator.write',
    handler: async (p, _c, gw) => {
      const tab = await gw.tabs.find(p.tab_id);
      const step = p.action;
      if (step !== 'go') {
        await gw.operatorInput(tab.id, () => stepHistory(tab, step));
        return { ok: true };
      }
      const url = operatorUrl(p.url ?? '');
      if (!url)
        throw new GatewayError('INVALID_REQUEST', 'browser.navigate: url: give an http(s) address or about:blank');
      await gw.operatorInput(tab.id, () => tab.session.send('Page.navigate', { url }));
      return { ok: true, url };
    },
  },
  'browser.screencast.stop': {
    scope: 'operator.read',
    handler: (_p, conn, gw) => {
      gw.stopScreencast(conn);
      return { ok: true };
    },
  },
  // The extension relay (cap tab-relay; see relay.ts): shared tabs, command results, debugger events.
  'relay.tabs': {
    scope: 'operator.write',
    handler: (p, conn, gw) => gw.relay.announce(conn, p.tabs),
  },
  'relay.result': {
    scope: 'operator.write',
    handler: (p, conn, gw) => gw.relay.result(conn, p.id, p.result, p.error, p.code),
  },
  'relay.event': {
    scope: 'operator.write',
    handler: (p, conn, gw) => gw.relay.event(conn, p.targetId, p.sessionId, p.method, p.params),
  },
  'browser.input': {
    scope: 'operator.write',
    handler: async (p, conn, gw) => {
      const tab = await gw.tabs.find(p.tab_id);
      // In the tab's line: an agent's action in flight (its delivery and read-back) finishes first.
      await gw.operatorInput(tab.id, () => forwardInput(tab, p));
      logOperatorInput(gw, conn, p);
      return { ok: true };
    },
  },
  ...BRAKE_HANDLERS,
};

/**
 * METHOD_SCHEMAS seen one method at a time: for a method M, its params schema parses into ParsedParams<M>
 * and its result is Result<M>. A plain assignment, so the compiler checks that it is a true widening.
 */
const SCHEMAS: {
  [M in Method]: { params: z.ZodType<ParsedParams<M>, Params<M>>; result: z.ZodType<Result<M>> };
} = METHOD_SCHEMAS;

export function isMethod(name: string): name is Method {
  return Object.hasOwn(HANDLERS, name);
}

/** Every method's name (hello-ok lists those a connection's scopes reach). */
export const METHOD_NAMES: readonly Method[] = Object.keys(HANDLERS).filter(isMethod);

export function methodScope(method: Method): Scope {
  return HANDLERS[method].scope;
}

/** Checks a request's params against the method's schema (naming the bad field), then runs its handler. */
export async function callMethod<M extends Method>(
  method: M,
  raw: unknown,
  conn: GatewayConnection,
  gw: MethodContext,
): Promise<Result<M>> {
  const parsed = SCHEMAS[method].params.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GatewayError('INVALID_REQUEST', `${method}: ${issue.path.join('.') || 'params'}: ${issue.message}`);
  }
  const entry: MethodHandler<M, MethodContext> = HANDLERS[method];
  return entry.handler(parsed.data, conn, gw);
}
