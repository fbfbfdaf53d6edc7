// The operator's tabs (gateway/tabs.ts over the router's operator lookups): the browser panel's tab strip of
// a session agrees with tab ownership, so a tab the operator gave to another session (tabs.assign) leaves
// the strip of the session that drove it; the whole list and lookups by id still find every tab. Real
// server, real Chromium, real MCP SDK clients; every process is ended by its PID.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { alive, operatorSocket, startGateway, type Connection, type Gateway } from '../helpers/gateway.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-operator-tabs-'));
let fx: FixtureServer;
let chrome: TestBrowser;
let gw: Gateway;
let a: Connection, b: Connection;
before(async () => {
  fx = await serveFixtures();
  chrome = await sharedChromium();
  gw = await startGateway(chrome.attach, {
    VERITY_CONFIG_DIR: join(tmp, 'cfg'),
    VERITY_POLICY: undefined,
  });
  [a, b] = [await gw.connect(), await gw.connect()];
});
after(async () => {
  await gw?.close();
  await chrome?.close();
  await fx?.close();
  rmSync(tmp, { recursive: true, force: true });
});

test("a tab given to B with tabs.assign leaves A's tab strip; the whole list and lookups by id still find it", async () => {
  const opened = await a.call('page', { action: 'new_tab', url: fx.url('plain.html?of=a') });
  assert.equal(opened.isError, false, opened.text);
  const aTab: string = (await a.call('page', { action: 'list_tabs' })).structured.current_tab_id;
  const bOpened = await b.call('page', { action: 'new_tab', url: fx.url('plain.html?of=b') });
  assert.equal(bOpened.isError, false, bOpened.text);
  const bTab: string = (await b.call('page', { action: 'list_tabs' })).structured.current_tab_id;
  const operator = await operatorSocket(gw, ['operator.read', 'operator.write']);
  try {
    const call = async (method: string, params?: unknown) => {
      const res = await operator.request(method, params);
      assert.equal(res.ok, true, `${method}: ${JSON.stringify(res)}`);
      return res.payload;
    };
    const { sessions } = await call('sessions.list');
    const keyOf = (tab: string) => sessions.find((s: { tab_id: string | null }) => s.tab_id === tab)?.sessionKey;
    const [aKey, bKey] = [keyOf(aTab), keyOf(bTab)];
    assert.ok(aKey && bKey && aKey !== bKey, JSON.stringify(sessions));
    const strip = async (sessionKey?: string) =>
      ((await call('browser.tabs', sessionKey ? { sessionKey } : {})).tabs as Array<{ tab_id: string }>).map(
        (t) => t.tab_id,
      );
    assert.ok((await strip(aKey)).includes(aTab), "A's strip shows the tab A drove");
    assert.ok(!(await strip(aKey)).includes(bTab), "A's strip does not show B's tab");

    await call('tabs.assign', { tabId: aTab, sessionKey: bKey });
    assert.ok(!(await strip(aKey)).includes(aTab), "A's strip no longer shows the tab given to B");
    assert.ok((await strip()).includes(aTab), 'the whole list still has it');
    // The operator drives any tab by id, whoever owns it; a tab that is not open is refused.
    assert.equal((await call('browser.navigate', { tab_id: aTab, action: 'reload' })).ok, true);
    const gone = await operator.request('browser.navigate', { tab_id: 'no-such-tab', action: 'reload' });
    assert.equal(gone.ok, false, JSON.stringify(gone));
    assert.match(gone.error.message, /no tab with tab_id no-such-tab/);
  } finally {
    operator.ws.close();
  }
  assert.ok(alive(gw.pid), 'the server is still up');
});
