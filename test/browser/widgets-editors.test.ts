// Rich editors built from the real npm packages, blank (with and without a placeholder) and pre-filled,
// typed by token and by focus. The truth is each editor's own model (window.__model() reads it through
// the editor's API); a verdict of `confirmed` must match it, and text that landed exactly is never
// reported as a mismatch (a blank editor's empty block going away is not a lost line break).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';
import { EDITOR_STATES, editorMatrix } from '../helpers/editor-matrix.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

// Monaco (its EditContext surface and its textarea mode) is in widgets-editors-monaco.test.ts.
const EDITORS = ['quill', 'prosemirror', 'lexical', 'slate', 'codemirror', 'tiptap', 'ckeditor', 'draftjs', 'tinymce'];

editorMatrix(() => s, EDITORS);

describe('a verdict that says mismatch is one', () => {
  test('an editor that drops what is typed into it is no_effect, never confirmed', async () => {
    const page = await s.open('prosemirror.html?blank');
    // The page refuses every text insertion (a read-only-like filter), as some apps do.
    await page.evaluate(
      `window.__view.setProps({ handleTextInput: () => true, handleDOMEvents: { beforeinput: (v, e) => { e.preventDefault(); return true; } } })`,
    );
    const snap = await s.snapshot(s.v, { format: 'full' });
    const field = snap.find((e) => e.role === 'textbox', 'the editor');
    const r = await s.v.call('type_text', { element_token: field.element_token, text: 'abc' });
    assert.notEqual(r.structured.effect, 'confirmed', r.text);
    assert.equal(await s.model(page), '');
  });
});

describe('CodeMirror 6 inside a shadow root', () => {
  for (const [state, { query, start }] of Object.entries(EDITOR_STATES)) {
    for (const how of ['token', 'focus'] as const) {
      test(`${state}, by ${how}: text and a line break land once, confirmed`, async () => {
        const page = await s.open(`codemirror-shadow.html${query}`);
        assert.equal(await s.model(page), start);
        const snap = await s.snapshot(s.v, { format: 'full' });
        const field = snap.find((e) => e.role === 'textbox', 'the editor');
        let r: Awaited<ReturnType<typeof s.v.call>>;
        if (how === 'token') r = await s.v.call('type_text', { element_token: field.element_token, text: 'Hi 世界' });
        else {
          const c = await s.v.call('click', { element_token: field.element_token });
          assert.equal(c.structured.effect, 'confirmed', c.text);
          await page.keyboard.down('Control');
          await page.keyboard.press('End');
          await page.keyboard.up('Control');
          r = await s.v.call('type_text', { text: 'Hi 世界' });
        }
        assert.equal(r.structured.effect, 'confirmed', r.text);
        assert.equal(await s.model(page), start + 'Hi 世界');
        const r2 = await s.v.call('type_text', { text: '\nnext' });
        assert.equal(r2.structured.effect, 'confirmed', r2.text);
        assert.equal(await s.model(page), start + 'Hi 世界\nnext');
      });
    }
  }
});
