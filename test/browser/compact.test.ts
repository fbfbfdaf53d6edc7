// get_window_state format "compact": one outline line per element instead of element objects. It must say
// everything the full form says (decoded, the same elements, field for field), its tokens (token_prefix +
// index) must act and go stale like the full form's, and it must validate against the advertised
// outputSchema. tools/list is read first, so the SDK client itself validates every structuredContent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { decodeOutline, encodeOutline, webNormOf, type OutlineElement } from '../../server/tools/outline.js';
import { refusalOf } from '../helpers/gateway.js';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
let tools: Array<{ name: string; inputSchema: any; outputSchema?: any }>;
before(async () => {
  s = await browserSuite();
  tools = (await s.v.client.listTools()).tools as typeof tools;
});
after(async () => {
  await s?.close();
});

const TOP_LEVEL = [
  'snapshot_id',
  'target',
  'element_count',
  'returned_element_count',
  'elements_complete',
  'screenshot_width',
  'screenshot_height',
];

async function full(args: Record<string, unknown> = {}) {
  const r = await s.v.call('get_window_state', {
    include_screenshot: false,
    max_elements: 2000,
    format: 'full',
    ...args,
  });
  assert.equal(r.isError, false, r.text);
  return r.structured;
}

async function compact(args: Record<string, unknown> = {}) {
  const r = await s.v.call('get_window_state', {
    include_screenshot: false,
    max_elements: 2000,
    format: 'compact',
    ...args,
  });
  assert.equal(r.isError, false, r.text);
  return { r, st: r.structured, elements: decoded(r.structured) };
}

function decoded(st: any): OutlineElement[] {
  return decodeOutline(st.outline, st.roles, webNormOf(st.target.kind));
}

/** The full form's elements without their tokens (the only field a compact line does not spell out). */
function untokened(st: any): OutlineElement[] {
  return st.elements.map(({ element_token, ...e }: any) => {
    assert.equal(element_token, `${st.snapshot_id}:${e.element_index}`);
    return e;
  });
}

/** A full and a compact snapshot of one unchanged page state, and their top-level fields compared. */
async function both(args: Record<string, unknown> = {}) {
  const f = await full(args);
  const c = await compact(args);
  for (const key of TOP_LEVEL.slice(1)) assert.deepEqual(c.st[key], f[key], key);
  assert.notEqual(c.st.snapshot_id, f.snapshot_id);
  return { f, c };
}

