// Security: the operator credential is never in web storage (issue #22 item 4), in a real Chromium against a
// real `verity start`. The attack: the Control UI kept the credential in localStorage for
// 127.0.0.1:<port>, so a local process that binds that port while the gateway is down read it the next time
// the operator opened the console (a bookmark, or a reload). Here: after load no credential is in
// localStorage, sessionStorage, cookies or the address bar; a stale one an older version left in
// localStorage is deleted; a reload reconnects (with a single-use resume ticket); and a "squatter" HTTP
// server on the port, while the gateway is down, serves a page that reads every kind of storage and sees
// every request's headers, and speaks the gateway protocol to the open page that reconnects to it (the
// page proves the credential with an HMAC of a nonce, never sends it): it learns neither credential, and
// whatever it did get (the ticket, a proof) is refused by the gateway once it is back. Every process is
// ended by its PID.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'puppeteer-core';
import WebSocket, { WebSocketServer } from 'ws';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { sleep, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';
import { connectParams, openSocket } from './wire.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-credstore-'));
const env = { VERITY_CONFIG_DIR: tmp };
let chrome: TestBrowser;
let gw: Gateway | undefined;
let squatter: Server | undefined;
let context: BrowserContext;
let port: number;
before(async () => {
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  chrome = await sharedChromium();
  context = chrome.context;
});
after(async () => {
  await new Promise((r) => (squatter ? squatter.close(r) : r(null)));
  await gw?.close();
  await chrome?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Everything a script of this origin can read: both storages, cookies, window.name, the address. */
const READ_ALL = `({
  local: Object.fromEntries(Object.keys(localStorage).map((k) => [k, localStorage.getItem(k)])),
  session: Object.fromEntries(Object.keys(sessionStorage).map((k) => [k, sessionStorage.getItem(k)])),
  cookie: document.cookie,
  name: window.name,
  url: location.href,
})`;

type Seen = {
  local: Record<string, string>;
  session: Record<string, string>;
  cookie: string;
  name: string;
  url: string;
};
const readAll = (page: Page) => page.evaluate(READ_ALL) as Promise<Seen>;

/** The credentials of the gateway under test (the same across its restart: they come from its config dir). */
const credentials = { operator: '', agent: '' };
function assertNoCredential(what: string, seen: unknown): void {
  const text = JSON.stringify(seen);
  assert.ok(!text.includes(credentials.operator), `${what} holds the operator credential: ${text}`);
  assert.ok(!text.includes(credentials.agent), `${what} holds the agent credential: ${text}`);
}

let page: Page;
let readByTheUi: Seen;

test('after load: no credential in localStorage, sessionStorage, cookies or the URL; a stale one is deleted', async () => {
  gw = await startGateway(['--port', String(port)], env);
  Object.assign(credentials, { operator: gw.token, agent: gw.agentToken });
  page = await context.newPage();
  // An older version's Control UI left the credential in localStorage for this origin.
  await page.goto(`${gw.base}/no-such-page`);
  await page.evaluate((t) => localStorage.setItem('verity.token', t), gw.token);
  await page.goto(`${gw.base}/?token=${gw.token}`);
  await page.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });
  const seen = await readAll(page);
  assert.equal(seen.local['verity.token'], undefined, 'the stale credential is deleted');
  assert.equal(seen.url, `${gw.base}/`, 'the token is dropped from the address bar');
  assertNoCredential('the page', seen);
});

test('a reload reconnects (a single-use ticket), still with no credential stored', async () => {
  const before = (await readAll(page)).session['verity.resume'];
  assert.ok(before?.startsWith('resume.'), 'the tab holds a resume ticket');
  await page.reload();
  await page.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });
  readByTheUi = await readAll(page);
  assertNoCredential('the reloaded page', readByTheUi);
  assert.notEqual(readByTheUi.session['verity.resume'], before, 'the used ticket was replaced');
  // The used ticket is spent: presented again, it is refused.
  const sock = await openSocket(gw!);
  const reply = await sock.request('connect', connectParams(before));
  assert.equal(reply?.ok, false, JSON.stringify(reply));
  assert.equal(reply.error.code, 'UNAUTHORIZED');
  sock.ws.close();
});

