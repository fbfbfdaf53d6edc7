// The companion extension in a real Chromium (--headless=new, the unpacked extension loaded): pairing
// through its pairing page, the gateway's origin allow-list, tabs shared through the "Verity" tab group and
// driven from an MCP client with verified results (across a gateway restart and a navigation), the group as
// the consent boundary, and the `screen` tool reaching the extension-hosted Control UI only when bound.
// Every process is ended by its PID.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'puppeteer-core';
import WebSocket from 'ws';
import { EXTENSION_ID } from '../../server/gateway/extension-id.js';
import { alive, waitFor } from '../helpers/gateway.js';
import {
  ORIGIN,
  TOKEN,
  allowList,
  chrome,
  findWorker,
  fx,
  gw,
  inWorker,
  launch,
  mcp,
  port,
  share,
  sharedTabId,
  startGw,
  stopGw,
  targetIdOf,
  teardown,
  typeInto,
  worker,
  workerStatus,
} from './setup.js';

before(launch);
after(teardown);

test("the printed pairing link names the extension's fixed id; the gateway refuses the extension until it is paired", async () => {
  assert.match(
    gw!.pairLink,
    new RegExp(
      `^chrome-extension://${EXTENSION_ID}/pair\\.html#gateway=ws%3A%2F%2F127\\.0\\.0\\.1%3A${port}%2Fgateway&token=${TOKEN}$`,
    ),
  );
  assert.equal(
    worker.url(),
    `${ORIGIN}/background.js`,
    'the unpacked extension has the id derived from its manifest key',
  );
  assert.deepEqual(allowList(), []);
  const page = await chrome.newPage();
  await page.goto(`${ORIGIN}/app.html`);
  await page.waitForSelector('#status[data-state="unpaired"]');
  assert.match(await page.$eval('#status', (e) => e.textContent ?? ''), /Not paired yet.*verity start/);
  // The extension's own origin is refused before the upgrade.
  const opened = await page.evaluate(
    (url) =>
      new Promise((resolve) => {
        const ws = new WebSocket(url);
        ws.onopen = () => {
          ws.close();
          resolve('open');
        };
        ws.onerror = () => resolve('refused');
      }),
    `ws://127.0.0.1:${port}/gateway`,
  );
  assert.equal(opened, 'refused');
  const status = await fetch(`${gw!.base}/`, { headers: { origin: ORIGIN } }).then((r) => r.status);
  assert.equal(status, 403);
  await page.close();
});

test('a wrong token on the pairing page says what to do and pairs nothing', async () => {
  const page = await chrome.newPage();
  await page.goto(gw!.pairLink.replace(`token=${TOKEN}`, 'token=stale-token'));
  await page.waitForSelector('#status[data-state="error"]');
  const text = await page.$eval('body', (e) => e.textContent ?? '');
  assert.match(text, /refused the pairing \(401\)/);
  assert.match(text, /fresh pairing link from `verity start`/);
  assert.deepEqual(allowList(), []);
  assert.equal(await inWorker('chrome.storage.local.get("pairing").then((s) => s.pairing ?? null)'), null);
  await page.close();
});

test('pairing through the pairing page stores it, puts the origin on the allow-list, and the extension connects', async () => {
  const page = await chrome.newPage();
  await page.goto(gw!.pairLink);
  await page.waitForSelector('#status[data-state="paired"]');
  assert.equal(await page.$eval('#status', (e) => e.textContent), `Paired with ws://127.0.0.1:${port}/gateway`);
  assert.equal(new URL(page.url()).hash, '', 'the token is not left in the address bar');
  const stored = await inWorker<{ gateway: string; token: string }>(
    'chrome.storage.local.get("pairing").then((s) => s.pairing)',
  );
  assert.equal(stored.gateway, `ws://127.0.0.1:${port}/gateway`);
  assert.equal(stored.token, TOKEN);
  assert.deepEqual(allowList(), [ORIGIN]);
  const opened = await page.evaluate(
    (url) =>
      new Promise((resolve) => {
        const ws = new WebSocket(url);
        ws.onopen = () => {
          ws.close();
          resolve('open');
        };
        ws.onerror = () => resolve('refused');
      }),
    `ws://127.0.0.1:${port}/gateway`,
  );
  assert.equal(opened, 'open');
  await waitFor(async () => (await workerStatus()).connected, 'the service worker connected to the gateway');
  await page.close();
});

