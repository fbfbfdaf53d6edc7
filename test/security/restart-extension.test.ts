// Restart with a paired extension: `verity start` is stopped and started again on the same port while
// the extension is paired and sharing a tab. An agent that connects within the first second keeps its
// MCP session and its calls are answered while the extension is still reconnecting: a tab listing never
// waits on a relay that is not there. The extension reaches the gateway through a TCP proxy the test
// holds closed, so "still reconnecting" is a fact of the test, not a race. Every process is ended by PID.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../helpers/gateway.js';
import {
  chrome,
  fx,
  gw,
  gwEnv,
  launch,
  LinkProxy,
  mcp,
  port,
  share,
  startGw,
  stopGw,
  teardown,
  workerStatus,
} from '../extension/setup.js';

const proxy = new LinkProxy();

before(async () => {
  // The gateway answers only to Host names it knows (DNS rebinding): the proxy's address is configured.
  await proxy.listen();
  gwEnv.VERITY_ALLOWED_HOSTS = `127.0.0.1:${proxy.port}`;
  await launch();
  const page = await chrome.newPage();
  await page.goto(gw!.pairLink.replace(`127.0.0.1%3A${port}`, `127.0.0.1%3A${proxy.port}`));
  await page.waitForSelector('#status[data-state="paired"]');
  await page.close();
  await waitFor(async () => (await workerStatus()).connected, 'the extension connected through the proxy');
  const shared = await chrome.newPage();
  await shared.goto(fx.url('plain.html?restart'));
  await share(fx.url('plain.html?restart'));
  await waitFor(async () => (await workerStatus()).shared.length === 1, 'the tab shared');
});

after(async () => {
  await proxy.close();
  await teardown();
});

const TITLE = 'Plain controls fixture';
const sharedRow = (r: { structured: any }) =>
  (r.structured.tabs as Array<{ url: string; title: string }>).find((t) => t.url.includes('plain.html?restart'));

test('after a restart, an agent connected in the first second keeps its MCP session and is answered while the extension reconnects', async () => {
  const { call: first } = await mcp();
  const seen = await waitFor(async () => {
    const r = await first('page', { action: 'list_tabs' });
    return !r.isError && sharedRow(r) ? sharedRow(r) : null;
  }, 'the shared tab listed before the restart');
  assert.equal(seen.title, TITLE);

  // The extension cannot reach the gateway while it restarts and after: it is "still reconnecting".
  await proxy.close();
  await stopGw();
  await startGw();
  // Within the first second of the new gateway: initialize, then calls on the same MCP session (an
  // unknown Mcp-Session-Id would throw here).
  const { call } = await mcp();
  for (let i = 0; i < 5; i++) {
    const r = await call('page', { action: 'list_tabs' });
    assert.equal(r.isError, false, r.text);
    assert.equal(sharedRow(r), undefined, 'the shared tab is not listed while the extension is away');
  }
  assert.equal(
    (await workerStatus()).connected,
    false,
    'all 5 calls were answered while the extension was still reconnecting',
  );

  // The extension comes back to the restarted gateway (its debugger session on the tab outlived the old
  // gateway): the same agent session lists the shared tab with its title read from the page. Before the
  // relay re-announced the page's execution contexts, each such listing waited 10 s and gave no title.
  await proxy.listen();
  await waitFor(async () => (await workerStatus()).connected, 'the extension reconnected', 150, 200);
  const back = await waitFor(
    async () => {
      const r = await call('page', { action: 'list_tabs' });
      return !r.isError && sharedRow(r) ? sharedRow(r) : null;
    },
    'the shared tab listed again',
    100,
    200,
  );
  assert.equal(back.title, TITLE, 'the title comes from the page itself, through the relay');
  for (let i = 0; i < 5; i++) {
    const r = await call('page', { action: 'list_tabs' });
    assert.equal(r.isError, false, r.text);
    assert.equal(sharedRow(r)?.title, TITLE);
  }
  const state = await call('get_window_state', {
    target: { kind: 'tab', tab_id: (back as any).tab_id },
    include_screenshot: false,
  });
  assert.equal(state.isError, false, state.text);
});
