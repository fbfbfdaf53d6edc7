// Security: fair shares of /mcp (issue #22 item 5), against a real `verity start` with real MCP SDK clients
// over HTTP. The issue's attack: 253 initializes with the agent credential and every new client was refused
// too_many_sessions until the idle reaper ran, while the hog kept its sessions alive. Here (small caps, an
// idle reaper that never runs during the test) the hog is refused at its share of sessions and of requests
// in flight, with the cap named and when a slot frees; when it fills the table under several client names
// (clientInfo is its own word) and keeps every session busy-looking, a new client still gets in (the hog's
// least recently used idle session over its share is closed, and told why); agents linked from the Control
// UI keep room of their own. Every process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { alive, operatorSocket, startGateway, waitFor, wrap, type Gateway } from '../helpers/gateway.js';
import { MCP_HEADERS, raw } from './wire.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-shares-'));
let gw: Gateway;
const clients: Array<{ client: Client; transport: StreamableHTTPClientTransport }> = [];
before(async () => {
  writeFileSync(join(tmp, 'policy.json'), JSON.stringify({ require_approval: ['press_key'] }));
  gw = await startGateway(['--policy', join(tmp, 'policy.json')], {
    VERITY_CONFIG_DIR: join(tmp, 'cfg'),
    VERITY_MAX_HTTP_SESSIONS: '8',
    VERITY_MAX_HTTP_SESSIONS_UNLINKED: '6',
    VERITY_MAX_HTTP_SESSIONS_PER_CLIENT: '3',
    VERITY_MAX_PENDING_CALLS_PER_CLIENT: '2',
    VERITY_HTTP_SESSION_IDLE_MS: '600000',
  });
});
after(async () => {
  for (const c of clients) await c.client.close().catch(() => {});
  await gw?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A real SDK client of this name (its clientInfo), optionally bound through an agent link. */
async function mcpClient(name: string, link?: string) {
  const headers: Record<string, string> = { Authorization: `Bearer ${gw.agentToken}` };
  if (link) headers['X-Verity-Link'] = link;
  const client = new Client({ name, version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  clients.push({ client, transport });
  return { client, call: wrap(client) };
}

const initialize = (name: string) =>
  raw(gw, '/mcp', {
    method: 'POST',
    headers: { ...MCP_HEADERS, host: new URL(gw.base).host, authorization: `Bearer ${gw.agentToken}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } },
    }),
  });

describe('one client cannot take every MCP session', () => {
  const hog: Array<Awaited<ReturnType<typeof mcpClient>>> = [];

  test('the hog is refused at its share (429 too_many_sessions naming the cap and when a slot frees); another client connects', async () => {
    for (let i = 0; i < 3; i++) hog.push(await mcpClient('hog'));
    await assert.rejects(
      mcpClient('hog'),
      /too_many_sessions: this client \(hog 1\) already holds 3 MCP sessions \(VERITY_MAX_HTTP_SESSIONS_PER_CLIENT\); a slot frees when one of them ends/,
    );
    const refused = await initialize('hog');
    assert.equal(refused.status, 429, refused.body);
    assert.equal(refused.headers['retry-after'], '600');
    assert.deepEqual(JSON.parse(refused.body).error.data, {
      code: 'too_many_sessions',
      limit: 3,
      retryable: true,
      retry_after_s: 600,
    });
    const other = await mcpClient('other-agent');
    const listed = await other.call('list_sessions');
    assert.equal(listed.isError, false, listed.text);
  });

  test('the hog fills the table under more names and keeps its sessions alive: a new client still gets in', async () => {
    // hog (3) + other-agent (1) + hog-b (2) = 6 = the unlinked clients' cap.
    for (let i = 0; i < 2; i++) hog.push(await mcpClient('hog-b'));
    let alivePings = true;
    const keepAlive = (async () => {
      while (alivePings) {
        await Promise.all(hog.map((h) => h.call('list_sessions').catch(() => null)));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      const newcomer = await mcpClient('newcomer');
      assert.equal((await newcomer.call('list_sessions')).isError, false);
      // Over its share of 6 / 4 clients, the hog lost its least recently used idle session (one of "hog",
      // which holds the most, unless all three were in flight at that instant: then one of "hog-b").
      await waitFor(
        () =>
          /closed the MCP session \S+ \(hog(-b)? 1\): over its client's share \((3|2) of 6, share 1\)/.test(
            gw.stderr(),
          ),
        'the log line',
      );
      const outcomes = await Promise.all(
        hog.map((h) =>
          h.call('list_sessions').then(
            () => 'ok',
            (e: Error) => e.message,
          ),
        ),
      );
      assert.equal(outcomes.filter((o) => o !== 'ok').length, 1, JSON.stringify(outcomes));
      assert.match(
        outcomes.find((o) => o !== 'ok')!,
        /closed to make room for another client: its client \(hog(-b)? 1\) held (3|2) of 6/,
      );
    } finally {
      alivePings = false;
      await keepAlive;
    }
  });

  test('agents linked from the Control UI keep room of their own while unlinked clients fill theirs', async () => {
    const ui = await operatorSocket(gw, ['operator.read', 'operator.write']);
    try {
      const link = (await ui.request('agent.link')).payload.link_token as string;
      // The unlinked part is full again (6): another unlinked name gets in only by taking an over-share slot,
      // while a linked agent gets in without taking anyone's.
      const before = gw.stderr().match(/closed the MCP session/g)?.length ?? 0;
      const linked = await mcpClient('linked-agent', link);
      assert.equal((await linked.call('list_sessions')).isError, false);
      assert.equal(gw.stderr().match(/closed the MCP session/g)?.length ?? 0, before, 'no session was closed for it');
    } finally {
      ui.ws.close();
    }
  });
});

describe('one client cannot hold every request in flight', () => {
  test('over its share of pending calls a request is refused too_many_pending_calls; others are served; answers free it', async () => {
    const approver = await operatorSocket(gw, ['operator.approvals']);
    const slow = await mcpClient('slow-agent');
    try {
      // Two calls held for the operator's approval: both of this client's slots are in use.
      const held = [slow.call('press_key', { key: 'a' }), slow.call('press_key', { key: 'b' })];
      const requests = await waitFor(() => {
        const r = approver.events.filter((e) => e.event === 'approval.requested');
        return r.length >= 2 ? r : null;
      }, 'two approval requests');
      await assert.rejects(
        slow.call('list_sessions'),
        /too_many_pending_calls: this client \(slow-agent 1\) already has 2 requests in flight \(VERITY_MAX_PENDING_CALLS_PER_CLIENT\); a slot frees as soon as one of them is answered/,
      );
      const bystander = await mcpClient('bystander');
      assert.equal((await bystander.call('list_sessions')).isError, false, 'another client is served meanwhile');
      for (const r of requests) await approver.request('approvals.resolve', { id: r.payload.id, approve: false });
      for (const r of await Promise.all(held)) assert.equal(r.isError, true, 'denied');
      assert.equal((await slow.call('list_sessions')).isError, false, 'the slots are free again');
      assert.ok(alive(gw.pid));
    } finally {
      approver.ws.close();
    }
  });
});
