// The native tree walk's pure parts (server/native/walk.ts): ordering rows from the cache and from live
// reads, and which nodes must be read live. The live walk itself runs against LibreOffice in
// test/native/office.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Atspi, CacheItem } from '../../server/native/linux/atspi/model.js';
import { ROLE, calcCellEditorName } from '../../server/native/linux/atspi/roles.js';
import {
  cacheChildren,
  managesChildren,
  needsLiveRead,
  orderRows,
  tableCellsInView,
} from '../../server/native/linux/atspi/walk.js';

const BUS = ':1.9';
const SHOWING: [number, number] = [1 << 25, 0];
function item(path: string, parent: string, index: number, childCount: number, states = SHOWING): CacheItem {
  return {
    ref: { bus: BUS, path },
    parent: { bus: BUS, path: parent },
    indexInParent: index,
    childCount,
    interfaces: [],
    name: path,
    role: 39,
    states,
  };
}

// LibreOffice's shape: the frame's panel has two children, but the cache lists one; the root pane's
// parent in the cache is a panel that is not in the cache at all.
const frame = item('frame', 'app', 0, 1);
const panel = item('panel', 'frame', 0, 2);
const menus = item('menus', 'panel', 0, 0);
const rootPane = item('rootpane', 'missing', 0, 1);
const doc = item('doc', 'rootpane', 0, -1);
const items = [frame, panel, menus, rootPane, doc];

test('from the cache alone, a subtree whose parent is not in the cache is not reached', () => {
  const { rows } = orderRows(frame, cacheChildren(items), new Map());
  assert.deepEqual(
    rows.map((r) => r.item.ref.path),
    ['frame', 'panel', 'menus'],
  );
});

test('the panel that has more children than the cache lists is read live, and the document is then reached', () => {
  const cached = cacheChildren(items);
  assert.equal(needsLiveRead(panel, cached), 'children');
  assert.equal(needsLiveRead(menus, cached), null);
  assert.equal(needsLiveRead(frame, cached), null);
  // What a live read of the panel gives: its menus and the missing panel, which holds the root pane.
  const missing = item('missing', 'panel', 1, 1);
  const live = new Map([
    [`${BUS}panel`, [menus, missing]],
    [`${BUS}missing`, [rootPane]],
  ]);
  const { rows, cut } = orderRows(frame, cached, live);
  assert.equal(cut, false);
  assert.deepEqual(
    rows.map((r) => [r.item.ref.path, r.depth, r.parent?.ref.path ?? null]),
    [
      ['frame', 0, null],
      ['panel', 1, 'frame'],
      ['menus', 2, 'panel'],
      ['missing', 2, 'panel'],
      ['rootpane', 3, 'missing'],
      ['doc', 4, 'rootpane'],
    ],
  );
});

test('a self-managing container is read by index when shown, never when not (closed menus)', () => {
  const cached = cacheChildren(items);
  assert.equal(managesChildren(doc), true);
  assert.equal(needsLiveRead(doc, cached), 'managed');
  const closedMenu = item('menu', 'menus', 0, -1, [1 << 30, 0]);
  assert.equal(needsLiveRead(closedMenu, cached), null);
  // MANAGES_DESCENDANTS (state 31) with a real child count is self-managing too.
  const sheet = item('sheet', 'doc', 0, 2147483647, [(1 << 25) | (1 << 31), 0]);
  assert.equal(managesChildren(sheet), true);
  assert.equal(needsLiveRead(sheet, cached), 'managed');
});

test('a walk cut at its node bound says so (no false elements_complete)', () => {
  const wide = [frame, ...Array.from({ length: 10 }, (_, i) => item(`c${i}`, 'frame', i, 0))];
  const { rows, cut } = orderRows(frame, cacheChildren(wide), new Map(), 5);
  assert.equal(rows.length, 5);
  assert.equal(cut, true);
  assert.equal(orderRows(frame, cacheChildren(wide), new Map(), 50).cut, false);
});

test('a live read overrides the cache: a child the cache still lists under the node but the app no longer has is gone', () => {
  const cached = cacheChildren([frame, item('old', 'frame', 0, 0)]);
  const fresh = item('new', 'frame', 0, 0);
  const { rows } = orderRows(frame, cached, new Map([[`${BUS}frame`, [fresh]]]));
  assert.deepEqual(
    rows.map((r) => r.item.ref.path),
    ['frame', 'new'],
  );
});

test("Calc's cell editor is a paragraph in a panel of a spreadsheet document, and nothing else is", () => {
  const panel = { role: ROLE.panel, name: 'Cell B3' };
  const sheetDoc = { role: ROLE.documentSpreadsheet };
  assert.equal(calcCellEditorName(ROLE.paragraph, panel, sheetDoc), 'Cell B3');
  assert.equal(calcCellEditorName(ROLE.paragraph, panel, { role: ROLE.documentFrame }), null, 'a Writer panel');
  assert.equal(calcCellEditorName(ROLE.paragraph, { role: ROLE.tableCell, name: 'B3' }, sheetDoc), null);
  assert.equal(calcCellEditorName(ROLE.tableCell, panel, sheetDoc), null);
  assert.equal(calcCellEditorName(ROLE.paragraph, null, null), null, 'a paragraph at the top');
});

// A sheet (Calc's, as its AT-SPI table answers): cells 82x17 from the grid's corner, indexed row by row over
// 1024 columns; its grid box is whatever `boxes` gives on each read of the table's extents.
function sheet(boxes: () => { x: number; y: number; w: number; h: number }) {
  const table = { bus: ':1.5', path: '/sheet' };
  let box = { x: 0, y: 0, w: 0, h: 0 };
  const cell = (row: number, column: number) => ({ bus: ':1.5', path: `/cell/${row * 1024 + column}` });
  const atspi = {
    extents: async () => {
      box = boxes();
      return box;
    },
    call: async (ref: { path: string }, _iface: string, method: string, _sig?: string, args: number[] = []) => {
      if (method === 'GetAccessibleAtPoint') {
        const [x, y] = args;
        return [[':1.5', cell(Math.floor((y - 45) / 17), Math.floor((x - 45) / 82)).path]];
      }
      if (method === 'GetIndexInParent') return [Number(ref.path.split('/')[2])];
      if (method === 'GetRowAtIndex') return [Math.floor(args[0] / 1024)];
      if (method === 'GetColumnAtIndex') return [args[0] % 1024];
      if (method === 'GetAccessibleAt') return [[':1.5', cell(args[0], args[1]).path]];
      throw new Error(method);
    },
  };
  return { atspi: atspi as unknown as Atspi, table };
}

test("a sheet's cells in view are read again while its grid moves under the read (laid out as its window is sized)", async () => {
  // Read wide (5 columns), then narrowed (4) before the read was checked: the cells of the box it has now.
  const seen = [
    { x: 45, y: 45, w: 410, h: 170 },
    { x: 45, y: 45, w: 305, h: 170 },
  ];
  const { atspi, table } = sheet(() => seen.shift() ?? { x: 45, y: 45, w: 305, h: 170 });
  const read = await tableCellsInView(atspi, table);
  assert.equal(read?.refs.length, 4 * 10);
  assert.equal(read?.cut, undefined);
});

test('a sheet whose grid never holds still while read: its cells are said to be of a box it may no longer have', async () => {
  let w = 300;
  const { atspi, table } = sheet(() => ({ x: 45, y: 45, w: (w += 82), h: 170 }));
  const read = await tableCellsInView(atspi, table);
  assert.match(String(read?.cut), /the table was being laid out: its box moved while its cells were read, 4 times/);
});
