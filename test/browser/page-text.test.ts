// The page's own text in the default observation (issue #24 item 5): headings, paragraphs, table rows and
// status messages in reading order among the controls, folded (a control's name is not said again as text),
// capped with a marker naming how to read the rest, narrowed by query; a long field value shown whole up to
// its cap with its length, never cut with "…"; the three formats carry the same blocks. And a task read and
// done from the observation alone, without page get_text.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';
import { TEXT_SHOWN_MAX, VALUE_SHOWN_MAX } from '../../server/tools/outline.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

async function observe(args: Record<string, unknown> = {}) {
  const r = await s.v.call('get_window_state', args);
  assert.equal(r.isError, false, r.text);
  return r;
}

const isElementLine = (l: string) => /\[t=\d+\]$/.test(l);
const textLines = (outline: string) => outline.split('\n').filter((l) => !isElementLine(l));
/** The token of the element line naming `name`. */
function tokenOf(st: any, name: string): string {
  const line = st.outline.split('\n').find((l: string) => isElementLine(l) && l.includes(`'${name}'`));
  assert.ok(line, `no element line names ${name} in:\n${st.outline}`);
  return `${st.snapshot_id}:${/\[t=(\d+)\]$/.exec(line)![1]}`;
}

describe("the page's text in the default observation", () => {
  test('headings, paragraphs and table rows in reading order among the controls, nothing said twice', async () => {
    await s.open('reading.html');
    const st = (await observe()).structured;
    const lines = st.outline.split('\n').map((l: string) => l.trim());
    const at = (prefix: string) => {
      const i = lines.findIndex((l: string) => l.startsWith(prefix));
      assert.ok(i >= 0, `no line starts with ${prefix} in:\n${st.outline}`);
      return i;
    };
    const order = [
      at('- heading: Order desk'),
      // One line, whole: its bold name, its code and the icon inside it do not split it.
      at(
        '- text: Ship the order for Ada Lovelace: enter the code ZX-42 in the Code field, choose the size the table gives her, then press Submit.',
      ),
      at('- row: Customer | Size | Status'),
      at('- row: Ada Lovelace | Medium | Waiting'),
      at('- row: Alan Turing | Large | Shipped'),
      at("- textbox 'Code'"),
      at("- combobox 'Size'"),
      at("- checkbox 'Gift wrap'"),
      at("- button 'Submit'"),
    ];
    assert.deepEqual(
      order,
      [...order].sort((a, b) => a - b),
      `reading order:\n${st.outline}`,
    );
    // Folded: the labels are the fields' names, so no text line repeats them; no line twice.
    const texts = textLines(st.outline).map((l) => l.trim());
    for (const label of ['Code', 'Size', 'Notes', 'Essay', 'Gift wrap', 'Submit'])
      assert.ok(!texts.some((l) => l === `- text: ${label}`), `the label ${label} is said again:\n${st.outline}`);
    assert.equal(new Set(lines).size, lines.length, `a line is there twice:\n${st.outline}`);
    // A select's options are its value, not the page's text; hidden text is not shown.
    assert.ok(!texts.some((l) => /Small|invisible|hidden/.test(l)), st.outline);
    assert.equal(st.text_cut, undefined);
    // The text item carries the same outline.
    assert.equal(st.outline, (await observe()).text.split('\n').slice(1).join('\n'));
  });

  test('a long field value is shown whole up to its cap with its length, never cut with "…"', async () => {
    await s.open('reading.html');
    const st = (await observe()).structured;
    const essay = st.outline.split('\n').find((l: string) => l.includes("textbox 'Essay'"));
    assert.match(essay, / END' \(3000 chars\) \[t=\d+\]$/, 'the 3,000 characters are there whole, with their length');
    assert.ok(!essay.includes('…'));
    const notes = st.outline.split('\n').find((l: string) => l.includes("textbox 'Notes'"));
    assert.match(notes, /^- textbox 'Notes' \[t=\d+\]$/, 'the blank textarea has no value');

    await s.open(`reading.html?essay=${VALUE_SHOWN_MAX + 2000}`);
    const big = (await observe()).structured;
    const line = big.outline.split('\n').find((l: string) => l.includes("textbox 'Essay'"));
    assert.ok(!line.includes('…') && !line.includes(' END'), line.slice(-200));
    assert.match(
      line,
      new RegExp(`\\(first ${VALUE_SHOWN_MAX} of ${VALUE_SHOWN_MAX + 2000} chars; format "full" gives it whole\\)`),
    );
    const value = /value='([^']*)'/.exec(line)![1];
    assert.equal(value.length, VALUE_SHOWN_MAX);
    const full = (await observe({ format: 'full' })).structured;
    assert.ok(full.elements.find((e: any) => e.label === 'Essay').value.endsWith(' END'), 'format full has it whole');
  });

  test('the text is capped with a marker naming query and page get_text; query narrows the text too', async () => {
    await s.open('reading.html?long=80');
    const st = (await observe()).structured;
    const shown = textLines(st.outline).reduce((n, l) => n + l.trim().replace(/^- \w+: /, '').length, 0);
    assert.ok(shown <= TEXT_SHOWN_MAX, `${shown} characters of text shown`);
    assert.ok(shown > TEXT_SHOWN_MAX / 2, `${shown} characters of text shown`);
    assert.match(st.text_cut, /more in \d+ blocks are left out; pass query .* page get_text/);
    assert.ok(st.outline.includes('Paragraph 0 of'), 'the start is shown');
    assert.ok(!st.outline.includes('Paragraph 79 of'), 'the end is cut');
    assert.ok(st.outline.includes("- button 'Submit'"), 'every element is still listed');

    const narrowed = (await observe({ query: 'paragraph 79' })).structured;
    assert.deepEqual(
      textLines(narrowed.outline).map((l) => l.trim().slice(0, 32)),
      ['- text: Paragraph 79 of the long'],
    );
    assert.equal(narrowed.text_cut, undefined);
    const table = (await observe({ query: 'turing' })).structured;
    assert.deepEqual(textLines(table.outline), ['- row: Alan Turing | Large | Shipped']);
  });

  test("a frame's text stands inside its iframe, same-origin and cross-origin", async () => {
    await s.open('frames.html');
    let st = (await observe()).structured;
    for (let i = 0; i < 20 && (st.outline.match(/'Inner button'/g) ?? []).length < 2; i++) {
      await new Promise((done) => setTimeout(done, 250)); // the cross-origin child may still be loading
      st = (await observe()).structured;
    }
    const lines: string[] = st.outline.split('\n');
    for (const label of ['- text: Same-origin frame:', '- text: Cross-origin frame:']) {
      const at = lines.indexOf(label);
      assert.ok(at >= 0, `no ${label} in:\n${st.outline}`);
      // The frame's own text is indented under its iframe, after the frame's controls.
      assert.match(lines[at + 1], /^- iframe /);
      assert.deepEqual(
        lines.slice(at + 2, at + 5).map((l) => l.replace(/ \[t=\d+\]$/, '')),
        ["  - textbox 'Inner'", "  - button 'Inner button'", '  - text: clicks: 0'],
      );
    }
  });

  test('the three formats carry the same blocks', async () => {
    await s.open('reading.html');
    const outline = (await observe()).structured;
    const full = (await observe({ format: 'full' })).structured;
    const compact = (await observe({ format: 'compact' })).structured;
    const fromOutline = textLines(outline.outline).map((l) => l.trim());
    assert.deepEqual(
      full.text.map((t: any) => `- ${t.kind}: ${t.text}`),
      fromOutline,
    );
    assert.deepEqual(
      compact.text.split('\n'),
      full.text.map((t: any) => `${t.before_index} ${t.kind} ${t.text}`),
    );
    assert.match(compact.legend, /text: a line per block/);
    // before_index: the instructions stand before the first field.
    const code = full.elements.find((e: any) => e.label === 'Code').element_index;
    assert.equal(full.text.find((t: any) => t.kind === 'heading').before_index, code);
  });

  test('a task is read and done from the observation alone, and its status message read back', async () => {
    const page = await s.open('reading.html');
    const st = (await observe()).structured;
    // What a model reads: the code from the instructions, the size from the customer's table row.
    const instructions = textLines(st.outline).find((l) => l.includes('enter the code'))!;
    const code = /enter the code (\S+)/.exec(instructions)![1];
    const customer = /Ship the order for (.+?):/.exec(instructions)![1];
    const row = textLines(st.outline).find((l) => l.includes(`- row: ${customer} |`))!;
    const size = row.split(' | ')[1];
    assert.deepEqual([code, size], ['ZX-42', 'Medium']);
    const typed = await s.v.call('type_text', { element_token: tokenOf(st, 'Code'), text: code });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    const chosen = await s.v.call('set_value', { element_token: tokenOf(st, 'Size'), value: size });
    assert.equal(chosen.structured.effect, 'confirmed', chosen.text);
    const pressed = await s.v.call('click', { element_token: tokenOf(st, 'Submit') });
    assert.equal(pressed.structured.effect, 'confirmed', pressed.text);
    const after = (await observe()).structured;
    assert.ok(
      after.outline.split('\n').includes('- status: Order shipped to Ada Lovelace'),
      `the status message is read back:\n${after.outline}`,
    );
    assert.equal(await page.$eval('#status', (el) => el.textContent), 'Order shipped to Ada Lovelace');
  });
});
