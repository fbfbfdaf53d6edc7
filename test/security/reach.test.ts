// Security: the agent's reach is what the operator allowed (issue #12 item 2). Each case replays an attack
// from the issue against a real `verity start` attached to a real Chromium, with the real MCP SDK client:
// local files, browser pages and javascript: URLs by navigation; the gateway's own origin (the Control UI,
// its token in the URL) by navigation, redirect and link; uploads of host files; recordings written
// anywhere; and a tab that a redirect, a link, a frame or a history move takes to a disallowed origin.
// Each proves the refusal, that nothing leaked (the test's own CDP connection and request counters read the
// truth), and that the server is still up. Every process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { ROOT } from '../helpers/fixtures.js';
import { alive, refusalOf, startGateway, type Connection, type Gateway } from '../helpers/gateway.js';
import type { ToolResult } from '../helpers/mcp.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-reach-'));
let chrome: TestBrowser;

/**
 * The web the attacks run against: the same pages on an allowed origin (127.0.0.1) and a disallowed one
 * (127.0.0.2, same port), counting every request each origin receives.
 */
interface Site {
  port: number;
  allowed(path: string): string;
  denied(path: string): string;
  hits: Record<string, number>;
  gateway: string;
  close(): Promise<void>;
}

async function serveSite(): Promise<Site> {
  const site = { hits: {} as Record<string, number>, gateway: 'http://127.0.0.1:1' } as Site;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const host = (req.headers.host ?? '').split(':')[0];
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    site.hits[host] = (site.hits[host] ?? 0) + 1;
    const html = (body: string) =>
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><title>${path}</title><body>${body}<script>window.__ready = true</script></body>`);
    if (path === '/home')
      return html(
        `<h1>allowed home</h1><a id="away" href="${site.denied('/secret')}">away</a> <a id="gw" href="${site.gateway}/">control</a>`,
      );
    if (path === '/redirect-away') return void res.writeHead(302, { location: site.denied('/secret') }).end();
    if (path === '/redirect-gw') return void res.writeHead(302, { location: `${site.gateway}/` }).end();
    if (path === '/frame') return html(`<h1>framed</h1><iframe src="${site.denied('/secret')}"></iframe>`);
    if (path === '/secret') return html('<h1>TOP SECRET</h1>');
    if (path === '/upload.html')
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(readFileSync(join(ROOT, 'test', 'fixtures', 'upload.html')));
    res.writeHead(404).end('not found');
  };
  const servers: Server[] = [createServer(handler), createServer(handler)];
  await new Promise<void>((r) => servers[0].listen(0, '127.0.0.1', r));
  site.port = (servers[0].address() as { port: number }).port;
  await new Promise<void>((r, reject) => {
    servers[1].once('error', reject);
    servers[1].listen(site.port, '127.0.0.2', r);
  });
  site.allowed = (path) => `http://127.0.0.1:${site.port}${path}`;
  site.denied = (path) => `http://127.0.0.2:${site.port}${path}`;
  site.close = async () => {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise((r) => {
            s.closeAllConnections();
            s.close(r);
          }),
      ),
    );
  };
  return site;
}

