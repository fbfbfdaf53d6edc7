// stdio MCP sessions reach the gateway: `verity mcp --gateway` relays to the running `verity start`, and
// `verity mcp` inside a Control UI terminal (VERITY_MCP_URL + VERITY_LINK) is bound to that Control UI.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from '../helpers/fixtures.js';
import { operatorSocket, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';

let gw: Gateway;
const configDir = mkdtempSync(join(tmpdir(), 'verity-relay-config-'));
before(async () => {
  gw = await startGateway([], { VERITY_CONFIG_DIR: configDir });
});
after(async () => {
  await gw?.close();
  rmSync(configDir, { recursive: true, force: true });
});

/** A Control UI-like gateway connection (ui-commands) that records its events. */
const controlUi = () => operatorSocket(gw, ['operator.read', 'operator.write'], ['ui-commands']);

async function stdioClient(args: string[], env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, 'bin', 'verity.js'), 'mcp', ...args],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'stdio-agent', version: '1' });
  await client.connect(transport);
  return {
    client,
    pid: transport.pid!,
    close: async () => {
      await client.close();
      try {
        process.kill(transport.pid!, 'SIGTERM');
      } catch {
        /* exited */
      }
    },
  };
}

test("verity mcp --gateway shows up live in the gateway's session list", async () => {
  const ui = await controlUi();
  const agent = await stdioClient(['--gateway'], { VERITY_CONFIG_DIR: configDir });
  try {
    await agent.client.callTool({ name: 'start_session', arguments: { session: 'from-stdio' } });
    const listed = await waitFor(
      async () => (await ui.request('sessions.list')).payload.sessions.find((s: any) => s.session === 'from-stdio'),
      'the stdio session in sessions.list',
    );
    assert.equal(listed.state, 'active');
    // sessions.changed is gathered for a moment (deltas, server/gateway/server.ts): wait for it, bounded.
    await waitFor(
      () =>
        ui.events.some(
          (e) => e.event === 'sessions.changed' && e.payload.added?.some((r: any) => r.session === 'from-stdio'),
        ),
      'the list changed live',
    );
  } finally {
    await agent.close();
    ui.ws.close();
  }
});

test('a plain verity mcp joins the running gateway; --standalone stays on its own', async () => {
  const ui = await controlUi();
  const joined = await stdioClient([], { VERITY_CONFIG_DIR: configDir });
  const alone = await stdioClient(['--standalone', '--headless'], { VERITY_CONFIG_DIR: configDir });
  try {
    await joined.client.callTool({ name: 'start_session', arguments: { session: 'joined' } });
    await alone.client.callTool({ name: 'start_session', arguments: { session: 'alone' } });
    await waitFor(
      async () => (await ui.request('sessions.list')).payload.sessions.find((s: any) => s.session === 'joined'),
      'the joined session',
    );
    const names = (await ui.request('sessions.list')).payload.sessions.map((s: any) => s.session);
    assert.ok(!names.includes('alone'), JSON.stringify(names));
  } finally {
    await joined.close();
    await alone.close();
    ui.ws.close();
  }
});

test('an agent started in a Control UI terminal is bound to it and can arrange only it', async () => {
  const ui = await controlUi();
  const link = (await ui.request('agent.link')).payload;
  const agent = await stdioClient([], {
    VERITY_MCP_URL: link.mcp_url,
    VERITY_LINK: link.link_token,
    VERITY_TOKEN: gw.agentToken,
  });
  try {
    const tools = (await agent.client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('screen'));
    const r = await agent.client.callTool({ name: 'screen', arguments: { action: 'sidebar_hide' } });
    assert.deepEqual(r.structuredContent, { ok: true });
    await waitFor(() => ui.events.find((e) => e.event === 'ui.command'), 'the ui.command event');
    assert.deepEqual(ui.events.find((e) => e.event === 'ui.command').payload.command, {
      kind: 'sidebar',
      visible: false,
    });
  } finally {
    await agent.close();
    ui.ws.close();
  }
});
