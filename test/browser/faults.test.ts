// Faults: tabs that close under a token, a launched browser killed mid-session, an attached browser that
// must outlive Verity, a page that never answers, and the HTTP front door with its token and origin checks.
// Every process started here is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { launchChromium } from '../helpers/chromium.js';
import { ROOT, serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { startVerity, type ToolResult, type Verity } from '../helpers/mcp.js';
import { browserSuiteOverStdio, type Suite } from '../helpers/suite.js';
import { printedCredentials } from '../helpers/gateway.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (bounded, not asserted as a duration) until `pid` has exited; true when it did. */
async function exited(pid: number, tries = 100): Promise<boolean> {
  for (let i = 0; i < tries && alive(pid); i++) await sleep(100);
  return !alive(pid);
}

function killPid(pid: number | null | undefined): void {
  if (pid)
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
}

function refusalOf(r: ToolResult): { code: string; message: string } {
  assert.equal(r.isError, true, r.text);
  assert.equal(r.structured?.status, 'refused', r.text);
  assert.equal(typeof r.structured.refusal.message, 'string', r.text);
  return r.structured.refusal;
}

describe('an attached browser', () => {
  let s: Suite<Verity>;
  before(async () => {
    s = await browserSuiteOverStdio([], launchChromium); // a Chromium of its own: it is frozen and checked alive
  });
  after(async () => {
    await s?.close();
  });

  test('a tab closed between snapshot and action is refused clearly, and the server keeps serving', async () => {
    const opened = await s.v.call('page', { action: 'new_tab', url: s.fx.url('plain.html?closing') });
    assert.equal(opened.isError, false, opened.text);
    const tabId = opened.structured.tab_id;
    const snap = await s.snapshot(s.v, { target: { kind: 'tab', tab_id: tabId } });
    await (await s.chrome.page('plain.html?closing')).close(); // closed behind Verity's back
    const r = await s.v.call('click', { element_token: snap.token('Increment') });
    assert.ok(['target_not_found', 'stale_element_token'].includes(refusalOf(r).code), r.text);
    const typed = await s.v.call('type_text', { element_token: snap.token('Text'), text: 'x' });
    assert.ok(['target_not_found', 'stale_element_token'].includes(refusalOf(typed).code), typed.text);
    const byId = await s.v.call('get_window_state', {
      format: 'full',
      target: { kind: 'tab', tab_id: tabId },
      include_screenshot: false,
    });
    assert.equal(refusalOf(byId).code, 'target_not_found', byId.text);
    const tabs = await s.v.call('page', { action: 'list_tabs' });
    assert.equal(tabs.isError, false, tabs.text);
    assert.ok(!tabs.structured.tabs.some((t: any) => t.tab_id === tabId), 'the closed tab is not listed');
    const page = await s.open('plain.html');
    const fresh = await s.snapshot(s.v);
    const ok = await s.v.call('click', { element_token: fresh.token('Increment') });
    assert.equal(ok.structured.effect, 'confirmed', ok.text);
    assert.equal(await page.$eval('#count', (el) => el.textContent), '1');
  });

  test('a tab closed with page close_tab refuses its tokens', async () => {
    const opened = await s.v.call('page', { action: 'new_tab', url: s.fx.url('plain.html?close_tab') });
    const snap = await s.snapshot(s.v, { target: { kind: 'tab', tab_id: opened.structured.tab_id } });
    const closed = await s.v.call('page', { action: 'close_tab', tab_id: opened.structured.tab_id });
    assert.equal(closed.isError, false, closed.text);
    const r = await s.v.call('set_value', { element_token: snap.token('Text'), value: 'x' });
    assert.ok(['target_not_found', 'stale_element_token'].includes(refusalOf(r).code), r.text);
    const next = await s.v.call('get_window_state', { format: 'full', include_screenshot: false });
    assert.equal(next.isError, false, next.text);
  });

  test('a page that never answers: the action is refused naming what it waited for', async () => {
    const home = (await s.v.call('page', { action: 'list_tabs' })).structured.tabs[0].tab_id;
    const opened = await s.v.call('page', { action: 'new_tab', url: s.fx.url('freezer.html') });
    assert.equal(opened.isError, false, opened.text);
    const tabId = opened.structured.tab_id;
    try {
      const snap = await s.snapshot(s.v, { target: { kind: 'tab', tab_id: tabId } });
      const freeze = await s.v.call('click', { element_token: snap.token('Freeze') });
      assert.ok(freeze.structured.effect === 'confirmed' || freeze.isError, freeze.text);
      await sleep(1000); // the page is frozen (test/fixtures/freezer.html)
      const r = await s.v.call('type_text', { element_token: snap.token('After'), text: 'never' });
      const refusal = refusalOf(r);
      assert.equal(refusal.code, 'timeout', r.text);
      assert.match(refusal.message, /waiting for|waited for/, `the message names what it waited for: ${r.text}`);
      // A fresh snapshot of the frozen tab (no token: the frame tree itself must be asked for) is refused too.
      const look = await s.v.call('get_window_state', {
        format: 'full',
        target: { kind: 'tab', tab_id: tabId },
        include_screenshot: false,
      });
      assert.equal(refusalOf(look).code, 'timeout', look.text);
      assert.match(look.structured.refusal.message, /waiting for|waited for/, look.text);
      // The server keeps serving, and other tabs still work (read through Verity only: the test's own
      // puppeteer would hang attaching to the frozen tab).
      const back = await s.v.call('page', { action: 'select_tab', tab_id: home });
      assert.equal(back.isError, false, back.text);
      const nav = await s.v.call('page', { action: 'navigate', url: s.fx.url('plain.html?after-freeze') });
      assert.equal(nav.isError, false, nav.text);
      const fresh = await s.snapshot(s.v);
      const ok = await s.v.call('click', { element_token: fresh.token('Increment') });
      assert.equal(ok.structured.effect, 'confirmed', ok.text);
      assert.match((await s.v.call('page', { action: 'get_text' })).text, /count: 1/);
    } finally {
      // Closed by target id from the browser side: attaching to a frozen tab would hang the test's own client.
      const cdp = await s.chrome.browser.target().createCDPSession();
      await cdp.send('Target.closeTarget', { targetId: tabId }).catch(() => {});
      await cdp.detach().catch(() => {});
    }
  });

  test('a tab already frozen when Verity attaches does not break the other tabs', async () => {
    const frozen = await s.chrome.browser.newPage();
    await frozen.goto(s.fx.url('freezer.html'));
    const cdp = await frozen.createCDPSession();
    const { targetInfo } = await cdp.send('Target.getTargetInfo');
    await frozen.evaluate('freezeLater(200)');
    await sleep(1000); // it is frozen
    const late = await startVerity(['--browser-url', s.chrome.browserUrl]);
    try {
      const tabs = await late.call('page', { action: 'list_tabs' });
      assert.equal(tabs.isError, false, tabs.text);
      const home = tabs.structured.tabs.find((t: any) => t.url.includes('plain.html'));
      assert.ok(home, `the responsive tab is listed: ${tabs.text}`);
      const snap = await late.call('get_window_state', {
        format: 'full',
        target: { kind: 'tab', tab_id: home.tab_id },
        include_screenshot: false,
      });
      assert.equal(snap.isError, false, snap.text);
      const again = await late.call('page', { action: 'list_tabs' });
      assert.equal(again.isError, false, again.text);
    } finally {
      await late.close();
      const browserSide = await s.chrome.browser.target().createCDPSession();
      await browserSide.send('Target.closeTarget', { targetId: targetInfo.targetId }).catch(() => {});
      await browserSide.detach().catch(() => {});
    }
  });

  test('after the MCP client closes, the attached Chromium is still alive (Verity never kills what it did not start)', async () => {
    await s.open('plain.html?survives');
    assert.equal((await s.v.call('list_apps')).isError, false);
    await s.v.client.close();
    assert.ok(await exited(s.v.pid), 'verity mcp exits when its client goes away');
    assert.ok(alive(s.chrome.pid), 'the test-owned Chromium process is alive');
    assert.equal(s.chrome.browser.connected, true);
    const pages = await s.chrome.browser.pages();
    const page = pages.find((p) => p.url().includes('plain.html?survives'));
    assert.ok(page, 'its tabs are still open');
    assert.equal(await page.evaluate('1 + 1'), 2, 'and answer');
  });
});

describe('the embedded browser', () => {
  let fx: FixtureServer;
  let v: Verity | undefined;
  const browserPids: number[] = [];
  before(async () => {
    fx = await serveFixtures();
  });
  after(async () => {
    await v?.close();
    for (const pid of browserPids) killPid(pid);
    await fx.close();
  });

  async function browserPid(): Promise<number> {
    const r = await v!.call('list_apps');
    assert.equal(r.isError, false, r.text);
    const pid = r.structured.apps.find((a: any) => a.driven_over_cdp)?.pid;
    assert.ok(Number.isInteger(pid) && pid > 0, `a launched browser has a pid: ${r.text}`);
    browserPids.push(pid);
    return pid;
  }

  test('killed with SIGKILL mid-session: a clear refusal or success, then a relaunched browser with a new pid', async () => {
    v = await startVerity([]); // no --browser-url: Verity launches its own Chromium
    const nav = await v.call('page', { action: 'navigate', url: fx.url('plain.html') });
    assert.equal(nav.isError, false, nav.text);
    const first = await browserPid();
    const snap = await v.call('get_window_state', { format: 'full', include_screenshot: false });
    assert.equal(snap.isError, false, snap.text);
    process.kill(first, 'SIGKILL');
    assert.ok(await exited(first), 'the launched Chromium died');

    const next = await v.call('get_window_state', { format: 'full', include_screenshot: false });
    if (next.isError) {
      assert.ok(['unavailable', 'target_not_found', 'stale_element_token'].includes(refusalOf(next).code), next.text);
      assert.ok(next.structured.refusal.message.length > 10, next.text);
      // The call that saw the browser die was refused; the next use launches a new one.
      const relaunched = await v.call('get_window_state', { format: 'full', include_screenshot: false });
      assert.equal(relaunched.isError, false, relaunched.text);
    } else {
      assert.ok(Array.isArray(next.structured.elements), next.text);
    }
    const second = await browserPid();
    assert.notEqual(second, first, 'a new browser was launched');
    assert.ok(alive(second));
    const again = await v.call('page', { action: 'navigate', url: fx.url('plain.html') });
    assert.equal(again.isError, false, again.text);
    const fresh = await v.call('get_window_state', { format: 'full', include_screenshot: false });
    assert.equal(fresh.isError, false, fresh.text);
    const increment = fresh.structured.elements.find((e: any) => e.label === 'Increment');
    const click = await v.call('click', { element_token: increment.element_token });
    assert.equal(click.structured.effect, 'confirmed', click.text);
    const text = await v.call('page', { action: 'get_text' });
    assert.match(text.text, /count: 1/);
  });

  test('when the MCP client closes, the browser Verity launched is closed with it', async () => {
    assert.ok(v, 'the server from the previous test');
    const pid = await browserPid();
    await v.client.close();
    assert.ok(await exited(v.pid), 'verity mcp exits when its client goes away');
    assert.ok(await exited(pid), 'the Chromium it launched is gone');
  });
});

interface Gateway {
  proc: ChildProcess;
  pid: number;
  base: string;
  token: string;
  agentToken: string;
  stdout: () => string;
  close(): Promise<void>;
}

/** Spawns `verity start` and waits for the URL it prints. */
async function startGateway(args: string[], env: Record<string, string | undefined>): Promise<Gateway> {
  const childEnv = { ...process.env, ...env } as Record<string, string>;
  for (const [k, val] of Object.entries(env)) if (val === undefined) delete childEnv[k];
  const proc = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'verity.js'), 'start', '--port', '0', '--headless', ...args],
    { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '',
    err = '';
  proc.stdout!.on('data', (c) => {
    out += c;
  });
  proc.stderr!.on('data', (c) => {
    err += c;
  });
  const pid = proc.pid!;
  for (let i = 0; i < 150 && !printedCredentials(out) && proc.exitCode === null; i++) await sleep(100);
  const m = printedCredentials(out);
  if (!m) {
    killPid(pid);
    throw new Error(`verity start printed no URL.\nstdout: ${out}\nstderr: ${err}`);
  }
  return {
    proc,
    pid,
    base: m.base,
    token: m.token,
    agentToken: m.agentToken,
    stdout: () => out,
    async close() {
      if (proc.exitCode === null)
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* gone */
        }
      if (!(await exited(pid, 50))) killPid(pid);
    },
  };
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

