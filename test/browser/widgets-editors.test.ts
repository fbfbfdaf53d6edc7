// Rich editors built from the real npm packages, blank (with and without a placeholder) and pre-filled,
// typed by token and by focus. The truth is each editor's own model (window.__model() reads it through
// the editor's API); a verdict of `confirmed` must match it, and text that landed exactly is never
// reported as a mismatch (a blank editor's empty block going away is not a lost line break).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
before(async () => { s = await browserSuite(); });
after(async () => { await s?.close(); });

const EDITORS = ['quill', 'prosemirror', 'lexical', 'slate', 'codemirror', 'tiptap', 'ckeditor', 'draftjs'];
const STATES = {
  blank: { query: '?blank', start: '' },
  placeholder: { query: '?blank&placeholder=Write%20something', start: '' },
  filled: { query: '', start: 'Hello world' },
} as const;

for (const editor of EDITORS) {
  describe(editor, () => {
    for (const [state, { query, start }] of Object.entries(STATES)) {
      for (const how of ['token', 'focus'] as const) {
        test(`${state}, by ${how}: text and a line break land once, confirmed, as the model says`, async () => {
          const page = await s.open(`${editor}.html${query}`);
          assert.equal(await s.model(page), start, 'the editor starts as the fixture says');
          const snap = await s.snapshot(s.v, { format: 'full' });
          const field = snap.find((e) => e.role === 'textbox', `the ${editor} editor`);
          let first;
          if (how === 'token') {
            first = await s.v.call('type_text', { element_token: field.element_token, text: 'Hi 世界' });
          } else {
            const c = await s.v.call('click', { element_token: field.element_token });
            assert.ok(['confirmed'].includes(c.structured.effect), c.text);
            // As a user would: the caret to the end of what the editor holds.
            await page.keyboard.down('Control');
            await page.keyboard.press('End');
            await page.keyboard.up('Control');
            first = await s.v.call('type_text', { text: 'Hi 世界' });
          }
          assert.equal(first.structured.effect, 'confirmed', first.text);
          assert.equal(await s.model(page), start + 'Hi 世界');
          const second = await s.v.call('type_text', { text: '\nnext' });
          assert.equal(second.structured.effect, 'confirmed', second.text);
          assert.equal(await s.model(page), start + 'Hi 世界\nnext');
        });
      }
    }
  });
}

describe('a verdict that says mismatch is one', () => {
  test('an editor that drops what is typed into it is no_effect, never confirmed', async () => {
    const page = await s.open('prosemirror.html?blank');
    // The page refuses every text insertion (a read-only-like filter), as some apps do.
    await page.evaluate(`window.__view.setProps({ handleTextInput: () => true, handleDOMEvents: { beforeinput: (v, e) => { e.preventDefault(); return true; } } })`);
    const snap = await s.snapshot(s.v, { format: 'full' });
    const field = snap.find((e) => e.role === 'textbox', 'the editor');
    const r = await s.v.call('type_text', { element_token: field.element_token, text: 'abc' });
    assert.notEqual(r.structured.effect, 'confirmed', r.text);
    assert.equal(await s.model(page), '');
  });
});

describe('CodeMirror 6 inside a shadow root', () => {
  for (const [query, start] of [['?blank', ''], ['', 'Hello world']] as const) {
    test(`${start ? 'filled' : 'blank'}, by token: text and a line break land once, confirmed`, async () => {
      const page = await s.open(`codemirror-shadow.html${query}`);
      const snap = await s.snapshot(s.v, { format: 'full' });
      const field = snap.find((e) => e.role === 'textbox', 'the editor');
      const r = await s.v.call('type_text', { element_token: field.element_token, text: 'Hi 世界' });
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.equal(await s.model(page), start + 'Hi 世界');
      const r2 = await s.v.call('type_text', { text: '\nnext' });
      assert.equal(r2.structured.effect, 'confirmed', r2.text);
      assert.equal(await s.model(page), start + 'Hi 世界\nnext');
    });
  }
});
