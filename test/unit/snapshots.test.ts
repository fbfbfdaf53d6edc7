// The element-token registry (server/routing/snapshots.ts), in process: token format, stale tokens (a newer
// snapshot of the same target, a forgotten target, an evicted snapshot), invalid tokens, and its bounds.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SnapshotRegistry } from '../../server/routing/snapshots.js';
import { Refusal } from '../../server/contract/refusal.js';
import type { Snapshot, SnapshotElement } from '../../server/contract/driver.js';

const element = (i: number): SnapshotElement => ({
  element_index: i,
  role: 'button',
  label: `b${i}`,
  enabled: true,
  focused: false,
  in_web_content: true,
  frame: { x: 0, y: 0, w: 1, h: 1 },
  parent_index: null,
  ref: { local: i },
});
const snap = (n: number, scale = 1): Snapshot => ({
  target: {},
  elements: Array.from({ length: n }, (_, i) => element(i)),
  screenshot_width: 1,
  screenshot_height: 1,
  scale,
});

function refusal(fn: () => unknown): Refusal {
  try {
    fn();
  } catch (e) {
    if (e instanceof Refusal) return e;
    throw e;
  }
  assert.fail('expected a refusal');
}

/** Records a fresh snapshot of a target and returns its id. */
function take(
  reg: SnapshotRegistry,
  key: string,
  n = 3,
  kind: 'tab' | 'window' | 'desktop' = 'tab',
  scale = 1,
): string {
  const id = reg.nextId();
  reg.record(id, kind, key, snap(n, scale));
  return id;
}

