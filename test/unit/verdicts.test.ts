// Both routes' verdict rules, table-driven and in-process: the same functions the drivers run
// (server/contract/verdicts.ts), fed with field states as the page agent reads them (browser) and with
// AT-SPI texts as the native route reads them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  codeDifference,
  excerpt,
  judgeInsertion,
  judgePointer,
  judgeShownText,
  judgeText,
  judgeTextAt,
  judgeTextRead,
  judgeValue,
  numberFieldRejects,
  stringIndex,
  type FieldState,
  type WatchedEvent,
} from '../../server/contract/verdicts.js';

const field = (text: string, over: Partial<FieldState> = {}): FieldState => ({
  kind: 'value',
  text,
  start: text.length,
  end: text.length,
  maxLength: -1,
  focused: true,
  describe: 'input#f',
  lines: 0,
  ...over,
});
const editor = (text: string, lines: number, over: Partial<FieldState> = {}): FieldState =>
  field(text, { kind: 'editor', lines, start: text.length, end: text.length, describe: 'div#editor', ...over });

interface Row {
  name: string;
  before: FieldState;
  first?: FieldState | null;
  settled: FieldState | null;
  text: string;
  effect: string;
  delivered?: number;
}

const ROWS: Row[] = [
  // Blank rich editors: one empty block (innerText "\n", lines 1) that goes away when text lands.
  {
    name: 'blank editor, plain text',
    before: editor('', 1),
    settled: editor('abc', 0),
    text: 'abc',
    effect: 'confirmed',
    delivered: 3,
  },
  {
    name: 'blank editor (reported lines 0), plain text',
    before: editor('', 0),
    settled: editor('abc', 0),
    text: 'abc',
    effect: 'confirmed',
  },
  {
    name: 'blank editor, text with a line break',
    before: editor('', 1),
    settled: editor('ab', 1),
    text: 'a\nb',
    effect: 'confirmed',
    delivered: 3,
  },
  {
    name: 'filled editor, a line break that did not land',
    before: editor('Hello', 0),
    settled: editor('Helloab', 0),
    text: 'a\nb',
    effect: 'mismatch',
    delivered: 2,
  },
  {
    name: 'filled editor, line break landed',
    before: editor('Hello', 0),
    settled: editor('Helloab', 1),
    text: 'a\nb',
    effect: 'confirmed',
  },
  // Trailing newline: a new empty block after the text.
  {
    name: 'editor, trailing newline landed',
    before: editor('Hi', 0),
    settled: editor('Hi there', 1),
    text: ' there\n',
    effect: 'confirmed',
  },
  {
    name: 'editor, trailing newline lost',
    before: editor('Hi', 0),
    settled: editor('Hi there', 0),
    text: ' there\n',
    effect: 'mismatch',
  },
  {
    name: 'textarea, trailing newline kept',
    before: field('Hi'),
    settled: field('Hi there\n'),
    text: ' there\n',
    effect: 'confirmed',
  },
  {
    name: 'textarea, trailing newline stripped by the page',
    before: field('Hi'),
    settled: field('Hi there'),
    text: ' there\n',
    effect: 'partial',
    delivered: 6,
  },
  // NBSP: editors keep a typed trailing space as U+00A0; it is the same text.
  {
    name: 'editor, trailing space held as NBSP',
    before: editor('a', 0),
    settled: editor('a b\u00a0', 0),
    text: ' b ',
    effect: 'confirmed',
  },
  {
    name: 'input, NBSP is not a space there',
    before: field('a'),
    settled: field('a b\u00a0'),
    text: ' b ',
    effect: 'mismatch',
  },
  // maxlength: a prefix landed.
  {
    name: 'maxlength cut',
    before: field('', { maxLength: 5 }),
    settled: field('abcde', { maxLength: 5 }),
    text: 'abcdefgh',
    effect: 'partial',
    delivered: 5,
  },
  {
    name: 'full field',
    before: field('abcde', { maxLength: 5 }),
    settled: field('abcde', { maxLength: 5 }),
    text: 'x',
    effect: 'no_effect',
    delivered: 0,
  },
  // Rewriting fields: the page changed what landed.
  { name: 'upper-casing field', before: field(''), settled: field('ABC'), text: 'abc', effect: 'mismatch' },
  {
    name: 'field that reverts after a frame',
    before: field('x'),
    first: field('xabc'),
    settled: field('x'),
    text: 'abc',
    effect: 'no_effect',
  },
  {
    name: 'formatting field (phone)',
    before: field(''),
    settled: field('(555) 123'),
    text: '555123',
    effect: 'mismatch',
  },
  // Caret in the middle; a selection replaced.
  {
    name: 'insert at a caret in the middle',
    before: field('ac', { start: 1, end: 1 }),
    settled: field('abc'),
    text: 'b',
    effect: 'confirmed',
  },
  {
    name: 'selection replaced',
    before: field('aXXc', { start: 1, end: 3 }),
    settled: field('abc'),
    text: 'b',
    effect: 'confirmed',
  },
  // No selection API (email, number): the caret offset is unknown; one whole insertion anywhere is it.
  {
    name: 'email, appended',
    before: field('a@b.c', { start: -1, end: -1 }),
    settled: field('a@b.co'),
    text: 'o',
    effect: 'confirmed',
  },
  {
    name: 'email, inserted at the start',
    before: field('a@b.c', { start: -1, end: -1 }),
    settled: field('xa@b.c'),
    text: 'x',
    effect: 'confirmed',
  },
  {
    name: 'number, value emptied (not a number)',
    before: field('4', { start: -1, end: -1 }),
    settled: field(''),
    text: 'e',
    effect: 'mismatch',
  },
  {
    name: 'text twice is not confirmed',
    before: field('', { start: -1, end: -1 }),
    settled: field('abab'),
    text: 'ab',
    effect: 'mismatch',
    delivered: 0,
  },
  // A rewrite: the text arrived (all of it delivered) and the page changed it; never confirmed.
  {
    name: 'the page upper-cased what arrived',
    before: field('id: ', { start: 4, end: 4 }),
    settled: field('id: ABC-1'),
    text: 'abc-1',
    effect: 'mismatch',
    delivered: 5,
  },
  {
    name: 'the page formatted what arrived (a phone number)',
    before: field(''),
    settled: field('555-0123'),
    text: '5550123',
    effect: 'mismatch',
    delivered: 7,
  },
  {
    name: 'read at once as asked, then the page replaced the whole value',
    before: field('a'),
    first: field('ab'),
    settled: field('[redacted]'),
    text: 'b',
    effect: 'mismatch',
    delivered: 1,
  },
  {
    name: 'other letters in place of the text are no proof it arrived',
    before: field(''),
    settled: field('xyz'),
    text: 'abc',
    effect: 'mismatch',
    delivered: 0,
  },
  // Nothing readable.
  {
    name: 'no read-back',
    before: field(''),
    first: null,
    settled: null,
    text: 'a',
    effect: 'unverifiable',
    delivered: 0,
  },
  {
    name: 'read back at once only (the settled read failed)',
    before: field('a'),
    first: field('ab'),
    settled: null,
    text: 'b',
    effect: 'confirmed',
  },
  // Placeholder text: the page agent leaves an editor's placeholder out of its text, an input's is no value.
  {
    name: 'editor whose placeholder was left out: blank before',
    before: editor('', 1),
    settled: editor('hello', 0),
    text: 'hello',
    effect: 'confirmed',
  },
  {
    name: 'placeholder text read as the text is never confirmed',
    before: editor('Write here…', 0),
    settled: editor('hello', 0),
    text: 'hello',
    effect: 'mismatch',
    delivered: 0,
  },
  {
    name: 'text appended to a placeholder still shown',
    before: editor('', 1),
    settled: editor('Write here…hello', 0),
    text: 'hello',
    effect: 'mismatch',
  },
  // Partial: a prefix of the text at the caret, the rest of the field as it was.
  {
    name: 'prefix in the middle of a field',
    before: field('[]', { start: 1, end: 1 }),
    settled: field('[ab]'),
    text: 'abcd',
    effect: 'partial',
    delivered: 2,
  },
  {
    name: 'a suffix of the text is not a partial',
    before: field(''),
    settled: field('cd'),
    text: 'abcd',
    effect: 'mismatch',
    delivered: 0,
  },
  {
    name: 'prefix counted in code points',
    before: field(''),
    settled: field('😀é'),
    text: '😀éx',
    effect: 'partial',
    delivered: 2,
  },
  {
    name: 'editor, prefix of a multi-line text',
    before: editor('', 1),
    settled: editor('ab', 0),
    text: 'abc\nd',
    effect: 'partial',
    delivered: 2,
  },
  // Text landed twice, or elsewhere: a mismatch, never confirmed.
  {
    name: 'text landed twice at the caret',
    before: field('x'),
    settled: field('xabab'),
    text: 'ab',
    effect: 'mismatch',
  },
  {
    name: 'text landed before the caret, not at it',
    before: field('x'),
    settled: field('abx'),
    text: 'ab',
    effect: 'mismatch',
  },
  { name: 'the rest of the field lost', before: field('keep'), settled: field('ab'), text: 'ab', effect: 'mismatch' },
  // Editors whose caret lives in their own model (Monaco's EditContext surface): start -1, caret unknown.
  {
    name: 'editor, caret unknown: appended at the end',
    before: editor('Hello', 0, { start: -1, end: -1 }),
    settled: editor('HelloHi', 0),
    text: 'Hi',
    effect: 'confirmed',
    delivered: 2,
  },
  {
    name: 'editor, caret unknown: landed once inside',
    before: editor('Hello', 0, { start: -1, end: -1 }),
    settled: editor('HeHillo', 0),
    text: 'Hi',
    effect: 'confirmed',
  },
  {
    name: 'editor, caret unknown: a line break landed with the text',
    before: editor('ab', 0, { start: -1, end: -1 }),
    settled: editor('abnext', 1),
    text: '\nnext',
    effect: 'confirmed',
    delivered: 5,
  },
  {
    name: 'editor, caret unknown: text landed inside but its line break did not',
    before: editor('ab', 0, { start: -1, end: -1 }),
    settled: editor('anextb', 0),
    text: '\nnext',
    effect: 'mismatch',
  },
  {
    name: 'editor, caret unknown: text twice is not confirmed',
    before: editor('ab', 0, { start: -1, end: -1 }),
    settled: editor('aHiHib', 0),
    text: 'Hi',
    effect: 'mismatch',
  },
  {
    name: 'editor, caret unknown: unchanged',
    before: editor('ab', 0, { start: -1, end: -1 }),
    settled: editor('ab', 0),
    text: 'Hi',
    effect: 'no_effect',
  },
  {
    name: 'editor whose text cannot be read: unverifiable, never confirmed',
    before: editor('', 0, { start: -1, end: -1, unreadable: 'no rendered text found' }),
    settled: editor('', 0, { unreadable: 'no rendered text found' }),
    text: 'Hi',
    effect: 'unverifiable',
    delivered: 0,
  },
  // An editor that renders only the lines in view (Monaco on a long document): part of its text.
  {
    name: 'partial read that matches: unverifiable, never confirmed',
    before: editor('line 9', 0, { start: -1, end: -1, partial: 'lines in view' }),
    settled: editor('line 9X', 0, { partial: 'lines in view' }),
    text: 'X',
    effect: 'unverifiable',
    delivered: 0,
  },
  {
    name: 'partial read whose window moved: unverifiable, not mismatch',
    before: editor('line 8line 9', 1, { start: -1, end: -1, partial: 'lines in view' }),
    settled: editor('line 9next', 1, { partial: 'lines in view' }),
    text: '\nnext',
    effect: 'unverifiable',
  },
  {
    name: 'partial read, unchanged: unverifiable, not no_effect',
    before: editor('line 9', 0, { start: -1, end: -1, partial: 'lines in view' }),
    settled: editor('line 9', 0, { partial: 'lines in view' }),
    text: 'X',
    effect: 'unverifiable',
  },
  {
    name: 'text field that became unreadable after the insertion: unverifiable',
    before: field('ab'),
    settled: field('abHi', { unreadable: 'the surface lost its editor' }),
    text: 'Hi',
    effect: 'unverifiable',
  },
];

