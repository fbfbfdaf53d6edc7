// --isolated (issue #18): one local Chromium, a browser context per MCP session. Two agents do the same task
// with every action confirmed, keep their own cookies, and never see or drive each other's tabs; the launched
// browser's own first tab is in no session's context. Real gateway and Chromium; ended by PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startGateway, type Connection, type Gateway } from '../helpers/gateway.js';
import { ok, provesApart, taskSetup } from './shared.js';

const setup = taskSetup();

describe('--isolated: a browser context per session in one local Chromium', () => {
  let gw: Gateway;
  let a: Connection, b: Connection;
  before(async () => {
    gw = await startGateway(['--isolated'], { VERITY_CONFIG_DIR: setup.dir('cfg'), VERITY_POLICY: undefined });
    [a, b] = [await gw.connect(), await gw.connect()];
  });
  after(async () => {
    await gw?.close();
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
});
