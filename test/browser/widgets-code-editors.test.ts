// Code editors from the real npm packages with their code-editing setup on (Ace's defaults; CodeMirror 5
// with mode javascript, smartIndent, closebrackets and matchbrackets; CodeMirror 6 set up as basicSetup
// does with JavaScript; Monaco with every editor feature and the JavaScript language), each of which
// re-indents on Enter, closes brackets and quotes, and (CodeMirror 6, Monaco) completes on Enter. Indented
// code with brackets and quotes typed into each, blank and pre-filled (caret at the end, and in the middle),
// must land exactly as typed: `confirmed`, and the editor's whole document (window.__model(), through the
// editor's own API) equal to the document before with the text inserted at the caret. An editor that
// changes what was typed (a page that re-indents a paste, a bracket closer, Monaco's formatOnPaste) is a
// `mismatch` naming what changed, never `confirmed`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'puppeteer-core';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

/** Each editor's fixture page (its query), and the input surface it must have chosen. */
const EDITORS: Record<string, { page: string; surface?: string }> = {
  ace: { page: 'ace.html' },
  codemirror5: { page: 'codemirror5.html' },
  codemirror6: { page: 'codemirror.html?code' },
  monaco: { page: 'monaco-code.html', surface: 'editcontext' },
  'monaco-textarea': { page: 'monaco-code.html?textarea', surface: 'textarea' },
};

/** Indented code with brackets and quotes: typed line by line, each of the editors would change it. */
const CODE = 'function f(a) {\n  if (a) {\n    return "x";\n  }\n  return [1, 2];\n}';
/** issue 42's block: Ace made `if (ok) {\n      run();\n}\n}` of it and called that confirmed. */
const BLOCK = 'if (ok) {\n  run();\n}';
/** One line whose brackets and quotes an auto-closer would double. */
const LINE = 'foo("a", [1]);';
/** A pre-filled document; MIDDLE is the start of its empty second line. */
const DOC = 'const a = 1;\n\nlog(a);';
const MIDDLE = DOC.indexOf('\n') + 1;

function url(page: string, query: string): string {
  return `${page}${page.includes('?') ? '&' : '?'}${query}`;
}

async function openEditor(editor: string, query: string): Promise<Page> {
  const { page: file, surface } = EDITORS[editor];
  const page = await s.open(url(file, query));
  if (surface) assert.equal(await page.evaluate('window.__surface()'), surface, 'the surface the fixture asks for');
  return page;
}

async function textbox(): Promise<string> {
  const snap = await s.snapshot(s.v, { format: 'full' });
  return snap.find((e) => e.role === 'textbox', 'the editor').element_token;
}

/** type_text, then the verdict checked against the editor's model: confirmed, and the document exactly `want`. */
async function typeConfirmed(page: Page, args: Record<string, unknown>, want: string): Promise<void> {
  const r = await s.v.call('type_text', args);
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal(r.structured.method, 'paste', r.text);
  assert.equal(await s.model(page), want, r.text);
}

for (const editor of Object.keys(EDITORS)) {
  describe(editor, () => {
    test('blank, by token: a block, then a line with brackets and quotes, land exactly', async () => {
      const page = await openEditor(editor, 'blank');
      assert.equal(await s.model(page), '');
      await typeConfirmed(page, { element_token: await textbox(), text: BLOCK }, BLOCK);
      // The focus and the caret stay where the block ended.
      await typeConfirmed(page, { text: `\n${LINE}` }, `${BLOCK}\n${LINE}`);
    });

    test('pre-filled, by token: the caret goes to the end, the code and then a single line land there exactly', async () => {
      const page = await openEditor(editor, `doc=${encodeURIComponent(DOC)}&caret=0`);
      const snap = await s.snapshot(s.v, { format: 'full' });
      const field = snap.find((e) => e.role === 'textbox', 'the editor');
      // The editor's document is what get_window_state shows as its value (its model, line breaks and all).
      assert.equal(field.value, DOC);
      await typeConfirmed(page, { element_token: field.element_token, text: `\n${CODE}` }, `${DOC}\n${CODE}`);
      // One line, no line break: its brackets and quotes as typed (an auto-closer typing it would double them).
      await typeConfirmed(page, { text: LINE }, `${DOC}\n${CODE}${LINE}`);
    });

    test('pre-filled, caret in the middle, by focus: the code and a line land at the caret exactly', async () => {
      const page = await openEditor(editor, `doc=${encodeURIComponent(DOC)}&caret=${MIDDLE}`);
      await page.evaluate('window.__focus()');
      assert.equal(await page.evaluate('window.__caret()'), MIDDLE);
      const head = DOC.slice(0, MIDDLE),
        tail = DOC.slice(MIDDLE);
      await typeConfirmed(page, { text: CODE }, head + CODE + tail);
      await typeConfirmed(page, { text: `\n${LINE}` }, `${head}${CODE}\n${LINE}${tail}`);
    });
  });
}

