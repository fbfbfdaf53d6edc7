// A pool that kills a session's browser at its TIMEOUT (issue #18), against a real browserless: the call it
// happens in, or else the session's next call, is refused `browser_lost` saying why (never a verdict about a
// browser that went away), and the call after that connects a fresh browser. Nothing is retried silently.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserlessMissing, startBrowserless, untilPressure, type BrowserlessPool } from '../helpers/browserless.js';
import { refusalOf, startGateway, type Connection, type Gateway } from '../helpers/gateway.js';
import { doTask, ok, reported, taskSetup } from './shared.js';

const missing = browserlessMissing();
if (missing) process.stdout.write(`# browserless tests skipped: ${missing}\n`);
const setup = taskSetup();

describe("the pool kills a session's browser at its TIMEOUT", { skip: missing ?? false }, () => {
  let pool: BrowserlessPool;
  let gw: Gateway;
  let c: Connection;
  before(async () => {
    // Short enough to wait out here; long enough for Chromium to start and a task to run on a loaded machine.
    pool = await startBrowserless({ concurrent: 2, queued: 1, timeoutMs: 45_000 });
    gw = await startGateway([], {
      VERITY_BROWSER_ENDPOINT: pool.endpoint(),
      VERITY_CONFIG_DIR: setup.dir('cfg'),
      VERITY_POLICY: undefined,
    });
    c = await gw.connect();
  });
  after(async () => {
    await gw?.close();
    await pool?.close();
  });

  test('between calls: the next call is refused browser_lost saying why; the call after reconnects', async () => {
    ok(await c.call('page', { action: 'navigate', url: setup.task().url('lost-1') }), 'navigate');
    await untilPressure(pool, (p) => p.running === 0, 'the pool ends the browser at its TIMEOUT', 600);
    const lost = await c.call('page', { action: 'get_text' });
    const refusal = refusalOf(lost);
    assert.equal(refusal.code, 'browser_lost', lost.text);
    assert.equal(refusal.retryable, true);
    assert.match(refusal.message, /went away \d+ s after it was given/);
    const again = await doTask(setup.task(), c.call, 'lost-2');
    await reported(setup.task(), 'lost-2', again.values);
  });

  test('during a call: that call is refused browser_lost, and the next works', async () => {
    // The browser of the previous test is killed at its TIMEOUT while this wait runs.
    const during = await c.call('page', {
      action: 'wait_for',
      text: 'a text this page never shows',
      timeout_ms: 60_000,
    });
    assert.equal(refusalOf(during).code, 'browser_lost', during.text);
    ok(await c.call('page', { action: 'navigate', url: setup.task().url('lost-3') }), 'reconnected');
    assert.equal((await pool.pressure()).running, 1);
  });
});
