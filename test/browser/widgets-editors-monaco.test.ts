// Monaco (the real monaco-editor package) on both of its input surfaces: in this Chromium its default is a
// caret-sized div with an EditContext, its lines rendered beside it; `editContext: false` gives its
// textarea mode, a 1 px textarea it rewrites around the caret. Blank (with and without a placeholder) and
// pre-filled, typed by token and by focus, each verdict checked against Monaco's model (window.__model()).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';
import { editorMatrix } from '../helpers/editor-matrix.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

const SURFACES = {
  monaco: { page: 'monaco', extra: '', surface: 'editcontext' },
  'monaco-textarea': { page: 'monaco', extra: 'textarea', surface: 'textarea' },
};

editorMatrix(() => s, Object.keys(SURFACES), SURFACES);

for (const [name, { extra, surface }] of Object.entries(SURFACES)) {
  describe(`${name}: what the model sees and honesty`, () => {
    test('get_window_state lists the editor once, as a textbox named as Chrome names it, with its text', async () => {
      const page = await s.open(`monaco.html${extra ? '?' + extra : ''}`);
      assert.equal(await page.evaluate('window.__surface()'), surface);
      const snap = await s.snapshot(s.v, { format: 'full' });
      const boxes = snap.elements.filter((e: any) => e.role === 'textbox');
      // Only the surface Monaco types through: not the aria-hidden, read-only IME textarea beside an EditContext.
      assert.equal(boxes.length, 1, JSON.stringify(boxes));
      assert.equal(boxes[0].label, 'Code editor');
      assert.equal(boxes[0].value, 'Hello world');
      // Shown with the editor's box (its surface is caret-sized), where a click focuses it.
      assert.ok(boxes[0].frame.w > 100 && boxes[0].frame.h > 100, JSON.stringify(boxes[0].frame));
      const text = await s.v.call('get_window_state', {});
      assert.match(text.text, /textbox 'Code editor' value='Hello world'/);
    });

    test('a document longer than the view (only its lines in view are rendered): unverifiable, landed once', async () => {
      const page = await s.open(`monaco.html${extra ? '?' + extra : ''}`);
      const long = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
      await page.evaluate(`window.__monaco.setValue(${JSON.stringify(long)})`);
      const snap = await s.snapshot(s.v, { format: 'full' });
      const field = snap.find((e) => e.role === 'textbox', 'the editor');
      const r = await s.v.call('type_text', { element_token: field.element_token, text: 'X' });
      assert.equal(r.structured.effect, 'unverifiable', r.text);
      assert.match(r.text, /only the lines in view/);
      assert.equal(await s.model(page), `${long}X`, 'typed once, at the end');
    });

    test('a read-only editor: typing is never confirmed, and nothing lands', async () => {
      const page = await s.open(`monaco.html${extra ? '?' + extra : ''}`);
      await page.evaluate('window.__monaco.updateOptions({ readOnly: true })');
      const snap = await s.snapshot(s.v, { format: 'full' });
      const field = snap.find((e) => e.role === 'textbox', 'the editor');
      const r = await s.v.call('type_text', { element_token: field.element_token, text: 'abc' });
      assert.equal(await s.model(page), 'Hello world');
      assert.notEqual(r.structured?.effect, 'confirmed', r.text);
    });
  });
}

describe('an EditContext editor without a library (test/fixtures/editcontext.html)', () => {
  test('rendering its own text: text and a line break typed by token land once, confirmed', async () => {
    const page = await s.open('editcontext.html');
    const snap = await s.snapshot(s.v, { format: 'full' });
    const field = snap.find((e) => e.role === 'textbox' && e.label === 'Notes', 'the editor');
    const r = await s.v.call('type_text', { element_token: field.element_token, text: 'Hi 世界' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(await s.model(page), 'Hi 世界');
    const r2 = await s.v.call('type_text', { text: '\nnext' });
    assert.equal(r2.structured.effect, 'confirmed', r2.text);
    assert.equal(await s.model(page), 'Hi 世界\nnext');
  });

  test('showing its text where Verity cannot read it: unverifiable, never confirmed', async () => {
    const page = await s.open('editcontext.html?elsewhere');
    const snap = await s.snapshot(s.v, { format: 'full' });
    const field = snap.find((e) => e.role === 'textbox' && e.label === 'Notes', 'the editor');
    const r = await s.v.call('type_text', { element_token: field.element_token, text: 'abc' });
    assert.equal(await s.model(page), 'abc', 'the text did land');
    assert.equal(r.structured.effect, 'unverifiable', r.text);
  });
});
