// What the model reads (contract §3): the default get_window_state is a complete outline, legible without
// a legend, in both structuredContent and the text; refusals and failed verdicts carry every detail in
// their text (the only part of an error a client shows); the default tool surface is lean and the
// complete one (--tools full) advertises everything; names and roles are the accessibility tree's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';
import { startVerity } from '../helpers/mcp.js';
import { CAPABILITIES } from '../../server/contract/capabilities.js';
import { CONTRACT_TOOLS } from '../helpers/contract-tools.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

/** The default observation of the current tab (no format, no max_elements: what an agent gets). */
async function observe(args: Record<string, unknown> = {}) {
  const r = await s.v.call('get_window_state', args);
  assert.equal(r.isError, false, r.text);
  return r;
}

/** The outline line naming `name`, and the token its [t=N] stands for. */
function lineOf(st: any, name: string): { line: string; token: string } {
  const line = st.outline.split('\n').find((l: string) => l.includes(`'${name}'`));
  assert.ok(line, `no line names ${name} in:\n${st.outline}`);
  const n = /\[t=(\d+)\]$/.exec(line)![1];
  return { line, token: `${st.snapshot_id}:${n}` };
}

describe('the default get_window_state', () => {
  test('every element of a 1,000-element page, in both structuredContent and the text, without a screenshot', async () => {
    await s.open('many.html?n=1000');
    const r = await observe();
    const st = r.structured;
    assert.equal(st.format, 'outline');
    assert.equal(st.elements, undefined, 'no element objects by default');
    assert.equal(r.images, 0, 'a tab attaches no screenshot by default');
    assert.ok(st.element_count >= 1000, `element_count ${st.element_count}`);
    assert.equal(st.returned_element_count, st.element_count);
    assert.equal(st.elements_complete, true);
    assert.equal(st.cut, undefined);
    assert.equal(st.tokens, `[t=N] is element_token "${st.snapshot_id}:N"`);
    // The page's heading is its only text (the labels are the fields' names, not said twice).
    const [heading, ...lines] = st.outline.split('\n');
    assert.equal(heading, '- heading: Many interactive elements');
    assert.equal(lines.length, st.element_count);
    lines.forEach((l: string, i: number) => assert.match(l, new RegExp(`^\\s*- \\S+.* \\[t=${i}\\]$`), `line ${i}`));
    assert.ok(st.outline.includes('Option 999'), 'the last element is listed');
    // The text item is one header line and the same outline.
    const [header, ...rest] = r.text.split('\n');
    assert.equal(rest.join('\n'), st.outline);
    assert.ok(header.includes(st.snapshot_id) && header.includes(st.tokens), header);
    // What the model receives is small: a line per element, no per-element JSON object.
    const bytes = Buffer.byteLength(JSON.stringify(st));
    assert.ok(bytes < 70 * st.element_count, `${bytes} B for ${st.element_count} elements`);
  });

  test('role words, names, values and states spelled out; nesting by indentation; tokens act', async () => {
    const page = await s.open('plain.html');
    await page.click('#cb');
    await page.focus('#area');
    const st = (await observe()).structured;
    assert.match(lineOf(st, 'Text').line, /^- textbox 'Text' \[t=\d+\]$/);
    assert.match(lineOf(st, 'Read-only').line, /^- textbox 'Read-only' value='fixed'/);
    assert.match(lineOf(st, 'Disabled').line, / \[disabled\] /);
    assert.match(lineOf(st, 'Area').line, / \[focused\] /);
    assert.match(lineOf(st, 'Checkbox').line, /^- checkbox 'Checkbox' \[checked\] \[t=\d+\]$/);
    assert.doesNotMatch(lineOf(st, 'Radio 1').line, /checked/, 'an unchecked radio says nothing');
    const click = await s.v.call('click', { element_token: lineOf(st, 'Increment').token });
    assert.equal(click.structured.effect, 'confirmed', click.text);
    assert.equal((await s.model(page)).clicks, 1);

    await s.open('frames.html');
    let framed = (await observe()).structured;
    for (let i = 0; i < 20 && (framed.outline.match(/'Inner'/g) ?? []).length < 2; i++) {
      await new Promise((done) => setTimeout(done, 250)); // the cross-origin child may still be loading
      framed = (await observe()).structured;
    }
    const inner = framed.outline.split('\n').filter((l: string) => l.includes("'Inner'"));
    assert.equal(inner.length, 2, framed.outline);
    for (const l of inner) assert.match(l, /^ {2,}- textbox 'Inner'/, "an iframe's elements are indented under it");
  });

  test('a cut says so and how to narrow it; query keeps the indices of the whole list', async () => {
    await s.open('plain.html');
    const cut = (await observe({ max_elements: 3 })).structured;
    assert.equal(cut.returned_element_count, 3);
    assert.equal(cut.elements_complete, false);
    assert.match(cut.cut, /listed 3 of \d+ elements/);
    assert.match(cut.cut, /query/);
    const whole = (await observe()).structured;
    const radio = (await observe({ query: 'radio' })).structured;
    const lines = radio.outline.split('\n');
    assert.ok(lines.length >= 2 && lines.every((l: string) => /radio/i.test(l)), radio.outline);
    for (const l of lines) {
      const n = /\[t=(\d+)\]$/.exec(l)![1];
      assert.ok(
        whole.outline
          .split('\n')
          .find((w: string) => w.endsWith(`[t=${n}]`))!
          .endsWith(l.trim()),
        `[t=${n}] is the same element in the whole list`,
      );
    }
  });

  test('names and roles as Chrome computes them: aria-labelledby, label for, ElementInternals, EditContext, in an iframe too', async () => {
    await s.open('names.html');
    const st = (await observe()).structured;
    assert.match(lineOf(st, 'Shipping address').line, /^- textbox /);
    assert.match(lineOf(st, 'Quantity').line, /^- spinbutton 'Quantity' value='2'/);
    assert.match(lineOf(st, 'Notes editor').line, /^- textbox /);
    assert.match(lineOf(st, 'Code editor').line, /^- textbox /);
    assert.match(
      lineOf(st, 'Accept terms').line,
      /^- checkbox 'Accept terms' \[t=\d+\]$/,
      'ElementInternals role and label',
    );
    assert.match(lineOf(st, 'Inner notes').line, /^ {2,}- textbox /);
    assert.match(lineOf(st, 'Inner name').line, /^ {2,}- textbox /);
    // The computed name is the element's: its token types into it.
    const typed = await s.v.call('type_text', { element_token: lineOf(st, 'Shipping address').token, text: 'Main St' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
  });

  test('format "full" keeps the element objects for programs', async () => {
    await s.open('plain.html');
    const st = (await observe({ format: 'full' })).structured;
    assert.ok(Array.isArray(st.elements) && st.elements.length === st.element_count);
    const e = st.elements.find((x: any) => x.label === 'Text');
    assert.equal(e.element_token, `${st.snapshot_id}:${e.element_index}`);
    for (const k of ['role', 'label', 'enabled', 'focused', 'in_web_content', 'frame', 'parent_index'])
      assert.ok(k in e, k);
  });
});

describe('what an error tells the model (the text item is all it gets)', () => {
  test('a stale token: the code, the message and current_snapshot_ids, in the text', async () => {
    await s.open('plain.html');
    const old = (await observe()).structured;
    const fresh = (await observe()).structured;
    const r = await s.v.call('click', { element_token: lineOf(old, 'Increment').token });
    assert.equal(r.isError, true);
    assert.match(
      r.text,
      /^refused: stale_element_token: element_token is stale; call get_window_state again to refresh/,
    );
    assert.match(r.text, new RegExp(`current_snapshot_ids: \\["${fresh.snapshot_id}"\\]`));
  });

  test('a partial verdict: delivered_count and what the field holds, in the text', async () => {
    await s.open('plain.html');
    const st = (await observe()).structured;
    const r = await s.v.call('type_text', { element_token: lineOf(st, 'Max length 5').token, text: 'abcdefgh' });
    assert.equal(r.isError, true, r.text);
    assert.equal(r.structured.effect, 'partial', r.text);
    assert.match(r.text, /^partial/);
    assert.match(r.text, new RegExp(`delivered_count ${r.structured.delivery.delivered_count}`));
    for (const e of r.structured.evidence) assert.ok(r.text.includes(`evidence ${e.kind}:`), `${e.kind} in ${r.text}`);
    assert.ok(r.text.includes('abcde'), r.text);
  });
});

describe('the tool surface', () => {
  const bytesOf = (tools: any[]) =>
    Buffer.byteLength(
      JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))),
    );

  test('default: every contract tool but the deprecated ones, at most 8.8 KB, no safe-integer bounds, reads read-only', async () => {
    const tools = (await s.v.client.listTools()).tools as any[];
    const names = tools.map((t) => t.name);
    for (const name of CONTRACT_TOOLS) {
      assert.ok(names.includes(name), name);
    }
    assert.ok(!names.includes('escalate_session') && !names.includes('get_session_state'), names.join(', '));
    const bytes = bytesOf(tools);
    assert.ok(bytes <= 8800, `default tool definitions are ${bytes} B`);
    assert.ok(!JSON.stringify(tools).includes('9007199254740991'));
    for (const t of tools.filter((x) => /^(list_|get_)/.test(x.name)))
      assert.equal(t.annotations.readOnlyHint, true, t.name);
    // Unadvertised seed arguments and deprecated tools are still accepted.
    await s.open('plain.html');
    const st = (await observe()).structured;
    const typed = await s.v.call('type_text', {
      element_token: lineOf(st, 'Text').token,
      text: 'x',
      delay_ms: 0,
      delivery_mode: 'background',
    });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    const legacy = await s.v.call('get_session_state', {});
    assert.equal(legacy.isError, false, legacy.text);
  });

  test("--tools full: the deprecated tools and every seed argument, at most 17.6 KB besides the capabilities' tools", async () => {
    const full = await startVerity(['--tools', 'full', ...s.chrome.attach]);
    try {
      const tools = (await full.client.listTools()).tools as any[];
      const names = tools.map((t) => t.name);
      assert.ok(names.includes('escalate_session') && names.includes('get_session_state'), names.join(', '));
      const click = tools.find((t) => t.name === 'click').inputSchema.properties;
      for (const arg of ['pid', 'window_id', 'scope', 'session', 'delivery_mode', 'modifier', 'target'])
        assert.ok(click[arg], `click.${arg}`);
      assert.deepEqual(click.target.properties.kind.enum, ['tab', 'window', 'desktop']);
      // The capability families (--caps) and verify_state (issue 45's done-gate, bounded on its own) are
      // measured apart, as test/unit/tools-in-memory.test.ts does: each is what came on top of this bound.
      const capTools = new Set(Object.values(CAPABILITIES).flatMap((list) => list.split(', ')));
      const bytes = bytesOf(tools.filter((t) => !capTools.has(t.name) && t.name !== 'verify_state'));
      assert.ok(bytes <= 17600, `complete tool definitions (capabilities' tools aside) are ${bytes} B`);
      assert.ok(!JSON.stringify(tools).includes('9007199254740991'));
    } finally {
      await full.close();
    }
  });

  test('get_session with no label on a fresh connection returns its implicit session', async () => {
    const fresh = await startVerity([...s.chrome.attach]);
    try {
      const r = await fresh.call('get_session', {});
      assert.equal(r.isError, false, r.text);
      assert.deepEqual([r.structured.session, r.structured.implicit, r.structured.state], [null, true, 'active']);
    } finally {
      await fresh.close();
    }
  });
});