describe('SnapshotRegistry', () => {
  test('ids are s + hex digits (no leading zero), increasing; a token is id:index', () => {
    const reg = new SnapshotRegistry();
    const ids = [reg.nextId(), reg.nextId(), reg.nextId()];
    assert.deepEqual(ids, ['s1', 's2', 's3']);
    assert.equal(SnapshotRegistry.token('s0000000a', 7), 's0000000a:7');
    assert.ok(SnapshotRegistry.token('s0000000a', 7).startsWith(SnapshotRegistry.tokenPrefix('s0000000a')));
  });

  test('a token of the latest snapshot names its element, target and index', () => {
    const reg = new SnapshotRegistry();
    const id = take(reg, 'T1', 3, 'window');
    const found = reg.resolve(SnapshotRegistry.token(id, 2));
    assert.deepEqual(
      [found.kind, found.key, found.snapshotId, found.index, found.element.label],
      ['window', 'T1', id, 2, 'b2'],
    );
  });

  test('malformed tokens are invalid_element_token, never a lookup', () => {
    const reg = new SnapshotRegistry();
    take(reg, 'T1');
    for (const token of [
      '',
      's00000001',
      's00000001:',
      'S00000001:0',
      's0000001:0',
      's00000001:-1',
      's00000001:0x1',
      'x00000001:0',
      ' s00000001:0',
      's00000001:0 ',
      's000000001:0',
      's0000000g:0',
    ]) {
      const r = refusal(() => reg.resolve(token));
      assert.equal(r.code, 'invalid_element_token', JSON.stringify(token));
      assert.match(r.message, /element_token/);
      // The refusal shows what a token looks like, so a model can tell a typo from a stale one.
      assert.match(r.message, /"<snapshot_id>:<element_index>"/);
      assert.equal(r.details.expected_form, 's<hex digits>:<element_index>');
    }
  });

  test('an index beyond the snapshot is invalid_element_token and says how many it had', () => {
    const reg = new SnapshotRegistry();
    const id = take(reg, 'T1', 3);
    const r = refusal(() => reg.resolve(SnapshotRegistry.token(id, 3)));
    assert.equal(r.code, 'invalid_element_token');
    assert.match(r.message, /out of range \(snapshot had 3 elements\)/);
  });

  test('a newer snapshot of the same target makes older tokens stale, naming the current snapshot', () => {
    const reg = new SnapshotRegistry();
    const old = take(reg, 'T1');
    const other = take(reg, 'T2');
    const current = take(reg, 'T1');
    const r = refusal(() => reg.resolve(SnapshotRegistry.token(old, 0)));
    assert.equal(r.code, 'stale_element_token');
    assert.deepEqual(r.details.current_snapshot_ids, [current]);
    assert.match(r.message, /get_window_state/);
    // Other targets and kinds keep their tokens: staleness is per target.
    assert.equal(reg.resolve(SnapshotRegistry.token(other, 1)).key, 'T2');
    assert.equal(reg.resolve(SnapshotRegistry.token(current, 1)).snapshotId, current);
    const win = take(reg, 'T1', 2, 'window');
    assert.equal(
      reg.resolve(SnapshotRegistry.token(current, 0)).kind,
      'tab',
      'a window with the same key is another target',
    );
    assert.equal(reg.resolve(SnapshotRegistry.token(win, 0)).kind, 'window');
  });

  test('a stale snapshot gives its elements up (only its identity is kept)', () => {
    const reg = new SnapshotRegistry();
    const old = take(reg, 'T1', 1000);
    assert.equal(reg.latestOf('tab', 'T1')?.elements.length, 1000);
    const oldStored = reg.latestOf('tab', 'T1')!;
    take(reg, 'T1', 2);
    assert.equal(oldStored.elements.length, 0, "the stale snapshot's 1000 elements were let go");
    assert.equal(refusal(() => reg.resolve(SnapshotRegistry.token(old, 0))).code, 'stale_element_token');
  });

  test('a forgotten target (its tab closed): its tokens are stale, with no current snapshot', () => {
    const reg = new SnapshotRegistry();
    const id = take(reg, 'T1');
    reg.forget('tab', 'T1');
    const r = refusal(() => reg.resolve(SnapshotRegistry.token(id, 0)));
    assert.equal(r.code, 'stale_element_token');
    assert.deepEqual(r.details.current_snapshot_ids, []);
    assert.equal(reg.latestOf('tab', 'T1'), undefined);
  });

  test('bounded: past 64 snapshots the oldest are evicted, and their tokens are told stale, not invalid', () => {
    const reg = new SnapshotRegistry();
    const first = take(reg, 'first');
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(take(reg, `T${i}`));
    const r = refusal(() => reg.resolve(SnapshotRegistry.token(first, 0)));
    assert.equal(r.code, 'stale_element_token');
    // The refusal names current snapshots to go to; the recent ones still resolve.
    assert.ok(
      Array.isArray(r.details.current_snapshot_ids) && (r.details.current_snapshot_ids as string[]).includes(ids[99]),
    );
    for (const id of ids.slice(-64)) assert.equal(reg.resolve(SnapshotRegistry.token(id, 0)).snapshotId, id);
    assert.equal(
      refusal(() => reg.resolve(SnapshotRegistry.token(ids[35], 0))).code,
      'stale_element_token',
      'the 65th newest is gone',
    );
    // Targets whose only snapshot was evicted are let go too (windows long closed are never forgotten otherwise).
    assert.deepEqual(reg.size, { targets: 64, snapshots: 64 });
    assert.ok(
      !(r.details.current_snapshot_ids as string[]).includes(first),
      'an evicted snapshot is not offered as current',
    );
  });

  test('latestOf gives the latest snapshot of a target with its scale (the px form)', () => {
    const reg = new SnapshotRegistry();
    take(reg, 'T1', 1, 'tab', 1);
    const id = take(reg, 'T1', 1, 'tab', 2);
    assert.deepEqual([reg.latestOf('tab', 'T1')?.id, reg.latestOf('tab', 'T1')?.scale], [id, 2]);
    assert.equal(reg.latestOf('window', 'T1'), undefined);
  });

  test('a token resolved once stays current until a newer snapshot of its target or its forgetting; each resolve is counted', () => {
    const reg = new SnapshotRegistry();
    const id = take(reg, 'T1');
    const before = reg.resolvedCount;
    const found = reg.resolve(SnapshotRegistry.token(id, 1));
    assert.equal(reg.resolvedCount, before + 1);
    assert.equal(reg.isCurrent(found), true);
    take(reg, 'T2'); // another target's snapshot changes nothing here
    assert.equal(reg.isCurrent(found), true);
    assert.equal(reg.resolvedCount, before + 1, 'isCurrent is no second resolution');
    const newer = take(reg, 'T1');
    assert.equal(reg.isCurrent(found), false, 'a newer snapshot of T1 makes the early resolution stale');
    const again = reg.resolve(SnapshotRegistry.token(newer, 0));
    reg.forget('tab', 'T1');
    assert.equal(reg.isCurrent(again), false, 'a forgotten target (its tab closed) makes it stale');
  });
});