let site: Site;
before(async () => {
  site = await serveSite();
  chrome = await sharedChromium();
});
after(async () => {
  await chrome?.close();
  await site?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The test's own handle on a tab Verity names (its CDP target id). */
async function pageOf(tabId: string): Promise<Page> {
  for (const page of await chrome.context.pages()) {
    if ((page.target() as unknown as { _targetId: string })._targetId === tabId) return page;
  }
  throw new Error(`the test browser has no tab ${tabId}`);
}

/** Whether the Control UI loaded in a page (asked again while the page is between documents). */
async function hasControlUi(page: Page): Promise<boolean> {
  for (let i = 0; ; i++) {
    try {
      return await page.evaluate(() => !!document.querySelector('verity-app') || document.title === 'Verity Control');
    } catch (e) {
      if (i >= 20 || !/context was destroyed|navigat/i.test((e as Error).message)) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function pageTargetCount(): Promise<number> {
  return (await chrome.context.pages()).length;
}

function refused(
  r: ToolResult,
  code: string,
  ...patterns: RegExp[]
): { code: string; message: string; [k: string]: unknown } {
  const refusal = refusalOf(r);
  assert.equal(refusal.code, code, r.text);
  for (const p of patterns) {
    assert.match(refusal.message, p);
    assert.match(r.text, p, 'the text item carries it too');
  }
  return refusal;
}

/** The server still answers: a plain read of the agent's own tab works. */
async function stillUp(gw: Gateway, agent: Connection): Promise<void> {
  assert.ok(alive(gw.pid), 'verity start is still running');
  const listed = await agent.call('page', { action: 'list_tabs' });
  assert.equal(listed.isError, false, listed.text);
}

describe('default reach: schemes, the gateway origin, uploads and recordings', () => {
  let gw: Gateway;
  let agent: Connection;
  const cfg = join(tmp, 'cfg-default');
  before(async () => {
    gw = await startGateway(chrome.attach, {
      VERITY_CONFIG_DIR: cfg,
      VERITY_UPLOAD_ROOTS: undefined,
      VERITY_ALLOW_URL_SCHEMES: undefined,
      VERITY_POLICY: undefined,
    });
    site.gateway = gw.base;
    agent = await gw.connect();
  });
  after(async () => {
    await gw?.close();
  });

  test('file:, chrome-ish schemes and javascript: are refused as not_permitted, naming the scheme and the option; nothing runs', async () => {
    // The issue's chain started here: navigate file://<config>/token, then get_text.
    mkdirSync(cfg, { recursive: true });
    writeFileSync(join(cfg, 'secret-note'), 'the-file-secret');
    const opened = await agent.call('page', { action: 'new_tab', url: site.allowed('/home?case=schemes') });
    assert.equal(opened.isError, false, opened.text);
    const tabId = opened.structured.tab_id as string;
    const page = await pageOf(tabId);
    await page.evaluate(() => {
      document.title = 'untouched';
    });
    for (const url of [`file://${join(cfg, 'secret-note')}`, 'file:///etc/passwd']) {
      refused(await agent.call('page', { action: 'navigate', url }), 'not_permitted', /file:/, /--allow-url-schemes/);
    }
    for (const url of [
      'chrome://version',
      'chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x.html',
      'devtools://devtools/bundled/inspector.html',
      `view-source:file://${join(cfg, 'secret-note')}`,
      'chrome-untrusted://terminal/',
    ]) {
      const refusal = refused(
        await agent.call('page', { action: 'navigate', url }),
        'not_permitted',
        /--allow-url-schemes chrome/,
      );
      assert.match(refusal.message, new RegExp(`${url.split(':')[0]}:`));
    }
    // A javascript: URL must never run code without the option, and is refused as such (not as a failed navigation).
    const js = refused(
      await agent.call('page', { action: 'navigate', url: 'javascript:document.title="pwned"' }),
      'not_permitted',
      /javascript:/,
      /--allow-url-schemes javascript/,
    );
    assert.equal(js.scheme, 'javascript');
    assert.equal(await page.title(), 'untouched', 'the javascript: URL did not run');
    assert.equal(page.url(), site.allowed('/home?case=schemes'), 'the tab stayed where it was');
    // new_tab with a refused URL opens nothing.
    const before = await pageTargetCount();
    refused(
      await agent.call('page', { action: 'new_tab', url: `file://${join(cfg, 'secret-note')}` }),
      'not_permitted',
      /file:/,
    );
    refused(
      await agent.call('page', { action: 'new_tab', url: 'javascript:alert(1)' }),
      'not_permitted',
      /javascript:/,
    );
    assert.equal(await pageTargetCount(), before, 'no tab was opened');
    const text = await agent.call('page', { action: 'get_text', tab_id: tabId });
    assert.equal(text.isError, false, text.text);
    assert.doesNotMatch(text.text, /the-file-secret/);
    await stillUp(gw, agent);
  });

  test("the issue's root-shell chain, step by step: the token file, the Control UI in the driven browser, its terminal: each refused, no shell", async () => {
    // The file the chain read: the operator credential as `verity start` keeps it in the config dir.
    mkdirSync(cfg, { recursive: true });
    writeFileSync(join(cfg, 'token'), `${gw.token}\n`, { mode: 0o600 });
    const opened = await agent.call('page', { action: 'new_tab', url: site.allowed('/home?case=chain') });
    assert.equal(opened.isError, false, opened.text);
    const tabId = opened.structured.tab_id as string;
    // 1. page navigate file://<config>/token, then get_text: refused, and nothing of the token is read.
    refused(
      await agent.call('page', { action: 'navigate', url: `file://${join(cfg, 'token')}` }),
      'not_permitted',
      /file:/,
    );
    const read = await agent.call('page', { action: 'get_text', tab_id: tabId });
    assert.equal(read.isError, false, read.text);
    assert.ok(!read.text.includes(gw.token), 'the operator credential was not read');
    // No javascript: or script detour to the file or the gateway either (scripts are off by default).
    for (const code of [`location.href = ${JSON.stringify(`${gw.base}/`)}`, 'fetch("file:///etc/hostname")']) {
      const r = await agent.call('page', { action: 'execute_javascript', tab_id: tabId, code });
      assert.equal(refusalOf(r).code, 'not_permitted', r.text);
    }
    // 2. page navigate to the Control UI with the token (had it leaked) or with the agent's own credential.
    for (const token of [gw.token, gw.agentToken]) {
      const r = await agent.call('page', { action: 'navigate', url: `${gw.base}/?token=${token}`, tab_id: tabId });
      assert.equal(refused(r, 'not_permitted', /gateway/).gateway, true);
    }
    // 3. click "Terminal", type_text "id > FILE" and Enter: there is no Control UI to click in, so no shell runs it.
    const proof = join(tmp, 'chain-id');
    await agent.call('type_text', { text: `id > ${proof}` });
    await agent.call('press_key', { key: 'Enter' });
    for (const page of await chrome.context.pages())
      assert.equal(await hasControlUi(page), false, `the Control UI loaded in ${page.url()}`);
    const shells = readdirSync('/proc')
      .filter((e) => /^\d+$/.test(e))
      .filter((e) => {
        try {
          const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
          return Number(/^\d+ \(.*\) \S (\d+)/.exec(stat)?.[1]) === gw.pid && /\((ba|z|da)?sh\)/.test(stat);
        } catch {
          return false;
        }
      });
    assert.deepEqual(shells, [], 'the gateway started no shell');
    assert.equal(existsSync(proof), false, 'the typed command never ran');
    await stillUp(gw, agent);
  });

  test('the gateway origin is never driven: every loopback spelling refused; a redirect or a link there is blocked by the browser', async () => {
    const port = new URL(gw.base).port;
    for (const url of [
      `${gw.base}/?token=${gw.token}`,
      `http://localhost:${port}/`,
      `http://[::1]:${port}/`,
      `http://127.0.0.1:${port}/mcp`,
      `http://LOCALHOST:${port}/#x`,
    ]) {
      const refusal = refused(await agent.call('page', { action: 'navigate', url }), 'not_permitted', /gateway/);
      assert.equal(refusal.gateway, true, url);
    }
    refused(await agent.call('page', { action: 'new_tab', url: `${gw.base}/` }), 'not_permitted', /gateway/);

    // A redirect from an allowed page to the gateway: the browser refuses to load it.
    const opened = await agent.call('page', { action: 'new_tab', url: site.allowed('/home?case=gw') });
    const tabId = opened.structured.tab_id as string;
    const page = await pageOf(tabId);
    const redirected = await agent.call('page', {
      action: 'navigate',
      url: site.allowed('/redirect-gw'),
      tab_id: tabId,
    });
    assert.equal(redirected.isError, true, redirected.text);
    assert.equal(redirected.structured.refusal.code, 'not_permitted', redirected.text);
    assert.equal(await hasControlUi(page), false, 'the Control UI never loaded in the driven tab');

    // A link click to the gateway: the click is delivered, the Control UI never loads, and the tab is not driven there.
    const back = await agent.call('page', {
      action: 'navigate',
      url: site.allowed('/home?case=gw-link'),
      tab_id: tabId,
    });
    assert.equal(back.isError, false, back.text);
    const snap = await agent.call('get_window_state', {
      target: { kind: 'tab', tab_id: tabId },
      include_screenshot: false,
      format: 'full',
    });
    const link = snap.structured.elements.find((e: any) => e.label === 'control');
    assert.ok(link, snap.text);
    await agent.call('click', { element_token: link.element_token });
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await hasControlUi(page), false, 'the Control UI never loaded after the click');
    const read = await agent.call('page', { action: 'get_text', tab_id: tabId });
    assert.doesNotMatch(read.text, /Verity Control|Approvals/, 'nothing of the Control UI is read back');
    await stillUp(gw, agent);
  });

  test('set_input_files with no upload root is refused naming --upload-root; the page gets no file', async () => {
    const opened = await agent.call('page', { action: 'new_tab', url: site.allowed('/upload.html?case=noroot') });
    const page = await pageOf(opened.structured.tab_id);
    const snap = await agent.call('get_window_state', { include_screenshot: false, format: 'full' });
    const input = snap.structured.elements.find((e: any) => /Attachment/.test(e.label));
    assert.ok(input, snap.text);
    refused(
      await agent.call('page', {
        action: 'set_input_files',
        element_token: input.element_token,
        paths: ['/etc/hostname'],
      }),
      'not_permitted',
      /--upload-root/,
    );
    assert.equal(
      JSON.parse((await page.evaluate('window.__model()')) as string).changes,
      0,
      'no file reached the page',
    );
    await stillUp(gw, agent);
  });

  test('recording_dir: absolute paths and .. are refused naming the field; a name records under <config dir>/recordings', async () => {
    const outside = join(tmp, 'written-anywhere');
    refused(
      await agent.call('start_session', { session: 'rec-abs', recording_dir: outside }),
      'invalid_arguments',
      /recording_dir/,
    );
    refused(
      await agent.call('start_session', { session: 'rec-up', recording_dir: '../../written-anywhere' }),
      'invalid_arguments',
      /recording_dir/,
    );
    refused(
      await agent.call('start_session', { session: 'rec-up2', recording_dir: 'a/../../b' }),
      'invalid_arguments',
      /recording_dir/,
    );
    assert.equal(existsSync(outside), false, 'nothing was written outside');
    assert.equal(existsSync(join(cfg, 'b')), false);
    const ok = await agent.call('start_session', { session: 'rec-ok', recording_dir: 'mine' });
    assert.equal(ok.isError, false, ok.text);
    assert.equal(ok.structured.recording_path, join(cfg, 'recordings', 'mine'));
    assert.ok(existsSync(join(cfg, 'recordings', 'mine', 'trajectory.jsonl')));
    await agent.call('end_session', { session: 'rec-ok' });
    await stillUp(gw, agent);
  });
});

describe('an origin policy and upload roots', () => {
  let gw: Gateway;
  let agent: Connection;
  const cfg = join(tmp, 'cfg-policy');
  const root = join(tmp, 'uploads');
  const secret = join(tmp, 'id_ed25519');
  before(async () => {
    mkdirSync(root, { recursive: true });
    writeFileSync(secret, 'PRIVATE KEY');
    writeFileSync(join(root, 'ok.txt'), 'fine to upload');
    symlinkSync(secret, join(root, 'innocent.txt'));
    writeFileSync(join(tmp, 'policy.json'), JSON.stringify({ allowed_origins: [`http://127.0.0.1:${site.port}`] }));
    gw = await startGateway(
      [...chrome.attach, '--policy', join(tmp, 'policy.json'), '--upload-root', root, '--allow-javascript'],
      { VERITY_CONFIG_DIR: cfg, VERITY_UPLOAD_ROOTS: undefined, VERITY_ALLOW_URL_SCHEMES: undefined },
    );
    site.gateway = gw.base;
    agent = await gw.connect();
  });
  after(async () => {
    await gw?.close();
  });

  const deniedHits = () => site.hits['127.0.0.2'] ?? 0;

  test('a redirect, a link click and an iframe to a disallowed origin: the browser never requests it', async () => {
    const start = deniedHits();
    const opened = await agent.call('page', { action: 'new_tab', url: site.allowed('/home?case=policy') });
    assert.equal(opened.isError, false, opened.text);
    const tabId = opened.structured.tab_id as string;
    refused(
      await agent.call('page', { action: 'navigate', url: site.denied('/secret') }),
      'not_permitted',
      /127\.0\.0\.2/,
    );
    const redirected = await agent.call('page', { action: 'navigate', url: site.allowed('/redirect-away') });
    assert.equal(refusalOf(redirected).code, 'not_permitted', redirected.text);

    const home = await agent.call('page', { action: 'navigate', url: site.allowed('/home?case=link') });
    assert.equal(home.isError, false, home.text);
    const snap = await agent.call('get_window_state', { include_screenshot: false, format: 'full' });
    const away = snap.structured.elements.find((e: any) => e.label === 'away');
    assert.ok(away, snap.text);
    await agent.call('click', { element_token: away.element_token });
    await new Promise((r) => setTimeout(r, 500));
    const read = await agent.call('page', { action: 'get_text' });
    assert.doesNotMatch(read.text, /TOP SECRET/);

    const framed = await agent.call('page', { action: 'navigate', url: site.allowed('/frame') });
    assert.equal(framed.isError, false, framed.text);
    const inFrame = await agent.call('get_window_state', { include_screenshot: false });
    assert.doesNotMatch(JSON.stringify(inFrame.structured), /TOP SECRET/);
    assert.equal(deniedHits(), start, 'the disallowed origin never received a request');
    assert.ok((await pageOf(tabId)).url().startsWith(site.allowed('')), 'the tab is on the allowed origin');
    await stillUp(gw, agent);
  });

  test('a tab whose CURRENT url is disallowed is refused for every read and action', async () => {
    // The operator's tab, opened outside Verity on the disallowed origin (as a redirect once could): no tool reaches it.
    const page = await chrome.context.newPage();
    await page.goto(site.denied('/secret?case=current'));
    const tabs = await agent.call('page', { action: 'list_tabs' });
    const tab = tabs.structured.tabs.find((t: any) => t.url === site.denied('/secret?case=current'));
    assert.ok(tab, tabs.text);
    const tabId = tab.tab_id as string;
    const calls: Array<[string, Record<string, unknown>]> = [
      ['page', { action: 'get_text', tab_id: tabId }],
      ['page', { action: 'query_dom', tab_id: tabId, css_selector: 'h1' }],
      ['page', { action: 'screenshot', tab_id: tabId }],
      ['page', { action: 'wait_for', tab_id: tabId, text: 'SECRET', timeout_ms: 100 }],
      ['page', { action: 'select_tab', tab_id: tabId }],
      ['page', { action: 'reload', tab_id: tabId }],
      ['page', { action: 'back', tab_id: tabId }],
      ['page', { action: 'forward', tab_id: tabId }],
      ['page', { action: 'handle_dialog', tab_id: tabId, accept: true }],
      ['page', { action: 'execute_javascript', tab_id: tabId, code: 'document.body.innerText' }],
      ['get_window_state', { target: { kind: 'tab', tab_id: tabId } }],
      ['click', { target: { kind: 'tab', tab_id: tabId }, x: 10, y: 10 }],
      ['type_text', { target: { kind: 'tab', tab_id: tabId }, text: 'x' }],
      ['press_key', { target: { kind: 'tab', tab_id: tabId }, key: 'Tab' }],
      ['scroll', { target: { kind: 'tab', tab_id: tabId }, direction: 'down' }],
    ];
    for (const [tool, args] of calls) {
      const r = await agent.call(tool, args);
      const refusal = refusalOf(r);
      assert.equal(refusal.code, 'not_permitted', `${tool} ${JSON.stringify(args)}: ${r.text}`);
      assert.doesNotMatch(r.text, /TOP SECRET/);
    }
    // Leaving is allowed: navigate it to an allowed page.
    const left = await agent.call('page', { action: 'navigate', tab_id: tabId, url: site.allowed('/home?case=left') });
    assert.equal(left.isError, false, left.text);
    // A history move back onto the disallowed page is refused as well, and reads nothing of it.
    const backed = await agent.call('page', { action: 'back', tab_id: tabId });
    assert.equal(backed.isError, true, backed.text);
    assert.doesNotMatch(backed.text, /TOP SECRET/);
    const after = await agent.call('page', { action: 'get_text', tab_id: tabId });
    assert.doesNotMatch(after.text, /TOP SECRET/);
    await page.close().catch(() => {});
    await stillUp(gw, agent);
  });

  test('set_input_files reads only under --upload-root: outside, a symlink out, and a missing file are refused; the page gets nothing', async () => {
    const opened = await agent.call('page', { action: 'new_tab', url: site.allowed('/upload.html?case=roots') });
    const page = await pageOf(opened.structured.tab_id);
    const token = async () => {
      const snap = await agent.call('get_window_state', { include_screenshot: false, format: 'full' });
      return snap.structured.elements.find((e: any) => /Attachment/.test(e.label)).element_token as string;
    };
    const model = async () => JSON.parse((await page.evaluate('window.__model()')) as string);
    refused(
      await agent.call('page', { action: 'set_input_files', element_token: await token(), paths: [secret] }),
      'not_permitted',
      /upload root/,
      /paths\[0\]/,
    );
    refused(
      await agent.call('page', {
        action: 'set_input_files',
        element_token: await token(),
        paths: [join(root, 'innocent.txt')],
      }),
      'not_permitted',
      /symlink/,
    );
    refused(
      await agent.call('page', {
        action: 'set_input_files',
        element_token: await token(),
        paths: [join(root, 'ok.txt'), join(root, '..', 'id_ed25519')],
      }),
      'not_permitted',
      /paths\[1\]/,
    );
    // The issue: a nonexistent path was reported confirmed.
    refused(
      await agent.call('page', {
        action: 'set_input_files',
        element_token: await token(),
        paths: [join(root, 'missing.txt')],
      }),
      'invalid_arguments',
      /paths\[0\]/,
      /does not exist/,
    );
    assert.equal((await model()).changes, 0, 'no file reached the page');
    // The honest case still works: a file under the root, confirmed by what the page holds.
    const ok = await agent.call('page', { action: 'set_input_files', element_token: await token(), paths: ['ok.txt'] });
    assert.equal(ok.structured.effect, 'confirmed', ok.text);
    await page.waitForFunction('JSON.parse(window.__model()).text !== null');
    assert.equal((await model()).text, 'fine to upload');
    await stillUp(gw, agent);
  });
});

describe('a blocked_origins policy (no allow-list)', () => {
  let gw: Gateway;
  let agent: Connection;
  before(async () => {
    writeFileSync(join(tmp, 'blocked.json'), JSON.stringify({ blocked_origins: [`http://127.0.0.2:${site.port}`] }));
    gw = await startGateway([...chrome.attach, '--policy', join(tmp, 'blocked.json')], {
      VERITY_CONFIG_DIR: join(tmp, 'cfg-blocked'),
      VERITY_ALLOW_URL_SCHEMES: undefined,
    });
    site.gateway = gw.base;
    agent = await gw.connect();
  });
  after(async () => {
    await gw?.close();
  });

  test('the blocked origin is refused by URL, after a redirect and a link click, and on a tab already there', async () => {
    const start = site.hits['127.0.0.2'] ?? 0;
    const opened = await agent.call('page', { action: 'new_tab', url: site.allowed('/home?case=blocked') });
    assert.equal(opened.isError, false, opened.text);
    refused(
      await agent.call('page', { action: 'navigate', url: site.denied('/secret') }),
      'not_permitted',
      /127\.0\.0\.2/,
    );
    const redirected = await agent.call('page', { action: 'navigate', url: site.allowed('/redirect-away') });
    assert.equal(refusalOf(redirected).code, 'not_permitted', redirected.text);
    await agent.call('page', { action: 'navigate', url: site.allowed('/home?case=blocked-link') });
    const snap = await agent.call('get_window_state', { include_screenshot: false, format: 'full' });
    const away = snap.structured.elements.find((e: any) => e.label === 'away');
    assert.ok(away, snap.text);
    await agent.call('click', { element_token: away.element_token });
    // The page's own read-back after the click: still the allowed page, nothing of the blocked one.
    const read = await agent.call('page', { action: 'get_text' });
    assert.doesNotMatch(read.text, /TOP SECRET/);
    assert.equal(site.hits['127.0.0.2'] ?? 0, start, 'the blocked origin never received a request');

    // A tab the operator opened there: listed, but every read is refused.
    const page = await chrome.context.newPage();
    await page.goto(site.denied('/secret?case=blocked-current'));
    const tabs = await agent.call('page', { action: 'list_tabs' });
    const tab = tabs.structured.tabs.find((t: any) => t.url === site.denied('/secret?case=blocked-current'));
    assert.ok(tab, tabs.text);
    for (const args of [
      { action: 'get_text', tab_id: tab.tab_id },
      { action: 'query_dom', tab_id: tab.tab_id, css_selector: 'h1' },
      { action: 'screenshot', tab_id: tab.tab_id },
    ]) {
      const r = await agent.call('page', args);
      assert.equal(refusalOf(r).code, 'not_permitted', `${args.action}: ${r.text}`);
      assert.doesNotMatch(r.text, /TOP SECRET/);
    }
    await page.close().catch(() => {});
    await stillUp(gw, agent);
  });
});
