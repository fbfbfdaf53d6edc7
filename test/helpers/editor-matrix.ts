// The rich-editor matrix shared by the editor test files: each editor blank (with and without a
// placeholder) and pre-filled, typed by token and by focus, text then a line break. The truth is the
// editor's own model (window.__model() reads it through the editor's API): each verdict must be
// `confirmed` and match it. Split over files so that no one file outgrows the per-file time bound.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Suite } from './suite.js';

/** An editor's fixture page, the extra query it stands for, and the input surface it must have chosen. */
export interface EditorPage {
  page: string;
  extra: string;
  surface?: string;
}

export const EDITOR_STATES = {
  blank: { query: '?blank', start: '' },
  placeholder: { query: '?blank&placeholder=Write%20something', start: '' },
  filled: { query: '', start: 'Hello world' },
} as const;

/** Registers one describe per editor; `suite()` is the file's browser suite (set in its `before`). */
export function editorMatrix(suite: () => Suite, editors: string[], pages: Record<string, EditorPage> = {}): void {
  for (const editor of editors) {
    describe(editor, () => {
      for (const [state, { query, start }] of Object.entries(EDITOR_STATES)) {
        for (const how of ['token', 'focus'] as const) {
          test(`${state}, by ${how}: text and a line break land once, confirmed, as the model says`, async () => {
            const s = suite();
            const { page: file, extra, surface } = pages[editor] ?? { page: editor, extra: '' };
            const page = await s.open(`${file}.html${query}${extra ? (query ? '&' : '?') + extra : ''}`);
            assert.equal(await s.model(page), start, 'the editor starts as the fixture says');
            if (surface)
              assert.equal(
                await page.evaluate('window.__surface()'),
                surface,
                'the input surface the fixture asks the editor for',
              );
            const snap = await s.snapshot(s.v, { format: 'full' });
            const field = snap.find((e) => e.role === 'textbox', `the ${editor} editor`);
            /** A verdict checked against the model: confirmed, and the model holds the text once. */
            const check = async (r: { structured: any; text: string }, want: string) => {
              const now = await s.model(page);
              assert.equal(r.structured.effect, 'confirmed', r.text);
              assert.equal(now, want, r.text);
            };
            let first: Awaited<ReturnType<typeof s.v.call>>;
            if (how === 'token') {
              first = await s.v.call('type_text', { element_token: field.element_token, text: 'Hi 世界' });
            } else {
              const c = await s.v.call('click', { element_token: field.element_token });
              assert.equal(c.structured.effect, 'confirmed', c.text);
              // As a user would: the caret to the end of what the editor holds.
              await page.keyboard.down('Control');
              await page.keyboard.press('End');
              await page.keyboard.up('Control');
              first = await s.v.call('type_text', { text: 'Hi 世界' });
            }
            await check(first, start + 'Hi 世界');
            const second = await s.v.call('type_text', { text: '\nnext' });
            await check(second, start + 'Hi 世界\nnext');
          });
        }
      }
    });
  }
}
