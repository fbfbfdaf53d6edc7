// The companion extension's resilience, in a real Chromium with the unpacked extension: the extension
// reaches the gateway through a TCP relay the test can cut (a real drop of the link, the gateway itself
// staying up), so a command caught in flight is seen to land at most once and to be answered with a clear
// refusal or a confirmed result that matches the page; the toolbar badge (unpaired, connected, sharing,
// gateway unreachable); sharing and unsharing from the extension's menu; and a shared tab whose debugger
// goes away (re-attached while it stays in the group; the banner dismissed takes it out of the group).
// Every process is ended by its PID.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttp, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'puppeteer-core';
import { waitFor } from '../helpers/gateway.js';
import {
  chrome,
  fx,
  gw,
  gwEnv,
  inWorker,
  launch,
  LinkProxy,
  mcp,
  port,
  sharedInWorker,
  sharedTabId,
  listedTabs,
  teardown,
  typeInto,
  workerStatus,
} from './setup.js';

// A page whose field answers its first input slowly: it tells the test (a synchronous request) that the
// input reached it, and the test cuts the link right then, while the command is still in flight.
const SLOW = `<!doctype html><title>slow field</title><label for="slow">Slow</label><input id="slow">
<script>
  let armed = true; window.inputs = 0;
  const field = document.getElementById('slow');
  field.addEventListener('input', () => { window.inputs++; });
  field.addEventListener('beforeinput', () => {
    if (!armed) return;
    armed = false;
    const x = new XMLHttpRequest(); x.open('GET', '/started', false); try { x.send(); } catch {}
    const t = Date.now(); while (Date.now() - t < 1000) {}
  });
</script>`;

const proxy = new LinkProxy();
let slowServer: HttpServer;
let slowUrl = '';
let onStarted: (() => void) | null = null;
let plainTab = 0;

/**
 * Clicks the extension's context-menu item ("Share this tab with Verity" / "Stop sharing…") for the tab at
 * `url`: Chrome's menu event is dispatched to the worker's own listener, then the worker is seen to (un)share it.
 */
const menu = async (item: 'verity-share' | 'verity-unshare', url: string) => {
  const tabId = await inWorker<number>(`(async () => {
    const tab = (await chrome.tabs.query({})).find((t) => (t.url ?? '').startsWith(${JSON.stringify(url)}));
    chrome.contextMenus.onClicked.dispatch({ menuItemId: ${JSON.stringify(item)}, editable: false, pageUrl: tab.url }, tab);
    return tab.id;
  })()`);
  await sharedInWorker(tabId, item === 'verity-share');
  return tabId;
};
const groupOf = (tabId: number) =>
  inWorker<string | null>(
    `chrome.tabs.get(${tabId}).then(async (t) => t.groupId >= 0 ? (await chrome.tabGroups.get(t.groupId)).title : null)`,
  );
const badge = () =>
  inWorker<{ text: string; title: string }>(
    'Promise.all([chrome.action.getBadgeText({}), chrome.action.getTitle({})]).then(([text, title]) => ({ text, title }))',
  );
/** Waits for the badge to read `text` with a tooltip matching `title` (the badge is then asserted as a whole). */
const badgeIs = (text: string, title: RegExp) =>
  waitFor(
    async () => {
      const b = await badge();
      return b.text === text && title.test(b.title) ? b : null;
    },
    `the badge "${text}" with a title matching ${title}`,
    100,
    200,
  );
const valueOf = (page: Page, sel: string) => page.$eval(sel, (e) => (e as HTMLInputElement).value);

