// The pool's answers become Verity's (issue #18), against a real browserless with CONCURRENT=1, QUEUED=1:
// a queued session hears MCP progress and gets its browser when one frees; beyond the queue the pool's 429 is
// `browser_pool_full` (retryable); the wait is bounded (--browser-connect-timeout); a wrong token is
// `browser_pool_unauthorized`, naming where the token comes from and never showing it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserlessMissing, startBrowserless, untilPressure, type BrowserlessPool } from '../helpers/browserless.js';
import { refusalOf, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';
import { startVerity } from '../helpers/mcp.js';
import { ok, taskSetup } from './shared.js';

const missing = browserlessMissing();
if (missing) process.stdout.write(`# browserless tests skipped: ${missing}\n`);
const setup = taskSetup();

describe("the pool's answers: queued, full, bounded wait, wrong token", { skip: missing ?? false }, () => {
  let pool: BrowserlessPool;
  let gw: Gateway;
  before(async () => {
    pool = await startBrowserless({ concurrent: 1, queued: 1, timeoutMs: 180_000 });
    gw = await startGateway([], {
      VERITY_BROWSER_ENDPOINT: pool.endpoint(),
      VERITY_CONFIG_DIR: setup.dir('cfg'),
      VERITY_POLICY: undefined,
    });
  });
  after(async () => {
    await gw?.close();
    await pool?.close();
  });

  test('the second session waits in the queue hearing progress, a third is refused browser_pool_full, the second gets its browser when the first ends', async () => {
    const task = setup.task();
    const [first, second, third] = [await gw.connect(), await gw.connect(), await gw.connect()];
    ok(await first.call('page', { action: 'navigate', url: task.url('queue-1') }), 'first navigate');
    const progress: string[] = [];
    const waiting = second.client.callTool(
      { name: 'page', arguments: { action: 'navigate', url: task.url('queue-2') } },
      undefined,
      {
        onprogress: (p) => {
          progress.push(p.message ?? '');
        },
        timeout: 170_000,
      },
    );
    await untilPressure(pool, (p) => p.queued === 1, 'the second session queued');
    await waitFor(() => progress.length > 0, 'progress while queued');
    assert.match(progress[0], /waiting for a browser from the pool at ws:\/\/127\.0\.0\.1:\d+\/chromium/);
    assert.ok(!progress.some((m) => m.includes(pool.token)), 'progress never shows the token');

    const full = refusalOf(await third.call('page', { action: 'list_tabs' }));
    assert.equal(full.code, 'browser_pool_full', JSON.stringify(full));
    assert.equal(full.retryable, true);
    assert.doesNotMatch(JSON.stringify(full), new RegExp(pool.token));

    ok(await first.call('end_session'), 'first end_session');
    const result = await waiting;
    assert.equal(result.isError, undefined, JSON.stringify(result.content));
    assert.equal((await pool.pressure()).running, 1);
    for (const c of [first, second, third]) await c.disconnect();
    await untilPressure(pool, (p) => p.running === 0 && p.queued === 0, 'all browsers closed');
  });

  test('the wait for a browser is bounded (--browser-connect-timeout): refused timeout, nothing retried', async () => {
    const holder = await gw.connect();
    ok(await holder.call('page', { action: 'list_tabs' }), 'the holder gets the only browser');
    const v = await startVerity([], {
      VERITY_BROWSER_ENDPOINT: pool.endpoint(),
      VERITY_BROWSER_CONNECT_TIMEOUT: '3000',
      VERITY_CONFIG_DIR: setup.dir('cfg-timeout'),
      VERITY_POLICY: '',
    });
    try {
      const refusal = refusalOf(await v.call('page', { action: 'list_tabs' }));
      assert.equal(refusal.code, 'timeout', JSON.stringify(refusal));
      assert.equal(refusal.option, '--browser-connect-timeout');
    } finally {
      await v.close();
      await holder.disconnect();
    }
    await untilPressure(pool, (p) => p.running === 0 && p.queued === 0, 'the pool is idle again');
  });

  test('a wrong token is refused browser_pool_unauthorized naming where the token comes from, never the token; the right one in --browser-header works', async () => {
    const wrong = 'wrong-secret-value-1234';
    const v = await startVerity([], {
      VERITY_BROWSER_ENDPOINT: pool.endpoint(wrong),
      VERITY_CONFIG_DIR: setup.dir('cfg-token'),
      VERITY_POLICY: '',
    });
    try {
      const r = await v.call('type_text', { text: 'x' });
      const refusal = refusalOf(r);
      assert.equal(refusal.code, 'browser_pool_unauthorized', r.text);
      assert.equal(refusal.retryable, false);
      assert.match(refusal.message, /token= parameter of --browser-endpoint/);
      assert.ok(!r.text.includes(wrong) && !v.stderr().includes(wrong), 'the token is never shown');
    } finally {
      await v.close();
    }
    const viaHeader = await startVerity([], {
      VERITY_BROWSER_ENDPOINT: pool.endpoint(null),
      VERITY_BROWSER_HEADERS: `Authorization: Bearer ${pool.token}`,
      VERITY_CONFIG_DIR: setup.dir('cfg-header'),
      VERITY_POLICY: '',
    });
    try {
      ok(
        await viaHeader.call('page', { action: 'navigate', url: setup.task().url('header') }),
        'navigate with the token in a header',
      );
    } finally {
      await viaHeader.close();
    }
    await untilPressure(pool, (p) => p.running === 0, "the header session's browser closed with its process");
  });
});
