// --isolated (issue #18): one local Chromium, a browser context per MCP session. Two agents do the same task
// with every action confirmed, keep their own cookies, and never see or drive each other's tabs; the launched
// browser's own first tab is in no session's context; a download a session's click caused is saved (its
// context's download behaviour set too). Real gateway and Chromium; ended by PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { startGateway, type Connection, type Gateway } from '../helpers/gateway.js';
import { snapshot } from '../helpers/mcp.js';
import { ok, provesApart, taskSetup } from './shared.js';

const setup = taskSetup();

describe('--isolated: a browser context per session in one local Chromium', () => {
  let gw: Gateway;
  let a: Connection, b: Connection;
  let fx: FixtureServer;
  before(async () => {
    fx = await serveFixtures();
    gw = await startGateway(['--isolated'], {
      VERITY_CONFIG_DIR: setup.dir('cfg'),
      VERITY_POLICY: undefined,
      VERITY_DOWNLOAD_DIR: setup.dir('downloads'),
    });
    [a, b] = [await gw.connect(), await gw.connect()];
  });
  after(async () => {
    await gw?.close();
    await fx?.close();
  });

  test("two sessions: confirmed actions, own cookies, and neither sees nor drives the other's tabs", async () => {
    await provesApart(setup.task(), a, b, 'isolated');
    for (const s of [a, b])
      assert.equal(
        ok(await s.call('page', { action: 'list_tabs' }), 'list_tabs').structured.tabs.length,
        1,
        'only its own tab',
      );
  });

  test("a session's click-caused downloads are saved in its context (a context's downloads are denied unless set)", async () => {
    ok(await a.call('page', { action: 'navigate', url: fx.url('downloads.html') }), 'navigate');
    const snap = await snapshot(a);
    const r = await a.call('click', { element_token: snap.token('Download four') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const downloads = (r.structured.side_effects ?? []).filter((e: any) => e.kind === 'download');
    // Each is told as it stands when the result is built: a late one still in progress, then kept.
    assert.equal(downloads.length, 4, r.text);
    assert.ok(
      downloads.every((e: any) => e.state === 'completed' || e.state === 'in_progress'),
      r.text,
    );
    const saved = () => readdirSync(setup.dir('downloads')).sort();
    for (let i = 0; i < 50 && saved().length < 4; i++) await new Promise((done) => setTimeout(done, 100));
    assert.deepEqual(saved(), ['part-1.bin', 'part-2.bin', 'part-3.bin', 'part-4.bin']);
  });
});
