// Select-like comboboxes from the real packages (react-select, Downshift useSelect and useCombobox),
// blank and pre-filled. set_value chooses the option and reads the selection back; typing into the
// search box is never reported as a selection. The truth is each widget's React state (window.__model()).
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

const WIDGETS = [
  ['rs', 'react-select'],
  ['ds', 'downshift select'],
  ['dc', 'downshift combobox'],
] as const;

for (const [id, name] of WIDGETS) {
  describe(name, () => {
    for (const state of ['blank', 'filled'] as const) {
      test(`${state}: set_value chooses the option; the widget's state holds it`, async () => {
        const page = await s.open('comboboxes.html');
        const start = await s.model(page);
        assert.equal(start[`${id}-${state}`], state === 'blank' ? null : 'Banana');
        const snap = await s.snapshot(s.v, { format: 'full' });
        const r = await s.v.call('set_value', { element_token: snap.token(`${name} ${state}`), value: 'Cherry' });
        assert.equal(r.structured.effect, 'confirmed', r.text);
        assert.equal(r.structured.method, 'choose_option');
        const now = await s.model(page);
        assert.equal(now[`${id}-${state}`], 'Cherry');
        for (const other of Object.keys(start))
          if (other !== `${id}-${state}`) assert.equal(now[other], start[other], `${other} untouched`);
      });

      test(`${state}: a value it does not list is refused, listing what it offers; the selection stays`, async () => {
        const page = await s.open('comboboxes.html');
        const start = await s.model(page);
        const snap = await s.snapshot(s.v, { format: 'full' });
        const r = await s.v.call('set_value', { element_token: snap.token(`${name} ${state}`), value: 'Mango' });
        assert.equal(r.isError, true);
        assert.equal(r.structured.refusal?.code, 'no_such_option', r.text);
        assert.match(r.text, /Cherry/);
        assert.deepEqual(await s.model(page), start);
      });
    }
  });
}

describe('typing into a combobox search box is not a selection', () => {
  for (const [id, name] of [
    ['rs', 'react-select'],
    ['dc', 'downshift combobox'],
  ] as const) {
    test(`${name}: type_text of an option's name says it is search text; nothing is selected`, async () => {
      const page = await s.open('comboboxes.html');
      const snap = await s.snapshot(s.v, { format: 'full' });
      const r = await s.v.call('type_text', { element_token: snap.token(`${name} blank`), text: 'Cherry' });
      // The text did land in the search box; the result says that is all it is.
      assert.ok(
        r.structured.evidence.some((e: any) => e.kind === 'combobox'),
        r.text,
      );
      assert.equal((await s.model(page))[`${id}-blank`], null, 'nothing was selected');
    });
  }
});
