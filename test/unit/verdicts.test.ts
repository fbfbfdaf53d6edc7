// The browser route's verdict rules, table-driven and in-process: the same functions the driver runs
// (server/routing/verdicts.ts), fed with field states as the page agent reads them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { judgePointer, judgeText, numberFieldRejects, type FieldState, type WatchedEvent } from '../../server/routing/verdicts.js';

const field = (text: string, over: Partial<FieldState> = {}): FieldState => ({
  kind: 'value', text, start: text.length, end: text.length, maxLength: -1, focused: true, describe: 'input#f', lines: 0, ...over,
});
const editor = (text: string, lines: number, over: Partial<FieldState> = {}): FieldState =>
  field(text, { kind: 'editor', lines, start: text.length, end: text.length, describe: 'div#editor', ...over });

interface Row { name: string; before: FieldState; first?: FieldState | null; settled: FieldState | null; text: string; effect: string; delivered?: number }

const ROWS: Row[] = [
  // Blank rich editors: one empty block (innerText "\n", lines 1) that goes away when text lands.
  { name: 'blank editor, plain text', before: editor('', 1), settled: editor('abc', 0), text: 'abc', effect: 'confirmed', delivered: 3 },
  { name: 'blank editor (reported lines 0), plain text', before: editor('', 0), settled: editor('abc', 0), text: 'abc', effect: 'confirmed' },
  { name: 'blank editor, text with a line break', before: editor('', 1), settled: editor('ab', 1), text: 'a\nb', effect: 'confirmed', delivered: 3 },
  { name: 'filled editor, a line break that did not land', before: editor('Hello', 0), settled: editor('Helloab', 0), text: 'a\nb', effect: 'mismatch', delivered: 2 },
  { name: 'filled editor, line break landed', before: editor('Hello', 0), settled: editor('Helloab', 1), text: 'a\nb', effect: 'confirmed' },
  // Trailing newline: a new empty block after the text.
  { name: 'editor, trailing newline landed', before: editor('Hi', 0), settled: editor('Hi there', 1), text: ' there\n', effect: 'confirmed' },
  { name: 'editor, trailing newline lost', before: editor('Hi', 0), settled: editor('Hi there', 0), text: ' there\n', effect: 'mismatch' },
  { name: 'textarea, trailing newline kept', before: field('Hi'), settled: field('Hi there\n'), text: ' there\n', effect: 'confirmed' },
  { name: 'textarea, trailing newline stripped by the page', before: field('Hi'), settled: field('Hi there'), text: ' there\n', effect: 'partial', delivered: 6 },
  // NBSP: editors keep a typed trailing space as U+00A0; it is the same text.
  { name: 'editor, trailing space held as NBSP', before: editor('a', 0), settled: editor('a b\u00a0', 0), text: ' b ', effect: 'confirmed' },
  { name: 'input, NBSP is not a space there', before: field('a'), settled: field('a b\u00a0'), text: ' b ', effect: 'mismatch' },
  // maxlength: a prefix landed.
  { name: 'maxlength cut', before: field('', { maxLength: 5 }), settled: field('abcde', { maxLength: 5 }), text: 'abcdefgh', effect: 'partial', delivered: 5 },
  { name: 'full field', before: field('abcde', { maxLength: 5 }), settled: field('abcde', { maxLength: 5 }), text: 'x', effect: 'no_effect', delivered: 0 },
  // Rewriting fields: the page changed what landed.
  { name: 'upper-casing field', before: field(''), settled: field('ABC'), text: 'abc', effect: 'mismatch' },
  { name: 'field that reverts after a frame', before: field('x'), first: field('xabc'), settled: field('x'), text: 'abc', effect: 'no_effect' },
  { name: 'formatting field (phone)', before: field(''), settled: field('(555) 123'), text: '555123', effect: 'mismatch' },
  // Caret in the middle; a selection replaced.
  { name: 'insert at a caret in the middle', before: field('ac', { start: 1, end: 1 }), settled: field('abc'), text: 'b', effect: 'confirmed' },
  { name: 'selection replaced', before: field('aXXc', { start: 1, end: 3 }), settled: field('abc'), text: 'b', effect: 'confirmed' },
  // No selection API (email, number): the caret offset is unknown; one whole insertion anywhere is it.
  { name: 'email, appended', before: field('a@b.c', { start: -1, end: -1 }), settled: field('a@b.co'), text: 'o', effect: 'confirmed' },
  { name: 'email, inserted at the start', before: field('a@b.c', { start: -1, end: -1 }), settled: field('xa@b.c'), text: 'x', effect: 'confirmed' },
  { name: 'number, value emptied (not a number)', before: field('4', { start: -1, end: -1 }), settled: field(''), text: 'e', effect: 'mismatch' },
  { name: 'text twice is not confirmed', before: field('', { start: -1, end: -1 }), settled: field('abab'), text: 'ab', effect: 'mismatch' },
  // Nothing readable.
  { name: 'no read-back', before: field(''), first: null, settled: null, text: 'a', effect: 'unverifiable', delivered: 0 },
];

