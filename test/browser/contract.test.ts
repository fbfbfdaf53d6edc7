// The public contract as an MCP client sees it: what tools/list advertises, what get_window_state returns,
// how element tokens go stale, and how malformed calls are refused without taking the server down.
// tools/list is read first, so the SDK client validates every later structuredContent (refusals included)
// against the advertised outputSchema: a result outside the schema fails the call that returned it. Over a
// real `verity mcp` process and its stdio transport (one of the end-to-end files; most browser files run the
// core in-process).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuiteOverStdio, type Suite } from '../helpers/suite.js';
import { startVerity, type Verity } from '../helpers/mcp.js';

let s: Suite<Verity>;
let tools: Array<{ name: string; inputSchema: any; outputSchema?: any; annotations?: any }>;
before(async () => {
  s = await browserSuiteOverStdio();
  tools = (await s.v.client.listTools()).tools as typeof tools;
});
after(async () => {
  await s?.close();
});

const STAGE_TOOLS = [
  'list_apps',
  'list_windows',
  'get_window_state',
  'click',
  'double_click',
  'right_click',
  'set_value',
  'type_text',
  'press_key',
  'hotkey',
  'scroll',
  'drag',
  'page',
];
const STALE = 'element_token is stale; call get_window_state again to refresh';

/** A refusal as the contract shapes it; returns the refusal object. */
function refused(r: { isError: boolean; structured: any; text: string }, code: string): any {
  assert.equal(r.isError, true, r.text);
  assert.equal(r.structured?.status, 'refused', r.text);
  assert.equal(r.structured.refusal.code, code, r.text);
  assert.equal(typeof r.structured.refusal.message, 'string');
  assert.ok(r.structured.refusal.message.length > 0);
  return r.structured.refusal;
}

/** The server still serves: an ordinary call right after succeeds. */
async function stillServing(): Promise<void> {
  const r = await s.v.call('page', { action: 'list_tabs' });
  assert.equal(r.isError, false, r.text);
  assert.ok(Array.isArray(r.structured.tabs) && r.structured.tabs.length > 0, r.text);
}

async function currentTabId(): Promise<string> {
  const r = await s.v.call('page', { action: 'list_tabs' });
  assert.equal(r.isError, false, r.text);
  return r.structured.current_tab_id ?? r.structured.tabs[0].tab_id;
}

describe('tools/list', () => {
  test('every tool of this stage is listed, with an object input schema', () => {
    const names = tools.map((t) => t.name);
    for (const name of STAGE_TOOLS) assert.ok(names.includes(name), `${name} missing from ${names.join(', ')}`);
    assert.equal(new Set(names).size, names.length, 'tool names are unique');
    for (const t of tools) {
      assert.equal(t.inputSchema?.type, 'object', `${t.name} inputSchema`);
      assert.equal(typeof t.inputSchema.properties, 'object', `${t.name} inputSchema.properties`);
    }
  });

  test('outputSchema is {type: object, anyOf: [success, refusal]}', () => {
    for (const name of STAGE_TOOLS) {
      const schema = tools.find((t) => t.name === name)!.outputSchema;
      assert.ok(schema, `${name} has no outputSchema`);
      assert.equal(schema.type, 'object', name);
      assert.ok(Array.isArray(schema.anyOf), `${name} outputSchema.anyOf`);
      assert.equal(schema.anyOf.length, 2, `${name} outputSchema.anyOf has two branches`);
      const refusal = schema.anyOf[1];
      assert.equal(refusal.type, 'object', `${name} refusal branch`);
      assert.ok(
        refusal.properties?.status && refusal.properties?.refusal,
        `${name} refusal branch names status and refusal`,
      );
      assert.equal(schema.anyOf[0].type, 'object', `${name} success branch`);
    }
  });

  test('annotations carry the three hints; get_window_state is read-only, actions are not', () => {
    for (const name of STAGE_TOOLS) {
      const a = tools.find((t) => t.name === name)!.annotations;
      assert.ok(a, `${name} has no annotations`);
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint'])
        assert.equal(typeof a[hint], 'boolean', `${name}.${hint}`);
    }
    const gws = tools.find((t) => t.name === 'get_window_state')!.annotations;
    assert.equal(gws.readOnlyHint, true);
    assert.equal(gws.destructiveHint, false);
    for (const name of ['list_apps', 'list_windows'])
      assert.equal(tools.find((t) => t.name === name)!.annotations.readOnlyHint, true, name);
    for (const name of ['click', 'type_text', 'drag', 'set_value'])
      assert.equal(tools.find((t) => t.name === name)!.annotations.readOnlyHint, false, name);
  });

  // The contract changed: the default surface is lean (seed arguments accepted, not advertised); the
  // complete surface (--tools full) advertises every seed 003 argument.
  test('type_text advertises the seed 003 arguments on the complete surface (--tools full)', async () => {
    const full = await startVerity(['--tools', 'full', ...s.chrome.attach]);
    try {
      const fullTools = (await full.client.listTools()).tools as typeof tools;
      const props = fullTools.find((t) => t.name === 'type_text')!.inputSchema.properties;
      for (const arg of [
        'text',
        'element_token',
        'pid',
        'window_id',
        'x',
        'y',
        'scope',
        'target',
        'session',
        'delivery_mode',
        'delay_ms',
      ]) {
        assert.ok(props[arg], `type_text.${arg}`);
      }
      assert.deepEqual(fullTools.find((t) => t.name === 'type_text')!.inputSchema.required, ['text']);
    } finally {
      await full.close();
    }
  });
});

