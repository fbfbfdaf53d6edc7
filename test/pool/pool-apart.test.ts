// --browser-endpoint against a real browserless (issue #18; its npm package, a devDependency, started here on
// loopback): every MCP session gets its own browser from the pool, connected on its first browser call and
// closed when the session ends. Actions are confirmed through the pool and the page itself reports what it
// held; two agents never see or drive each other's tabs. Real gateway, real MCP SDK clients; ended by PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserlessMissing, startBrowserless, untilPressure, type BrowserlessPool } from '../helpers/browserless.js';
import { startGateway, type Connection, type Gateway } from '../helpers/gateway.js';
import { ok, provesApart, taskSetup } from './shared.js';

const missing = browserlessMissing();
if (missing) process.stdout.write(`# browserless tests skipped: ${missing}\n`);
const setup = taskSetup();

describe('--browser-endpoint: a browser per session from browserless', { skip: missing ?? false }, () => {
  let pool: BrowserlessPool;
  let gw: Gateway;
  let a: Connection, b: Connection;
  before(async () => {
    pool = await startBrowserless({ concurrent: 2, queued: 1, timeoutMs: 180_000 });
    // The token travels in the environment, never on a command line.
    gw = await startGateway([], {
      VERITY_BROWSER_ENDPOINT: pool.endpoint(),
      VERITY_CONFIG_DIR: setup.dir('cfg'),
      VERITY_POLICY: undefined,
      // A client gone without DELETE /mcp (its GET stream closed, nothing since) is let go after 1.5 s.
      VERITY_HTTP_ABANDONED_MS: '1500',
    });
    [a, b] = [await gw.connect(), await gw.connect()];
  });
  after(async () => {
    await gw?.close();
    await pool?.close();
  });

  test("type_text and click are confirmed through the pool; two sessions get two browsers and never see each other's tabs", async () => {
    assert.equal((await pool.pressure()).running, 0, 'nothing connects before the first browser call');
    await provesApart(setup.task(), a, b, 'pool');
    assert.equal((await pool.pressure()).running, 2, 'one browser per session');
  });

  test("a session's browser closes when the session ends: end_session, then the MCP connection closing", async () => {
    ok(await a.call('end_session'), 'end_session');
    await untilPressure(pool, (p) => p.running === 1, "A's browser closed by end_session");
    await b.disconnect();
    await untilPressure(pool, (p) => p.running === 0, "B's browser closed with its connection");
  });

  test('a client gone without DELETE /mcp gives its browser back soon; a quiet client with its GET stream open keeps its session', async () => {
    await untilPressure(pool, (p) => p.running === 0, 'no browser in use before this test');
    const c = await gw.connect();
    ok(await c.call('page', { action: 'navigate', url: setup.task().url('gone') }), 'C navigates');
    assert.equal((await pool.pressure()).running, 1, "C's browser");
    // The client goes away without ending its MCP session: its GET stream closes, no DELETE is sent.
    await c.client.close();
    await untilPressure(pool, (p) => p.running === 0, "C's browser freed after its GET stream closed");
    assert.match(gw.stderr(), /its GET stream closed and no request came/);
    // A has sent nothing for longer than that too, but its GET stream is open: its MCP session still answers.
    ok(await a.call('get_session'), 'A, quiet with its stream open, is still served');
  });
});
