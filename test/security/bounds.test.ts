// Bounded memory under any client, against a real `verity start`: a gateway reader that stops reading is
// closed with 4010 and a reason; session-list changes go out as small debounced deltas; every table a
// client grows has a cap refused with a named code (session labels per connection, sessions in all,
// pending approvals, gateway connections, agent links, HTTP MCP sessions); links expire; abandoned HTTP
// MCP sessions are closed when their sessions idle out and leave no entries behind. Each gateway runs
// with small bounds (env) so they are reached quickly. Every process is ended by its PID.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { operatorSocket, refusalOf, sleep, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';

const gateways: Gateway[] = [];
const dirs: string[] = [];
after(async () => {
  for (const gw of gateways) await gw.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function gateway(env: Record<string, string>, args: string[] = []): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'verity-bounds-'));
  dirs.push(dir);
  const gw = await startGateway(args, { VERITY_CONFIG_DIR: dir, ...env });
  gateways.push(gw);
  return gw;
}

/** The server is still up and answering: a fresh agent's call and a fresh reader's sessions.list. */
async function stillUp(gw: Gateway): Promise<void> {
  const agent = await gw.connect();
  const r = await agent.call('list_sessions', {});
  assert.equal(r.isError, false, r.text);
  await agent.disconnect();
}

const hello = (gw: Gateway, scopes: string[]) => ({
  client: { id: 'bounds-test', version: '1', mode: 'test' },
  caps: [],
  role: 'operator',
  scopes,
  auth: { token: gw.token },
});

describe('a gateway reader that stops reading', () => {
  test('is closed with 4010 and a reason naming the bound; the gateway and other readers carry on', async () => {
    const bound = 256 * 1024;
    const gw = await gateway({ VERITY_MAX_SEND_BUFFER_BYTES: String(bound) });
    // A page that changes every frame: the screencast sends a JPEG per frame for as long as it runs.
    const agent = await gw.connect();
    const page = `<body style="margin:0"><canvas id=c width=800 height=600></canvas><script>
      const g = document.getElementById('c').getContext('2d');
      (function draw() { for (let i = 0; i < 200; i++) { g.fillStyle = '#' + Math.floor(Math.random() * 0xffffff).toString(16).padStart(6, '0'); g.fillRect(Math.random() * 800, Math.random() * 600, 40, 40); } requestAnimationFrame(draw); })();
    </script></body>`;
    const nav = await agent.call('page', { action: 'navigate', url: `data:text/html,${encodeURIComponent(page)}` });
    assert.equal(nav.isError, false, nav.text);

    const ws = new WebSocket(gw.base.replace('http', 'ws') + '/gateway');
    const answers: any[] = [];
    ws.on('message', (d) => {
      const f = JSON.parse(String(d));
      if (f.type === 'res') answers.push(f);
    });
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      ws.on('close', (code, reason) => r({ code, reason: String(reason) })),
    );
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'req', id: 1, method: 'connect', params: hello(gw, ['operator.read']) }));
    await waitFor(() => answers.find((a) => a.id === 1), 'hello-ok');
    ws.send(JSON.stringify({ type: 'req', id: 2, method: 'browser.screencast.start', params: {} }));
    const started = await waitFor(() => answers.find((a) => a.id === 2), 'the screencast started');
    assert.equal(started.ok, true, JSON.stringify(started));
    // From here on the reader reads nothing: the kernel's buffers fill, then the gateway's.
    const raw = (ws as unknown as { _socket: import('node:net').Socket })._socket;
    raw.pause();

    const healthy = await operatorSocket(gw, ['operator.read']);
    await waitFor(
      () => /too slow: send buffer over/.test(gw.stderr()),
      'the gateway closing the silent reader',
      300,
      200,
    );
    assert.match(
      gw.stderr(),
      new RegExp(`closed gateway connection \\S+ \\(bounds-test\\): too slow: send buffer over ${bound} bytes`),
    );
    raw.resume(); // reads what was queued, then the close frame
    const { code, reason } = await closed;
    assert.equal(code, 4010);
    assert.equal(reason, `too slow: send buffer over ${bound} bytes`);

    const listed = await healthy.request('sessions.list');
    assert.equal(listed.ok, true);
    healthy.ws.close();
    await stillUp(gw);
  });
});

