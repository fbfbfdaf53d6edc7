// Browser options on a real Chromium: --channel chromium found on PATH, --viewport, --browser-arg,
// --proxy-server, --ignore-https-errors (each checked against a browser launched without it), and the
// refusal that names every place looked when no browser is found. Every process started here is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { killPid, refusalOf } from '../helpers/gateway.js';

const PAGE = (script: string) =>
  `<!doctype html><title>probe</title><body><script>document.body.textContent = ${script};</script></body>`;

/** A self-signed certificate made by openssl, or null (then the https case is skipped, saying why). */
function selfSigned(): { key: Buffer; cert: Buffer } | null {
  const dir = mkdtempSync(join(tmpdir(), 'verity-tls-'));
  try {
    const r = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    if (r.status !== 0) return null;
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const tls = selfSigned();
const servers: Server[] = [];
async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

async function textOf(v: Verity, url: string): Promise<string> {
  const opened = await v.call('page', { action: 'new_tab', url });
  if (opened.isError) return `(not opened: ${opened.text})`;
  const r = await v.call('page', { action: 'get_text', tab_id: opened.structured.tab_id });
  return r.isError ? `(no text: ${r.text})` : r.text;
}

describe('browser options', () => {
  let plain: string;
  let https: string;
  let proxyPort: number;
  let withOptions: Verity;
  let without: Verity;
  const launchEnv = { VERITY_CHROMIUM: '', PATH: '/usr/local/bin:/usr/bin:/bin' };

  before(async () => {
    plain = `http://127.0.0.1:${await listen(
      createServer((req, res) => {
        res.setHeader('content-type', 'text/html');
        res.end(req.url === '/ua' ? PAGE('navigator.userAgent') : PAGE(`innerWidth + 'x' + innerHeight`));
      }),
    )}`;
    if (tls)
      https = `https://127.0.0.1:${await listen(
        createHttpsServer(tls, (_req, res) => {
          res.setHeader('content-type', 'text/html');
          res.end('<p>secure hello</p>');
        }) as unknown as Server,
      )}/`;
    // A forward proxy: answers any absolute-URI request itself, so a name that resolves nowhere still loads through it.
    proxyPort = await listen(
      createServer((req, res) => {
        res.setHeader('content-type', 'text/html');
        res.end(`<p>via proxy: ${req.url}</p>`);
      }),
    );
    withOptions = await startVerity(
      [
        '--channel',
        'chromium',
        '--viewport',
        '800x600',
        '--browser-arg',
        '--user-agent=VerityProbe/1.0',
        '--proxy-server',
        `http://127.0.0.1:${proxyPort}`,
        '--ignore-https-errors',
      ],
      launchEnv,
    );
    without = await startVerity([], launchEnv);
  });
  after(async () => {
    for (const v of [withOptions, without])
      if (v) {
        await v.close();
        killPid(v.pid);
      }
    for (const s of servers) await new Promise((r) => s.close(r));
  });

  test('--channel chromium finds the browser on PATH', async () => {
    assert.match(await textOf(withOptions, `${plain}/size`), /\d+x\d+/);
    assert.match(withOptions.stderr(), /launching \S*\/chromium[\w-]* \(headless\)/);
  });

  test("--viewport WxH sets every driven page's viewport", async () => {
    assert.match(await textOf(withOptions, `${plain}/size`), /\b800x600\b/);
    assert.doesNotMatch(await textOf(without, `${plain}/size`), /\b800x600\b/);
  });

  test('--browser-arg passes a flag through to Chromium', async () => {
    assert.match(await textOf(withOptions, `${plain}/ua`), /VerityProbe\/1\.0/);
    assert.doesNotMatch(await textOf(without, `${plain}/ua`), /VerityProbe/);
  });

  test('--proxy-server sends page loads through the proxy', async () => {
    assert.match(
      await textOf(withOptions, 'http://verity-proxied.test/page'),
      /via proxy: http:\/\/verity-proxied\.test\/page/,
    );
    assert.doesNotMatch(await textOf(without, 'http://verity-proxied.test/page'), /via proxy/);
  });

  test('--ignore-https-errors loads a self-signed https page', {
    skip: tls ? false : 'openssl not found: cannot make a self-signed certificate',
  }, async () => {
    assert.match(await textOf(withOptions, https), /secure hello/);
    assert.doesNotMatch(await textOf(without, https), /secure hello/);
  });
});

describe('no browser found', () => {
  const started: Verity[] = [];
  after(async () => {
    for (const v of started) {
      await v.close();
      killPid(v.pid);
    }
  });

  test('the refusal names every place it looked', async () => {
    const v = await startVerity([], { VERITY_CHROMIUM: '', PATH: '' });
    started.push(v);
    const r = await v.call('page', { action: 'new_tab' });
    const refusal = refusalOf(r);
    assert.equal(refusal.code, 'unavailable', r.text);
    for (const place of [
      'chromium, chromium-browser',
      'google-chrome',
      'PATH (empty)',
      '/snap/bin/chromium',
      '/opt/google/chrome/chrome',
      '/opt/google/chrome-beta/chrome',
      '/opt/microsoft/msedge/msedge',
      '--chromium PATH',
      '--channel NAME',
    ]) {
      assert.ok(refusal.message.includes(place), `${place} in: ${refusal.message}`);
    }
    assert.equal(
      (await v.call('page', { action: 'list_tabs' })).isError,
      true,
      'still refused, and the server still answers',
    );
  });

  test('a browser that fails to start is refused naming it, and the server still answers', async () => {
    const v = await startVerity(['--chromium', '/bin/false']);
    started.push(v);
    const refusal = refusalOf(await v.call('page', { action: 'new_tab' }));
    assert.equal(refusal.code, 'unavailable');
    assert.match(refusal.message, /^could not launch \/bin\/false: /);
    assert.ok((await v.client.listTools()).tools.length > 0, 'the server still answers');
  });

  test("with --channel, only that channel's places", async () => {
    const v = await startVerity(['--channel', 'msedge'], { VERITY_CHROMIUM: '', PATH: '/nonexistent' });
    started.push(v);
    const refusal = refusalOf(await v.call('page', { action: 'new_tab' }));
    assert.match(
      refusal.message,
      /^no msedge browser found: looked on PATH \(\/nonexistent\) for microsoft-edge, microsoft-edge-stable; at \/opt\/microsoft\/msedge\/msedge\./,
    );
  });
});
