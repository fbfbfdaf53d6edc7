// Shutdown and restart of `verity start` without the extension: on SIGTERM it stops accepting, closes
// kept-alive sockets (and a WebSocket client that reads nothing), closes its Chromium, and exits; started
// again on the same port, an agent that connects at once keeps its MCP session across calls. Every process
// is ended by its PID.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { get, Agent } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import WebSocket from 'ws';
import { alive, killPid, sleep, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';

const started: Gateway[] = [];
const chromiums: number[] = [];
after(async () => {
  for (const gw of started) await gw.close();
  for (const pid of chromiums) killPid(pid);
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const p = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return p;
}

/** The Chromium browser process(es) the gateway launched: its direct children named chrom*. */
function chromiumChildren(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const m = /^\d+ \((.*)\) \S (\d+)/.exec(stat);
      if (m && Number(m[2]) === pid && /chrom/i.test(m[1])) found.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

const port = await freePort();

test('SIGTERM with an idle keep-alive HTTP client and a WebSocket reader that reads nothing: the gateway exits, its Chromium is gone, the sockets are closed', async () => {
  const gw = await startGateway(['--port', String(port)]);
  started.push(gw);
  const agent = await gw.connect();
  const listed = await agent.call('page', { action: 'list_tabs' });
  assert.equal(listed.isError, false, listed.text);
  const chromium = await waitFor(() => chromiumChildren(gw.pid)[0], 'the launched Chromium');
  chromiums.push(chromium);

  // An idle kept-alive HTTP connection (a finished request, the socket left open in the agent's pool).
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
  const socketClosed = new Promise<void>((resolve) => {
    const req = get(`${gw.base}/`, { agent: keepAlive }, (res) => {
      res.resume();
    });
    req.once('socket', (s) => s.once('close', () => resolve()));
  });
  await waitFor(() => Object.keys(keepAlive.freeSockets).length > 0, 'the kept-alive socket idle in the pool');

  // A gateway client that stops reading.
  const ws = new WebSocket(gw.base.replace('http', 'ws') + '/gateway');
  await new Promise((r) => ws.once('open', r));
  ws.send(
    JSON.stringify({
      type: 'req',
      id: 1,
      method: 'connect',
      params: {
        client: { id: 'restart-test', version: '1', mode: 'test' },
        caps: [],
        role: 'operator',
        scopes: ['operator.read'],
        auth: { token: gw.token },
      },
    }),
  );
  await new Promise((r) => ws.once('message', r));
  (ws as unknown as { _socket: import('node:net').Socket })._socket.pause();

  // SIGTERM, then up to 15 s (null: it had to be killed). Exit code 0: not the shutdown watchdog's 1. Before,
  // the close handshake with the silent reader held the exit for ws's 30 s close timeout.
  const code = await gw.stop();
  assert.equal(code, 0, `the gateway exited on SIGTERM by itself (stderr: ${gw.stderr()})`);
  await waitFor(() => !alive(chromium), 'its Chromium gone', 50, 100);
  await Promise.race([
    socketClosed,
    sleep(5000).then(() => {
      throw new Error('the kept-alive socket was not closed');
    }),
  ]);
  ws.terminate();
  keepAlive.destroy();
});

test('started again on the same port, an agent that connects at once keeps its MCP session over several calls', async () => {
  const gw = await startGateway(['--port', String(port)]);
  started.push(gw);
  const agent = await gw.connect();
  for (let i = 0; i < 5; i++) {
    const r = await agent.call('page', { action: 'list_tabs' });
    assert.equal(r.isError, false, r.text);
  }
  const s = await agent.call('start_session', { session: 'after-restart' });
  assert.equal(s.isError, false, s.text);
  const again = await agent.call('list_sessions', {});
  assert.equal(again.isError, false, again.text);
  for (const pid of chromiumChildren(gw.pid)) chromiums.push(pid);
  const code = await gw.stop();
  assert.equal(code, 0);
});
