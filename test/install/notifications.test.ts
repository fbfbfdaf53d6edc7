// MCP logging and progress, with the real SDK client: it declares the logging capability, and a client
// that sends a progress token hears how a call is getting on: the browser launch, a slow navigation (a
// local server that holds its answer back), a wait, and each step of a run_actions batch.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { LoggingMessageNotificationSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { operatorSocket, startGateway, waitFor } from '../helpers/gateway.js';
import { EXTENSION_ID } from '../../server/gateway/extension-id.js';
import { connectAs, raw } from '../security/wire.js';

const SLOW_MS = 2500;
let http: Server;
let base = '';
let v: Verity;
const logs: string[] = [];

before(async () => {
  http = createServer((req, res) => {
    const page = (body: string) =>
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>t</title>${body}`);
    if (req.url === '/slow') {
      setTimeout(() => page('<p>finally</p>'), SLOW_MS);
      return;
    }
    page('<label>First <input id="a"></label><label>Second <input id="b"></label>');
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  v = await startVerity(['--standalone']);
  v.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String(n.params.data));
  });
});

after(async () => {
  await v?.close();
  await new Promise((r) => http?.close(r));
});

/** A tools/call with a progress token (the SDK client adds it for onprogress); the progress heard before the answer. */
async function callWithProgress(name: string, args: Record<string, unknown>) {
  const heard: Progress[] = [];
  let answered = false;
  const early: Progress[] = [];
  const result = await v.client.callTool({ name, arguments: args }, undefined, {
    onprogress: (p) => {
      heard.push(p);
      if (!answered) early.push(p);
    },
    timeout: 120_000,
  });
  answered = true;
  return { result: result as { isError?: boolean; structuredContent?: any }, heard, early };
}

describe('MCP logging and progress', () => {
  test('the server declares the logging capability', () => {
    assert.deepEqual(v.client.getServerCapabilities()?.logging, {});
  });

  test('a slow navigation reports progress while it waits, the browser launch first (also as a log line)', async () => {
    const { result, early } = await callWithProgress('page', { action: 'navigate', url: `${base}/slow` });
    assert.ok(!result.isError, JSON.stringify(result.structuredContent));
    const messages = early.map((p) => p.message ?? '');
    assert.ok(
      messages.some((m) => /^launching .*\((headless|headful)\)/.test(m)),
      `the launch was reported: ${JSON.stringify(messages)}`,
    );
    const navigating = messages.filter((m) => m.startsWith(`navigating to ${base}/slow`));
    assert.ok(
      navigating.length >= 2,
      `the navigation was reported as it began and while it waited: ${JSON.stringify(messages)}`,
    );
    const progress = early.map((p) => p.progress);
    assert.deepEqual(
      progress,
      [...progress].sort((a, b) => a - b),
      'progress only increases',
    );
    assert.equal(new Set(progress).size, progress.length);
    assert.ok(
      logs.some((l) => /^launching /.test(l)),
      `the launch was a log line too: ${JSON.stringify(logs)}`,
    );
  });

  test('a wait reports that it is waiting, and times out as a refusal that is also logged', async () => {
    const { result, early } = await callWithProgress('page', {
      action: 'wait_for',
      text: 'never there',
      timeout_ms: 2500,
    });
    assert.equal(result.structuredContent?.refusal?.code, 'timeout', JSON.stringify(result.structuredContent));
    assert.ok(
      early.some((p) => p.message === 'waiting for text "never there"'),
      JSON.stringify(early),
    );
    for (let i = 0; i < 50 && !logs.some((l) => /page refused \(timeout\)/.test(l)); i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.ok(
      logs.some((l) => /page refused \(timeout\): gave up after 2500 ms/.test(l)),
      JSON.stringify(logs),
    );
  });

  test('a run_actions batch reports each step as it starts', async () => {
    const nav = await v.call('page', { action: 'navigate', url: `${base}/form` });
    assert.equal(nav.isError, false, nav.text);
    const shot = await v.call('get_window_state', { include_screenshot: false, format: 'full' });
    const token = (label: string) =>
      shot.structured.elements.find((e: { label: string }) => e.label.includes(label)).element_token;
    const { result, early } = await callWithProgress('run_actions', {
      steps: [
        { tool: 'type_text', args: { element_token: token('First'), text: 'one' } },
        { tool: 'type_text', args: { element_token: token('Second'), text: 'two' } },
      ],
    });
    assert.ok(!result.isError, JSON.stringify(result.structuredContent));
    assert.deepEqual(
      early.map((p) => p.message),
      ['step 1 of 2: type_text', 'step 2 of 2: type_text'],
    );
  });

  test('without a progress token, no progress is sent', async () => {
    let stray = 0;
    const transport = v.client.transport!;
    const route = transport.onmessage!;
    transport.onmessage = (m, extra) => {
      if ('method' in m && m.method === 'notifications/progress') stray++;
      route(m, extra);
    };
    try {
      const r = await v.call('page', { action: 'navigate', url: `${base}/slow` });
      assert.equal(r.isError, false, r.text);
      assert.equal(stray, 0);
    } finally {
      transport.onmessage = route;
    }
  });

  test("over HTTP, a call held for an operator's approval reports that it waits for one", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-progress-approval-'));
    writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['press_key'] }));
    const gw = await startGateway(['--policy', join(dir, 'policy.json')], { VERITY_CONFIG_DIR: dir });
    const approver = await operatorSocket(gw, ['operator.approvals']);
    const agent = await gw.connect();
    try {
      await agent.call('page', { action: 'navigate', url: 'data:text/html,<input autofocus>' });
      const heard: Progress[] = [];
      const pending = agent.client.callTool({ name: 'press_key', arguments: { key: 'Tab' } }, undefined, {
        onprogress: (p) => heard.push(p),
        timeout: 120_000,
      });
      const requested = await waitFor(
        () => approver.events.find((e) => e.event === 'approval.requested'),
        'the approval request',
      );
      await waitFor(() => heard.length > 0, 'progress while the approval is pending');
      assert.equal(heard[0].message, 'waiting for an operator to approve press_key');
      await approver.request('approvals.resolve', { id: requested.payload.id, approve: true });
      const done = await pending;
      assert.ok(!done.isError, JSON.stringify(done.structuredContent));
    } finally {
      await agent.disconnect();
      approver.ws.close();
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("over HTTP, the extension's connection and each reconnection is a log line to MCP clients", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-log-relay-'));
    const gw = await startGateway([], { VERITY_CONFIG_DIR: dir });
    const agent = await gw.connect();
    const heard: string[] = [];
    agent.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      heard.push(String(n.params.data));
    });
    const origin = `chrome-extension://${EXTENSION_ID}`;
    try {
      // Paired as the extension's pairing page does; its relay secret opens the relay (see relay.ts). Log
      // lines travel on the client's event stream (GET /mcp), which the SDK client opens on its own after
      // initialize: pairing (each replacing the last) goes on until its own log line is heard, so the
      // stream is up before the extension connects.
      let secret = '';
      let pairing: string | undefined;
      await waitFor(
        async () => {
          const paired = await raw(gw, '/pair', {
            method: 'POST',
            headers: { 'content-type': 'text/plain', origin },
            body: JSON.stringify({ token: gw.token, ...(pairing ? { replaces: pairing } : {}) }),
          });
          assert.equal(paired.status, 200, paired.body);
          ({ relay_secret: secret, pairing_id: pairing } = JSON.parse(paired.body));
          return heard.some((l) => l.startsWith('paired the extension'));
        },
        `a log line for the pairing: ${JSON.stringify(heard)}`,
      );
      const connected = () => heard.filter((l) => l === 'the Verity extension connected').length;
      for (let n = 1; n <= 2; n++) {
        const relay = await connectAs(gw, secret, ['operator.read', 'operator.write'], ['tab-relay'], { origin });
        assert.equal(relay.reply?.ok, true, JSON.stringify(relay.reply));
        const announced = await relay.request('relay.tabs', { tabs: [] });
        assert.equal(announced?.ok, true, JSON.stringify(announced));
        await waitFor(() => connected() >= n, `log line ${n} for the extension connecting: ${JSON.stringify(heard)}`);
        relay.ws.close();
        await relay.closed;
      }
      assert.equal(connected(), 2, JSON.stringify(heard));
    } finally {
      await agent.disconnect();
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