let fixture: Page;
let tabId = '';
let chromeTabId = 0;

test('a tab in the "Verity" group is driven from MCP with type_text confirmed against the page', async () => {
  fixture = await chrome.newPage();
  await fixture.goto(fx.url('plain.html'));
  const { call } = await mcp();
  // Not shared yet: the gateway does not see it.
  const before = await call('page', { action: 'list_tabs' });
  assert.ok(!(before.structured.tabs as Array<{ url: string }>).some((t) => t.url.includes('plain.html')), before.text);
  chromeTabId = await share(fx.url('plain.html'));
  tabId = await sharedTabId(call, 'plain.html');
  assert.equal(tabId, await targetIdOf(fixture), "tab_id is the tab's real CDP target id");
  const r = await typeInto(call, tabId, 'Text', 'hello relay');
  assert.equal(r.isError, false, r.text);
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal(await fixture.$eval('#text', (e) => (e as HTMLInputElement).value), 'hello relay');
  const badge = await inWorker<string>(`chrome.action.getBadgeText({ tabId: ${chromeTabId} })`);
  assert.equal(badge, '1', 'the badge counts the shared tab');
});

test('after the gateway restarts, the extension reconnects and the tab is driven again', async () => {
  await stopGw();
  await waitFor(async () => !(await workerStatus()).connected, 'the extension noticing the gateway is gone');
  await startGw();
  await waitFor(async () => (await workerStatus()).connected, 'the extension reconnected', 150, 200);
  const { call } = await mcp();
  assert.equal(await sharedTabId(call, 'plain.html'), tabId, 'the same tab_id after the restart');
  const r = await typeInto(call, tabId, 'Area', 'after restart');
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal(await fixture.$eval('#area', (e) => (e as HTMLTextAreaElement).value), 'after restart');
});

test('after the shared tab navigates (to another site), it is driven again', async () => {
  const { call } = await mcp();
  await fixture.goto(fx.crossUrl('plain.html?after=navigation'));
  await sharedTabId(call, 'after=navigation');
  const r = await typeInto(call, tabId, 'Text', 'navigated');
  assert.equal(r.isError, false, r.text);
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal(await fixture.$eval('#text', (e) => (e as HTMLInputElement).value), 'navigated');
});

test('a tab taken out of the group is detached at once and the next command is refused', async () => {
  const { call } = await mcp();
  const state = await call('get_window_state', {
    format: 'full',
    target: { kind: 'tab', tab_id: tabId },
    include_screenshot: false,
  });
  const field = (state.structured.elements as Array<{ element_token: string; label: string; role: string }>).find(
    (e) => e.label === 'Text' && e.role === 'textbox',
  )!;
  await inWorker(`chrome.tabs.ungroup(${chromeTabId})`);
  const r = await call('type_text', { element_token: field.element_token, text: ' more' });
  assert.equal(r.isError, true, r.text);
  assert.equal(r.structured.status, 'refused', r.text);
  assert.equal(await fixture.$eval('#text', (e) => (e as HTMLInputElement).value), 'navigated', 'nothing was typed');
  await waitFor(async () => (await workerStatus()).shared.length === 0, 'the extension detached the tab');
  const listed = await call('page', { action: 'list_tabs' });
  assert.ok(!(listed.structured.tabs as Array<{ tab_id: string }>).some((t) => t.tab_id === tabId), listed.text);
  const again = await call('type_text', { target: { kind: 'tab', tab_id: tabId }, text: 'x' });
  assert.equal(again.structured.refusal?.code, 'target_not_found', again.text);
});

