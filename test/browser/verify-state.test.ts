// verify_state on a tab (issue 45), over the real MCP SDK client and a real Chromium, the page's own state
// as the truth: a state that comes only after a delay is waited for; a toast that flickers is never
// satisfied; a selector matching two buttons is unknown and lists them; text inside an iframe and a shadow
// root is found; console errors and a request's status are checked since an action's mark; a token stays
// good across the probe's reads; bad predicates are refused naming the field. And run_actions' expect: a
// batch stops at the first step whose expect is not met, saying what was observed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { snapshot, startVerity, type Verity } from '../helpers/mcp.js';

let fx: FixtureServer;
let chrome: TestBrowser;
let v: Verity;
const tmp = mkdtempSync(join(tmpdir(), 'verity-verify-'));
before(async () => {
  fx = await serveFixtures();
  chrome = await sharedChromium();
  v = await startVerity(chrome.attach, { VERITY_CONFIG_DIR: join(tmp, 'cfg') });
});
after(async () => {
  await v?.close();
  await chrome?.close();
  await fx?.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function open() {
  const r = await v.call('page', { action: 'navigate', url: fx.url('verify.html') });
  assert.equal(r.isError, false, r.text);
  return snapshot(v);
}

async function click(label: string) {
  const snap = await snapshot(v);
  const r = await v.call('click', { element_token: snap.token(label) });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  return r;
}

async function verify(expect: unknown[], extra: Record<string, unknown> = {}) {
  const r = await v.call('verify_state', { expect, ...extra });
  assert.equal(r.isError, false, r.text);
  return r.structured;
}

describe('verify_state on a tab', () => {
  test('a state that comes 700 ms after the click: unsatisfied before it, satisfied once it held in two reads', async () => {
    await open();
    const before = await verify([{ text_present: 'Order placed' }], { timeout_ms: 300 });
    assert.equal(before.status, 'unsatisfied', JSON.stringify(before));
    assert.equal(before.failed, 0);
    assert.equal(before.predicates[0].holds, false);
    await click('Place order');
    const r = await verify(
      [
        { text_present: 'Order placed' },
        { element: { role: 'button', name: 'Continue' }, enabled: true },
        { url_contains: 'verify.html' },
        { title_equals: 'Verify fixture' },
      ],
      { timeout_ms: 8000 },
    );
    assert.equal(r.status, 'satisfied', JSON.stringify(r));
    assert.ok(r.samples >= 2, `satisfied after ${r.samples} reads`);
    assert.deepEqual(
      r.predicates.map((p: any) => p.holds),
      [true, true, true, true],
    );
    // The page's own state agrees.
    const page = await v.call('page', { action: 'query_dom', css_selector: '#continue', attributes: ['disabled'] });
    assert.equal(page.structured.matches[0].attributes.disabled, null, page.text);
  });

  test('a toast that shows for 20 ms every 400 ms is never satisfied (two reads in a row cannot both see it)', async () => {
    await open();
    await click('Flash');
    const r = await verify([{ text_present: 'Saved!' }], { timeout_ms: 2500, stable_samples: 2 });
    assert.notEqual(r.status, 'satisfied', JSON.stringify(r));
    assert.ok(r.samples >= 2, JSON.stringify(r));
  });

  test('two buttons named Delete: unknown, ambiguous_selector, both listed', async () => {
    await open();
    const r = await verify([{ element: { role: 'button', name: 'Delete' }, enabled: true }], { timeout_ms: 300 });
    assert.equal(r.status, 'unknown', JSON.stringify(r));
    assert.equal(r.reason, 'ambiguous_selector');
    assert.equal(r.candidates.length, 2, JSON.stringify(r.candidates));
    assert.ok(r.candidates.every((c: any) => c.name === 'Delete' && c.role === 'button'));
    // Counting them is no ambiguity.
    const count = await verify([{ element: { role: 'button', name: 'Delete' }, count: 2 }]);
    assert.equal(count.status, 'satisfied', JSON.stringify(count));
  });

  test("text inside an iframe and a shadow root is the page's text; absent text is absent", async () => {
    await open();
    const r = await verify([
      { text_present: 'Inside the frame' },
      { text_present: 'Deep in the shadow' },
      { text_absent: 'Nowhere on this page' },
      { element: { name: 'Frame button' }, visible: true },
    ]);
    assert.equal(r.status, 'satisfied', JSON.stringify(r));
    const no = await verify([{ text_absent: 'Deep in the shadow' }], { timeout_ms: 300 });
    assert.equal(no.status, 'unsatisfied', JSON.stringify(no));
  });

  test('console errors since a mark: an earlier mark sees the error, a later one does not', async () => {
    await open();
    const quiet = await click('Do nothing');
    assert.equal(typeof quiet.structured.mark, 'number', quiet.text);
    assert.equal((await verify([{ no_console_errors_since: quiet.structured.mark }])).status, 'satisfied');
    const logged = await click('Log error');
    for (const mark of [quiet.structured.mark, logged.structured.mark]) {
      const r = await verify([{ no_console_errors_since: mark }], { timeout_ms: 300 });
      assert.equal(r.status, 'unsatisfied', JSON.stringify(r));
      assert.equal(r.predicates[0].observed.errors, 1);
      assert.match(r.predicates[0].observed.first, /checkout failed: boom/);
    }
    const later = await click('Do nothing');
    assert.equal((await verify([{ no_console_errors_since: later.structured.mark }])).status, 'satisfied');
  });

  test('a request with a status range since a mark: 201 is a success, 503 is not, and is one from 500', async () => {
    await open();
    const saved = await click('Save by fetch');
    const ok = await verify(
      [
        {
          request: { url_contains: '/respond?status=201', status_min: 200, status_max: 299 },
          since: saved.structured.mark,
        },
      ],
      { timeout_ms: 5000 },
    );
    assert.equal(ok.status, 'satisfied', JSON.stringify(ok));
    assert.equal(ok.predicates[0].observed.request.status, 201);
    const failed = await click('Fail by fetch');
    const bad = await verify(
      [
        {
          request: { url_contains: '/respond?status=503', status_min: 200, status_max: 299 },
          since: failed.structured.mark,
        },
      ],
      { timeout_ms: 1000 },
    );
    assert.equal(bad.status, 'unsatisfied', JSON.stringify(bad));
    const server = await verify(
      [{ request: { url_contains: '/respond?status=503', status_min: 500 }, since: failed.structured.mark }],
      { timeout_ms: 3000 },
    );
    assert.equal(server.status, 'satisfied', JSON.stringify(server));
    // A mark after the request: it is not seen.
    const later = await click('Do nothing');
    const none = await verify([{ request: { url_contains: '/respond?status=503' }, since: later.structured.mark }], {
      timeout_ms: 300,
    });
    assert.equal(none.status, 'unsatisfied', JSON.stringify(none));
  });

  test('an element_token predicate: the checkbox it names; the token still acts after the reads', async () => {
    const snap = await open();
    const agree = snap.token('Agree');
    const before = await verify([{ element: { element_token: agree }, checked: false }]);
    assert.equal(before.status, 'satisfied', JSON.stringify(before));
    // verify_state's reads are no observation: the token from before them still clicks.
    const r = await v.call('click', { element_token: agree });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const after = await verify([
      { element: { element_token: agree }, checked: true },
      { element: { role: 'checkbox', name: 'Agree' }, checked: true },
    ]);
    assert.equal(after.status, 'satisfied', JSON.stringify(after));
  });

  test('selected: the tab aria-selected names, before and after a click on the other', async () => {
    await open();
    const before = await verify([
      { element: { role: 'tab', name: 'Shipping' }, selected: true },
      { element: { role: 'tab', name: 'Billing' }, selected: false },
    ]);
    assert.equal(before.status, 'satisfied', JSON.stringify(before));
    await click('Billing');
    const after = await verify([
      { element: { role: 'tab', name: 'Billing' }, selected: true },
      { element: { role: 'tab', name: 'Shipping' }, selected: false },
    ]);
    assert.equal(after.status, 'satisfied', JSON.stringify(after));
    const page = await v.call('page', { action: 'query_dom', css_selector: '#billing', attributes: ['aria-selected'] });
    assert.equal(page.structured.matches[0].attributes['aria-selected'], 'true', "the page's own state");
    const wrong = await verify([{ element: { role: 'tab', name: 'Shipping' }, selected: true }], { timeout_ms: 300 });
    assert.equal(wrong.status, 'unsatisfied', JSON.stringify(wrong));
  });

  test('bad predicates are refused naming the field', async () => {
    await open();
    for (const [expect, field] of [
      [[{ element: { role: 'button' } }], 'expect.0'],
      [[{ text_present: 'a' }, { element: { rol: 'x' }, exists: true }], 'expect.1.element.rol'],
      [[{ url_matches: '(' }], 'expect.0.url_matches'],
      [[], 'expect'],
    ] as const) {
      const r = await v.call('verify_state', { expect });
      assert.equal(r.isError, true, r.text);
      assert.equal(r.structured.refusal.code, 'invalid_arguments', r.text);
      assert.ok(r.text.includes(field), `${field}: ${r.text}`);
    }
    const r = await v.call('verify_state', { expect: [{ text_present: 'a' }], timeout_ms: 20_000 });
    assert.equal(r.isError, true);
    assert.match(r.text, /timeout_ms/);
  });
});

describe('run_actions with expect', () => {
  test('stops at the first step whose expect is not met, with what was observed', async () => {
    const snap = await open();
    const r = await v.call('run_actions', {
      steps: [
        {
          tool: 'click',
          args: { element_token: snap.token('Agree') },
          expect: [{ element: { role: 'checkbox', name: 'Agree' }, checked: true }],
        },
        { tool: 'click', args: { element_token: snap.token('Do nothing') }, expect: [{ text_present: 'Never shown' }] },
        { tool: 'click', args: { element_token: snap.token('Place order') } },
      ],
    });
    assert.equal(r.isError, true, r.text);
    const steps = r.structured.steps;
    assert.equal(steps[0].status, 'ok', JSON.stringify(steps[0]));
    assert.equal(steps[0].expect.status, 'satisfied');
    assert.equal(steps[1].status, 'failed');
    assert.equal(steps[1].result.effect, 'confirmed', 'the click itself worked');
    assert.equal(steps[1].expect.status, 'unsatisfied');
    assert.deepEqual(steps[1].expect.predicates[0].observed.found, false);
    assert.equal(steps[2].status, 'not_run');
    assert.match(r.text, /step 1 \(click\): expect not met: unsatisfied/);
    // The third step never ran: the order was not placed.
    const after = await verify([{ text_absent: 'Order placed' }], { timeout_ms: 1200, stable_samples: 3 });
    assert.equal(after.status, 'satisfied', JSON.stringify(after));
  });

  test("a step's bad expect is refused before any step runs, naming the field", async () => {
    const snap = await open();
    const r = await v.call('run_actions', {
      steps: [
        { tool: 'click', args: { element_token: snap.token('Place order') } },
        { tool: 'click', args: { element_token: snap.token('Agree') }, expect: [{ checked: true }] },
      ],
    });
    assert.equal(r.isError, true);
    assert.match(r.text, /steps\.1\.expect\.0/);
    const placed = await verify([{ text_absent: 'Order placed' }], { timeout_ms: 1500, stable_samples: 3 });
    assert.equal(placed.status, 'satisfied', 'nothing ran');
  });
});