before(async () => {
  // The gateway answers only to Host names it knows (DNS rebinding): the relay's address is configured.
  await proxy.listen();
  gwEnv.VERITY_ALLOWED_HOSTS = `127.0.0.1:${proxy.port}`;
  await launch();
  slowServer = createHttp((req, res) => {
    if (req.url === '/started') {
      proxy.cut();
      onStarted?.();
      res.end('ok');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(SLOW);
  });
  await new Promise<void>((r) => slowServer.listen(0, '127.0.0.1', r));
  slowUrl = `http://127.0.0.1:${(slowServer.address() as AddressInfo).port}/slow.html`;
});

after(async () => {
  await proxy.close();
  await new Promise((r) => {
    slowServer?.closeAllConnections();
    slowServer?.close(r);
  });
  await teardown();
});

test('the badge says "!" with how to pair, then "on" once paired (through the relay) and connected', async () => {
  await badgeIs('!', /not paired.*verity start/);
  const page = await chrome.newPage();
  await page.goto(gw!.pairLink.replace(`127.0.0.1%3A${port}`, `127.0.0.1%3A${proxy.port}`));
  await page.waitForSelector('#status[data-state="paired"]');
  await page.close();
  await waitFor(async () => (await workerStatus()).connected, 'the extension connected through the relay');
  await badgeIs('on', new RegExp(`connected to ws://127\\.0\\.0\\.1:${proxy.port}/gateway`));
});

let plain: Page;

test('"Share this tab with Verity" from the menu puts it in the "Verity" group and makes it drivable; "Stop sharing" refuses the next command', async () => {
  plain = await chrome.newPage();
  await plain.goto(fx.url('plain.html?menu'));
  const { call } = await mcp();
  plainTab = await menu('verity-share', fx.url('plain.html?menu'));
  assert.equal(await groupOf(plainTab), 'Verity');
  const tabId = await sharedTabId(call, 'plain.html?menu');
  await badgeIs('1', /sharing 1 tab/);
  const typed = await typeInto(call, tabId, 'Text', 'from the menu');
  assert.equal(typed.structured.effect, 'confirmed', typed.text);
  assert.equal(await valueOf(plain, '#text'), 'from the menu');

  const state = await call('get_window_state', {
    format: 'full',
    target: { kind: 'tab', tab_id: tabId },
    include_screenshot: false,
  });
  const field = (state.structured.elements as Array<{ element_token: string; label: string }>).find(
    (e) => e.label === 'Text',
  )!;
  await menu('verity-unshare', fx.url('plain.html?menu'));
  assert.equal(await groupOf(plainTab), null, 'the tab left the group');
  const refused = await call('type_text', { element_token: field.element_token, text: ' again' });
  assert.equal(refused.structured.status, 'refused', refused.text);
  assert.equal(await valueOf(plain, '#text'), 'from the menu', 'nothing was typed');
  assert.equal((await workerStatus()).shared.length, 0);
  assert.ok(!(await listedTabs(call)).some((t) => t.tab_id === tabId), 'the gateway no longer lists it');
  await badgeIs('on', /connected to/);
});

test('with the gateway unreachable the badge says "!" and what; it shows the count again once back', async () => {
  await menu('verity-share', fx.url('plain.html?menu'));
  await badgeIs('1', /sharing 1 tab/);
  await proxy.close();
  try {
    await badgeIs(
      '!',
      new RegExp(`(lost|cannot reach) the gateway at ws://127\\.0\\.0\\.1:${proxy.port}/gateway.*verity start`),
    );
    assert.equal((await workerStatus()).connected, false);
  } finally {
    await proxy.listen();
  }
  await waitFor(async () => (await workerStatus()).connected, 'the extension reconnected', 150, 200);
  await badgeIs('1', /sharing 1 tab/);
});

test('a type_text in flight when the link drops lands at most once, and the result is a clear refusal or matches the page', async () => {
  const slow = await chrome.newPage();
  await slow.goto(slowUrl);
  const { call } = await mcp();
  await menu('verity-share', slowUrl);
  const tabId = await sharedTabId(call, '/slow.html');
  await badgeIs('2', /sharing 2 tabs/);
  const started = new Promise<void>((r) => {
    onStarted = r;
  });
  const pending = typeInto(call, tabId, 'Slow', 'abc');
  await started; // the page is handling the input and the link was cut at that moment
  const r = await pending;
  const after = await valueOf(slow, '#slow'); // waits for the page to finish its slow handler
  assert.ok(after === '' || after === 'abc', `landed at most once: ${JSON.stringify(after)}`);
  if (r.isError) {
    assert.equal(r.structured.status, 'refused', r.text);
    assert.notEqual(
      r.structured.refusal.retryable,
      true,
      `a command that may have landed is not "retryable": ${r.text}`,
    );
    assert.match(r.structured.refusal.message, /unknown|not delivered|not sent/, r.text);
  } else {
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(after, 'abc', 'confirmed only when it landed');
  }
  // Reconnected, the next command goes through once, and the first one never arrives again.
  await waitFor(async () => (await workerStatus()).connected, 'the extension reconnected', 150, 200);
  await sharedTabId(call, '/slow.html');
  const next = await typeInto(call, tabId, 'Slow', '!');
  assert.equal(next.structured.effect, 'confirmed', next.text);
  assert.equal(await valueOf(slow, '#slow'), `${after}!`);
  assert.equal(
    await slow.evaluate(() => (window as unknown as { inputs: number }).inputs),
    after ? 2 : 1,
    'one input event per delivered command',
  );
  await slow.close();
});

test('a shared tab whose debugger goes away is re-attached while in the group; the banner dismissed takes it out', async () => {
  const { call } = await mcp();
  const tabId = await sharedTabId(call, 'plain.html?menu');
  const before = (await workerStatus()).shared.find((s) => s.tabId === plainTab)!;
  const state = await call('get_window_state', {
    format: 'full',
    target: { kind: 'tab', tab_id: tabId },
    include_screenshot: false,
  });
  const field = (state.structured.elements as Array<{ element_token: string; label: string }>).find(
    (e) => e.label === 'Area',
  )!;
  await inWorker(`chrome.debugger.detach({ tabId: ${plainTab} })`);
  // The next command is refused (nothing typed) or confirmed (typed once): never typed unconfirmed.
  const first = await call('type_text', { element_token: field.element_token, text: 'after detach' });
  const area = await valueOf(plain, '#area');
  if (first.isError) {
    assert.equal(first.structured.status, 'refused', first.text);
    assert.doesNotMatch(first.text, /internal error/, 'the refusal says what happened');
    assert.equal(area, '', first.text);
  } else assert.equal(area, 'after detach', first.text);
  const reattached = await waitFor(
    async () => (await workerStatus()).shared.find((s) => s.tabId === plainTab && s.attachId !== before.attachId),
    'the tab re-attached',
  );
  assert.equal(reattached.targetId, tabId);
  assert.equal(await groupOf(plainTab), 'Verity', 'still in the group');
  assert.ok(
    await inWorker(`chrome.debugger.getTargets().then((ts) => ts.some((t) => t.tabId === ${plainTab} && t.attached))`),
    'the debugger is attached again',
  );
  await sharedTabId(call, 'plain.html?menu');
  const again = await typeInto(call, tabId, 'Text', '+');
  assert.equal(again.structured.effect, 'confirmed', again.text);
  assert.equal(await valueOf(plain, '#text'), 'from the menu+');

  // Chrome reports the operator dismissing the "is being debugged" banner as canceled_by_user.
  // Chrome's debugger event is dispatched to the worker's own listener, as Chrome would deliver it.
  await inWorker(`chrome.debugger.onDetach.dispatch({ tabId: ${plainTab} }, 'canceled_by_user')`);
  await waitFor(async () => (await groupOf(plainTab)) === null, 'the tab out of the group');
  assert.equal(await groupOf(plainTab), null, 'dismissing the banner takes the tab out of the group');
  await sharedInWorker(plainTab, false);
  assert.ok(!(await workerStatus()).shared.some((s) => s.tabId === plainTab));
  await waitFor(async () => !(await listedTabs(call)).some((t) => t.tab_id === tabId), 'the gateway to drop the tab');
  const refused = await call('type_text', { target: { kind: 'tab', tab_id: tabId }, text: 'x' });
  assert.equal(refused.structured.status, 'refused', refused.text);
  assert.equal(await valueOf(plain, '#text'), 'from the menu+');
});
