// In-process unit tests of the gateway's parts that decide without a browser: who may talk (auth.ts: the
// Host and Origin allow-lists built from the configuration, /mcp's credential) and the HTTP route table
// (http-routes.ts: a path's row, the catch-all, 405 naming the methods a route answers), the latter over a
// real loopback HTTP server.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayAuth } from '../../server/gateway/auth.js';
import { EXTENSION_ID } from '../../server/gateway/extension-id.js';
import { type HttpRoute, methodAllowed, routeOf } from '../../server/gateway/http-routes.js';
import { Pairings } from '../../server/gateway/origins.js';
import { configDir, setConfigDir } from '../../server/token.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-unit-gwparts-'));
const saved = configDir();
setConfigDir(dir);
after(() => {
  setConfigDir(saved);
  rmSync(dir, { recursive: true, force: true });
});

const credentials = { operatorToken: 'operator-secret', agentToken: 'agent-secret' };
/** A request as the checks read it: only its headers matter to them. */
const request = (headers: IncomingMessage['headers']) => ({ headers }) as IncomingMessage;

test('auth: the Host allow-list is the loopback names on the port and --allowed-hosts, never a Host header', () => {
  const auth = new GatewayAuth(credentials, new Pairings());
  auth.fixNames('127.0.0.1', 4100, [' Box.LAN ', '']);
  for (const host of ['127.0.0.1:4100', 'localhost:4100', '[::1]:4100', 'LOCALHOST:4100', 'box.lan', 'box.lan:4100'])
    assert.equal(auth.hostAllowed(request({ host })), true, host);
  for (const host of ['127.0.0.1:4101', 'evil.example', 'evil.example:4100', ''])
    assert.equal(auth.hostAllowed(request({ host })), false, host);
  assert.equal(auth.hostAllowed(request({})), false, 'no Host at all');
  assert.match(auth.hostRefusal(request({ host: 'evil.example' })), /"evil\.example".*http:\/\/127\.0\.0\.1:4100\//);
});

test('auth: a browser origin must be ours, or the extension while it is paired; no Origin passes on the credential', () => {
  const pairings = new Pairings();
  const auth = new GatewayAuth(credentials, pairings);
  auth.fixNames('0.0.0.0', 4100, ['box.lan']);
  const extension = `chrome-extension://${EXTENSION_ID}`;
  assert.equal(auth.originAllowed(request({})), true);
  for (const origin of ['http://127.0.0.1:4100', 'http://LOCALHOST:4100', 'https://box.lan', 'http://box.lan:4100'])
    assert.equal(auth.originAllowed(request({ origin })), true, origin);
  for (const origin of ['http://127.0.0.1:4101', 'http://0.0.0.0:4100', 'https://evil.example', 'null', extension])
    assert.equal(auth.originAllowed(request({ origin })), false, origin);
  const made = pairings.add(extension);
  assert.ok(made);
  assert.equal(auth.originAllowed(request({ origin: extension })), true, 'paired');
  pairings.remove(made.pairing.id);
  assert.equal(auth.originAllowed(request({ origin: extension })), false, 'unpaired again');
});

test("auth: /mcp takes the agent credential only, and says so when given the operator's", () => {
  const auth = new GatewayAuth(credentials, new Pairings());
  assert.equal(auth.mcpRefusal(request({ authorization: 'Bearer agent-secret' })), null);
  assert.match(auth.mcpRefusal(request({ authorization: 'Bearer operator-secret' })) ?? '', /operator credential/);
  for (const authorization of [undefined, 'Bearer ', 'agent-secret', 'Bearer wrong'])
    assert.match(
      auth.mcpRefusal(request({ authorization })) ?? '',
      /missing or wrong credential/,
      String(authorization),
    );
  assert.equal(auth.isOperator('operator-secret'), true);
  assert.equal(auth.isOperator('agent-secret'), false);
});

test('routes: a path finds its row, else the catch-all; a method it does not answer is refused 405 naming the ones it does', async () => {
  const routes: HttpRoute[] = [
    { path: '/only-get', methods: ['GET'], originChecked: true, handle: (_q, res) => res.end('only-get') },
    { path: '/any', methods: null, originChecked: false, handle: (req, res) => res.end(`any ${req.method}`) },
    {
      path: null,
      methods: ['GET', 'HEAD'],
      originChecked: true,
      handle: (_q, res, url) => res.end(`files ${url.pathname}`),
    },
  ];
  assert.equal(routeOf(routes, '/only-get')?.path, '/only-get');
  assert.equal(routeOf(routes, '/only-get/')?.path, null, 'exact paths only');
  assert.equal(routeOf(routes.slice(0, 2), '/elsewhere'), undefined, 'no catch-all: no row');
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const route = routeOf(routes, url.pathname);
    if (route && methodAllowed(route, req, res, url.pathname)) route.handle(req, res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ask = async (path: string, method: string) => {
      const res = await fetch(base + path, { method });
      return { status: res.status, allow: res.headers.get('allow'), text: await res.text() };
    };
    assert.deepEqual(await ask('/only-get', 'GET'), { status: 200, allow: null, text: 'only-get' });
    const refused = await ask('/only-get', 'POST');
    assert.equal(refused.status, 405);
    assert.equal(refused.allow, 'GET');
    assert.match(refused.text, /POST is not answered at \/only-get: it answers GET/);
    assert.deepEqual(await ask('/any', 'DELETE'), { status: 200, allow: null, text: 'any DELETE' });
    assert.deepEqual(await ask('/some/ui/route', 'GET'), { status: 200, allow: null, text: 'files /some/ui/route' });
    assert.equal((await ask('/some/ui/route', 'PUT')).status, 405);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
