// What an action caused on its page, in its result (`caused`): the requests it started (a form whose POST
// came back 500, a fetch answered 503), an exception its handler threw, a console error, a navigation;
// nothing for an action that caused nothing or for a request that began before it. And the page's
// bounded buffers (page console_messages and network_requests) with their filters, and what both show
// of a blocked origin's URL, a token in a query string and a secret field's text.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { snapshot, startVerity, type Verity } from '../helpers/mcp.js';

let fx: FixtureServer;
let chrome: TestBrowser;
let v: Verity;
const tmp = mkdtempSync(join(tmpdir(), 'verity-causes-'));
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

async function open(server: Verity = v, query = '') {
  const r = await server.call('page', { action: 'navigate', url: fx.url(`causes.html${query}`) });
  assert.equal(r.isError, false, r.text);
  return snapshot(server, { format: 'full' });
}

/**
 * Clicks by label; the verdict means what it meant before results told what they caused: a click that
 * navigates the page away is confirmed when its events were read before the page went, else unverifiable.
 */
async function click(label: string, server: Verity = v, effects = ['confirmed']) {
  const snap = await snapshot(server, { format: 'full' });
  const r = await server.call('click', { element_token: snap.token(label) });
  assert.ok(effects.includes(r.structured.effect), r.text);
  return r;
}
const NAVIGATES = ['confirmed', 'unverifiable'];

