// Pure helpers of the console's frame: how sessions are named, which rows are closed, where the docked
// panels go (a grid, so the panels stay the same elements when they move), what the offline banner says,
// and the keyboard shortcuts.
import type { AuditEntry, FleetView } from '../../server/gateway/protocol.js';
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
