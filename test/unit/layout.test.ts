// The Control UI's layout reducer (control-ui/src/layout.ts), in process: every command the operator's
// clicks and an agent's `screen` tool send, on a table of layouts, and the layout it saves and loads.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EMPTY,
  apply,
  focusedSession,
  loadLayout,
  saveLayout,
  type Layout,
  type UiCommand,
} from '../../control-ui/src/layout.js';
import { commandFor } from '../../server/tools/screen.js';

/** Panes are keyed by id; in these tables each pane's id is its session's key, and new panes get p1, p2… */
const layout = (columns: string[][], focused: string | null, over: Partial<Layout> = {}): Layout => ({
  ...structuredClone(EMPTY),
  columns: columns.map((c) => c.map((k) => ({ id: k, sessionKey: k }))),
  focused,
  ...over,
});
const sessionsOf = (l: Layout) => l.columns.map((c) => c.map((p) => p.sessionKey));

interface Row {
  name: string;
  from: Layout;
  command: UiCommand;
  current?: string | null;
  columns?: string[][];
  focused?: string | null;
  unchanged?: true;
}

const ROWS: Row[] = [
  // split: beside (right) or below (down) the focused pane; the new pane takes focus.
  {
    name: 'split from the view a page shows by itself (no pane yet): that view becomes a pane, the split one more',
    from: EMPTY,
    command: { kind: 'split', direction: 'right' },
    current: 'a',
    columns: [['a'], ['a']],
    focused: 'a',
  },
  {
    name: "an agent's split_down with another session from the lone view: beside it, not instead of it",
    from: EMPTY,
    command: { kind: 'split', direction: 'down', sessionKey: 'b' },
    current: 'a',
    columns: [['a', 'b']],
    focused: 'b',
  },
  {
    name: 'split into an empty layout showing nothing: the new pane alone',
    from: EMPTY,
    command: { kind: 'split', direction: 'right', sessionKey: 'b' },
    current: null,
    columns: [['b']],
    focused: 'b',
  },
  {
    name: 'split right of the focused pane',
    from: layout([['a'], ['c']], 'a'),
    command: { kind: 'split', direction: 'right', sessionKey: 'b' },
    columns: [['a'], ['b'], ['c']],
    focused: 'b',
  },
  {
    name: 'split down below the focused pane',
    from: layout([['a', 'c']], 'a'),
    command: { kind: 'split', direction: 'down', sessionKey: 'b' },
    columns: [['a', 'b', 'c']],
    focused: 'b',
  },
  {
    name: 'split with no session to show does nothing',
    from: layout([['a']], 'a'),
    command: { kind: 'split', direction: 'right' },
    current: null,
    unchanged: true,
  },
  {
    name: 'sessionKey wins over the current session',
    from: layout([['a']], 'a'),
    command: { kind: 'split', direction: 'down', sessionKey: 'b' },
    current: 'z',
    columns: [['a', 'b']],
    focused: 'b',
  },
  // close-pane: empty columns go; focus falls to the first pane left.
  {
    name: 'close the focused pane',
    from: layout([['a'], ['b', 'c']], 'b'),
    command: { kind: 'close-pane' },
    current: 'b',
    columns: [['a'], ['c']],
    focused: 'a',
  },
  {
    name: 'close the last pane of a column',
    from: layout([['a'], ['b']], 'a'),
    command: { kind: 'close-pane', sessionKey: 'b' },
    columns: [['a']],
    focused: 'a',
  },
  {
    name: 'close the only pane',
    from: layout([['a']], 'a'),
    command: { kind: 'close-pane', sessionKey: 'a' },
    columns: [],
    focused: null,
  },
  {
    name: 'close a pane not shown does nothing',
    from: layout([['a']], 'a'),
    command: { kind: 'close-pane', sessionKey: 'x' },
    unchanged: true,
  },
  // focus: only a pane that is shown.
  {
    name: 'focus a shown pane',
    from: layout([['a'], ['b']], 'a'),
    command: { kind: 'focus', sessionKey: 'b' },
    columns: [['a'], ['b']],
    focused: 'b',
  },
  {
    name: 'focus a pane not shown does nothing',
    from: layout([['a']], 'a'),
    command: { kind: 'focus', sessionKey: 'x' },
    unchanged: true,
  },
  // navigate: focus it where shown, else show it in the focused pane, else in a new column.
  {
    name: 'navigate to a shown pane focuses it',
    from: layout([['a'], ['b']], 'a'),
    command: { kind: 'navigate', sessionKey: 'b' },
    columns: [['a'], ['b']],
    focused: 'b',
  },
  {
    name: 'navigate replaces the focused pane',
    from: layout([['a'], ['b']], 'b'),
    command: { kind: 'navigate', sessionKey: 'c' },
    columns: [['a'], ['c']],
    focused: 'c',
  },
  {
    name: 'navigate with nothing focused adds a column',
    from: layout([['a']], null),
    command: { kind: 'navigate', sessionKey: 'c' },
    columns: [['a'], ['c']],
    focused: 'c',
  },
  {
    name: 'navigate with no session does nothing',
    from: layout([['a']], 'a'),
    command: { kind: 'navigate' },
    current: null,
    unchanged: true,
  },
];