describe('judgeText', () => {
  for (const row of ROWS) {
    test(row.name, () => {
      const v = judgeText(row.before, { first: row.first === undefined ? row.settled : row.first, settled: row.settled, events: [] }, row.text);
      assert.equal(v.effect, row.effect, JSON.stringify(v.evidence));
      if (row.delivered !== undefined) assert.equal(v.delivered, row.delivered);
      if (v.effect === 'confirmed') assert.ok(v.evidence.length > 0, 'confirmed carries evidence');
    });
  }

  test('a blank editor is never a line_breaks mismatch for text without newlines', () => {
    for (const lines of [0, 1, 2]) {
      const v = judgeText(editor('', lines), { first: null, settled: editor('hello', 0), events: [] }, 'hello');
      assert.equal(v.effect, 'confirmed');
      assert.ok(!v.evidence.some((e) => e.kind === 'line_breaks'));
    }
  });

  test('a long text gives bounded evidence', () => {
    const text = 'x'.repeat(5000);
    const v = judgeText(field(''), { first: null, settled: field(text), events: [] }, text);
    assert.equal(v.effect, 'confirmed');
    for (const e of v.evidence) assert.ok(String(e.expected ?? '').length < 400 && String(e.observed ?? '').length < 400);
  });
});

describe('numberFieldRejects', () => {
  const table: Array<[string, string | null]> = [['123', null], ['-1.5e3', null], ['1,5', null], ['12abc', 'abc'], ['x1x', 'x'], [' 1', ' '], ['', null]];
  for (const [text, want] of table) test(JSON.stringify(text), () => assert.equal(numberFieldRejects(text), want));
});

describe('judgePointer', () => {
  const ev = (type: string, onTarget = true, trusted = true, hit = 'button#b'): WatchedEvent => ({ type, trusted, onTarget, prevented: false, hit });
  const table: Array<[string, WatchedEvent[], string]> = [
    ['click on the target', [ev('mousedown'), ev('mouseup'), ev('click')], 'confirmed'],
    ['untrusted click only', [ev('click', true, false)], 'unverifiable'],
    ['click landed elsewhere', [ev('click', false, true, 'div#cover')], 'mismatch'],
    ['mousedown only: nothing followed', [ev('mousedown')], 'no_effect'],
    ['press and release, no click', [ev('mousedown'), ev('mouseup')], 'no_effect'],
    ['nothing at all', [], 'unverifiable'],
  ];
  for (const [name, events, effect] of table) {
    test(name, () => assert.equal(judgePointer(events, 'click').effect, effect));
  }
  test('no_effect names what was observed', () => {
    assert.match(judgePointer([ev('mousedown')], 'click').observed ?? '', /mousedown only/);
  });
});