test('a stopped service worker, woken again, re-attaches the shared tab and reconnects', async () => {
  const { call } = await mcp();
  chromeTabId = await share(fx.crossUrl('plain.html'));
  assert.equal(await sharedTabId(call, 'after=navigation'), tabId);
  // Stop the worker. Chrome may wake a new one at once (a debugger event from the shared tab does), so
  // what proves the stop is that this worker's target is gone, not that no worker runs.
  const stopped = chrome.targets().find((t) => t.type() === 'service_worker' && t.url().startsWith(ORIGIN));
  assert.ok(stopped, 'a running service worker to stop');
  await worker.close();
  await waitFor(() => !chrome.targets().includes(stopped!), 'the service worker to stop');
  // Anything that wakes the worker (here a message from an extension page) brings sharing back.
  const page = await chrome.newPage();
  await page.goto(`${ORIGIN}/pair.html`);
  await page.evaluate(() => (globalThis as any).chrome.runtime.sendMessage({ type: 'status' }));
  await findWorker();
  await waitFor(
    async () => {
      const s = await workerStatus();
      return s.connected && s.shared.length === 1;
    },
    'the woken worker re-attached and reconnected',
    150,
    200,
  );
  assert.equal(await sharedTabId(call, 'after=navigation'), tabId);
  const r = await typeInto(call, tabId, 'Area', 'after wake');
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal(await fixture.$eval('#area', (e) => (e as HTMLTextAreaElement).value), 'after wake');
  await page.close();
});

test('a screen command reaches the extension-hosted Control UI only when it is the bound one', async () => {
  const extUi = await chrome.newPage();
  await extUi.goto(`${ORIGIN}/app.html`);
  await extUi.waitForSelector('[data-agent-link][data-link-token]', { timeout: 20_000 });
  // The hosted UI takes its gateway from the extension's pairing storage, never from its URL.
  assert.equal(extUi.url(), `${ORIGIN}/ui/index.html`);
  const otherUi = await chrome.newPage();
  await otherUi.goto(`${gw!.base}/?token=${TOKEN}`);
  await otherUi.waitForSelector('[data-agent-link][data-link-token]', { timeout: 20_000 });
  const sidebar = (p: Page) => p.$eval('[data-sidebar]', (e) => e.getAttribute('data-visible'));
  assert.equal(await sidebar(extUi), 'true');
  assert.equal(await sidebar(otherUi), 'true');

  const otherAgent = await mcp(await otherUi.$eval('[data-agent-link]', (e) => e.getAttribute('data-link-token')!));
  const moved = await otherAgent.call('screen', { action: 'sidebar_hide' });
  assert.deepEqual(moved.structured, { ok: true }, moved.text);
  await otherUi.waitForSelector('[data-sidebar][data-visible="false"]');
  assert.equal(await sidebar(extUi), 'true', "an agent bound to another Control UI does not move the extension's");

  const extAgent = await mcp(await extUi.$eval('[data-agent-link]', (e) => e.getAttribute('data-link-token')!));
  const r = await extAgent.call('screen', { action: 'sidebar_hide' });
  assert.deepEqual(r.structured, { ok: true }, r.text);
  await extUi.waitForSelector('[data-sidebar][data-visible="false"]');
  assert.ok(alive(gw!.pid));
});