describe('session list deltas', () => {
  test('sessions.changed carries only what changed (added, updated, removed), gathered, and sessions.list the whole list', async () => {
    const gw = await gateway({});
    const ui = await operatorSocket(gw, ['operator.read']);
    const agent = await gw.connect();
    const labels = Array.from({ length: 20 }, (_, i) => `delta-${i}`);
    await Promise.all(labels.map((session) => agent.call('start_session', { session })));
    const keyOf = (label: string) =>
      (ui.events.flatMap((e) => (e.event === 'sessions.changed' ? e.payload.added : [])) as any[]).find(
        (r) => r.session === label,
      )?.sessionKey;
    await waitFor(() => labels.every(keyOf), 'every label added through deltas');
    const changes = ui.events.filter((e) => e.event === 'sessions.changed');
    assert.ok(changes.length < labels.length, `20 starts were gathered into fewer deltas (got ${changes.length})`);
    for (const e of changes) {
      assert.deepEqual(Object.keys(e.payload).sort(), ['added', 'removed', 'updated'], 'a delta, not the whole list');
      assert.ok(Array.isArray(e.payload.added) && Array.isArray(e.payload.updated) && Array.isArray(e.payload.removed));
    }

    // One more session: the delta names that one row only, not the 20 before it.
    const before = ui.events.length;
    await agent.call('start_session', { session: 'delta-one-more' });
    const one = await waitFor(
      () =>
        ui.events
          .slice(before)
          .find(
            (e) => e.event === 'sessions.changed' && e.payload.added.some((r: any) => r.session === 'delta-one-more'),
          ),
      'the delta of one more session',
    );
    assert.equal(one.payload.added.length + one.payload.updated.length, 1, JSON.stringify(one.payload));

    const full = await ui.request('sessions.list');
    assert.equal(
      full.payload.sessions.filter((r: any) => r.session?.startsWith('delta-')).length,
      21,
      'sessions.list still returns the full list',
    );

    // An ended session leaves the list: removed, by key.
    const ended = await agent.call('end_session', { session: 'delta-3' });
    assert.equal(ended.isError, false, ended.text);
    await waitFor(
      () => ui.events.some((e) => e.event === 'sessions.changed' && e.payload.removed.includes(keyOf('delta-3'))),
      'delta-3 removed',
    );
    await agent.disconnect();
    await waitFor(
      () => ui.events.some((e) => e.event === 'sessions.changed' && e.payload.removed.includes(keyOf('delta-0'))),
      "the disconnected agent's sessions removed",
    );
    ui.ws.close();
  });
});

describe('caps with named refusals', () => {
  test('session labels per MCP connection and sessions in all: too_many_sessions, and the server stays up', async () => {
    const gw = await gateway({ VERITY_MAX_LABELS_PER_CONNECTION: '4', VERITY_MAX_SESSIONS: '6' });
    const a = await gw.connect();
    for (let i = 0; i < 4; i++) assert.equal((await a.call('start_session', { session: `a-${i}` })).isError, false);
    const over = refusalOf(await a.call('start_session', { session: 'a-4' }));
    assert.equal(over.code, 'too_many_sessions');
    assert.match(over.message, /4 session labels.*VERITY_MAX_LABELS_PER_CONNECTION/);
    // An existing label is still usable, and an ended one can be revived: no new room is needed.
    assert.equal((await a.call('start_session', { session: 'a-1' })).isError, false);
    assert.equal((await a.call('end_session', { session: 'a-2' })).isError, false);
    assert.equal((await a.call('start_session', { session: 'a-2' })).isError, false);
    const b = await gw.connect();
    assert.equal((await b.call('start_session', { session: 'b-0' })).isError, false);
    assert.equal((await b.call('start_session', { session: 'b-1' })).isError, false); // 6 sessions now
    const full = refusalOf(await b.call('start_session', { session: 'b-2' }));
    assert.equal(full.code, 'too_many_sessions');
    assert.match(full.message, /6 sessions.*VERITY_MAX_SESSIONS/);
    await a.disconnect();
    await waitFor(
      async () => !(await b.call('start_session', { session: 'b-2' })).isError,
      'room again once a disconnected',
    );
    await b.disconnect();
  });

  test('pending approvals: the call over the bound is refused too_many_approvals at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-bounds-policy-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['press_key'] }));
    const gw = await gateway({ VERITY_MAX_PENDING_APPROVALS: '2' }, ['--policy', join(dir, 'policy.json')]);
    const approver = await operatorSocket(gw, ['operator.approvals']);
    const agent = await gw.connect();
    const held = [agent.call('press_key', { key: 'Tab' }), agent.call('press_key', { key: 'Tab' })];
    await waitFor(() => approver.events.filter((e) => e.event === 'approval.requested').length === 2, 'two calls held');
    const over = refusalOf(await agent.call('press_key', { key: 'Tab' }));
    assert.equal(over.code, 'too_many_approvals');
    assert.match(over.message, /2 calls already wait.*VERITY_MAX_PENDING_APPROVALS/);
    for (const e of approver.events.filter((x) => x.event === 'approval.requested'))
      await approver.request('approvals.resolve', { id: e.payload.id, approve: false });
    for (const r of await Promise.all(held)) assert.match(refusalOf(r).message, /denied/);
    approver.ws.close();
    await agent.disconnect();
  });

  test('gateway connections: the one over the bound is refused before the upgrade (503 TOO_MANY)', async () => {
    const gw = await gateway({ VERITY_MAX_GATEWAY_CONNECTIONS: '3' });
    const open = [
      await operatorSocket(gw, ['operator.read']),
      await operatorSocket(gw, ['operator.read']),
      await operatorSocket(gw, ['operator.read']),
    ];
    const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const ws = new WebSocket(gw.base.replace('http', 'ws') + '/gateway');
      ws.on('open', () => reject(new Error('a connection over the bound was accepted')));
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      ws.on('error', () => {});
    });
    assert.equal(refused.status, 503);
    assert.match(refused.body, /^TOO_MANY: the gateway already has 3 connections/);
    open[0].ws.close();
    const accepted = () =>
      new Promise<boolean>((resolve) => {
        const ws = new WebSocket(gw.base.replace('http', 'ws') + '/gateway');
        ws.on('open', () => {
          ws.close();
          resolve(true);
        });
        ws.on('unexpected-response', () => resolve(false));
        ws.on('error', () => resolve(false));
      });
    await waitFor(accepted, 'a connection accepted again');
    for (const s of open) s.ws.close();
  });

  test('agent links: per connection and in all, refused TOO_MANY; a link expires', async () => {
    const gw = await gateway({
      VERITY_MAX_LINKS_PER_CONNECTION: '2',
      VERITY_MAX_LINKS: '3',
      VERITY_LINK_TTL_MS: '1500',
    });
    const ui1 = await operatorSocket(gw, ['operator.write']);
    const first = await ui1.request('agent.link');
    assert.equal(first.ok, true);
    assert.ok(first.payload.expires_at);
    assert.equal((await ui1.request('agent.link')).ok, true);
    const mine = await ui1.request('agent.link');
    assert.equal(mine.ok, false);
    assert.equal(mine.error.code, 'TOO_MANY');
    assert.match(mine.error.message, /VERITY_MAX_LINKS_PER_CONNECTION/);
    const ui2 = await operatorSocket(gw, ['operator.write']);
    assert.equal((await ui2.request('agent.link')).ok, true);
    const all = await ui2.request('agent.link');
    assert.equal(all.error.code, 'TOO_MANY');
    assert.match(all.error.message, /VERITY_MAX_LINKS\)/);

    // Expired: an MCP client with that link is refused, and the room is free again.
    await sleep(1600);
    const res = await fetch(`${gw.base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gw.agentToken}`,
        'x-verity-link': first.payload.link_token,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    assert.equal(res.status, 403);
    assert.equal((await ui1.request('agent.link')).ok, true, 'an expired link frees its room');
    ui1.ws.close();
    ui2.ws.close();
  });

  test('HTTP MCP sessions: the initialize over the bound is refused (503 too_many_sessions)', async () => {
    // The unlinked clients' share is the whole table here, so the global bound is the one reached.
    const gw = await gateway({ VERITY_MAX_HTTP_SESSIONS: '2', VERITY_MAX_HTTP_SESSIONS_UNLINKED: '2' });
    const a = await gw.connect();
    const b = await gw.connect();
    await assert.rejects(gw.connect(), /too_many_sessions: the gateway already serves 2 MCP sessions/);
    await a.disconnect();
    await waitFor(async () => {
      try {
        const c = await gw.connect();
        await c.disconnect();
        return true;
      } catch {
        return false;
      }
    }, 'room once one ended');
    await b.disconnect();
  });
});

