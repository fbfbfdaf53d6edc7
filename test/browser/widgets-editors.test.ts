// Rich editors built from the real npm packages, blank (with and without a placeholder) and pre-filled,
// typed by token and by focus. The truth is each editor's own model (window.__model() reads it through
// the editor's API); a verdict of `confirmed` must match it, and text that landed exactly is never
// reported as a mismatch (a blank editor's empty block going away is not a lost line break).
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

const EDITORS = [
  'quill',
  'prosemirror',
  'lexical',
  'slate',
  'codemirror',
  'tiptap',
  'ckeditor',
  'draftjs',
  // Monaco's default surface (an EditContext in this Chromium) and its textarea mode; TinyMCE's body is an iframe's.
  'monaco',
  'monaco-textarea',
  'tinymce',
];
/** The fixture page and the extra query an editor's name stands for. */
const PAGES: Record<string, { page: string; extra: string; surface?: string }> = {
  monaco: { page: 'monaco', extra: '', surface: 'editcontext' },
  'monaco-textarea': { page: 'monaco', extra: 'textarea', surface: 'textarea' },
};
const STATES = {
  blank: { query: '?blank', start: '' },
  placeholder: { query: '?blank&placeholder=Write%20something', start: '' },
  filled: { query: '', start: 'Hello world' },
} as const;

/**
 * Monaco is not typed reliably yet (its EditContext surface has no box and no field API Verity reads, its
 * hidden textarea is read-only in that mode, and in textarea mode it rewrites the textarea around the caret):
 * there the bar is honesty, each verdict checked against Monaco's model, never a false `confirmed`.
 */
const HONEST_ONLY = new Set(['monaco', 'monaco-textarea']);

for (const editor of EDITORS) {
  describe(editor, () => {
    for (const [state, { query, start }] of Object.entries(STATES)) {
      for (const how of ['token', 'focus'] as const) {
        const exact = !HONEST_ONLY.has(editor);
        test(`${state}, by ${how}: ${exact ? 'text and a line break land once, confirmed, as the model says' : 'every verdict as the model says'}`, async () => {
          const { page: file, extra, surface } = PAGES[editor] ?? { page: editor, extra: '' };
          const page = await s.open(`${file}.html${query}${extra ? (query ? '&' : '?') + extra : ''}`);
          assert.equal(await s.model(page), start, 'the editor starts as the fixture says');
          if (surface)
            assert.equal(
              await page.evaluate('window.__surface()'),
              surface,
              'the input surface the fixture asks Monaco for',
            );
          const snap = await s.snapshot(s.v, { format: 'full' });
          const field = snap.find((e) => e.role === 'textbox', `the ${editor} editor`);
          /** A verdict checked against the model: confirmed exactly when the model holds the text once. */
          const check = async (r: { structured: any; text: string }, want: string) => {
            const now = await s.model(page);
            if (exact) assert.equal(r.structured.effect, 'confirmed', r.text);
            if (r.structured.effect === 'confirmed') assert.equal(now, want, r.text);
            else
              assert.notEqual(
                now,
                want,
                `reported ${r.structured.effect ?? r.structured.refusal?.code} although the text landed exactly: ${r.text}`,
              );
            return r.structured.effect === 'confirmed';
          };
          let first: Awaited<ReturnType<typeof s.v.call>>;
          if (how === 'token') {
            first = await s.v.call('type_text', { element_token: field.element_token, text: 'Hi 世界' });
          } else {
            const c = await s.v.call('click', { element_token: field.element_token });
            if (!exact && c.isError) {
              assert.equal(await s.model(page), start, c.text);
              return;
            }
            assert.ok(['confirmed'].includes(c.structured.effect), c.text);
            // As a user would: the caret to the end of what the editor holds.
            await page.keyboard.down('Control');
            await page.keyboard.press('End');
            await page.keyboard.up('Control');
            first = await s.v.call('type_text', { text: 'Hi 世界' });
          }
          if (!(await check(first, start + 'Hi 世界'))) return;
          const second = await s.v.call('type_text', { text: '\nnext' });
          await check(second, start + 'Hi 世界\nnext');
        });
      }
    }
  });
}

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
  for (const [state, { query, start }] of Object.entries(STATES)) {
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