test('relay methods need the tab-relay cap and operator.write', async () => {
  // The relay's credential is its pairing's relay secret (from the extension's storage); others use the operator's.
  const relaySecret = await inWorker<string>('chrome.storage.local.get("pairing").then((s) => s.pairing.relaySecret)');
  const open = async (caps: string[], scopes: string[]) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/gateway`);
    const waiters = new Map<number, (f: any) => void>();
    let n = 0;
    ws.on('message', (d) => {
      const f = JSON.parse(String(d));
      if (f.type === 'res') waiters.get(f.id)?.(f);
    });
    await new Promise((r) => ws.on('open', r));
    const request = (method: string, params?: unknown) =>
      new Promise<any>((resolve) => {
        const id = ++n;
        waiters.set(id, resolve);
        ws.send(JSON.stringify({ type: 'req', id, method, params }));
      });
    const hello = await request('connect', {
      client: { id: 'relay-probe', version: '1', mode: 'test' },
      caps,
      role: 'operator',
      scopes,
      auth: { token: caps.includes('tab-relay') ? relaySecret : TOKEN },
    });
    assert.equal(hello.ok, true);
    return { ws, request };
  };
  const tab = { targetId: 'FAKE', tabId: 1, url: 'http://127.0.0.1/', title: 'fake', attachId: 1 };
  const ui = await open(['ui-commands'], ['operator.read', 'operator.write']);
  const noCap = await ui.request('relay.tabs', { tabs: [tab] });
  assert.equal(noCap.ok, false);
  assert.equal(noCap.error.code, 'FORBIDDEN');
  assert.match(noCap.error.message, /tab-relay/);
  ui.ws.close();
  const reader = await open(['tab-relay'], ['operator.read']);
  const noScope = await reader.request('relay.tabs', { tabs: [tab] });
  assert.equal(noScope.error.code, 'FORBIDDEN');
  assert.equal(noScope.error.details.missingScope, 'operator.write');
  const result = await reader.request('relay.result', { id: 'never-sent', result: {} });
  assert.equal(result.error.code, 'FORBIDDEN');
  reader.ws.close();
});

test('the pairing page pairs only a gateway on this computer: a link naming another host sends it nothing', async () => {
  const before = await inWorker<{ gateway: string; pairingId: string; relaySecret: string }>(
    'chrome.storage.local.get("pairing").then((s) => s.pairing)',
  );
  assert.equal(typeof before.relaySecret, 'string', "the pairing keeps its relay secret in the extension's storage");
  const pairingsBefore = allowList();
  const page = await chrome.newPage();
  for (const host of ['evil.example', '192.0.2.1', '127.0.0.1.evil.example']) {
    await page.goto(gw!.pairLink.replace(`127.0.0.1%3A${port}`, `${host}%3A${port}`));
    await page.waitForSelector('#status[data-state="error"]');
    assert.match(await page.$eval('#status', (e) => e.textContent ?? ''), /only a gateway on this computer/, host);
  }
  await page.close();
  assert.deepEqual(
    await inWorker('chrome.storage.local.get("pairing").then((s) => s.pairing)'),
    before,
    'the stored pairing is untouched',
  );
  assert.deepEqual(allowList(), pairingsBefore);
});

test('the operator revokes the pairing from the Control UI: the relay is cut and the extension is refused', async () => {
  await waitFor(async () => (await workerStatus()).connected, 'the extension connected');
  const ui = await chrome.newPage();
  await ui.goto(`${gw!.base}/?token=${TOKEN}`);
  await ui.waitForSelector('[data-pairings] [data-revoke]', { timeout: 20_000 });
  // An earlier test's agent hid this origin's sidebar (the layout is kept): the operator shows it again.
  if ((await ui.$eval('[data-sidebar]', (e) => e.getAttribute('data-visible'))) === 'false')
    await ui.click('button[title="Toggle the sidebar"]');
  const revoke = await ui.waitForSelector('[data-sidebar][data-visible="true"] [data-pairings] [data-revoke]', {
    visible: true,
  });
  assert.equal((await ui.$$('[data-pairings] [data-pairing]')).length, 1);
  await revoke!.click();
  await ui.waitForSelector('[data-pairings]:not(:has([data-pairing]))', { timeout: 20_000 });
  assert.deepEqual(allowList(), []);
  await waitFor(async () => !(await workerStatus()).connected, "the extension's relay was cut");
  // Its origin is refused before the upgrade now, and its relay secret opens nothing.
  const status = await fetch(`${gw!.base}/`, { headers: { origin: ORIGIN } }).then((r) => r.status);
  assert.equal(status, 403);
  await ui.close();
  assert.ok(alive(gw!.pid));
});
