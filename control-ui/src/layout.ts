// The pane layout as a pure model: columns of stacked panes, one focused, a sidebar, and two docked
// panels. Agent commands (ui.command) and the operator's own clicks both go through apply().
//
// Panes are keyed by their own id, not by the session they show: one session may be shown in two panes
// (an agent's split), and focus and ✕ must name exactly one of them.

export type Dock = 'bottom' | 'right';
export interface Panel {
  open: boolean;
  dock: Dock;
}
export interface Pane {
  id: string;
  sessionKey: string;
}
export interface Layout {
  columns: Pane[][];
  /** The focused pane's id. */
  focused: string | null;
  sidebar: boolean;
  panels: { terminal: Panel; browser: Panel };
  /**
   * The size of each dock area: the right one's width, the bottom one's height (CSS pixels). Panels docked
   * on the same side share its area, stacked (never on top of each other).
   */
  docks: Record<Dock, number>;
  /** The next pane id's number (ids are never reused, so a stale click cannot close a newer pane). */
  nextId: number;
}

export type PanelName = 'terminal' | 'browser';

/** What agents send (ui.command, see server/gateway/methods.ts) plus what only the operator's own UI does. */
export type UiCommand =
  | { kind: 'split'; direction: 'right' | 'down'; sessionKey?: string; paneId?: string }
  | { kind: 'close-pane' | 'focus' | 'navigate'; sessionKey?: string; paneId?: string }
  | { kind: 'sidebar'; visible: boolean }
  | { kind: 'panel'; panel: PanelName; open: boolean; dock?: Dock }
  | { kind: 'dock-size'; dock: Dock; size: number };

/** Panel sizes are bounded so a saved layout from a bigger screen cannot push everything else away. */
export const PANEL_MIN = 160;
export const PANEL_MAX = 2400;

export const EMPTY: Layout = {
  columns: [],
  focused: null,
  sidebar: true,
  nextId: 1,
  panels: { terminal: { open: false, dock: 'bottom' }, browser: { open: false, dock: 'right' } },
  docks: { right: 640, bottom: 300 },
};

export function panes(layout: Layout): Pane[] {
  return layout.columns.flat();
}

/** The session the focused pane shows (what the browser panel follows). */
export function focusedSession(layout: Layout): string | null {
  return panes(layout).find((p) => p.id === layout.focused)?.sessionKey ?? null;
}

function locate(layout: Layout, paneId: string | null): [number, number] | null {
  if (paneId === null) return null;
  for (let c = 0; c < layout.columns.length; c++) {
    const r = layout.columns[c].findIndex((p) => p.id === paneId);
    if (r >= 0) return [c, r];
  }
  return null;
}

/**
 * The pane a command means: the one named by id (the operator's own buttons); else, for a session key
 * (an agent's command), the focused pane when it shows that session, otherwise the last pane showing it.
 */
function target(layout: Layout, command: { sessionKey?: string; paneId?: string }): Pane | null {
  const all = panes(layout);
  if (command.paneId) return all.find((p) => p.id === command.paneId) ?? null;
  if (!command.sessionKey) return all.find((p) => p.id === layout.focused) ?? null;
  const focused = all.find((p) => p.id === layout.focused);
  if (focused?.sessionKey === command.sessionKey) return focused;
  return all.filter((p) => p.sessionKey === command.sessionKey).at(-1) ?? null;
}

function newPane(layout: Layout, sessionKey: string): Pane {
  return { id: `p${layout.nextId++}`, sessionKey };
}

const clampSize = (size: number) => Math.round(Math.min(PANEL_MAX, Math.max(PANEL_MIN, size)));

/**
 * Applies one command; returns a new layout (the old one is never mutated). `current` is the session the
 * page shows focused: the focused pane's, or the one it shows by itself while the layout has no pane.
 */