describe('get_window_state format "compact"', () => {
  test('values that look like the short forms survive: checked states are =1/=0, a literal "1" or "0" is quoted', () => {
    const values = ['true', 'false', '1', '0', '', ' lead', "it's", 'a\nb', '=x', 'true ', '10'];
    const elements: OutlineElement[] = values.map((value, i) => ({
      element_index: i,
      role: i % 2 ? 'checkbox' : 'textbox',
      label: `L${i}`,
      value,
      enabled: true,
      focused: false,
      in_web_content: true,
      frame: { x: i, y: 0, w: 1, h: 1 },
      parent_index: null,
    }));
    const { roles, outline } = encodeOutline(elements, true);
    assert.deepEqual(decodeOutline(outline, roles, true), elements);
    assert.match(outline, /^0 \S+ 0,0,1x1 =1 L0$/m);
    assert.match(outline, /^2 \S+ 2,,1x1 ='1' L2$/m);
  });

  test("decodes to exactly the full form's elements: values, disabled, focused, frames", async () => {
    const page = await s.open('plain.html');
    await page.focus('#area');
    const { f, c } = await both();
    const elements = untokened(f);
    assert.ok(
      elements.some((e) => e.focused),
      'the focused textarea is in the page state compared',
    );
    assert.ok(
      elements.some((e) => !e.enabled),
      'so is a disabled field',
    );
    assert.ok(
      elements.some((e) => e.value === '') && elements.some((e) => e.value === 'fixed'),
      'and empty and non-empty values',
    );
    assert.deepEqual(c.elements, elements);

    const st = c.st;
    assert.equal(st.format, 'compact');
    assert.equal(st.elements, undefined, 'no element objects in the compact form');
    assert.equal(st.token_prefix, `${st.snapshot_id}:`);
    assert.equal(typeof st.legend, 'string');
    assert.ok(!st.legend.includes('\n'), 'the legend is one line');
    assert.equal(st.outline.split('\n').length, st.returned_element_count);
    // The text item is one header line (naming the prefix, the role codes and the grammar), the same outline,
    // and the page's text blocks after a "text:" line.
    const [header, ...rest] = c.r.text.split('\n');
    const textAt = rest.indexOf('text:');
    assert.ok(textAt > 0 && typeof st.text === 'string', 'plain.html has text of its own');
    assert.equal(rest.slice(0, textAt).join('\n'), st.outline);
    assert.equal(rest.slice(textAt + 1).join('\n'), st.text);
    assert.ok(
      header.startsWith(`${st.snapshot_id} `) && header.includes(st.token_prefix) && header.includes(st.legend),
      header,
    );
    for (const [code, role] of Object.entries(st.roles))
      assert.ok(header.includes(`${code}=${JSON.stringify(role)}`), `${code} in ${header}`);
    // A line names its element's state outright.
    const line = (label: string) => st.outline.split('\n').find((l: string) => l.endsWith(` ${label}`));
    assert.match(line('Disabled') ?? '', / !disabled /);
    assert.match(line('Area') ?? '', / \*focused /);
    assert.match(line('Read-only') ?? '', / =fixed /);
  });

  test('elements inside iframes keep their parent_index', async () => {
    await s.open('frames.html');
    await s.chrome
      .page('frames.html')
      .then((p) => p.waitForFunction('document.querySelectorAll("iframe").length === 2'));
    let f = await full();
    for (let i = 0; i < 20 && f.elements.filter((e: any) => e.label === 'Inner').length < 2; i++) {
      await new Promise((done) => setTimeout(done, 250)); // the cross-origin child may still be loading
      f = await full();
    }
    const c = await compact();
    assert.equal(c.st.returned_element_count, f.elements.length, 'the page did not change between the two snapshots');
    const elements = untokened(f);
    assert.ok(elements.filter((e) => e.parent_index !== null).length >= 4, JSON.stringify(elements));
    assert.deepEqual(c.elements, elements);
    assert.match(c.st.outline, / \^\d+ /);
  });

  test('a token built from token_prefix + index clicks and types (confirmed) and goes stale like any other', async () => {
    const page = await s.open('plain.html');
    const { st, elements } = await compact();
    const index = (label: string) => elements.find((e) => e.label === label)!.element_index;
    const click = await s.v.call('click', { element_token: st.token_prefix + index('Increment') });
    assert.equal(click.structured.effect, 'confirmed', click.text);
    const typed = await s.v.call('type_text', { element_token: st.token_prefix + index('Text'), text: 'compact' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    assert.deepEqual([(await s.model(page)).clicks, (await s.model(page)).text], [1, 'compact']);

    const newer = await compact();
    const stale = refusalOf(await s.v.call('click', { element_token: st.token_prefix + index('Increment') }));
    assert.equal(stale.code, 'stale_element_token');
    assert.deepEqual(stale.current_snapshot_ids, [newer.st.snapshot_id]);
    assert.equal(
      refusalOf(await s.v.call('click', { element_token: `${newer.st.token_prefix}99999` })).code,
      'invalid_element_token',
    );
    assert.equal((await s.model(page)).clicks, 1, 'neither refused token clicked anything');
  });

  test('query and max_elements select the same elements as in the full form', async () => {
    await s.open('plain.html');
    const filtered = await both({ query: 'radio' });
    assert.ok(
      filtered.c.elements.length >= 2 && filtered.c.elements.some((e) => e.element_index > 0),
      filtered.c.st.outline,
    );
    assert.deepEqual(filtered.c.elements, untokened(filtered.f));
    assert.equal(filtered.c.st.elements_complete, true);

    const capped = await both({ max_elements: 3 });
    assert.deepEqual(capped.c.elements, untokened(capped.f));
    assert.equal(capped.c.st.returned_element_count, 3);
    assert.equal(capped.c.st.elements_complete, false);

    const none = await both({ query: 'no such element anywhere' });
    assert.deepEqual([none.c.st.outline, none.c.elements, none.c.st.returned_element_count], ['', [], 0]);

    // The contract changed: a tab attaches no screenshot unless asked (in every form).
    const shot = await s.v.call('get_window_state', { format: 'compact', max_elements: 1, include_screenshot: true });
    assert.equal(shot.images, 1, 'the screenshot is attached as in the full form');
  });

  test('run_actions observe: {format: "compact"} observes in the compact form', async () => {
    const page = await s.open('plain.html');
    const { st, elements } = await compact();
    const increment = st.token_prefix + elements.find((e) => e.label === 'Increment')!.element_index;
    const r = await s.v.call('run_actions', {
      steps: [{ tool: 'click', args: { element_token: increment } }],
      observe: { format: 'compact' },
    });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.images, 0, 'observe still defaults to no screenshot');
    const obs = r.structured.observation;
    assert.equal(obs.format, 'compact');
    assert.equal(obs.elements, undefined);
    assert.ok(obs.returned_element_count <= 200, 'observe still defaults to max_elements 200');
    const seen = decoded(obs);
    assert.equal(seen.length, obs.returned_element_count);
    const again = await s.v.call('click', {
      element_token: obs.token_prefix + seen.find((e) => e.label === 'Increment')!.element_index,
    });
    assert.equal(again.structured.effect, 'confirmed', again.text);
    assert.equal((await s.model(page)).clicks, 2);
  });

  test('an unknown format is refused with invalid_arguments naming format', async () => {
    const direct = refusalOf(await s.v.call('get_window_state', { format: 'yaml' }));
    assert.equal(direct.code, 'invalid_arguments');
    assert.match(direct.message, /^format: /);
    const observed = refusalOf(
      await s.v.call('run_actions', {
        steps: [{ tool: 'press_key', args: { key: 'End' } }],
        observe: { format: 'yaml' },
      }),
    );
    assert.equal(observed.code, 'invalid_arguments');
    assert.match(observed.message, /observe: format: /);
  });
});

describe('the advertised schemas', () => {
  // The contract changed: the default form is the legible outline; full and compact are on request.
  test('format is advertised with its default; the outline, full and compact forms are the success branches', () => {
    const gws = tools.find((t) => t.name === 'get_window_state')!;
    assert.deepEqual(gws.inputSchema.properties.format.enum, ['outline', 'full', 'compact']);
    assert.equal(gws.inputSchema.properties.format.default, 'outline');
    assert.match(gws.inputSchema.properties.format.description, /full/);
    const success = gws.outputSchema.anyOf[0];
    assert.equal(success.type, 'object');
    assert.equal(success.anyOf.length, 3);
    assert.ok(success.anyOf[0].required.includes('tokens') && success.anyOf[0].required.includes('outline'));
    assert.ok(success.anyOf[1].required.includes('elements'));
    assert.ok(success.anyOf[2].required.includes('legend'));
  });

  test('both forms validate against the advertised outputSchema; a compact result missing a field does not', async () => {
    await s.open('plain.html');
    const validate = new AjvJsonSchemaValidator().getValidator(
      tools.find((t) => t.name === 'get_window_state')!.outputSchema,
    );
    const { st } = await compact();
    assert.equal(validate(st).valid, true, JSON.stringify(validate(st)));
    assert.equal(validate(await full()).valid, true);
    const { outline: _dropped, ...broken } = st;
    assert.equal(validate(broken).valid, false, 'the schema is not so loose that anything passes');
    assert.equal(validate({ ...st, elements: [] }).valid, false, 'nor a mix of the two forms');
  });
});
