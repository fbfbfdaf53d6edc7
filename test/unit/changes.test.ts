// What an action changed (server/contract/changes.ts), pure: a held observation against a re-observation,
// elements matched by the index the route says they held. Appeared ones are appended (their tokens name the
// held snapshot), removed and changed ones named by their tokens, the page's new text, the caps said as
// changes_complete false, and the registry (routing/snapshots.ts) resolving the appended tokens.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CHANGE_CAPS, diffObservations, type HeldObservation, type Reobserved } from '../../server/contract/changes.js';
import type { SnapshotElement, SnapshotText } from '../../server/contract/driver.js';
import { SnapshotRegistry } from '../../server/routing/snapshots.js';

const el = (i: number, over: Partial<SnapshotElement> = {}): SnapshotElement => ({
  element_index: i,
  role: 'button',
  label: `b${i}`,
  enabled: true,
  focused: false,
  in_web_content: true,
  frame: { x: 0, y: 0, w: 1, h: 1 },
  parent_index: null,
  ref: { local: i },
  ...over,
});
const again = (e: SnapshotElement, held: number, over: Partial<SnapshotElement> = {}): Reobserved => ({
  ...e,
  ...over,
  held,
});
const text = (t: string): SnapshotText => ({ kind: 'text', text: t, before_index: 0, parent_index: null });
const held = (elements: SnapshotElement[], blocks: string[] = []): HeldObservation => ({
  snapshotId: 's00000001',
  elements,
  text: blocks.map(text),
  gone: new Set(),
});

