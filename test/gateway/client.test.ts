// The one gateway client (control-ui/src/gateway.ts, which the Control UI and the extension both use)
// against a real `verity start`, from Node with `ws` as its WebSocket: the handshake, requests typed by
// the protocol whose answers on the wire match the protocol's result schemas (strict: no field the
// protocol does not declare), events matching theirs, the bound on requests waiting for an answer, and
// a refused credential that is not retried. Every process is ended by its PID.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import {
  GatewayClient,
  type GatewayRequestError,
  type ConnState,
  type GatewayOptions,
} from '../../control-ui/src/gateway.js';
import { EVENT_SCHEMAS, METHOD_SCHEMAS, helloOk } from '../../server/gateway/protocol.js';
import { startGateway, waitFor, type Gateway } from '../helpers/gateway.js';

let gw: Gateway;
const clients: GatewayClient[] = [];
before(async () => {
  gw = await startGateway([]);
});
after(async () => {
  for (const c of clients) c.stop();
  await gw?.close();
});

function client(options: Partial<GatewayOptions> = {}): GatewayClient {
  const c = new GatewayClient({
    url: gw.base.replace('http', 'ws') + '/gateway',
    token: gw.token,
    caps: ['ui-commands'],
    scopes: ['operator.read', 'operator.write', 'operator.admin', 'operator.approvals'],
    clientId: 'client-test',
    WebSocket: WebSocket as unknown as GatewayOptions['WebSocket'],
    ...options,
  });
  clients.push(c);
  return c;
}

const connected = async (c: GatewayClient) => {
  c.start();
  await waitFor(() => c.state === 'connected' || c.state === 'unauthorized', 'the client connected');
  assert.equal(c.state, 'connected', c.lastError);
};

test("hello-ok and the answers of the read methods match the protocol's schemas, strictly", async () => {
  const c = client();
  await connected(c);
  helloOk.parse(c.hello);
  assert.ok(c.hello!.methods.includes('pairings.list'));
  METHOD_SCHEMAS['sessions.list'].result.parse(await c.request('sessions.list'));
  METHOD_SCHEMAS['actions.list'].result.parse(await c.request('actions.list', {}));
  METHOD_SCHEMAS['approvals.list'].result.parse(await c.request('approvals.list'));
  METHOD_SCHEMAS['pairings.list'].result.parse(await c.request('pairings.list'));
  METHOD_SCHEMAS['browser.tabs'].result.parse(await c.request('browser.tabs'));
  const link = METHOD_SCHEMAS['agent.link'].result.parse(await c.request('agent.link'));
  assert.match(link.mcp_url, /\/mcp$/);
});

test('events match their schemas: sessions.changed (a delta) for a real MCP session', async () => {
  const c = client();
  await connected(c);
  const deltas: unknown[] = [];
  c.on('sessions.changed', (delta) => deltas.push(delta));
  const agent = await gw.connect();
  try {
    await agent.call('start_session', { session: 'client-test' });
    await waitFor(() => deltas.length > 0, 'a sessions.changed event');
    for (const d of deltas) EVENT_SCHEMAS['sessions.changed'].payload.parse(d);
    const sessions = METHOD_SCHEMAS['sessions.list'].result.parse(await c.request('sessions.list'));
    assert.ok(
      sessions.sessions.some((s) => s.session === 'client-test'),
      JSON.stringify(sessions),
    );
  } finally {
    await agent.disconnect();
  }
});

test('a gateway refusal carries its code; bad params are refused naming the field', async () => {
  const c = client();
  await connected(c);
  await assert.rejects(
    c.request('approvals.resolve', { id: 'ap-none', approve: true }),
    (e: GatewayRequestError) => e.code === 'NOT_FOUND',
  );
  await assert.rejects(
    c.request('terminal.resize', { terminalId: 't', cols: 1, rows: 10 }),
    (e: GatewayRequestError) => e.code === 'INVALID_REQUEST' && /cols/.test(e.message),
  );
});

test('requests waiting for an answer are bounded: one more is refused by name, the others are answered', async () => {
  const c = client({ maxPending: 2 });
  await connected(c);
  const first = c.request('sessions.list');
  const second = c.request('browser.tabs');
  await assert.rejects(
    c.request('actions.list'),
    (e: GatewayRequestError) => e.code === 'TOO_MANY_PENDING' && /2 requests are already waiting/.test(e.message),
  );
  await first;
  await second;
  await c.request('actions.list'); // room again once answered
});

test('a refused credential is not retried: the client says unauthorized and stops', async () => {
  const c = client({ token: 'not-the-token' });
  const states: ConnState[] = [];
  c.addEventListener('state', (e) => states.push((e as CustomEvent<{ state: ConnState }>).detail.state));
  c.start();
  await waitFor(() => c.state === 'unauthorized', 'the refusal');
  assert.match(c.lastError, /wrong gateway token/);
  assert.equal(c.running, false);
  await new Promise((r) => setTimeout(r, 1_000)); // longer than the first back-off step: no retry follows
  assert.deepEqual(states, ['connecting', 'unauthorized']);
  await assert.rejects(c.request('sessions.list'), (e: GatewayRequestError) => e.code === 'NOT_CONNECTED');
});