async function rawPost(url: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    body: JSON.stringify(INITIALIZE),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  });
  await res.text().catch(() => '');
  return res.status;
}

describe('verity start: MCP over Streamable HTTP at /mcp', () => {
  let fx: FixtureServer;
  let gw: Gateway | undefined;
  let client: Client | undefined;
  let launched: number | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'verity-config-'));
  before(async () => {
    fx = await serveFixtures();
  });
  after(async () => {
    await client?.close().catch(() => {});
    await gw?.close();
    killPid(launched);
    await fx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('with the bearer token: tools/list and a real, verified action', async () => {
    // Credentials come from the environment (never the command line, which `ps` shows).
    gw = await startGateway([], {
      VERITY_CONFIG_DIR: dir,
      VERITY_TOKEN: 'T0ken-for-tests',
      VERITY_AGENT_TOKEN: 'Ag3nt-t0ken-for-tests',
      VERITY_BROWSER_URL: undefined,
    });
    assert.equal(gw.token, 'T0ken-for-tests');
    assert.equal(gw.agentToken, 'Ag3nt-t0ken-for-tests');
    client = new Client({ name: 'verity-http-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${gw.agentToken}` } },
      }),
    );
    const { tools } = await client.listTools();
    for (const name of ['get_window_state', 'click', 'type_text', 'page'])
      assert.ok(
        tools.some((t) => t.name === name),
        name,
      );
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await client!.callTool({ name, arguments: args });
      return { isError: !!r.isError, structured: r.structuredContent as any, text: JSON.stringify(r.content) };
    };
    const nav = await call('page', { action: 'navigate', url: fx.url('plain.html') });
    assert.equal(nav.isError, false, nav.text);
    launched = (await call('list_apps', {})).structured.apps[0].pid;
    const snap = await call('get_window_state', { format: 'full', include_screenshot: false });
    assert.equal(snap.isError, false, snap.text);
    const token = snap.structured.elements.find((e: any) => e.label === 'Text').element_token;
    const typed = await call('type_text', { element_token: token, text: 'over http' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    const read = await call('page', { action: 'query_dom', css_selector: '#text', attributes: ['id'] });
    assert.equal(read.isError, false, read.text);
    const fresh = await call('get_window_state', { format: 'full', include_screenshot: false, query: 'Text' });
    assert.equal(fresh.structured.elements.find((e: any) => e.label === 'Text').value, 'over http');
  });

  test('a wrong or missing token is 401; a foreign Origin is 403; the right token still works', async () => {
    assert.ok(gw, 'the gateway from the previous test');
    const url = `${gw.base}/mcp`;
    assert.equal(await rawPost(url, {}), 401);
    assert.equal(await rawPost(url, { authorization: 'Bearer wrong-token' }), 401);
    assert.equal(await rawPost(url, { authorization: `Bearer ${gw.agentToken}x` }), 401);
    assert.equal(await rawPost(url, { authorization: `Bearer ${gw.agentToken}`, origin: 'http://evil.example' }), 403);
    assert.equal(
      (await rawPost(url, { authorization: 'Bearer wrong-token', origin: 'http://evil.example' })) >= 400,
      true,
    );
    const stranger = new Client({ name: 'stranger', version: '1' });
    await assert.rejects(
      stranger.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer nope' } } }),
      ),
    );
    await stranger.close().catch(() => {});
    assert.equal(await rawPost(url, { authorization: `Bearer ${gw.agentToken}` }), 200);
    const { tools } = await client!.listTools();
    assert.ok(tools.length > 0);
  });

  test('without --token a token is generated into VERITY_CONFIG_DIR with mode 0600, and reused', async () => {
    const config = join(dir, 'nested', 'verity');
    const first = await startGateway([], {
      VERITY_CONFIG_DIR: config,
      VERITY_TOKEN: undefined,
      VERITY_AGENT_TOKEN: undefined,
      VERITY_BROWSER_URL: undefined,
    });
    try {
      const file = join(config, 'token');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(readFileSync(file, 'utf8').trim(), first.token);
      assert.ok(first.token.length >= 16, 'a token of some strength');
      assert.equal(await rawPost(`${first.base}/mcp`, { authorization: 'Bearer wrong-token' }), 401);
    } finally {
      await first.close();
    }
    const second = await startGateway([], {
      VERITY_CONFIG_DIR: config,
      VERITY_TOKEN: undefined,
      VERITY_AGENT_TOKEN: undefined,
      VERITY_BROWSER_URL: undefined,
    });
    try {
      assert.equal(second.token, first.token, 'the kept token is reused');
    } finally {
      await second.close();
    }
  });
});
