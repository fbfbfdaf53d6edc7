// Security: sessions apart (issue #12 item 3). The attack: two MCP clients of one `verity start`;
// B lists the tab A opened (title and URL) and reads it with A's tab_id. Here B is refused as if A's tab
// did not exist, by tab_id and by element_token, in list_tabs, get_text, get_window_state, actions and
// list_windows; A's own tokens stay valid; a popup of A's tab is A's; an operator can give a tab to a
// session with the gateway method tabs.assign. Real server, real Chromium, real MCP SDK clients; every
// process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import type { ToolResult } from '../helpers/mcp.js';
import {
  alive,
  operatorSocket,
  refusalOf,
  startGateway,
  waitFor,
  type Connection,
  type Gateway,
} from '../helpers/gateway.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-apart-'));
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

const SECRET_URL = () => fx.url('plain.html?secret=a-private-thing');

function notFound(r: ToolResult, what: string): void {
  const refusal = refusalOf(r);
  assert.equal(refusal.code, 'target_not_found', `${what}: ${r.text}`);
  assert.doesNotMatch(r.text, /a-private-thing/, `${what} leaks nothing of A's tab`);
}

describe('two MCP clients of one verity start', () => {
  let aTab: string;
  let aToken: string;

  test("B does not see A's tab in list_tabs or list_windows, and is refused it by tab_id for every page action", async () => {
    const opened = await a.call('page', { action: 'new_tab', url: SECRET_URL() });
    assert.equal(opened.isError, false, opened.text);
    aTab = opened.structured.tab_id;
    const snap = await a.call('get_window_state', { include_screenshot: false, format: 'full' });
    aToken = snap.structured.elements.find((e: any) => e.role === 'button').element_token;

    const listed = await b.call('page', { action: 'list_tabs' });
    assert.equal(listed.isError, false, listed.text);
    assert.ok(!listed.structured.tabs.some((t: any) => t.tab_id === aTab), `B lists A's tab: ${listed.text}`);
    assert.doesNotMatch(listed.text, /a-private-thing/);
    const windows = await b.call('list_windows');
    assert.doesNotMatch(JSON.stringify(windows.structured), new RegExp(`${aTab}|a-private-thing`));

    for (const action of ['get_text', 'screenshot', 'select_tab', 'close_tab', 'reload', 'back', 'forward']) {
      notFound(await b.call('page', { action, tab_id: aTab }), action);
    }
    notFound(await b.call('page', { action: 'query_dom', tab_id: aTab, css_selector: 'body' }), 'query_dom');
    notFound(await b.call('page', { action: 'wait_for', tab_id: aTab, text: 'x', timeout_ms: 100 }), 'wait_for');
    notFound(await b.call('page', { action: 'navigate', tab_id: aTab, url: 'about:blank' }), 'navigate');
    const refusal = refusalOf(await b.call('page', { action: 'get_text', tab_id: aTab }));
    assert.ok(!(refusal.tab_ids as string[]).includes(aTab), "the refusal's list of tabs is B's own");
    // A's tab is untouched: still open, still on its page.
    const page = await chrome.page('secret=a-private-thing');
    assert.equal(page.url(), SECRET_URL());
    assert.ok(alive(gw.pid));
  });

  test("B is refused A's tab as a target and A's element_token; A's token stays valid", async () => {
    notFound(await b.call('get_window_state', { target: { kind: 'tab', tab_id: aTab } }), 'get_window_state');
    notFound(await b.call('click', { target: { kind: 'tab', tab_id: aTab }, x: 5, y: 5 }), 'click by tab');
    notFound(await b.call('type_text', { target: { kind: 'tab', tab_id: aTab }, text: 'x' }), 'type_text by tab');
    notFound(await b.call('click', { element_token: aToken }), "click by A's token");
    notFound(
      await b
        .call('run_actions', { steps: [{ tool: 'click', args: { element_token: aToken } }] })
        .then((r) => ({ ...r, structured: r.structured.steps?.[0]?.result ?? r.structured })),
      'run_actions step',
    );
    const page = await chrome.page('secret=a-private-thing');
    assert.equal(await page.evaluate('JSON.parse(window.__model()).clicks ?? 0'), 0, "nothing reached A's page");
    const own = await a.call('click', { element_token: aToken });
    assert.equal(own.structured.effect, 'confirmed', `A's token still works: ${own.text}`);
  });

  test("B's default tab is its own, never A's", async () => {
    const read = await b.call('page', { action: 'get_text' });
    assert.equal(read.isError, false, read.text);
    const current = (await b.call('page', { action: 'list_tabs' })).structured.current_tab_id;
    assert.notEqual(current, aTab);
    const state = await b.call('get_window_state', { include_screenshot: false });
    assert.notEqual(state.structured.target?.tab_id, aTab, state.text);
  });

  test("a popup A's tab opens is A's; B does not see it", async () => {
    const page = await chrome.page('secret=a-private-thing');
    const before = (await chrome.context.pages()).length;
    await page.evaluate((url) => {
      window.open(url, '_blank');
    }, fx.url('plain.html?popup=of-a'));
    await waitFor(async () => (await chrome.context.pages()).length > before, 'the popup');
    const aList = await waitFor(async () => {
      const r = await a.call('page', { action: 'list_tabs' });
      return r.structured.tabs.find((t: any) => t.url.includes('popup=of-a')) ? r : null;
    }, 'A lists its popup');
    const popup = aList.structured.tabs.find((t: any) => t.url.includes('popup=of-a')).tab_id;
    const bList = await b.call('page', { action: 'list_tabs' });
    assert.ok(!bList.structured.tabs.some((t: any) => t.tab_id === popup), `B lists A's popup: ${bList.text}`);
    notFound(await b.call('page', { action: 'get_text', tab_id: popup }), 'popup get_text');
    assert.equal((await a.call('page', { action: 'get_text', tab_id: popup })).isError, false);
  });

  test("the operator gives A's tab to B with tabs.assign: B drives it, A no longer does", async () => {
    const operator = await operatorSocket(gw, ['operator.read', 'operator.write']);
    try {
      const sessions = (await operator.request('sessions.list')).payload.sessions as Array<{
        sessionKey: string;
        tab_id: string | null;
      }>;
      const bCurrent = (await b.call('page', { action: 'list_tabs' })).structured.current_tab_id;
      const bKey = sessions.find((s) => s.tab_id === bCurrent)?.sessionKey;
      assert.ok(bKey, JSON.stringify(sessions));
      const refused = await operator.request('tabs.assign', { tabId: aTab, sessionKey: 'nobody/implicit' });
      assert.equal(refused.ok, false);
      assert.equal(refused.error.code, 'NOT_FOUND');
      const assigned = await operator.request('tabs.assign', { tabId: aTab, sessionKey: bKey });
      assert.equal(assigned.ok, true, JSON.stringify(assigned));
      const read = await b.call('page', { action: 'get_text', tab_id: aTab });
      assert.equal(read.isError, false, read.text);
      notFound(await a.call('page', { action: 'get_text', tab_id: aTab }), 'A after the assignment');
    } finally {
      operator.ws.close();
    }
    assert.ok(alive(gw.pid), 'the server is still up');
  });
});
