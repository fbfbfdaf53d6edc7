// Pure helpers of the console's frame: how sessions are named, which rows are closed, where the docked
// panels go (a grid, so the panels stay the same elements when they move), what the offline banner says,
// and the keyboard shortcuts.
import type { ActionEntry, AuditEntry, FleetView } from '../../server/gateway/protocol.js';
import type { Dock, Layout, PanelName, UiCommand } from './layout.js';

export interface NamedRow {
  sessionKey: string;
  session: string | null;
  client: string;
  transport: string;
  state: string;
  /** Connected, no call yet (the gateway lists the agent at once): when it goes, it became a session, not closed. */
  awaiting_first_call?: boolean;
  brake?: { state: string } | null;
}

/**
 * The state a row and its pane show: the brake's when the operator holds the agent (a stopped session never
 * reads "active" beside "■ stopped"), "connected" for an agent that made no call yet, else the session's own.
 */
export function shownState(row: NamedRow): string {
  if (row.state === 'closed') return 'closed';
  if (row.brake && row.brake.state !== 'running') return row.brake.state;
  if (row.awaiting_first_call) return 'connected';
  return row.state;
}

/** What the log of an action shows: its fields, as much of them as the pane needs (gateway ActionEntry). */
export interface ActionLike {
  effect: string | null;
  refusal?: string | null;
  isError?: boolean;
}

/** An action's badge: its effect, "refused", or "ok" for tools that report no effect (page, screen). */
export function badge(a: ActionLike): string {
  return a.effect ?? (a.refusal ? 'refused' : a.isError ? 'failed' : 'ok');
}

/** Badges that mean the action did not do what was asked: the sidebar marks a session whose last one did. */
const BAD_OUTCOMES = new Set(['mismatch', 'partial', 'no_effect', 'failed', 'unsatisfied']);

/** The mark for a session's row: its last action's badge when that action failed or mismatched, else null. */
export function lastActionMark(actions: readonly ActionLike[]): string | null {
  const last = actions.at(-1);
  if (!last) return null;
  const b = badge(last);
  return BAD_OUTCOMES.has(b) ? b : null;
}

/** The live sessions (not closed, not merely connected): one of them alone fills the main area. */
export function loneSession<R extends NamedRow>(rows: readonly R[]): R | null {
  const live = rows.filter((r) => r.state !== 'closed' && !r.awaiting_first_call);
  return live.length === 1 ? live[0] : null;
}

/** "claude-code · expense-claim": the client's own name (MCP clientInfo) and the label, never a raw key. */
export function sessionName(row: NamedRow): string {
  const client = row.client || (row.transport === 'stdio' ? 'stdio client' : 'HTTP client');
  return row.session ? `${client} · ${row.session}` : `${client} (default session)`;
}

/** Closed rows kept at most; older ones are dropped (their panes then say "a session that ended"). */
export const MAX_CLOSED_ROWS = 50;

/** The rows a sessions.changed delta removes become "closed" rows (newest last, bounded); re-added keys leave. */
export function closedRows<R extends NamedRow>(
  closed: R[],
  current: R[],
  delta: { added?: R[]; updated?: R[]; removed?: string[] },
): R[] {
  const back = new Set([...(delta.added ?? []), ...(delta.updated ?? [])].map((r) => r.sessionKey));
  // A connected agent's row that goes became a labelled session: nothing was closed.
  const gone = current
    .filter((r) => delta.removed?.includes(r.sessionKey) && !r.awaiting_first_call)
    .map((r) => ({ ...r, state: 'closed' }));
  const kept = closed.filter((r) => !back.has(r.sessionKey) && !gone.some((g) => g.sessionKey === r.sessionKey));
  return [...kept, ...gone].slice(-MAX_CLOSED_ROWS);
}

/** What the banner says while the gateway is away; nothing while connected (or refused: that has its own alert). */
export function connectionBanner(conn: string, lastConnected: Date | null): string {
  if (conn === 'connected' || conn === 'unauthorized') return '';
  const since = lastConnected ? ` since ${lastConnected.toLocaleTimeString()}` : '';
  return lastConnected
    ? `The gateway is not reachable${since}; reconnecting. What you see is how it was then: not live, and nothing can be done until it is back.`
    : 'Connecting to the gateway…';
}

