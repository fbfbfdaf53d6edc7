// Choosing several (#24): set_value with a list on a <select multiple> and on an ARIA listbox with
// aria-multiselectable="true" (a click selects one option, Ctrl+click toggles), blank and pre-filled. The
// whole selection is read back; the truth is the page's own (window.__model()).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

const CASES = [
  ['sel-blank', 'Toppings blank', ['Olives', 'onions'], ['olives', 'onions']],
  ['sel-filled', 'Toppings filled', ['olives', 'Mushrooms'], ['olives', 'mushrooms']],
  ['lb-blank', 'Colours blank', ['Green', 'Blue'], ['Green', 'Blue']],
  ['lb-filled', 'Colours filled', ['Blue', 'red'], ['Red', 'Blue']],
] as const;

for (const [id, label, values, selected] of CASES) {
  describe(label, () => {
    test('set_value with a list makes the selection exactly the list, read back whole', async () => {
      const page = await s.open('choices.html');
      const start = await s.model(page);
      const snap = await s.snapshot(s.v, { format: 'full' });
      const r = await s.v.call('set_value', { element_token: snap.token(label), value: [...values] });
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.ok(
        r.structured.evidence.some((e: any) => e.kind === 'selection'),
        r.text,
      );
      const now = await s.model(page);
      assert.deepEqual(now[id], selected);
      for (const other of Object.keys(start)) if (other !== id) assert.deepEqual(now[other], start[other], other);
    });

    test('an option it does not list is refused naming it; the selection stays', async () => {
      const page = await s.open('choices.html');
      const start = await s.model(page);
      const snap = await s.snapshot(s.v, { format: 'full' });
      const r = await s.v.call('set_value', { element_token: snap.token(label), value: [values[0], 'Anchovies'] });
      assert.equal(r.structured.refusal?.code, 'no_such_option', r.text);
      assert.match(r.text, /"Anchovies"/);
      assert.doesNotMatch(r.text, new RegExp(`"${values[0]}"`), 'the option it has is not called missing');
      assert.deepEqual(await s.model(page), start);
    });
  });
}

test('a list on a single select is refused naming value; a disabled option is refused', async () => {
  const page = await s.open('choices.html');
  const start = await s.model(page);
  const snap = await s.snapshot(s.v, { format: 'full' });
  const single = await s.v.call('set_value', { element_token: snap.token('Size'), value: ['Small', 'Large'] });
  assert.equal(single.structured.refusal?.code, 'invalid_arguments', single.text);
  assert.match(single.text, /value/);
  const disabled = await s.v.call('set_value', { element_token: snap.token('Toppings blank'), value: ['Peppers'] });
  assert.equal(disabled.structured.refusal?.code, 'element_disabled', disabled.text);
  assert.deepEqual(await s.model(page), start);
});

test('an empty list clears a multi-select listbox', async () => {
  const page = await s.open('choices.html');
  const snap = await s.snapshot(s.v, { format: 'full' });
  const r = await s.v.call('set_value', { element_token: snap.token('Colours filled'), value: [] });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.deepEqual((await s.model(page))['lb-filled'], []);
});