export function apply(layout: Layout, command: UiCommand, current: string | null = focusedSession(layout)): Layout {
  const next: Layout = structuredClone(layout);
  const key = ('sessionKey' in command && command.sessionKey) || current;
  switch (command.kind) {
    case 'split': {
      // A page showing a session by itself (no pane yet) splits beside it: that view becomes a pane first,
      // so a split adds a pane and never replaces what was shown.
      if (next.columns.length === 0 && current) {
        const shown = newPane(next, current);
        next.columns.push([shown]);
        next.focused = shown.id;
      }
      // The new pane goes next to the pane the command is about: the one showing that session (the agent's
      // own pane) or, when none does, the focused one. It gets its own id; only it is focused.
      const from = target(next, command) ?? target(next, {});
      const sessionKey = command.sessionKey ?? key;
      if (!sessionKey) return layout;
      const pane = newPane(next, sessionKey);
      const at = locate(next, from?.id ?? null);
      if (!at) next.columns.push([pane]);
      else if (command.direction === 'right') next.columns.splice(at[0] + 1, 0, [pane]);
      else next.columns[at[0]].splice(at[1] + 1, 0, pane);
      next.focused = pane.id;
      return next;
    }
    case 'close-pane': {
      const pane = target(next, command);
      const at = pane && locate(next, pane.id);
      if (!at) return layout;
      next.columns[at[0]].splice(at[1], 1);
      next.columns = next.columns.filter((column) => column.length > 0);
      if (next.focused === pane.id) next.focused = next.columns[0]?.[0]?.id ?? null;
      return next;
    }
    case 'focus': {
      const pane = target(next, command.paneId ? command : { sessionKey: key ?? undefined });
      if (!pane) return layout;
      next.focused = pane.id;
      return next;
    }
    case 'navigate': {
      if (!key) return layout;
      const shown = panes(next).find((p) => p.sessionKey === key);
      if (shown) {
        next.focused = shown.id;
        return next;
      }
      // The focused pane switches to the session (it keeps its place and id).
      const at = locate(next, next.focused);
      if (at) next.columns[at[0]][at[1]] = { id: next.columns[at[0]][at[1]].id, sessionKey: key };
      else {
        const pane = newPane(next, key);
        next.columns.push([pane]);
        next.focused = pane.id;
      }
      return next;
    }
    case 'sidebar':
      next.sidebar = command.visible;
      return next;
    case 'panel':
      next.panels[command.panel] = { open: command.open, dock: command.dock ?? next.panels[command.panel].dock };
      return next;
    case 'dock-size':
      next.docks[command.dock] = clampSize(command.size);
      return next;
  }
}

const STORAGE_KEY = 'verity.layout.v2';

/** A saved layout, checked field by field: a corrupt or older one falls back to the default. */
export function parseLayout(saved: unknown): Layout | null {
  const s = saved as Partial<Layout> | null;
  if (!s || !Array.isArray(s.columns) || !s.panels) return null;
  const pane = (p: unknown): p is Pane =>
    !!p && typeof (p as Pane).id === 'string' && typeof (p as Pane).sessionKey === 'string';
  const columns = s.columns
    .filter(Array.isArray)
    .map((c) => (c as unknown[]).filter(pane))
    .filter((c) => c.length > 0);
  const panel = (name: PanelName): Panel => {
    const p = (s.panels as Record<string, Partial<Panel>>)[name] ?? {};
    return {
      open: p.open === true,
      dock: p.dock === 'right' || p.dock === 'bottom' ? p.dock : EMPTY.panels[name].dock,
    };
  };
  const size = (dock: Dock) => {
    const n = (s.docks as Record<string, unknown> | undefined)?.[dock];
    return typeof n === 'number' && Number.isFinite(n) ? clampSize(n) : EMPTY.docks[dock];
  };
  const ids = columns
    .flat()
    .map((p) => Number(p.id.slice(1)))
    .filter(Number.isFinite);
  const focused = columns.flat().some((p) => p.id === s.focused) ? s.focused! : (columns[0]?.[0]?.id ?? null);
  return {
    columns,
    focused,
    sidebar: s.sidebar !== false,
    nextId: Math.max(Number(s.nextId) || 1, ...ids.map((n) => n + 1)),
    panels: { terminal: panel('terminal'), browser: panel('browser') },
    docks: { right: size('right'), bottom: size('bottom') },
  };
}

export function loadLayout(): Layout {
  try {
    const saved = parseLayout(JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null'));
    if (saved) return saved;
  } catch {
    /* a corrupt layout falls back to the default */
  }
  return structuredClone(EMPTY);
}

export function saveLayout(layout: Layout): void {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(layout));
}