export interface PanelPlace {
  style: string;
}
export interface DockGrid {
  style: string;
  panes: string;
  resizers: Partial<Record<Dock, string>>;
  panels: Record<PanelName, PanelPlace | null>;
}

const area = (rowStart: number, colStart: number, rowEnd: number, colEnd: number) =>
  `grid-area: ${rowStart} / ${colStart} / ${rowEnd} / ${colEnd}`;

/**
 * Where everything goes in the work area's grid. Columns: panes | right resizer | right dock. Rows: two
 * (so two right panels stack) | bottom resizer | bottom dock. Two panels on one side share it, never
 * overlap. Narrow: one column, the pane on top and the open panels as drawers under it.
 */
export function dockGrid(layout: Layout, narrow: boolean): DockGrid {
  const names: PanelName[] = ['terminal', 'browser'];
  const open = names.filter((n) => layout.panels[n].open);
  const panels: Record<PanelName, PanelPlace | null> = { terminal: null, browser: null };
  if (narrow) {
    const rows = ['minmax(120px, 1fr)', ...open.map(() => `minmax(0, ${open.length > 1 ? 32 : 45}vh)`)];
    open.forEach((n, i) => {
      panels[n] = { style: area(i + 2, 1, i + 3, 2) };
    });
    return {
      style: `grid-template-columns: minmax(0, 1fr); grid-template-rows: ${rows.join(' ')}`,
      panes: area(1, 1, 2, 2),
      resizers: {},
      panels,
    };
  }
  const right = open.filter((n) => layout.panels[n].dock === 'right');
  const bottom = open.filter((n) => layout.panels[n].dock === 'bottom');
  const columns = ['minmax(0, 1fr)'];
  if (right.length) columns.push('6px', `min(${layout.docks.right}px, 70vw)`);
  else if (bottom.length > 1) columns.push('6px', 'minmax(0, 1fr)');
  const rows = ['minmax(0, 1fr)', 'minmax(0, 1fr)'];
  if (bottom.length) rows.push('6px', `min(${layout.docks.bottom}px, 65vh)`);
  const resizers: Partial<Record<Dock, string>> = {};
  if (right.length) {
    resizers.right = area(1, 2, 3, 3);
    right.forEach((n, i) => {
      panels[n] = { style: right.length === 1 ? area(1, 3, 3, 4) : area(i + 1, 3, i + 2, 4) };
    });
  }
  if (bottom.length) {
    resizers.bottom = area(3, 1, 4, -1);
    bottom.forEach((n, i) => {
      panels[n] = { style: bottom.length === 1 ? area(4, 1, 5, -1) : area(4, i * 2 + 1, 5, i * 2 + 2) };
    });
  }
  return {
    style: `grid-template-columns: ${columns.join(' ')}; grid-template-rows: ${rows.join(' ')}`,
    panes: area(1, 1, 3, right.length ? 2 : -1),
    resizers,
    panels,
  };
}

/** Ctrl+` toggles the terminal, Ctrl+Shift+B the browser panel (as in the consoles operators live in). */
export function shortcut(e: KeyboardEvent, layout: Layout): UiCommand | null {
  if (!e.ctrlKey || e.altKey || e.metaKey) return null;
  if (e.key === '`' && !e.shiftKey) return { kind: 'panel', panel: 'terminal', open: !layout.panels.terminal.open };
  if (e.shiftKey && (e.key === 'B' || e.key === 'b'))
    return { kind: 'panel', panel: 'browser', open: !layout.panels.browser.open };
  return null;
}

// ---- the fleet (a shared audit store) ----

export type FleetSession = FleetView['sessions'][number];
/** The other gateways' sessions of a view (this gateway's are its own session list). */
export function otherSessions(view: FleetView | null): FleetSession[] {
  if (!view?.shared) return [];
  return view.sessions.filter((s) => s.gateway !== view.gateway);
}