describe('diffObservations', () => {
  test('nothing changed: no changes at all, complete', () => {
    const h = held([el(0), el(1)], ['Hello']);
    const d = diffObservations(h, { elements: [again(el(0), 0), again(el(1), 1)], text: [text('Hello')] });
    assert.equal(d.changes, undefined);
    assert.equal(d.complete, true);
    assert.equal(d.gone.size, 0);
  });

  test('an element that appeared is appended at the next index and named by a token of the held snapshot', () => {
    const h = held([el(0), el(1)]);
    const dialog = el(7, { role: 'dialog', label: 'Confirm', ref: { local: 9 } });
    const ok = el(8, { label: 'OK', parent_index: 2, ref: { local: 10 } }); // inside the dialog (its index now)
    const d = diffObservations(h, { elements: [again(el(0), 0), again(el(1), 1), dialog, ok] });
    assert.deepEqual(d.changes?.appeared, [
      { role: 'dialog', name: 'Confirm', element_token: 's00000001:2' },
      { role: 'button', name: 'OK', element_token: 's00000001:3' },
    ]);
    assert.deepEqual(d.changes?.dialog, { role: 'dialog', name: 'Confirm', element_token: 's00000001:2' });
    assert.equal(d.elements.length, 4);
    assert.deepEqual(d.elements[3].ref, { local: 10 });
    assert.equal(d.elements[3].element_index, 3);
    assert.equal(d.elements[3].parent_index, 2, 'the parent as the extended observation indexes it');
    assert.equal((d.elements[3] as Reobserved).held, undefined, 'no route-only field is kept');
  });

  test('a dialog the route names apart (a page container) is said; a listed dialog element is named by its token', () => {
    const h = held([el(0)]);
    const apart = diffObservations(h, {
      elements: [again(el(0), 0), el(1, { label: 'OK', ref: { local: 1 } })],
      dialogs: [{ role: 'dialog', name: 'Confirm' }],
    });
    assert.deepEqual(apart.changes?.dialog, { role: 'dialog', name: 'Confirm' });
    const listed = diffObservations(h, {
      elements: [again(el(0), 0), el(1, { role: 'dialog', label: 'Save as', ref: { local: 1 } })],
      dialogs: [{ role: 'dialog', name: 'Other' }],
    });
    assert.deepEqual(listed.changes?.dialog, { role: 'dialog', name: 'Save as', element_token: 's00000001:1' });
  });

  test('an element that went away is removed by its token, and not again on the next diff; back, it appears again', () => {
    const h = held([el(0), el(1), el(2)]);
    const d = diffObservations(h, { elements: [again(el(0), 0), again(el(2), 2)] });
    assert.deepEqual(d.changes?.removed, [{ role: 'button', name: 'b1', element_token: 's00000001:1' }]);
    const next = { ...h, elements: d.elements, gone: d.gone };
    const d2 = diffObservations(next, { elements: [again(el(0), 0), again(el(2), 2)] });
    assert.equal(d2.changes, undefined, 'gone once is not removed twice');
    const d3 = diffObservations(next, { elements: [again(el(0), 0), again(el(1), 1), again(el(2), 2)] });
    assert.deepEqual(d3.changes?.appeared, [{ role: 'button', name: 'b1', element_token: 's00000001:1' }]);
  });

  test('values and enabled states that changed say what they were; the acted element and secrets are left out', () => {
    const h = held([
      el(0, { role: 'textbox', label: 'Name', value: '' }),
      el(1, { role: 'textbox', label: 'Total', value: '1' }),
      el(2, { label: 'Save', enabled: false }),
      el(3, { role: 'textbox', label: 'Password', value: '', secret: 'password' }),
    ]);
    const d = diffObservations(
      h,
      {
        elements: [
          again(h.elements[0], 0, { value: 'Ada' }),
          again(h.elements[1], 1, { value: '2' }),
          again(h.elements[2], 2, { enabled: true }),
          again(h.elements[3], 3, { value: '•••' }),
        ],
      },
      { acted: 0 },
    );
    assert.deepEqual(d.changes?.changed, [
      { role: 'textbox', name: 'Total', element_token: 's00000001:1', value: '2', was: '1' },
      { role: 'button', name: 'Save', element_token: 's00000001:2', enabled: true },
    ]);
    assert.equal(d.elements[0].value, 'Ada', 'the held observation takes the current value');
  });

  test('text that appeared, each new block once, cut to a few short lines', () => {
    const h = held([el(0)], ['Cart', 'Total 1']);
    const long = 'x'.repeat(500);
    const d = diffObservations(h, {
      elements: [again(el(0), 0)],
      text: [text('Cart'), text('Total 1'), text('Order placed'), text(long)],
    });
    assert.equal(d.changes?.text_added?.[0], 'Order placed');
    assert.equal(d.changes?.text_added?.[1].length, CHANGE_CAPS.text_chars);
    assert.equal(d.complete, false, 'a cut line is no complete summary');
  });

  test('capped lists say how many more, and changes_complete is false', () => {
    const h = held([el(0)]);
    const many = Array.from({ length: CHANGE_CAPS.appeared + 5 }, (_, i) => el(100 + i, { ref: { local: 100 + i } }));
    const d = diffObservations(h, { elements: [again(el(0), 0), ...many] });
    assert.equal(d.changes?.appeared?.length, CHANGE_CAPS.appeared);
    assert.deepEqual(d.changes?.more, { appeared: 5 });
    assert.equal(d.complete, false);
    assert.equal(d.elements.length, 1 + many.length, 'the cut ones are still appended: their tokens resolve');
  });

  test('past the cap no removed element is listed, all are counted (a closed picker)', () => {
    const picker = Array.from({ length: CHANGE_CAPS.removed + 1 }, (_, i) => el(i + 1));
    const d = diffObservations(held([el(0), ...picker]), { elements: [again(el(0), 0)] });
    assert.equal(d.changes?.removed, undefined, JSON.stringify(d.changes));
    assert.deepEqual(d.changes?.more, { removed: CHANGE_CAPS.removed + 1 });
    assert.equal(d.complete, false, 'a cut list is no complete summary');
    assert.equal(d.gone.size, picker.length, 'every one of them is gone all the same');
    const few = diffObservations(held([el(0), ...picker.slice(0, CHANGE_CAPS.removed)]), {
      elements: [again(el(0), 0)],
    });
    assert.equal(few.changes?.removed?.length, CHANGE_CAPS.removed, 'up to the cap they are named');
    assert.equal(few.complete, true);
  });

  test('an incomplete re-observation is no complete summary; a navigation is said', () => {
    const h = held([el(0)]);
    const d = diffObservations(h, { elements: [again(el(0), 0)], incomplete: 'a frame' }, { navigated: 'http://x/#b' });
    assert.equal(d.complete, false);
    assert.deepEqual(d.changes, { navigated: 'http://x/#b' });
  });
});

describe('the registry holds the observation actions compare with', () => {
  test('appended elements resolve by their tokens; the observation’s other tokens stay good', () => {
    const reg = new SnapshotRegistry();
    const id = reg.nextId();
    reg.record(id, 'tab', 't1', {
      target: {},
      elements: [el(0), el(1)],
      text: [text('Hi')],
      screenshot_width: 1,
      screenshot_height: 1,
      scale: 1,
    });
    const h = reg.held('tab', 't1')!;
    assert.equal(h.snapshotId, id);
    const d = diffObservations(h, { elements: [again(el(0), 0), el(5, { label: 'New', ref: { local: 2 } })] });
    reg.update(id, d);
    const token = d.changes!.appeared![0].element_token;
    assert.equal(token, `${id}:2`);
    assert.deepEqual(reg.resolve(token).element.ref, { local: 2 });
    assert.equal(reg.resolve(`${id}:0`).element.label, 'b0', 'an older token of the observation still resolves');
    assert.deepEqual([...reg.held('tab', 't1')!.gone], [1]);
    // A newer observation replaces it; an update for the older one is ignored.
    const newer = reg.nextId();
    reg.record(newer, 'tab', 't1', {
      target: {},
      elements: [el(0)],
      screenshot_width: 1,
      screenshot_height: 1,
      scale: 1,
    });
    reg.update(id, d);
    assert.equal(reg.held('tab', 't1')!.elements.length, 1);
    assert.equal(reg.held('window', 't1'), null);
  });
});
