// In-process checks of the text a model reads: the default outline's lines and nesting, and the text of
// refusals and failed verdicts (every detail, since clients show only the text of an error).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  encodeText,
  outlineLine,
  renderOutline,
  shownText,
  TEXT_SHOWN_MAX,
  VALUE_SHOWN_MAX,
  type OutlineElement,
} from '../../server/tools/outline.js';
import type { SnapshotText } from '../../server/contract/driver.js';
import { refusalText, summarize, textOfStructured } from '../../server/tools/reply.js';
import { Refusal } from '../../server/contract/refusal.js';

const el = (i: number, over: Partial<OutlineElement> = {}): OutlineElement => ({
  element_index: i,
  role: 'button',
  label: `B${i}`,
  enabled: true,
  focused: false,
  in_web_content: true,
  frame: { x: 0, y: 0, w: 1, h: 1 },
  parent_index: null,
  ...over,
});

describe('outline lines', () => {
  test('role, quoted name, value, states and the token', () => {
    assert.equal(outlineLine(el(3), true), "- button 'B3' [t=3]");
    assert.equal(
      outlineLine(el(4, { role: 'textbox', label: 'Email', value: 'a@b.c', focused: true }), true),
      "- textbox 'Email' value='a@b.c' [focused] [t=4]",
    );
    assert.equal(
      outlineLine(el(5, { role: 'checkbox', value: 'true', enabled: false }), true),
      "- checkbox 'B5' [checked] [disabled] [t=5]",
    );
    assert.equal(outlineLine(el(6, { role: 'checkbox', value: 'false' }), true), "- checkbox 'B6' [t=6]");
    assert.equal(
      outlineLine(el(7, { role: 'checkbox', value: 'mixed' }), true),
      "- checkbox 'B7' [checked=mixed] [t=7]",
    );
    assert.equal(outlineLine(el(8, { label: '' }), true), '- button [t=8]');
    assert.equal(outlineLine(el(9, { in_web_content: false }), true), "- button 'B9' [not web content] [t=9]");
    assert.equal(outlineLine(el(10, { in_web_content: true }), false), "- button 'B10' [web content] [t=10]");
  });

  test('a name with a quote or a line break is a JSON string; a long value is whole up to its cap, with its length', () => {
    assert.equal(outlineLine(el(1, { label: "Don't" }), true), '- button "Don\'t" [t=1]');
    assert.equal(outlineLine(el(2, { label: 'a\nb' }), true), '- button "a\\nb" [t=2]');
    const line = outlineLine(el(3, { role: 'textbox', value: 'x'.repeat(1000) }), true);
    assert.match(line, /value='x{1000}' \(1000 chars\) \[t=3\]$/);
    const cut = outlineLine(el(4, { role: 'textbox', value: 'y'.repeat(VALUE_SHOWN_MAX + 5) }), true);
    assert.equal(
      cut,
      `- textbox 'B4' value='${'y'.repeat(VALUE_SHOWN_MAX)}' (first ${VALUE_SHOWN_MAX} of ${VALUE_SHOWN_MAX + 5} chars; format "full" gives it whole) [t=4]`,
    );
    assert.equal(outlineLine(el(5, { role: 'textbox', value: 'short' }), true), "- textbox 'B5' value='short' [t=5]");
  });

  test('children are indented under their nearest listed ancestor, also when a filter skips the parent', () => {
    const all = [
      el(0, { role: 'iframe' }),
      el(1, { role: 'generic', parent_index: 0 }),
      el(2, { parent_index: 1 }),
      el(3),
    ];
    const parentOf = (i: number) => all[i].parent_index;
    assert.deepEqual(
      renderOutline(all, parentOf, true)
        .split('\n')
        .map((l) => l.indexOf('-')),
      [0, 2, 4, 0],
    );
    assert.deepEqual(
      renderOutline([all[0], all[2], all[3]], parentOf, true)
        .split('\n')
        .map((l) => l.indexOf('-')),
      [0, 2, 0],
    );
    assert.deepEqual(
      renderOutline([all[2]], parentOf, true)
        .split('\n')
        .map((l) => l.indexOf('-')),
      [0],
    );
  });
});

