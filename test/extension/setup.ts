// Shared setup of the extension suites: a real Chromium (--headless=new) with the unpacked extension, a
// `verity start` on a fixed port with a private config dir, MCP clients, and helpers that run code in the
// extension's service worker. State is exported as live bindings (read them; change them through the
// functions here). Every process is ended by its PID.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page, type WebWorker } from 'puppeteer-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CHROMIUM_FLAGS, findChromium } from '../../server/cdp/browser/browser.js';
import { EXTENSION_ID } from '../../server/gateway/extension-id.js';
import { ROOT, serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { killPid, sleep, waitFor, wrap } from '../helpers/gateway.js';

export const EXT = join(ROOT, 'extension');
export const TOKEN = 'extension-tests-token';
/** The agent credential (/mcp); TOKEN is the operator's (Control UI, pairing). */
export const AGENT_TOKEN = 'extension-tests-agent-token';
export const ORIGIN = `chrome-extension://${EXTENSION_ID}`;
export const configDir = mkdtempSync(join(tmpdir(), 'verity-ext-config-'));
export const profile = mkdtempSync(join(tmpdir(), 'verity-ext-profile-'));
/** The origins the gateway allows: those of its pairings (<config dir>/pairings.json). */
export const allowList = () =>
  existsSync(join(configDir, 'pairings.json'))
    ? [
        ...new Set(
          (JSON.parse(readFileSync(join(configDir, 'pairings.json'), 'utf8')) as Array<{ origin: string }>).map(
            (p) => p.origin,
          ),
        ),
      ]
    : [];

export interface Gw {
  pid: number;
  proc: ChildProcess;
  base: string;
  pairLink: string;
  stdout(): string;
  stderr(): string;
}
export type Call = ReturnType<typeof wrap>;
export let port = 0;
export let gw: Gw | null = null;
export let fx: FixtureServer;
export let chrome: Browser;
export let chromePid = 0;
export let worker: WebWorker;
export const clients: Client[] = [];
/** Extra environment for `verity start` (e.g. VERITY_ALLOWED_HOSTS for a relay in front of it). */
export const gwEnv: Record<string, string> = {};

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const p = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return p;
}

