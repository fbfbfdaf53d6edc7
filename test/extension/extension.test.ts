// The companion extension in a real Chromium (--headless=new, the unpacked extension loaded): pairing
// through its pairing page, the gateway's origin allow-list, tabs shared through the "Verity" tab group and
// driven from an MCP client with verified results (across a gateway restart and a navigation), the group as
// the consent boundary, and the `screen` tool reaching the extension-hosted Control UI only when bound.
// Every process is ended by its PID.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page, type WebWorker } from 'puppeteer-core';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CHROMIUM_FLAGS, findChromium } from '../../server/cdp/browser.js';
import { EXTENSION_ID } from '../../server/gateway/extension-id.js';
import { ROOT, serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { alive, killPid, sleep, waitFor, wrap } from '../helpers/gateway.js';

const EXT = join(ROOT, 'extension');
const TOKEN = 'extension-tests-token';
const configDir = mkdtempSync(join(tmpdir(), 'verity-ext-config-'));
const profile = mkdtempSync(join(tmpdir(), 'verity-ext-profile-'));
const allowList = () => (existsSync(join(configDir, 'allowed-origins.json')) ? JSON.parse(readFileSync(join(configDir, 'allowed-origins.json'), 'utf8')) as string[] : []);
const ORIGIN = `chrome-extension://${EXTENSION_ID}`;

interface Gw { pid: number; proc: ChildProcess; base: string; pairLink: string; stdout(): string; stderr(): string }
let port = 0;
let gw: Gw | null = null;
let fx: FixtureServer;
let chrome: Browser;
let chromePid = 0;
let worker: WebWorker;
const clients: Client[] = [];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const p = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return p;
}