describe('Monaco without the `monaco` global (a bundle): read from the lines it shows', () => {
  test('blank, by token: the code lands exactly, confirmed from what it shows', async () => {
    const page = await s.open('monaco-code.html?blank&noglobal');
    const r = await s.v.call('type_text', { element_token: await textbox(), text: CODE });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.match(r.text, /the lines Monaco shows/);
    assert.equal(await s.model(page), CODE);
  });
});

describe('an editor that changes what was typed is a mismatch, never confirmed', () => {
  /** type_text of CODE into a blank editor whose page (or setup) rewrites it: mismatch, naming the change. */
  async function typeRewritten(page: string, difference: RegExp): Promise<void> {
    const tab = await s.open(page);
    const r = await s.v.call('type_text', { element_token: await textbox(), text: CODE });
    const now = await s.model(tab);
    assert.notEqual(now, CODE, `the page did rewrite the text (type_text said: ${r.text})`);
    assert.equal(r.structured.effect, 'mismatch', r.text);
    // What the editor holds around the caret, and the difference named.
    assert.equal(r.structured.observed, now, r.text);
    const named = r.structured.evidence.find((e: { kind: string }) => e.kind === 'code_difference');
    assert.ok(named, r.text);
    assert.match(named.detail, difference, r.text);
  }

  test("Ace, whose page doubles a paste's indentation (its paste event): extra indentation", async () => {
    await typeRewritten('ace.html?blank&rewrite', /extra indentation: line 2 is indented by 4 spaces where 2 spaces/);
  });

  test('CodeMirror 5, whose page closes a brace after a paste: an extra closing bracket', async () => {
    await typeRewritten('codemirror5.html?blank&rewrite', /an extra closing bracket: line 7 holds "}"/);
  });

  test('CodeMirror 6, re-indenting what was pasted a frame later: extra indentation', async () => {
    await typeRewritten(
      'codemirror.html?code&blank&rewrite',
      /extra indentation: line 2 is indented by 4 spaces where 2 spaces/,
    );
  });

  test('Monaco with formatOnPaste and a formatter that re-indents: extra indentation', async () => {
    await typeRewritten(
      'monaco-code.html?blank&rewrite',
      /extra indentation: line 2 is indented by 4 spaces where 2 spaces/,
    );
  });

  test('Monaco with formatOnPaste whose worker answers late (a busy machine): the format a second later is waited for', async () => {
    // The format's edits go through Monaco's editor worker, raced with a 1 s timer: read at once (frames and
    // an idle period later), the document was still as typed and was called confirmed.
    await typeRewritten(
      'monaco-code.html?blank&rewrite&busyworker=3000',
      /extra indentation: line 2 is indented by 4 spaces where 2 spaces/,
    );
  });

  test('Monaco with formatOnPaste and a formatter that changes nothing: unverifiable (its format may still come), never confirmed', async () => {
    // Its format goes through its worker and comes late on a busy machine: text read as typed while it may
    // still come proves nothing; the read-back waits for it, bounded, and says so.
    const tab = await s.open('monaco-code.html?blank&rewrite=none');
    const r = await s.v.call('type_text', { element_token: await textbox(), text: CODE });
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.match(r.text, /formats what is pasted/);
    assert.equal(await s.model(tab), CODE);
  });

  test('a read-only code editor is refused, and nothing lands', async () => {
    const page = await s.open('ace.html?readonly');
    const r = await s.v.call('type_text', { element_token: await textbox(), text: CODE });
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, /element_readonly/);
    assert.equal(await s.model(page), 'Hello world');
  });
});