/** `verity start` on a fixed port (so a restart is the same gateway address), with a private config dir. */
export async function startGw(): Promise<Gw> {
  const proc = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'verity.js'), 'start', '--port', String(port), '--headless'],
    {
      env: {
        ...process.env,
        VERITY_CONFIG_DIR: configDir,
        VERITY_TOKEN: TOKEN,
        VERITY_AGENT_TOKEN: AGENT_TOKEN,
        ...gwEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '',
    err = '';
  proc.stdout!.on('data', (c) => {
    out += c;
  });
  proc.stderr!.on('data', (c) => {
    err += c;
  });
  const link = await waitFor(
    () => /Pair the Chrome extension: (\S+)/.exec(out)?.[1] ?? (proc.exitCode !== null ? 'exited' : null),
    'the pairing link',
    150,
  );
  if (link === 'exited') throw new Error(`verity start exited.\nstdout: ${out}\nstderr: ${err}`);
  gw = { pid: proc.pid!, proc, base: `http://127.0.0.1:${port}`, pairLink: link, stdout: () => out, stderr: () => err };
  return gw;
}

export async function stopGw(): Promise<void> {
  if (!gw) return;
  const { pid, proc } = gw;
  gw = null;
  const exited = new Promise((r) => {
    if (proc.exitCode !== null) r(null);
    else proc.once('exit', r);
  });
  killPid(pid, 'SIGTERM');
  await Promise.race([exited, sleep(15_000)]);
  killPid(pid);
}

const isWorker = (t: { type(): string; url(): string }) =>
  t.type() === 'service_worker' && t.url() === `${ORIGIN}/background.js`;

/** Finds the extension's service worker target again (after it was stopped and woken). */
export async function findWorker(): Promise<WebWorker> {
  worker = (await (await chrome.waitForTarget(isWorker, { timeout: 20_000 })).worker())!;
  return worker;
}

/** Fixtures, the gateway and Chromium with the unpacked extension; `teardown` ends them by PID. */
export async function launch(): Promise<void> {
  port = await freePort();
  fx = await serveFixtures();
  await startGw();
  chrome = await puppeteer.launch({
    executablePath: findChromium(process.env.VERITY_CHROMIUM, undefined, process.env),
    headless: true,
    defaultViewport: null,
    args: [...CHROMIUM_FLAGS, `--load-extension=${EXT}`, `--disable-extensions-except=${EXT}`],
    ignoreDefaultArgs: ['--disable-extensions'],
    userDataDir: profile,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  chromePid = chrome.process()!.pid!;
  await findWorker();
}

export async function teardown(): Promise<void> {
  for (const c of clients) await c.close().catch(() => {});
  await chrome?.close().catch(() => {});
  killPid(chromePid);
  await stopGw();
  await fx?.close();
  rmSync(configDir, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
}

export async function mcp(link?: string) {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${AGENT_TOKEN}`,
    ...(link ? { 'X-Verity-Link': link } : {}),
  };
  const client = new Client({ name: `extension-test-${clients.length}`, version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw!.base}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return { client, call: wrap(client) };
}

/**
 * Runs code in the extension's service worker: Chrome's own extension APIs only (what the operator or
 * Chrome itself does: group a tab, dispatch a menu click); the worker exposes nothing of its own.
 */
export async function inWorker<T>(fn: string): Promise<T> {
  return worker.evaluate(fn) as Promise<T>;
}

/** The shared tabs and connection as the worker reports them. */
export interface WorkerStatus {
  paired: boolean;
  gateway: string | null;
  connected: boolean;
  shared: Array<{ tabId: number; targetId: string; url: string; title: string; attachId: number }>;
  attention: string[];
}

let statusPage: Page | null = null;
/**
 * The worker's status, asked the way the extension's own pairing page asks it (a `status` message from an
 * extension page; opened without a link, the page shows the answer).
 */
export async function workerStatus(): Promise<WorkerStatus> {
  if (!statusPage || statusPage.isClosed()) {
    statusPage = await chrome.newPage();
    await statusPage.goto(`${ORIGIN}/pair.html`);
  }
  return statusPage.evaluate(() =>
    (
      globalThis as unknown as { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }
    ).chrome.runtime.sendMessage({ type: 'status' }),
  ) as Promise<WorkerStatus>;
}

/** Waits until the worker reports the tab shared (attached) or not. */
export const sharedInWorker = (tabId: number, shared = true) =>
  waitFor(
    async () => (await workerStatus()).shared.some((s) => s.tabId === tabId) === shared,
    `the worker ${shared ? 'sharing' : 'no longer sharing'} tab ${tabId}`,
    100,
    200,
  );

export async function targetIdOf(page: Page): Promise<string> {
  const session = await page.createCDPSession();
  try {
    return (await session.send('Target.getTargetInfo')).targetInfo.targetId;
  } finally {
    await session.detach().catch(() => {});
  }
}

/** Puts the tab whose URL starts with `url` in a "Verity" tab group (as the operator would); waits until the worker shares it. */
export async function share(url: string): Promise<number> {
  const tabId = await inWorker<number>(`(async () => {
    const tab = (await chrome.tabs.query({})).find((t) => (t.url ?? '').startsWith(${JSON.stringify(url)}));
    const groupId = await chrome.tabs.group({ tabIds: [tab.id] });
    await chrome.tabGroups.update(groupId, { title: 'Verity' });
    return tab.id;
  })()`);
  await sharedInWorker(tabId);
  return tabId;
}

/** The tab ids (of shared tabs too) the gateway lists now. */
export async function listedTabs(call: Call): Promise<Array<{ tab_id: string; url: string }>> {
  const r = await call('page', { action: 'list_tabs' });
  return r.isError ? [] : r.structured.tabs;
}

export async function sharedTabId(call: Call, urlPart: string): Promise<string> {
  const tab = await waitFor(
    async () => (await listedTabs(call)).find((t) => t.url.includes(urlPart)),
    `a tab at ${urlPart} in list_tabs`,
    100,
    200,
  );
  return tab.tab_id;
}

/** get_window_state of the tab, then type_text into the labelled field: the driver's verdict. */
export async function typeInto(call: Call, tabId: string, label: string, text: string) {
  const state = await call('get_window_state', {
    format: 'full',
    target: { kind: 'tab', tab_id: tabId },
    include_screenshot: false,
  });
  assert.equal(state.isError, false, state.text);
  const field = (state.structured.elements as Array<{ element_token: string; label: string; role: string }>).find(
    (e) => e.label === label && e.role === 'textbox',
  );
  assert.ok(field, `a textbox labelled ${label}`);
  return call('type_text', { element_token: field.element_token, text });
}

/** A TCP relay from the extension to the gateway; `cut` resets every connection through it, `close` stops it. */
export class LinkProxy {
  port = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  async listen(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(port, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }
  cut(): void {
    for (const s of this.sockets) s.resetAndDestroy();
  }
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.cut();
    if (server) await new Promise((r) => server.close(r));
  }
}