/** Polls a page listing until `done` holds (bounded), naming what it waited for. */
async function listing(server: Verity, args: Record<string, unknown>, done: (s: any) => boolean, what: string) {
  let last: any;
  for (const end = Date.now() + 10_000; Date.now() < end; ) {
    const r = await server.call('page', args);
    assert.equal(r.isError, false, r.text);
    last = r;
    if (done(r.structured)) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.fail(`gave up after 10 s waiting for ${what}: ${last?.text}`);
}

describe('what an action caused', () => {
  test('a form whose POST comes back 500: the click says the request and its status, and the navigation', async () => {
    await open();
    const r = await click('Submit the form', v, NAVIGATES);
    const caused = r.structured.caused;
    assert.ok(caused, r.text);
    const post = caused.requests?.find((q: any) => q.method === 'POST');
    assert.ok(post, r.text);
    assert.equal(post.status, 500, r.text);
    assert.match(post.url, /\/respond\?status=500$/);
    assert.equal(caused.requests[0], post, 'failed ones first');
    assert.match(caused.navigated, /\/respond\?status=500$/, r.text);
    assert.match(r.text, /Request POST http:\/\/127\.0\.0\.1:\d+\/respond\?status=500: 500/);
    assert.match(r.text, /Navigated to /);
  });

  test("a form's POST that begins late (the page busy 300 ms first): the click still says the request, its status and the navigation", async () => {
    await open();
    const r = await click('Submit after a busy moment', v, NAVIGATES);
    const post = r.structured.caused?.requests?.find((q: any) => q.method === 'POST');
    assert.ok(post, `the POST is missing from what the click caused: ${r.text}`);
    assert.equal(post.status, 500, r.text);
    assert.match(r.structured.caused.navigated, /late=1$/, r.text);
  });

  test('a form whose formaction is a fragment under a <base href> elsewhere posts there: the click waits for its late request', async () => {
    const opened = await v.call('page', { action: 'navigate', url: fx.url('causes-base.html') });
    assert.equal(opened.isError, false, opened.text);
    const r = await click('Send through the base after a busy moment', v, NAVIGATES);
    const post = r.structured.caused?.requests?.find((q: any) => q.method === 'POST');
    assert.ok(post, `the POST the form began is missing from what the click caused: ${r.text}`);
    assert.equal(post.status, 404, r.text);
    assert.match(post.url, /base=1/, r.text);
  });

  test('a fetch answered 503 (no navigation): the request and its status, nothing else', async () => {
    await open();
    const r = await click('Save by fetch');
    assert.deepEqual(
      r.structured.caused,
      { requests: [{ method: 'POST', url: fx.url('respond?status=503'), status: 503 }] },
      r.text,
    );
  });

  test('a run_actions step tells what it caused, as the single call does', async () => {
    const snap = await open();
    const r = await v.call('run_actions', {
      steps: [
        { tool: 'click', args: { element_token: snap.token('Do nothing else') } },
        { tool: 'click', args: { element_token: snap.token('Save by fetch') } },
      ],
    });
    assert.equal(r.isError, false, r.text);
    const [quiet, saving] = r.structured.steps;
    assert.equal(quiet.result.caused, undefined, r.text);
    assert.deepEqual(saving.result.caused?.requests, [
      { method: 'POST', url: fx.url('respond?status=503'), status: 503 },
    ]);
  });

  test('a handler that throws: the uncaught exception is in the result', async () => {
    await open();
    const r = await click('Throw');
    const exception = r.structured.caused?.console?.find((m: any) => m.level === 'exception');
    assert.ok(exception, r.text);
    assert.match(exception.text, /kaboom from the handler/);
    assert.match(r.text, /Uncaught exception: .*kaboom from the handler/);
  });

  test('a console.error: in the result; a console.log is not (only errors are told)', async () => {
    await open();
    const r = await click('Log an error');
    assert.deepEqual(r.structured.caused?.console, [{ level: 'error', text: 'something broke: code 42' }], r.text);
    const many = await click('Log six errors');
    assert.equal(many.structured.caused?.console?.length, 4, many.text);
    assert.equal(many.structured.caused?.more_console, 2, many.text);
    assert.match(many.text, /and 2 more console errors/);
  });

  test('a script navigation: where it went', async () => {
    await open();
    const r = await click('Go to plain', v, NAVIGATES);
    assert.match(r.structured.caused?.navigated ?? '', /plain\.html\?from=causes$/, r.text);
    const doc = r.structured.caused?.requests?.find((q: any) => /plain\.html/.test(q.url));
    assert.equal(doc?.status, 200, r.text);
  });

  test('an action that causes nothing reports nothing', async () => {
    await open();
    const r = await click('Do nothing else');
    assert.equal(r.structured.caused, undefined, r.text);
    assert.doesNotMatch(r.text, /Request|Console|Navigated|exception/);
  });

  test('a request started before the action is not attributed to it, though it is in flight during it', async () => {
    // The page starts a request as it loads, answered 2.5 s later: the click runs while it is in flight.
    await open(v, '?slow=2500');
    const inFlight = await v.call('page', { action: 'network_requests', url: 'slowload=1' });
    assert.equal(inFlight.structured.requests[0]?.pending, true, inFlight.text);
    const r = await click('Do nothing else');
    assert.equal(r.structured.caused, undefined, r.text);
    const slow = await listing(
      v,
      { action: 'network_requests', url: 'slowload=1' },
      (s) => s.requests.length === 1 && s.requests[0].status === 200,
      'the slow request to be answered',
    );
    assert.equal(slow.structured.requests[0].method, 'GET');
  });
});

describe('page console_messages and network_requests', () => {
  test('console: bounded (oldest dropped, counted), filtered by level and text, limited', async () => {
    await open();
    await click('Log an error');
    const r = await click('Log many lines');
    assert.equal(r.structured.caused, undefined, 'logs and warnings are not errors: the result tells none');
    const all = await listing(
      v,
      { action: 'console_messages', limit: 500 },
      (s) => s.messages.at(-1)?.text === 'a warning after the lines',
      'the last message to arrive',
    );
    assert.equal(all.structured.bound, 500);
    assert.equal(all.structured.kept, 500);
    assert.ok(all.structured.dropped >= 101, all.text.slice(-300));
    assert.equal(all.structured.messages.length, 500);
    const warnings = await v.call('page', { action: 'console_messages', level: 'warning' });
    assert.ok(
      warnings.structured.messages.every((m: any) => ['warning', 'error', 'exception'].includes(m.level)),
      warnings.text,
    );
    assert.ok(warnings.structured.messages.some((m: any) => m.text === 'a warning after the lines'));
    const byText = await v.call('page', { action: 'console_messages', text: 'line 59', limit: 3 });
    assert.deepEqual(
      byText.structured.messages.map((m: any) => m.text),
      ['line 597', 'line 598', 'line 599'],
      byText.text,
    );
    assert.equal(byText.structured.matched, 10); // 590..599: line 59 was among the dropped
    const bad = await v.call('page', { action: 'console_messages', level: 'loud' });
    assert.equal(bad.structured.refusal?.code, 'invalid_arguments', bad.text);
    assert.match(bad.text, /level/);
  });

  test('network: bounded (oldest dropped, counted), filtered by failed, status and URL', async () => {
    await open();
    await click('Save by fetch');
    const r = await click('Fetch many');
    assert.equal(r.structured.caused?.requests?.length, 6, r.text);
    assert.ok(r.structured.caused.more_requests >= 514, r.text);
    const all = await listing(
      v,
      { action: 'network_requests', url: 'n=519', limit: 1 },
      (s) => s.requests[0]?.status === 200,
      'the last of the many requests to be answered',
    );
    assert.equal(all.structured.bound, 500);
    assert.equal(all.structured.kept, 500);
    assert.ok(all.structured.dropped >= 22, all.text);
    const failed = await v.call('page', { action: 'network_requests', failed: true });
    // The 503 fetch came before the 520 and was dropped past the bound: what is kept all succeeded.
    assert.deepEqual(failed.structured.requests, [], failed.text);
    await click('Save by fetch');
    const again = await listing(
      v,
      { action: 'network_requests', failed: true },
      (s) => s.requests.length === 1,
      'the failed fetch',
    );
    assert.equal(again.structured.requests[0].status, 503);
    const byStatus = await v.call('page', { action: 'network_requests', status: 200, limit: 2 });
    assert.equal(byStatus.structured.requests.length, 2, byStatus.text);
    assert.ok(byStatus.structured.matched >= 400, byStatus.text);
  });
});

describe('what is shown of secrets and blocked origins', () => {
  let guarded: Verity;
  before(async () => {
    writeFileSync(join(tmp, 'blocked.json'), JSON.stringify({ blocked_origins: [`http://127.0.0.2:${fx.port}`] }));
    guarded = await startVerity([...chrome.attach, '--policy', join(tmp, 'blocked.json')], {
      VERITY_CONFIG_DIR: join(tmp, 'cfg2'),
    });
  });
  after(async () => {
    await guarded?.close();
  });

  test("a token in a query string is masked, the query's other values kept", async () => {
    await open(guarded);
    const r = await click('Call with a token', guarded);
    const req = r.structured.caused?.requests?.[0];
    assert.equal(req?.url, `${fx.url('respond')}?status=200&access_token=•••&page=2`, r.text);
    const listed = await listing(
      guarded,
      { action: 'network_requests', url: 'access_token' },
      (s) => s.requests.length === 1,
      'the token request',
    );
    for (const text of [JSON.stringify(r.structured), r.text, JSON.stringify(listed.structured), listed.text])
      assert.ok(!text.includes('SECRET123'), text);
    const probe = await guarded.call('page', { action: 'network_requests', url: 'SECRET123' });
    assert.equal(probe.structured.matched, 0, 'the URL filter sees only what is shown');
  });

  test("a blocked origin's request: failed by the policy, its URL cut to the origin", async () => {
    await open(guarded);
    const r = await click('Call a blocked origin', guarded);
    const req = r.structured.caused?.requests?.[0];
    assert.deepEqual(
      req,
      {
        method: 'GET',
        url: `http://127.0.0.2:${fx.port}/… (blocked by the origin policy)`,
        failed: 'blocked by the origin policy',
      },
      r.text,
    );
    const listed = await guarded.call('page', { action: 'network_requests', failed: true });
    const console = await guarded.call('page', { action: 'console_messages' });
    for (const text of [r.text, listed.text, JSON.stringify(listed.structured), console.text])
      assert.ok(!text.includes('xyz-hidden') && !text.includes('/respond?secret'), text);
  });

  test("what a page logs of a secret field's text is masked in the result and the listing", async () => {
    await open(guarded);
    const snap = await snapshot(guarded, { format: 'full' });
    const r = await guarded.call('type_text', { element_token: snap.token('Password'), text: 'hunter2' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(typeof r.structured.masked, 'string', r.text);
    assert.ok(r.structured.caused?.console?.length, r.text);
    const listed = await guarded.call('page', { action: 'console_messages', level: 'error' });
    for (const text of [JSON.stringify(r.structured), r.text, JSON.stringify(listed.structured), listed.text])
      assert.ok(!text.includes('hunter2') && !/typed h/.test(text), text);
  });
});
