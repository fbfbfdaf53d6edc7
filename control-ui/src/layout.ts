// The pane layout as a pure model: columns of stacked session panes, one focused, a sidebar, and two
// docked panels. Agent commands (ui.command) and the operator's own clicks both go through apply().
import type { UiCommand } from '../../server/gateway/protocol.js';

export interface Panel { open: boolean; dock: 'bottom' | 'right' }
export interface Layout {
  columns: string[][];
  focused: string | null;
  sidebar: boolean;
  panels: { terminal: Panel; browser: Panel };
}

/** The commands (declared once, in the gateway protocol): an agent's ui.command or the operator's click. */
export type { UiCommand };

export const EMPTY: Layout = { columns: [], focused: null, sidebar: true, panels: { terminal: { open: false, dock: 'bottom' }, browser: { open: false, dock: 'right' } } };

function locate(layout: Layout, key: string | null): [number, number] | null {
  if (key === null) return null;
  for (let c = 0; c < layout.columns.length; c++) {
    const r = layout.columns[c].indexOf(key);
    if (r >= 0) return [c, r];
  }
  return null;
}

/** Applies one command; returns a new layout (the old one is never mutated). */
export function apply(layout: Layout, command: UiCommand, current: string | null): Layout {
  const next: Layout = structuredClone(layout);
  const key = ('sessionKey' in command && command.sessionKey) || current;
  switch (command.kind) {
    case 'split': {
      if (!key) return layout;
      const at = locate(next, next.focused) ?? locate(next, key);
      if (!at) next.columns.push([key]);
      else if (command.direction === 'right') next.columns.splice(at[0] + 1, 0, [key]);
      else next.columns[at[0]].splice(at[1] + 1, 0, key);
      next.focused = key;
      return next;
    }
    case 'close-pane': {
      const at = locate(next, key);
      if (!at) return layout;
      next.columns[at[0]].splice(at[1], 1);
      next.columns = next.columns.filter((column) => column.length > 0);
      if (next.focused === key && !locate(next, key)) next.focused = next.columns[0]?.[0] ?? null;
      return next;
    }
    case 'focus': {
      if (!key || !locate(next, key)) return layout;
      next.focused = key;
      return next;
    }
    case 'navigate': {
      if (!key) return layout;
      if (locate(next, key)) { next.focused = key; return next; }
      const at = locate(next, next.focused);
      if (at) next.columns[at[0]][at[1]] = key;
      else next.columns.push([key]);
      next.focused = key;
      return next;
    }
    case 'sidebar':
      next.sidebar = command.visible;
      return next;
    case 'panel':
      next.panels[command.panel] = { open: command.open, dock: command.dock ?? next.panels[command.panel].dock };
      return next;
  }
}

const STORAGE_KEY = 'verity.layout.v1';

export function loadLayout(): Layout {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null');
    if (saved && Array.isArray(saved.columns) && saved.panels) return { ...EMPTY, ...saved };
  } catch { /* a corrupt layout falls back to the default */ }
  return structuredClone(EMPTY);
}

export function saveLayout(layout: Layout): void {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(layout));
}
