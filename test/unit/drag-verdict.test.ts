// A drag's verdict from what the page reported moving (server/contract/drag-verdict.ts), table-driven and
// in-process: confirmed only when the list order or the slider value changed as the drag asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeDrag, type DragEvents, type DragProbe } from '../../server/contract/drag-verdict.js';

const reached: DragEvents = {
  down: 'li "Alpha"',
  up: 'li "Charlie"',
  source: 'li "Alpha"',
  destination: 'li "Charlie"',
  moves: 12,
};
const pressOnly: DragEvents = {
  down: 'li "Alpha"',
  up: null,
  source: 'li "Alpha"',
  destination: 'li "Charlie"',
  moves: 0,
};
const ABCD = ['Alpha', 'Bravo', 'Charlie', 'Delta'];
type ListProbe = Extract<DragProbe, { kind: 'list' }>;
const list = (after: string[], toIndex: number, item = 'Alpha'): ListProbe => ({
  kind: 'list',
  item,
  before: ABCD,
  after,
  fromIndex: ABCD.indexOf(item),
  toIndex,
  afterIndex: after.indexOf(item),
});
const slider = (before: number, after: number, expected: number | null, tolerance = 3): DragProbe => ({
  kind: 'value',
  element: 'div.noUi-handle "Volume"',
  before,
  after,
  expected,
  tolerance,
});
const box = (dx: number, dy: number, wantDx = 150, wantDy = 100): DragProbe => ({
  kind: 'box',
  element: 'div#box',
  dx,
  dy,
  wantDx,
  wantDy,
});

const ROWS: Array<{ name: string; probe: DragProbe | null; seen?: DragEvents; effect: string; observed?: RegExp }> = [
  {
    name: 'list: the item landed where it was dropped',
    probe: list(['Bravo', 'Charlie', 'Alpha', 'Delta'], 2),
    effect: 'confirmed',
  },
  {
    name: 'list: moved up to the first place',
    probe: list(['Charlie', 'Alpha', 'Bravo', 'Delta'], 0, 'Charlie'),
    effect: 'confirmed',
  },
  {
    name: 'list: order unchanged',
    probe: list(ABCD, 2),
    effect: 'no_effect',
    observed: /did not change: "Alpha", "Bravo"/,
  },
  {
    name: 'list: order unchanged although the events reached both ends',
    probe: list(ABCD, 2),
    seen: pressOnly,
    effect: 'no_effect',
  },
  {
    name: 'list: landed one place off',
    probe: list(['Bravo', 'Alpha', 'Charlie', 'Delta'], 2),
    effect: 'mismatch',
    observed: /"Alpha" is at position 2/,
  },
  {
    name: 'list: another item moved instead',
    probe: { ...list(['Bravo', 'Alpha', 'Charlie', 'Delta'], 2), afterIndex: 1 },
    effect: 'mismatch',
  },
  {
    name: 'list: the item left the list',
    probe: { ...list(['Bravo', 'Charlie', 'Delta'], 2), afterIndex: -1 },
    effect: 'mismatch',
    observed: /left the list/,
  },
  {
    name: 'list: changed, but the drop named no item',
    probe: list(['Bravo', 'Charlie', 'Delta', 'Alpha'], -1),
    effect: 'unverifiable',
  },
  { name: 'slider: the value the distance asks for', probe: slider(20, 70, 69), effect: 'confirmed' },
  { name: 'slider: value unchanged', probe: slider(20, 20, 70), effect: 'no_effect', observed: /stayed 20/ },
  {
    name: 'slider: moved, but not as far as asked',
    probe: slider(20, 40, 70),
    effect: 'mismatch',
    observed: /is 40, not about 70/,
  },
  { name: 'slider: moved the other way', probe: slider(20, 10, 70), effect: 'mismatch' },
  {
    name: 'slider: vertical, changed (what was asked is unknown)',
    probe: slider(20, 30, null),
    effect: 'unverifiable',
  },
  { name: 'box: moved by the drag distance', probe: box(150, 100), effect: 'confirmed' },
  { name: 'box: moved elsewhere', probe: box(40, 0), effect: 'mismatch' },
  { name: 'box: did not move, the events reached both ends', probe: box(0, 0), effect: 'confirmed' },
  { name: 'box: did not move, the release was not seen', probe: box(0, 0), seen: pressOnly, effect: 'unverifiable' },
  { name: 'nothing to read, events at both ends', probe: null, effect: 'confirmed' },
];

for (const row of ROWS) {
  test(row.name, () => {
    const v = judgeDrag(row.probe, row.seen ?? reached);
    assert.equal(v.effect, row.effect, JSON.stringify(v));
    assert.ok(v.evidence.length > 0, 'a verdict carries its evidence');
    if (row.observed) assert.match(v.observed ?? '', row.observed);
    if (v.effect !== 'confirmed')
      assert.ok(v.observed || v.escalation, 'a verdict other than confirmed says what was seen or what to do');
  });
}