/** Opens `/gateway?challenge=1` and returns its nonce and a connect that answers with `token`. */
async function challenged(): Promise<{ nonce: string; connect(token: string): Promise<any>; close(): void }> {
  const ws = new WebSocket(`${gw!.base.replace('http', 'ws')}/gateway?challenge=1`);
  const frames: any[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(String(d))));
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const first = await waitFor(() => frames[0], 'the challenge');
  assert.deepEqual(Object.keys(first.payload), ['nonce']);
  assert.equal(first.event, 'connect.challenge');
  return {
    nonce: first.payload.nonce,
    async connect(token) {
      ws.send(JSON.stringify({ type: 'req', id: 1, method: 'connect', params: connectParams(token) }));
      return waitFor(() => frames.find((f) => f.type === 'res' && f.id === 1), 'the connect answer');
    },
    close: () => ws.close(),
  };
}
const proofOf = (credential: string, nonce: string) =>
  `proof.${createHmac('sha256', credential).update(nonce).digest('hex')}`;

test("a challenged connect takes the proof for its own nonce only: another connection's proof or a wrong one is refused", async () => {
  const first = await challenged();
  const proof = proofOf(credentials.operator, first.nonce);
  assert.equal((await first.connect(proof)).ok, true);
  first.close();
  for (const token of [proof, proofOf('not-the-credential', 'x'), 'proof.00']) {
    const other = await challenged();
    const reply = await other.connect(token);
    assert.equal(reply.ok, false, token);
    assert.equal(reply.error.code, 'UNAUTHORIZED');
    other.close();
  }
});

test('a squatter on the port while the gateway is down learns nothing, and what it read opens nothing later', async () => {
  assert.equal(await gw!.stop(), 0);
  gw = undefined;
  const reports: Seen[] = [];
  const headers: string[] = [];
  const squat = createServer((req, res) => {
    headers.push(JSON.stringify(req.headers));
    if (req.method === 'POST' && req.url === '/report') {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        reports.push(JSON.parse(body));
        res.end('ok');
      });
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<title>squatter</title><script>fetch('/report', {method: 'POST', body: JSON.stringify(${READ_ALL})})</script>`,
      );
  });
  squatter = squat;
  // The squatter speaks the gateway protocol to the page that reconnects: a challenge, then it reads the connect.
  const frames: string[] = [];
  const wss = new WebSocketServer({ server: squat });
  wss.on('connection', (ws) => {
    ws.send(
      JSON.stringify({ type: 'event', event: 'connect.challenge', payload: { nonce: 'squatter-nonce' }, seq: 0 }),
    );
    ws.on('message', (d) => frames.push(String(d)));
  });
  // The port was the gateway's a moment ago: bind it as soon as it is free (bounded).
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        squat.once('error', () => resolve(false));
        squat.listen(port, '127.0.0.1', () => resolve(true));
      }),
    'the squatter bound the port',
    50,
    100,
  );
  // The open page reconnects to whatever answers on the port: it proves, it does not send the credential.
  await waitFor(() => frames.some((f) => f.includes('"connect"')), "the open page's reconnect", 300, 100);
  assertNoCredential('what the open page sent the squatter', frames);
  // The operator reloads the open tab, and opens the bookmark (the address bar after load) in a new tab.
  await page.reload();
  const bookmark = await context.newPage();
  await bookmark.goto(`http://127.0.0.1:${port}/`);
  await waitFor(() => reports.length >= 2, 'both squatter pages reported', 100, 100);
  for (const r of reports) assertNoCredential('what the squatter page read', r);
  assertNoCredential("the squatter's request headers", headers);
  await bookmark.close();
  for (const client of wss.clients) client.terminate();
  wss.close();
  await new Promise((r) => squat.close(r));
  squatter = undefined;

  // The gateway is back on its port (same credentials): whatever the squatter read is refused as a credential.
  await sleep(200);
  gw = await startGateway(['--port', String(port)], env);
  const candidates = new Set<string>();
  for (const r of reports) for (const v of [...Object.values(r.local), ...Object.values(r.session)]) candidates.add(v);
  for (const f of frames) {
    const token = JSON.parse(f).params?.auth?.token;
    if (typeof token === 'string') candidates.add(token);
  }
  assert.ok(candidates.size > 0, 'the squatter read the tab storage (the ticket)');
  for (const token of candidates) {
    const sock = await openSocket(gw);
    const reply = await sock.request('connect', connectParams(token));
    assert.equal(reply?.ok, false, `${token} opened the gateway: ${JSON.stringify(reply)}`);
    sock.ws.close();
  }
  // The operator opens the printed URL again and is connected.
  const again = await context.newPage();
  await again.goto(`${gw.base}/?token=${gw.token}`);
  await again.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });
  assertNoCredential('the page', await readAll(again));
  await again.close();
  await page.close();
});