describe('get_window_state', () => {
  test('structured fields, elements and the screenshot as an image content item', async () => {
    await s.open('plain.html');
    const raw = await s.v.client.callTool({
      name: 'get_window_state',
      arguments: { format: 'full', include_screenshot: true },
    });
    assert.ok(!raw.isError, JSON.stringify(raw.content));
    const st = raw.structuredContent as any;
    assert.match(st.snapshot_id, /\S/);
    assert.equal(st.target.kind, 'tab');
    assert.equal(typeof st.target.tab_id, 'string');
    assert.ok(Number.isInteger(st.element_count) && st.element_count > 10, `element_count ${st.element_count}`);
    assert.equal(st.returned_element_count, st.elements.length);
    assert.equal(st.elements_complete, true);
    assert.ok(st.screenshot_width > 0 && st.screenshot_height > 0);
    const images = (raw.content as any[]).filter((c) => c.type === 'image');
    assert.equal(images.length, 1);
    assert.equal(images[0].mimeType, 'image/png');
    const png = Buffer.from(images[0].data, 'base64');
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.equal(png.readUInt32BE(16), st.screenshot_width);
    assert.equal(png.readUInt32BE(20), st.screenshot_height);

    st.elements.forEach((e: any, i: number) => {
      assert.equal(e.element_index, i, 'an unfiltered list is indexed 0..n-1');
      assert.equal(typeof e.element_token, 'string');
      assert.equal(typeof e.role, 'string');
      assert.equal(typeof e.label, 'string');
      assert.equal(typeof e.enabled, 'boolean');
      assert.equal(typeof e.focused, 'boolean');
      assert.equal(e.in_web_content, true);
      for (const k of ['x', 'y', 'w', 'h']) assert.equal(typeof e.frame[k], 'number', `frame.${k}`);
      assert.ok(
        e.parent_index === null || (Number.isInteger(e.parent_index) && e.parent_index < st.element_count),
        `parent_index ${e.parent_index}`,
      );
    });
    assert.equal(new Set(st.elements.map((e: any) => e.element_token)).size, st.elements.length, 'tokens are unique');
    const text = st.elements.find((e: any) => e.label === 'Text');
    assert.ok(text, 'the Text input is listed');
    assert.equal(text.value, '');
    const disabled = st.elements.find((e: any) => e.label === 'Disabled');
    assert.equal(disabled?.enabled, false);
    assert.equal(st.elements.find((e: any) => e.label === 'Increment')?.enabled, true);
  });

  test('include_screenshot:false sends no image but still the screenshot size', async () => {
    await s.open('plain.html');
    const r = await s.v.call('get_window_state', { format: 'full', include_screenshot: false });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.images, 0);
    assert.ok(r.structured.screenshot_width > 0 && r.structured.screenshot_height > 0);
    const shot = await s.v.call('get_window_state', { format: 'full', include_screenshot: true });
    assert.equal(shot.images, 1);
  });

  test('max_elements caps the answer and marks it incomplete', async () => {
    await s.open('plain.html');
    const r = await s.v.call('get_window_state', { format: 'full', include_screenshot: false, max_elements: 3 });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.elements.length, 3);
    assert.equal(r.structured.returned_element_count, 3);
    assert.ok(r.structured.element_count > 3);
    assert.equal(r.structured.elements_complete, false);
  });

  test('query filters the elements; element_index stays that of the full list', async () => {
    await s.open('plain.html');
    const full = await s.snapshot(s.v);
    const byIndex = new Map(full.elements.map((e: any) => [e.element_index, e]));
    const r = await s.v.call('get_window_state', { format: 'full', include_screenshot: false, query: 'radio' });
    assert.equal(r.isError, false, r.text);
    const els = r.structured.elements as any[];
    assert.ok(els.length >= 2, r.text);
    assert.ok(els.length < r.structured.element_count);
    assert.equal(r.structured.element_count, full.elements.length);
    assert.equal(r.structured.elements_complete, true);
    assert.ok(
      els.some((e) => e.element_index > 0),
      'a filtered list keeps its original indices',
    );
    for (const e of els) {
      assert.match(`${e.role} ${e.label} ${e.value ?? ''}`.toLowerCase(), /radio/);
      const same = byIndex.get(e.element_index) as any;
      assert.equal(same?.label, e.label, `index ${e.element_index} names the same element`);
      assert.equal(same?.role, e.role);
    }
    // A filtered token acts on the element it names.
    const radio = els.find((e) => e.label === 'Radio 2');
    const click = await s.v.call('click', { element_token: radio.element_token });
    assert.equal(click.structured.effect, 'confirmed', click.text);
  });

  test('elements in a cross-origin iframe are listed, with frames inside the screenshot', async () => {
    await s.open(`frames.html?cross=${encodeURIComponent(s.fx.crossUrl('frame-child.html'))}`);
    const frame = await s.chrome.page('frames.html');
    await frame.waitForFunction(
      'document.getElementById("cross").contentWindow && document.querySelectorAll("iframe").length === 2',
    );
    let r = await s.v.call('get_window_state', { format: 'full', include_screenshot: false, max_elements: 2000 });
    for (let i = 0; i < 20 && r.structured.elements.filter((e: any) => e.label === 'Inner').length < 2; i++) {
      await new Promise((done) => setTimeout(done, 250)); // the cross-origin child may still be loading
      r = await s.v.call('get_window_state', { format: 'full', include_screenshot: false, max_elements: 2000 });
    }
    const st = r.structured;
    const inner = st.elements.filter((e: any) => e.label === 'Inner');
    assert.equal(inner.length, 2, `the Inner input of both frames: ${r.text}`);
    const buttons = st.elements.filter((e: any) => e.label === 'Inner button');
    assert.equal(buttons.length, 2, r.text);
    const top = st.elements.find((e: any) => e.label === 'Top');
    for (const e of [...inner, ...buttons]) inBounds(e, st);
    // The cross-origin copy sits below the same-origin one, and both below the top input.
    assert.ok(
      inner[1].frame.y > inner[0].frame.y && inner[0].frame.y > top.frame.y,
      JSON.stringify(inner.map((e: any) => e.frame)),
    );
    // Acting on the cross-origin button works through its token.
    const click = await s.v.call('click', { element_token: buttons[1].element_token });
    assert.equal(click.structured.effect, 'confirmed', click.text);
  });

  test('elements in open and closed shadow roots are listed, with frames inside the screenshot', async () => {
    await s.open('shadow.html');
    const r = await s.v.call('get_window_state', { format: 'full', include_screenshot: false });
    const st = r.structured;
    for (const label of ['Open', 'Closed', 'Closed button']) {
      const e = st.elements.find((el: any) => el.label === label);
      assert.ok(e, `${label} in ${r.text}`);
      inBounds(e, st);
    }
    const page = await s.chrome.page('shadow.html');
    const click = await s.v.call('click', {
      element_token: st.elements.find((el: any) => el.label === 'Closed button').element_token,
    });
    assert.equal(click.structured.effect, 'confirmed', click.text);
    assert.equal((await s.model(page)).closedClicks, 1);
  });

  test('many.html?n=1000 lists every element when max_elements allows', async () => {
    await s.open('many.html?n=1000');
    const r = await s.v.call('get_window_state', { format: 'full', include_screenshot: false, max_elements: 5000 });
    assert.equal(r.isError, false, r.text.slice(0, 500));
    assert.ok(r.structured.element_count >= 1000, `element_count ${r.structured.element_count}`);
    assert.equal(r.structured.returned_element_count, r.structured.element_count);
    assert.equal(r.structured.elements_complete, true);
    assert.ok(
      r.structured.elements.some((e: any) => e.label.includes('Option 999')),
      'the last element is listed',
    );
    // The contract changed: max_elements defaults to its cap (5,000), not 400.
    const all = await s.v.call('get_window_state', { format: 'full', include_screenshot: false });
    assert.equal(all.structured.returned_element_count, all.structured.element_count, 'max_elements defaults to 5000');
    assert.equal(all.structured.elements_complete, true);
  });
});