describe('judgeText', () => {
  for (const row of ROWS) {
    test(row.name, () => {
      const v = judgeText(
        row.before,
        { first: row.first === undefined ? row.settled : row.first, settled: row.settled, events: [] },
        row.text,
      );
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
    for (const e of v.evidence)
      assert.ok(String(e.expected ?? '').length < 400 && String(e.observed ?? '').length < 400);
  });
});

describe('a code editor: its whole document, from its model, compared exactly', () => {
  /** A code editor's document with its caret at `at` (the end unless given). */
  const code = (text: string, at = text.length, over: Partial<FieldState> = {}): FieldState =>
    field(text, {
      kind: 'code',
      start: at,
      end: at,
      describe: 'textarea.ace_text-input',
      source: "Ace's own model",
      ...over,
    });
  const judge = (before: FieldState, after: FieldState, text: string) =>
    judgeText(before, { first: after, settled: after, events: [] }, text);
  const BLOCK = 'if (ok) {\n  run();\n}';

  test('the text inserted at the caret, line breaks and indentation as typed: confirmed', () => {
    assert.equal(judge(code(''), code(BLOCK), BLOCK).effect, 'confirmed');
    const doc = 'a;\n\nb;';
    const v = judge(code(doc, 3), code(`a;\n${BLOCK}\nb;`), BLOCK);
    assert.equal(v.effect, 'confirmed');
    assert.match(String(v.evidence[0].detail), /from Ace's own model/);
  });

  test("issue 42's Ace: indentation added and a brace closed: mismatch naming both, never confirmed", () => {
    const v = judge(code(''), code('if (ok) {\n      run();\n}\n}'), BLOCK);
    assert.equal(v.effect, 'mismatch');
    const named = v.evidence.find((e) => e.kind === 'code_difference');
    assert.match(String(named?.detail), /extra indentation: line 2 is indented by 6 spaces where 2 spaces were typed/);
    assert.match(String(named?.detail), /an extra closing bracket: line 3 holds "}"/);
  });

  test('CodeMirror 6 re-indenting the closing brace: mismatch, its indentation named', () => {
    const v = judge(code(''), code('if (ok) {\n  run();\n  }'), BLOCK);
    assert.equal(v.effect, 'mismatch');
    assert.match(
      String(v.evidence.find((e) => e.kind === 'code_difference')?.detail),
      /extra indentation: line 3 is indented by 2 spaces where 0 spaces were typed/,
    );
  });

  test('a doubled closer on one line, a line break lost, text elsewhere: never confirmed', () => {
    const line = 'foo("a", [1]);';
    assert.equal(judge(code(''), code('foo("a", [1]));'), line).effect, 'mismatch');
    assert.equal(judge(code(''), code('if (ok) {  run();}'), BLOCK).effect, 'mismatch');
    assert.equal(judge(code('x', 0), code(`x${BLOCK}`), BLOCK).effect, 'mismatch', 'at the end, not at the caret');
    // Whitespace a rich editor's DOM would fold is the document here: a no-break space is not a space.
    assert.equal(judge(code(''), code('a\u00a0b'), 'a b').effect, 'mismatch');
  });

  test('a document as typed while the editor may still format it (format on paste not come): unverifiable; a format that came: mismatch', () => {
    const pending = 'the editor formats what is pasted, and its model was as the paste left it 3000 ms after the paste';
    const v = judge(code(''), code(BLOCK, BLOCK.length, { pending }), BLOCK);
    assert.equal(v.effect, 'unverifiable');
    assert.equal(v.delivered, 0);
    assert.equal(v.evidence.find((e) => e.kind === 'pending_edit')?.detail, pending);
    // What differs already is a mismatch, whether or not more may come.
    assert.equal(judge(code(''), code('if (ok) {\n    run();\n}', 0, { pending }), BLOCK).effect, 'mismatch');
  });

  test('unchanged is no_effect; an unreadable or partly shown document is unverifiable', () => {
    assert.equal(judge(code('abc'), code('abc'), 'x').effect, 'no_effect');
    assert.equal(judge(code(''), code(BLOCK, 0, { unreadable: 'no handle' }), BLOCK).effect, 'unverifiable');
    assert.equal(judge(code(''), code(BLOCK, 0, { partial: 'lines in view' }), BLOCK).effect, 'unverifiable');
  });

  test('a caret the page could not tell (what the editor shows): the text landing whole at one offset', () => {
    const before = code('a\nb', -1);
    assert.equal(judge(before, code(`a\n${BLOCK}b`, -1), BLOCK).effect, 'confirmed');
    assert.equal(judge(before, code(`a\n${BLOCK}\n}b`, -1), BLOCK).effect, 'mismatch');
  });
});

describe('codeDifference: what an editor made of typed code, named', () => {
  const table: [string, string, string, RegExp | null][] = [
    ['equal', 'a\n  b', 'a\n  b', null],
    [
      'extra indentation',
      'f {\n  x;\n}',
      'f {\n      x;\n}',
      /^extra indentation: line 2 is indented by 6 spaces where 2 spaces were typed$/,
    ],
    [
      'less indentation',
      'f {\n  x;\n}',
      'f {\nx;\n}',
      /^less indentation: line 2 is indented by 0 spaces where 2 spaces were typed$/,
    ],
    ['a tab for spaces', 'f {\n  x;\n}', 'f {\n\tx;\n}', /line 2 is indented by 1 tab where 2 spaces were typed/],
    [
      'an extra closing bracket line',
      'f {\n}',
      'f {\n}\n}',
      /^an extra closing bracket: line 3 holds "}", which was not typed$/,
    ],
    [
      'an extra closing quote line',
      'x = 1;',
      'x = 1;\n"',
      /^an extra closing quote: line 2 holds "\\"", which was not typed$/,
    ],
    [
      'a doubled closer on a line',
      'foo([1]);',
      'foo([1]]);',
      /an extra closing bracket on line 1: "foo\(\[1\]\]\);" where "foo\(\[1\]\);" was typed/,
    ],
    ['an extra line', 'a\nb', 'a\nx\nb', /^an extra line 2: "x"$/],
    ['an extra empty line', 'a\nb', 'a\n\nb', /^an extra empty line \(line 2\)$/],
    ['a missing line', 'a\nb\nc', 'a\nc', /^the typed line "b" is missing \(before line 2\)$/],
    ['spacing inside a line', 'a = 1;', 'a  = 1;', /extra spacing on line 1/],
  ];
  for (const [name, expected, observed, want] of table)
    test(name, () => {
      const got = codeDifference(expected, observed);
      if (want === null) assert.equal(got, null);
      else assert.match(String(got), want);
    });

  test('at most three differences are named, then "and more"', () => {
    const typed = Array.from({ length: 6 }, (_, i) => `  line${i};`).join('\n');
    const held = typed.replace(/^ {2}/gm, '    ');
    const got = String(codeDifference(typed, held));
    assert.equal(got.split('; ').length, 4, got);
    assert.match(got, /; and more$/);
  });
});

describe('numberFieldRejects', () => {
  const table: Array<[string, string | null]> = [
    ['123', null],
    ['-1.5e3', null],
    ['1,5', null],
    ['12abc', 'abc'],
    ['x1x', 'x'],
    [' 1', ' '],
    ['', null],
  ];
  for (const [text, want] of table) test(JSON.stringify(text), () => assert.equal(numberFieldRejects(text), want));
});

describe('judgePointer', () => {
  const ev = (type: string, onTarget = true, trusted = true, hit = 'button#b'): WatchedEvent => ({
    type,
    trusted,
    onTarget,
    prevented: false,
    hit,
  });
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

describe('judgeTextAt and judgeTextRead (the native route)', () => {
  interface NativeRow {
    name: string;
    before: string;
    after: string;
    at: number;
    text: string;
    utf16?: boolean;
    whole?: boolean;
    effect: string;
    delivered?: number;
  }
  const rows: NativeRow[] = [
    { name: 'appended', before: 'ab', after: 'abc', at: 2, text: 'c', effect: 'confirmed', delivered: 1 },
    { name: 'inserted at a caret in the middle', before: 'ac', after: 'abc', at: 1, text: 'b', effect: 'confirmed' },
    { name: 'blank field', before: '', after: 'hello', at: 0, text: 'hello', effect: 'confirmed', delivered: 5 },
    {
      name: 'trailing newline kept (a text view)',
      before: 'a',
      after: 'ab\n',
      at: 1,
      text: 'b\n',
      effect: 'confirmed',
      delivered: 2,
    },
    {
      name: 'trailing newline dropped (an entry)',
      before: 'a',
      after: 'ab',
      at: 1,
      text: 'b\n',
      effect: 'partial',
      delivered: 1,
    },
    { name: 'NBSP is not a space to an app', before: '', after: 'a\u00a0', at: 0, text: 'a ', effect: 'mismatch' },
    {
      name: 'max length: a prefix landed',
      before: '',
      after: 'abc',
      at: 0,
      text: 'abcdef',
      effect: 'partial',
      delivered: 3,
    },
    {
      name: 'full field: nothing landed',
      before: 'abc',
      after: 'abc',
      at: 3,
      text: 'd',
      effect: 'no_effect',
      delivered: 0,
    },
    { name: 'rewritten (upper-cased)', before: '', after: 'ABC', at: 0, text: 'abc', effect: 'mismatch', delivered: 3 },
    {
      name: 'rewritten in place, around it kept (formatted)',
      before: '[]',
      after: '[12 34]',
      at: 1,
      text: '1234',
      effect: 'mismatch',
      delivered: 4,
    },
    { name: 'replaced by other text', before: '', after: 'xyz', at: 0, text: 'abc', effect: 'mismatch', delivered: 0 },
    { name: 'landed twice', before: '', after: 'abab', at: 0, text: 'ab', effect: 'mismatch', delivered: 0 },
    { name: 'landed at the end, not at the caret', before: 'ac', after: 'acb', at: 1, text: 'b', effect: 'mismatch' },
    { name: 'code points after an emoji (GTK)', before: 'a😀b', after: 'a😀Xb', at: 2, text: 'X', effect: 'confirmed' },
    {
      name: 'UTF-16 units after an emoji (Qt)',
      before: 'a😀b',
      after: 'a😀Xb',
      at: 3,
      text: 'X',
      utf16: true,
      effect: 'confirmed',
    },
    {
      name: 'a code-point offset taken as UTF-16 points into the emoji',
      before: 'a😀b',
      after: 'a😀Xb',
      at: 2,
      text: 'X',
      utf16: true,
      effect: 'mismatch',
    },
    {
      name: 'not whole: an exact read-back is not proof',
      before: '',
      after: 'café',
      at: 0,
      text: 'café',
      whole: false,
      effect: 'mismatch',
      delivered: 0,
    },
    {
      name: 'not whole: unchanged proves nothing',
      before: 'x',
      after: 'x',
      at: 1,
      text: 'y',
      whole: false,
      effect: 'unverifiable',
    },
    {
      name: 'not whole: a partial stays partial',
      before: '',
      after: 'ab',
      at: 0,
      text: 'abc',
      whole: false,
      effect: 'partial',
      delivered: 2,
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const v =
        row.whole === undefined
          ? judgeTextAt(row.before, row.after, row.at, row.text, row.utf16)
          : judgeTextRead(row.before, { text: row.after, whole: row.whole }, row.at, row.text, row.utf16);
      assert.equal(v.effect, row.effect, JSON.stringify(v));
      if (row.delivered !== undefined) assert.equal(v.delivered, row.delivered);
    });
  }
  test('positions count code points (GTK) or UTF-16 units (Qt): after an emoji they differ by one', () => {
    const before = 'a😀b';
    // Caret after the emoji: code point 2, UTF-16 unit 3.
    assert.equal(judgeTextAt(before, 'a😀Xb', 2, 'X').effect, 'confirmed');
    assert.equal(judgeTextAt(before, 'a😀Xb', 3, 'X', true).effect, 'confirmed');
    assert.equal(
      judgeTextAt(before, 'a😀Xb', 2, 'X', true).effect,
      'mismatch',
      'a UTF-16 offset taken as code points points into the emoji',
    );
    assert.equal(judgeTextAt(before, before, 3, 'X').effect, 'no_effect');
    assert.deepEqual(judgeTextAt('', 'Grü', 0, 'Grüße'), { effect: 'partial', delivered: 3, expected: 'Grüße' });
  });

  test('a read-back that is not all the field holds: never confirmed, never no_effect', () => {
    // Qt padded the text with NULs: the text reads back exactly, the count says more is there.
    assert.equal(judgeTextRead('', { text: 'café', whole: false }, 0, 'café', true).effect, 'mismatch');
    assert.equal(judgeTextRead('', { text: 'café', whole: true }, 0, 'café', true).effect, 'confirmed');
    // A read that shows nothing changed but cannot be whole proves nothing.
    assert.equal(judgeTextRead('x', { text: 'x', whole: false }, 1, 'y').effect, 'unverifiable');
    assert.equal(judgeTextRead('x', { text: 'x', whole: true }, 1, 'y').effect, 'no_effect');
  });

  test('stringIndex: a position in code points (GTK) or UTF-16 units (Qt) as a string index', () => {
    assert.equal(stringIndex('a😀b', 2), 3);
    assert.equal(stringIndex('a😀b', 2, true), 2);
    assert.equal(stringIndex('abc', 2), 2);
    assert.equal(stringIndex('😀😀', 2), 4);
  });

  test('expected is the text the field should hold', () => {
    assert.equal(judgeTextAt('a😀b', 'x', 2, 'X').expected, 'a😀Xb');
    assert.equal(judgeTextAt('a😀b', 'x', 3, 'X', true).expected, 'a😀Xb');
  });
});

describe('both routes decide the same thing the same way', () => {
  // One field, one insertion, read by each route: the same effect and the same count.
  const cases: Array<[string, string, number, string]> = [
    ['', 'abc', 0, 'abc'],
    ['ac', 'abc', 1, 'b'],
    ['abc', 'abc', 3, 'd'],
    ['', 'ab', 0, 'abcd'],
    ['', 'ABC', 0, 'abc'],
    ['x', 'xabab', 1, 'ab'],
  ];
  for (const [before, after, at, text] of cases) {
    test(`${JSON.stringify(before)} + ${JSON.stringify(text)} at ${at} reads ${JSON.stringify(after)}`, () => {
      const browser = judgeText(
        field(before, { start: at, end: at }),
        { first: null, settled: field(after), events: [] },
        text,
      );
      const native = judgeTextAt(before, after, at, text);
      const shared = judgeInsertion(before, after, {
        head: before.slice(0, at),
        inserted: text,
        tail: before.slice(at),
      });
      assert.deepEqual([browser.effect, browser.delivered], [native.effect, native.delivered]);
      assert.equal(native.effect, shared.effect);
    });
  }
});

describe('judgeValue', () => {
  const table: Array<[string, unknown, unknown, unknown, string]> = [
    ['set', 'b', 'a', 'b', 'confirmed'],
    ['unchanged', 'b', 'a', 'a', 'no_effect'],
    ['something else', 'b', 'a', 'c', 'mismatch'],
    ['already so', 'a', 'a', 'a', 'confirmed'],
    ['checked', true, false, true, 'confirmed'],
    ['not checked', true, false, false, 'no_effect'],
    ['number', 5, 1, 5, 'confirmed'],
    ['number clamped', 500, 1, 100, 'mismatch'],
    ['nothing selected before or after', 'x', null, null, 'no_effect'],
  ];
  for (const [name, wanted, before, now, effect] of table)
    test(name, () => assert.equal(judgeValue(wanted, before, now), effect));
});

describe('excerpt', () => {
  test('a short text is whole', () => {
    for (const text of ['', 'abc', 'x'.repeat(200)]) assert.equal(excerpt(text, 0, text.length), text);
  });
  test('a long text: a window around the insertion, marked where cut', () => {
    const text = 'a'.repeat(1000) + 'INSERTED' + 'b'.repeat(1000);
    const e = excerpt(text, 1000, 8);
    assert.ok(e.includes('INSERTED'), e);
    assert.ok(e.startsWith('…') && e.endsWith('…'), e);
    assert.ok(e.length < 120, `${e.length} chars`);
  });
  test('at the start or the end: cut on one side only', () => {
    const text = 'HEAD' + 'x'.repeat(2000) + 'TAIL';
    assert.ok(excerpt(text, 0, 4).startsWith('HEAD') && excerpt(text, 0, 4).endsWith('…'));
    const end = excerpt(text, text.length - 4, 4);
    assert.ok(end.endsWith('TAIL') && end.startsWith('…'), end);
  });
  test('a long insertion keeps both its ends and says how much was left out', () => {
    const inserted = 'S' + 'm'.repeat(3000) + 'E';
    const text = 'x'.repeat(500) + inserted + 'y'.repeat(500);
    const e = excerpt(text, 500, inserted.length);
    assert.match(e, /…\(\d+ chars\)…/);
    assert.ok(e.includes('xS') && e.includes('Ey'), e);
    assert.ok(e.length < 400, `${e.length} chars`);
  });
  test('the context width is honoured', () => {
    const text = 'a'.repeat(500) + 'Z' + 'b'.repeat(500);
    assert.equal(excerpt(text, 500, 1, 3), '…aaaZbbb…');
  });
});

describe('judgeShownText: a keyboard sink judged by what the widget shows', () => {
  const cases: Array<[string, string | null, string | null, string, string]> = [
    ['the text appears', '$ ', '$ ls', 'ls', 'confirmed'],
    ['pre-filled: once more than before', '> ls', '> lsls', 'ls', 'confirmed'],
    ['no-break spaces as rendered', '$', '$\u00a0ls\u00a0-la', 'ls -la', 'confirmed'],
    ['unchanged: could be a canvas, proves nothing', '$ ', '$ ', 'ls', 'unverifiable'],
    ['already shown and not again', '> ls', '> ls', 'ls', 'unverifiable'],
    ['changed but not the text', '$ ', '$ x', 'ls', 'unverifiable'],
    ['one line of two', '$ ', '$ echo a', 'echo a\necho b', 'partial'],
    ['nothing to read', null, null, 'ls', 'unverifiable'],
    ['only a newline: nothing visible to look for', '$ ', '$ \n$ ', '\n', 'unverifiable'],
  ];
  for (const [name, before, after, text, effect] of cases)
    test(name, () => {
      const v = judgeShownText(before, after, text, 'div.term');
      assert.equal(v.effect, effect);
      if (effect === 'unverifiable') assert.equal(v.escalation?.target, 'verify');
      if (effect === 'confirmed') assert.equal(v.delivered, [...text].length);
      assert.ok(v.evidence.length > 0);
    });
});