/** `verity start` on a fixed port (so a restart is the same gateway address), with a private config dir. */
async function startGw(): Promise<Gw> {
  const proc = spawn(process.execPath, [join(ROOT, 'bin', 'verity.js'), 'start', '--port', String(port), '--token', TOKEN, '--headless'],
    { env: { ...process.env, VERITY_CONFIG_DIR: configDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  proc.stdout!.on('data', (c) => { out += c; });
  proc.stderr!.on('data', (c) => { err += c; });
  const link = await waitFor(() => /Pair the Chrome extension: (\S+)/.exec(out)?.[1] ?? (proc.exitCode !== null ? 'exited' : null), 'the pairing link', 150);
  if (link === 'exited') throw new Error(`verity start exited.\nstdout: ${out}\nstderr: ${err}`);
  return { pid: proc.pid!, proc, base: `http://127.0.0.1:${port}`, pairLink: link, stdout: () => out, stderr: () => err };
}

async function stopGw(): Promise<void> {
  if (!gw) return;
  const { pid, proc } = gw;
  gw = null;
  const exited = new Promise((r) => { if (proc.exitCode !== null) r(null); else proc.once('exit', r); });
  killPid(pid, 'SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  killPid(pid);
}

async function mcp(link?: string) {
  const headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}`, ...(link ? { 'X-Verity-Link': link } : {}) };
  const client = new Client({ name: `extension-test-${clients.length}`, version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw!.base}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return { client, call: wrap(client) };
}

/** Runs a function in the extension's service worker. */
async function inWorker<T>(fn: string): Promise<T> {
  return worker.evaluate(fn) as Promise<T>;
}

const workerStatus = () => inWorker<{ connected: boolean; shared: Array<{ tabId: number; targetId: string; url: string }>; attention: string[] }>('self.verity.status()');

async function targetIdOf(page: Page): Promise<string> {
  const session = await page.createCDPSession();
  try { return (await session.send('Target.getTargetInfo')).targetInfo.targetId; } finally { await session.detach().catch(() => {}); }
}

/** Puts the tab whose URL starts with `url` in a "Verity" tab group (as the operator would), from the worker. */
async function share(url: string): Promise<number> {
  return inWorker<number>(`(async () => {
    const tab = (await chrome.tabs.query({})).find((t) => (t.url ?? '').startsWith(${JSON.stringify(url)}));
    const groupId = await chrome.tabs.group({ tabIds: [tab.id] });
    await chrome.tabGroups.update(groupId, { title: 'Verity' });
    await self.verity.reconcile();
    return tab.id;
  })()`);
}

async function sharedTabId(call: ReturnType<typeof wrap>, urlPart: string): Promise<string> {
  const tab = await waitFor(async () => {
    const r = await call('page', { action: 'list_tabs' });
    return r.isError ? undefined : (r.structured.tabs as Array<{ tab_id: string; url: string }>).find((t) => t.url.includes(urlPart));
  }, `a tab at ${urlPart} in list_tabs`, 100, 200);
  return tab.tab_id;
}

/** get_window_state of the tab, then type_text into the labelled field: the driver's verdict. */
async function typeInto(call: ReturnType<typeof wrap>, tabId: string, label: string, text: string) {
  const state = await call('get_window_state', { target: { kind: 'tab', tab_id: tabId }, include_screenshot: false });
  assert.equal(state.isError, false, state.text);
  const field = (state.structured.elements as Array<{ element_token: string; label: string; role: string }>).find((e) => e.label === label && e.role === 'textbox');
  assert.ok(field, `a textbox labelled ${label}`);
  return call('type_text', { element_token: field.element_token, text });
}

before(async () => {
  port = await freePort();
  fx = await serveFixtures();
  gw = await startGw();
  chrome = await puppeteer.launch({
    executablePath: findChromium(process.env.VERITY_CHROMIUM), headless: true, defaultViewport: null,
    args: [...CHROMIUM_FLAGS, `--load-extension=${EXT}`, `--disable-extensions-except=${EXT}`],
    ignoreDefaultArgs: ['--disable-extensions'], userDataDir: profile,
    handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false,
  });
  chromePid = chrome.process()!.pid!;
  const target = await chrome.waitForTarget((t) => t.type() === 'service_worker' && t.url() === `${ORIGIN}/background.js`, { timeout: 20_000 });
  worker = (await target.worker())!;
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await chrome?.close().catch(() => {});
  killPid(chromePid);
  await stopGw();
  await fx?.close();
  rmSync(configDir, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
});

test('the printed pairing link names the extension\'s fixed id; the gateway refuses the extension until it is paired', async () => {
  assert.match(gw!.pairLink, new RegExp(`^chrome-extension://${EXTENSION_ID}/pair\\.html#gateway=ws%3A%2F%2F127\\.0\\.0\\.1%3A${port}%2Fgateway&token=${TOKEN}$`));
  assert.equal(worker.url(), `${ORIGIN}/background.js`, 'the unpacked extension has the id derived from its manifest key');
  assert.deepEqual(allowList(), []);
  const page = await chrome.newPage();
  await page.goto(`${ORIGIN}/app.html`);
  await page.waitForSelector('#status[data-state="unpaired"]');
  assert.match(await page.$eval('#status', (e) => e.textContent ?? ''), /Not paired yet.*verity start/);
  // The extension's own origin is refused before the upgrade.
  const opened = await page.evaluate((url) => new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.onopen = () => { ws.close(); resolve('open'); };
    ws.onerror = () => resolve('refused');
  }), `ws://127.0.0.1:${port}/gateway`);
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
  const stored = await inWorker<{ gateway: string; token: string }>('chrome.storage.local.get("pairing").then((s) => s.pairing)');
  assert.equal(stored.gateway, `ws://127.0.0.1:${port}/gateway`);
  assert.equal(stored.token, TOKEN);
  assert.deepEqual(allowList(), [ORIGIN]);
  const opened = await page.evaluate((url) => new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.onopen = () => { ws.close(); resolve('open'); };
    ws.onerror = () => resolve('refused');
  }), `ws://127.0.0.1:${port}/gateway`);
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
  assert.equal(tabId, await targetIdOf(fixture), 'tab_id is the tab\'s real CDP target id');
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
  gw = await startGw();
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
  const state = await call('get_window_state', { target: { kind: 'tab', tab_id: tabId }, include_screenshot: false });
  const field = (state.structured.elements as Array<{ element_token: string; label: string; role: string }>).find((e) => e.label === 'Text' && e.role === 'textbox')!;
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
  const isWorker = (t: { type(): string; url(): string }) => t.type() === 'service_worker' && t.url() === `${ORIGIN}/background.js`;
  await worker.close();
  await waitFor(() => !chrome.targets().some(isWorker), 'the service worker to stop');
  await waitFor(async () => !(await call('page', { action: 'list_tabs' })).structured.tabs.some((t: { tab_id: string }) => t.tab_id === tabId), 'the gateway to drop the tab of the stopped worker');
  // Anything that wakes the worker (here a message from an extension page) brings sharing back.
  const page = await chrome.newPage();
  await page.goto(`${ORIGIN}/pair.html`);
  await page.evaluate(() => (globalThis as any).browser.runtime.sendMessage({ type: 'status' }));
  worker = (await (await chrome.waitForTarget(isWorker, { timeout: 20_000 })).worker())!;
  await waitFor(async () => { const s = await workerStatus(); return s.connected && s.shared.length === 1; }, 'the woken worker re-attached and reconnected', 150, 200);
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
  assert.ok(extUi.url().startsWith(`${ORIGIN}/ui/index.html#gateway=`), extUi.url());
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
  assert.equal(await sidebar(extUi), 'true', 'an agent bound to another Control UI does not move the extension\'s');

  const extAgent = await mcp(await extUi.$eval('[data-agent-link]', (e) => e.getAttribute('data-link-token')!));
  const r = await extAgent.call('screen', { action: 'sidebar_hide' });
  assert.deepEqual(r.structured, { ok: true }, r.text);
  await extUi.waitForSelector('[data-sidebar][data-visible="false"]');
  assert.ok(alive(gw!.pid));
});

test('relay methods need the tab-relay cap and operator.write', async () => {
  const open = async (caps: string[], scopes: string[]) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/gateway`);
    const waiters = new Map<number, (f: any) => void>();
    let n = 0;
    ws.on('message', (d) => { const f = JSON.parse(String(d)); if (f.type === 'res') waiters.get(f.id)?.(f); });
    await new Promise((r) => ws.on('open', r));
    const request = (method: string, params?: unknown) => new Promise<any>((resolve) => { const id = ++n; waiters.set(id, resolve); ws.send(JSON.stringify({ type: 'req', id, method, params })); });
    const hello = await request('connect', { client: { id: 'relay-probe', version: '1', mode: 'test' }, caps, role: 'operator', scopes, auth: { token: TOKEN } });
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