function inBounds(e: any, st: any): void {
  const f = e.frame;
  assert.ok(f.w > 0 && f.h > 0, `${e.label} has an area: ${JSON.stringify(f)}`);
  assert.ok(
    f.x >= 0 && f.y >= 0 && f.x + f.w <= st.screenshot_width && f.y + f.h <= st.screenshot_height,
    `${e.label} ${JSON.stringify(f)} inside ${st.screenshot_width}x${st.screenshot_height}`,
  );
}

describe('element tokens', () => {
  test('a token of an older snapshot of the same tab is stale, naming the current snapshot', async () => {
    const page = await s.open('plain.html');
    const old = await s.snapshot(s.v);
    const fresh = await s.snapshot(s.v);
    assert.notEqual(old.result.structured.snapshot_id, fresh.result.structured.snapshot_id);
    const r = await s.v.call('click', { element_token: old.token('Increment') });
    const refusal = refused(r, 'stale_element_token');
    assert.equal(refusal.message, STALE);
    assert.ok(Array.isArray(refusal.current_snapshot_ids), r.text);
    assert.ok(refusal.current_snapshot_ids.includes(fresh.result.structured.snapshot_id), r.text);
    assert.equal(await page.$eval('#count', (el) => el.textContent), '0', 'a stale token changes nothing');
    // The same element through the fresh token works.
    const ok = await s.v.call('click', { element_token: fresh.token('Increment') });
    assert.equal(ok.structured.effect, 'confirmed', ok.text);
    assert.equal(await page.$eval('#count', (el) => el.textContent), '1');
  });

  test('a stale token is refused by every action tool', async () => {
    await s.open('plain.html');
    const old = await s.snapshot(s.v);
    await s.snapshot(s.v);
    const token = old.token('Text');
    for (const [tool, extra] of [
      ['type_text', { text: 'x' }],
      ['set_value', { value: 'x' }],
      ['press_key', { key: 'a' }],
      ['double_click', {}],
      ['right_click', {}],
      ['scroll', { direction: 'down' }],
    ] as const) {
      const r = await s.v.call(tool, { element_token: token, ...extra });
      assert.equal(refused(r, 'stale_element_token').message, STALE, tool);
    }
  });

  test('a garbage token and an index out of range are invalid_element_token', async () => {
    await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    refused(await s.v.call('click', { element_token: 'not-a-token' }), 'invalid_element_token');
    await stillServing();
    const id = snap.result.structured.snapshot_id;
    refused(await s.v.call('click', { element_token: `${id}:99999` }), 'invalid_element_token');
    await stillServing();
    refused(await s.v.call('type_text', { element_token: `${id}:-1`, text: 'x' }), 'invalid_element_token');
    await stillServing();
  });
});