describe('error text', () => {
  test('a refusal names its code, message and every detail', () => {
    const text = refusalText(
      new Refusal('stale_element_token', 'element_token is stale; call get_window_state again to refresh', {
        current_snapshot_ids: ['s0000000a'],
      }),
    );
    assert.equal(
      text,
      'refused: stale_element_token: element_token is stale; call get_window_state again to refresh\ncurrent_snapshot_ids: ["s0000000a"]',
    );
    const budget = refusalText(
      new Refusal('type_text_synthesis_budget_exceeded', 'too long', {
        max_chunk_chars: 200,
        retryable: false,
        covering_element: 'div#x',
      }),
    );
    assert.match(budget, /\nmax_chunk_chars: 200\n/);
    assert.match(budget, /\nretryable: false\n/);
    assert.match(budget, /\ncovering_element: div#x$/);
  });

  test('a failed verdict carries delivery, evidence, what the field holds and what to try', () => {
    const text = summarize({
      effect: 'partial',
      route: 'dom',
      method: 'insert_text',
      target: 'input#max "Max"',
      delivery: { mode: 'background', delivered_count: 5 },
      evidence: [{ kind: 'field_value', expected: 'abcdefgh', observed: 'abcde', detail: 'maxlength 5' }],
      observed: 'abcde',
      escalation: { target: 'verify', reason: 'read the field' },
      timings_ms: { resolve: 1, deliver: 1, verify: 1 },
    });
    assert.equal(
      text,
      [
        'partial (insert_text) on input#max "Max", route dom',
        'delivery: background, delivered_count 5',
        'evidence field_value: expected "abcdefgh", observed "abcde", maxlength 5',
        'holds now: "abcde"',
        'next: verify: read the field',
      ].join('\n'),
    );
  });

  test('a batch step known only by its structuredContent gets the same text', () => {
    const refused = textOfStructured({
      status: 'refused',
      refusal: { code: 'element_disabled', message: 'input#dis is disabled', retryable: false },
    });
    assert.equal(refused, 'refused: element_disabled: input#dis is disabled\nretryable: false');
    assert.match(
      textOfStructured({
        effect: 'no_effect',
        route: 'dom',
        delivery: { mode: 'background' },
        evidence: [],
        timings_ms: {},
      }),
      /^no_effect, route dom/,
    );
  });
});

const block = (text: string, before: number, over: Partial<SnapshotText> = {}): SnapshotText => ({
  kind: 'text',
  text,
  before_index: before,
  parent_index: null,
  ...over,
});

describe("the page's text in the outline", () => {
  test('blocks stand before the element they precede, indented under the element they are inside', () => {
    const all = [el(0, { role: 'generic', label: 'Card' }), el(1, { parent_index: 0 }), el(2)];
    const text = [
      block('Title', 0, { kind: 'heading' }),
      block('inside the card', 1, { parent_index: 0 }),
      block('Saved', 3, { kind: 'status' }),
    ];
    assert.equal(
      renderOutline(all, (i) => all[i].parent_index, true, text),
      [
        '- heading: Title',
        "- generic 'Card' [t=0]",
        '  - text: inside the card',
        "  - button 'B1' [t=1]",
        "- button 'B2' [t=2]",
        '- status: Saved',
      ].join('\n'),
    );
    // A query that keeps only the last element still shows the blocks in order, before or after it.
    assert.equal(
      renderOutline([all[2]], (i) => all[i].parent_index, true, [text[0], text[2]]),
      ['- heading: Title', "- button 'B2' [t=2]", '- status: Saved'].join('\n'),
    );
    assert.equal(encodeText(text), '0 heading Title\n1 text inside the card\n3 status Saved');
  });

  test('the text is capped at a word, with a marker naming what was left out and how to read it', () => {
    const words = (n: number, w: string) => Array.from({ length: n }, () => w).join(' ');
    const text = [block(words(600, 'alpha'), 0), block(words(1000, 'beta'), 0), block('gamma', 0)];
    const { blocks, cut } = shownText(text, undefined);
    const shown = blocks.reduce((n, b) => n + b.text.length, 0);
    assert.ok(shown <= TEXT_SHOWN_MAX && shown > TEXT_SHOWN_MAX - 10, `${shown}`);
    assert.equal(blocks[0].text, text[0].text, 'a block under the cap is whole');
    assert.match(blocks[1].text, /^beta( beta)*$/, 'the block that crosses the cap is cut at a word');
    assert.equal(blocks.length, 2);
    assert.match(cut!, /: \d+ more in 2 blocks are left out; pass query \(a word of the text\) .*page get_text/);
    const narrowed = shownText(text, 'gamma');
    assert.deepEqual(narrowed, { blocks: [text[2]] });
    assert.deepEqual(shownText([], undefined), { blocks: [] });
    assert.match(shownText([], undefined, 'a frame held more').cut!, /a frame held more/);
  });
});