/** The calls held on other gateways, for this console to decide (fleet.resolve). */
export function otherApprovals(view: FleetView | null): FleetView['approvals'] {
  if (!view?.shared) return [];
  return view.approvals.filter((a) => a.gateway !== view.gateway);
}

/** A fleet session's state as its row shows it: a gone gateway's sessions ended, and why. */
export function fleetState(s: FleetSession): string {
  return s.live ? shownState(s.row) : 'ended (gateway gone)';
}

/**
 * An entry's identity in the view: its gateway and its id. Ids are each gateway's own, so with a shared
 * store two gateways' entries may carry the same id; without one, entries name no gateway and the id is it.
 */
export function entryKey(e: Pick<AuditEntry, 'id' | 'gateway'>): string {
  return `${e.gateway ?? ''}/${e.id}`;
}

// ---- another gateway's session in a pane ----

/** The layout's key of a pane showing another gateway's session (never a local session key: those have no `fleet:`). */
const FLEET_PANE = 'fleet:';

/** A pane's key for `sessionKey` of `gateway` (keys are each gateway's own: the gateway is part of it). */
export function fleetPaneKey(gateway: string, sessionKey: string): string {
  return `${FLEET_PANE}${encodeURIComponent(gateway)}:${sessionKey}`;
}

/** The gateway and session of a fleet pane's key; null for a local session's key. */
export function parseFleetPaneKey(key: string): { gateway: string; sessionKey: string } | null {
  if (!key.startsWith(FLEET_PANE)) return null;
  const rest = key.slice(FLEET_PANE.length);
  const at = rest.indexOf(':');
  if (at <= 0 || at === rest.length - 1) return null;
  try {
    return { gateway: decodeURIComponent(rest.slice(0, at)), sessionKey: rest.slice(at + 1) };
  } catch {
    return null;
  }
}

/** Verdicts of a call that are not an effect (the local log's effect is null for them: badge() says them). */
const NOT_EFFECTS = new Set(['ok', 'failed', 'refused']);

/**
 * A call's entry of the shared trail as a pane's log line (what the gateway's own `action` event carries for
 * its sessions): its verdict as the effect, its refusal, its first evidence; null for entries that are no call
 * (approvals, the brake, operator input). No thumbnail: it is taken on the gateway that holds the session.
 */
export function auditAction(e: AuditEntry): ActionEntry | null {
  if (e.kind !== 'call') return null;
  return {
    id: e.id,
    at: e.at,
    sessionKey: e.sessionKey,
    tool: e.tool,
    summary: e.summary,
    effect: NOT_EFFECTS.has(e.verdict) ? null : e.verdict,
    refusal: e.refusal ? `${e.refusal.code}: ${e.refusal.message}` : e.verdict === 'refused' ? 'refused' : null,
    evidence: (e.evidence ?? []).slice(0, 4),
    isError: e.isError ?? e.verdict === 'failed',
    ...(e.labels ? { labels: e.labels } : {}),
    ...(e.approval ? { approval: e.approval } : {}),
    auditId: e.id,
  };
}

/** A pane's lines with `more` merged in: one line per id (a newer copy replaces), oldest first, the last `max`. */
export function mergeActions(list: readonly ActionEntry[], more: readonly ActionEntry[], max = 100): ActionEntry[] {
  const byId = new Map(list.map((a) => [a.id, a]));
  for (const a of more) byId.set(a.id, a);
  return [...byId.values()].sort((a, b) => a.id - b.id).slice(-max);
}

/**
 * What a pane of another gateway's session says it is: its fleet row's state (active, paused, stopped, ended
 * "gateway gone"), `ended` once its live gateway no longer lists it, `ended (gateway gone)` when its gateway is
 * gone from the fleet; `unknown` without a fleet view (no shared store, or not told yet).
 */
export function fleetPaneState(view: FleetView | null, gateway: string, sessionKey: string): string {
  if (!view?.shared) return 'unknown';
  const s = view.sessions.find((x) => x.gateway === gateway && x.row.sessionKey === sessionKey);
  if (s) return fleetState(s);
  const g = view.gateways.find((x) => x.gateway === gateway);
  return g?.live ? 'ended' : 'ended (gateway gone)';
}