describe('malformed calls are refused, naming the field, and the server keeps serving', () => {
  const cases: Array<[string, string, Record<string, unknown>, RegExp]> = [
    ['wrong type', 'click', { element_token: 42 }, /element_token/],
    ['wrong type (nested)', 'get_window_state', { format: 'full', include_screenshot: 'yes' }, /include_screenshot/],
    ['unknown field', 'click', { bogus_field: 1 }, /bogus_field/],
    ['unknown field (type_text)', 'type_text', { text: 'x', colour: 'red' }, /colour/],
    ['delay_ms out of range', 'type_text', { text: 'x', delay_ms: 500 }, /delay_ms/],
    ['negative delay_ms', 'type_text', { text: 'x', delay_ms: -1 }, /delay_ms/],
    ['missing text', 'type_text', {}, /text/],
    ['empty text', 'type_text', { text: '' }, /text/],
    ['max_elements out of range', 'get_window_state', { format: 'full', max_elements: -5 }, /max_elements/],
    ['bad enum', 'scroll', { direction: 'sideways' }, /direction/],
    ['bad target kind', 'click', { target: { kind: 'planet', id: 1 } }, /target/],
    ['page action missing', 'page', {}, /action/],
  ];
  for (const [what, tool, args, field] of cases) {
    test(`${what}: ${tool} ${JSON.stringify(args)}`, async () => {
      const r = await s.v.call(tool, args);
      const refusal = refused(r, 'invalid_arguments');
      assert.match(refusal.message, field);
      await stillServing();
    });
  }

  test('an unknown tool is refused and the server keeps serving', async () => {
    const r = await s.v.call('no_such_tool', {});
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, /no_such_tool/);
    await stillServing();
  });

  test('element_token together with target is conflicting_target', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const tabId = await currentTabId();
    const r = await s.v.call('click', {
      element_token: snap.token('Increment'),
      target: { kind: 'tab', tab_id: tabId },
    });
    const refusal = refused(r, 'conflicting_target');
    assert.match(refusal.message, /element_token/);
    assert.match(refusal.message, /target/);
    assert.equal(await page.$eval('#count', (el) => el.textContent), '0', 'nothing was clicked');
    const typed = await s.v.call('type_text', {
      element_token: snap.token('Text'),
      pid: 1234,
      window_id: 1,
      text: 'x',
    });
    refused(typed, 'conflicting_target');
    assert.equal((await s.model(page)).text, '');
    await stillServing();
  });

  test('an unknown tab_id is target_not_found', async () => {
    await s.open('plain.html');
    const target = { kind: 'tab', tab_id: 'NO-SUCH-TAB-0000' };
    const snap = await s.v.call('get_window_state', { format: 'full', target, include_screenshot: false });
    assert.match(refused(snap, 'target_not_found').message, /NO-SUCH-TAB-0000/);
    refused(await s.v.call('click', { target, x: 10, y: 10 }), 'target_not_found');
    refused(
      await s.v.call('page', { action: 'navigate', tab_id: 'NO-SUCH-TAB-0000', url: s.fx.url('plain.html') }),
      'target_not_found',
    );
    await stillServing();
    const ok = await s.v.call('get_window_state', {
      format: 'full',
      target: { kind: 'tab', tab_id: await currentTabId() },
      include_screenshot: false,
    });
    assert.equal(ok.isError, false, ok.text);
  });
});