describe('abandoned HTTP MCP sessions', () => {
  test('are closed when their sessions idle out: their sessions leave the list, nothing "ended" stays, a late call is told why', async () => {
    const gw = await gateway({ VERITY_SESSION_IDLE_MS: '1000', VERITY_HTTP_SESSION_IDLE_MS: '2000' });
    const ui = await operatorSocket(gw, ['operator.read']);
    // Abandoned: a session started, then the client goes silent (no DELETE).
    const client = new Client({ name: 'abandoned', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${gw.agentToken}` } },
    });
    await client.connect(transport);
    const started = await client.callTool({ name: 'start_session', arguments: { session: 'abandoned' } });
    assert.ok(!started.isError);
    const listed = async () =>
      ((await ui.request('sessions.list')).payload.sessions as any[]).filter((s) => s.client.startsWith('abandoned'));
    assert.equal((await listed()).length, 1);
    // A client that only initialized (no session of its own yet) is closed the same way.
    const quiet = new Client({ name: 'quiet', version: '1' });
    const quietTransport = new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${gw.agentToken}` } },
    });
    await quiet.connect(quietTransport);

    await waitFor(
      () =>
        /closed the idle MCP session \S+ \(abandoned 1\)/.test(gw.stderr()) &&
        /closed the idle MCP session \S+ \(quiet 1\)/.test(gw.stderr()),
      'both idle MCP sessions closed',
      100,
      200,
    );
    assert.equal((await listed()).length, 0, 'the abandoned session left the list');
    assert.equal(
      ((await ui.request('sessions.list')).payload.sessions as any[]).filter((s) => s.state === 'ended').length,
      0,
    );
    await assert.rejects(
      client.callTool({ name: 'list_sessions', arguments: {} }),
      /closed after 2 s without a request.*initialize/,
    );
    await assert.rejects(
      quiet.callTool({ name: 'list_sessions', arguments: {} }),
      /closed after 2 s without a request/,
    );
    await client.close().catch(() => {});
    await quiet.close().catch(() => {});
    ui.ws.close();
    await stillUp(gw);
  });
});