describe('apply', () => {
  for (const row of ROWS) {
    test(row.name, () => {
      const before = structuredClone(row.from);
      const next = apply(row.from, row.command, row.current === undefined ? null : row.current);
      assert.deepEqual(row.from, before, 'the old layout is never mutated');
      if (row.unchanged) {
        assert.equal(next, row.from, 'a command that changes nothing returns the same layout');
        return;
      }
      assert.deepEqual(sessionsOf(next), row.columns);
      assert.equal(focusedSession(next), row.focused);
      assert.deepEqual(
        [next.sidebar, next.panels],
        [row.from.sidebar, row.from.panels],
        'panes commands leave the sidebar and panels alone',
      );
    });
  }

  test('sidebar and panels: shown, hidden, docked; hiding keeps the dock', () => {
    let l = apply(EMPTY, { kind: 'sidebar', visible: false }, null);
    assert.equal(l.sidebar, false);
    l = apply(l, { kind: 'panel', panel: 'terminal', open: true, dock: 'right' }, null);
    assert.deepEqual(l.panels.terminal, { open: true, dock: 'right' });
    l = apply(l, { kind: 'panel', panel: 'terminal', open: false }, null);
    assert.deepEqual(l.panels.terminal, { open: false, dock: 'right' });
    assert.deepEqual(l.panels.browser, EMPTY.panels.browser);
    assert.deepEqual(EMPTY.panels.terminal, { open: false, dock: 'bottom' }, 'EMPTY itself is never changed');
  });

  test('every screen tool action (server/tools/screen.ts) is a command the reducer acts on', () => {
    const shown = layout([['a']], 'a');
    const actions = [
      'split_right',
      'split_down',
      'close_pane',
      'focus',
      'navigate',
      'sidebar_show',
      'sidebar_hide',
      'terminal_show',
      'terminal_hide',
      'browser_show',
      'browser_hide',
    ] as const;
    const expect: Record<(typeof actions)[number], (l: Layout) => boolean> = {
      split_right: (l) => l.columns.length === 2,
      split_down: (l) => l.columns[0].length === 2,
      close_pane: (l) => l.columns.length === 0,
      focus: (l) => focusedSession(l) === 'a',
      navigate: (l) => focusedSession(l) === 'b',
      sidebar_show: (l) => l.sidebar,
      sidebar_hide: (l) => !l.sidebar,
      terminal_show: (l) => l.panels.terminal.open && l.panels.terminal.dock === 'right',
      terminal_hide: (l) => !l.panels.terminal.open,
      browser_show: (l) => l.panels.browser.open && l.panels.browser.dock === 'right',
      browser_hide: (l) => !l.panels.browser.open,
    };
    for (const action of actions) {
      const key = action === 'close_pane' || action === 'focus' ? 'a' : 'b';
      const from = action.endsWith('_hide')
        ? apply(
            shown,
            commandFor(action.replace('_hide', '_show') as (typeof actions)[number], key, 'right') as UiCommand,
            null,
          )
        : shown;
      const next = apply(from, commandFor(action, key, 'right') as UiCommand, null);
      assert.ok(expect[action](next), `${action}: ${JSON.stringify(next)}`);
    }
  });
});

describe('loadLayout and saveLayout', () => {
  /** Node has no localStorage: a Map-backed one, as much of the Storage API as the module uses. */
  function withStorage<T>(fn: (items: Map<string, string>) => T): T {
    const items = new Map<string, string>();
    const g = globalThis as { localStorage?: unknown };
    g.localStorage = {
      getItem: (k: string) => items.get(k) ?? null,
      setItem: (k: string, v: string) => void items.set(k, String(v)),
    };
    try {
      return fn(items);
    } finally {
      delete g.localStorage;
    }
  }

  test('a saved layout loads back', () =>
    withStorage(() => {
      const l = apply(
        apply(EMPTY, { kind: 'split', direction: 'right', sessionKey: 'a' }, null),
        { kind: 'panel', panel: 'browser', open: true },
        null,
      );
      saveLayout(l);
      assert.deepEqual(loadLayout(), l);
    }));

  test('nothing saved, a corrupt or a foreign value: the default layout (a copy)', () =>
    withStorage((items) => {
      saveLayout(EMPTY);
      const [key] = items.keys();
      for (const value of [undefined, '{', '"x"', '{"columns": 1}', '{"columns": []}', 'null']) {
        items.clear();
        if (value !== undefined) items.set(key, value);
        const l = loadLayout();
        assert.deepEqual(l, EMPTY, String(value));
        assert.notEqual(l, EMPTY, 'a copy, so applying to it cannot change the default');
      }
    }));

  test('without localStorage at all (a locked-down page): the default layout', () => {
    assert.deepEqual(loadLayout(), EMPTY);
  });
});
