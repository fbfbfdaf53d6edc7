// server/mcp/sdk-fast-path.ts hands requests straight to the SDK's private request dispatcher
// (Protocol._onrequest), skipping the SDK's message router (about 70 µs of failed zod parses per call), on the
// SDK version it is pinned to; on any other version it takes the SDK's public path.
// This fails the day an SDK release renames or drops that hook, or the fast path stops being taken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { Verity } from '../../server/core.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectMcp, createMcpServer, isPlainCall } from '../../server/mcp/server.js';
import {
  connectFast,
  fastPathApplies,
  installedSdkVersion,
  PINNED_SDK_VERSION,
  skipSdkRechecks,
} from '../../server/mcp/sdk-fast-path.js';
import { ROOT } from '../helpers/fixtures.js';

/** A linked in-memory pair whose server side counts what reaches the SDK's router (the first onmessage assigned). */
function countedPair() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const routed: string[] = [];
  let onmessage: ((m: JSONRPCMessage, extra?: unknown) => void) | undefined;
  let assignments = 0;
  Object.defineProperty(serverSide, 'onmessage', {
    configurable: true,
    get: () => onmessage,
    set(fn: (m: JSONRPCMessage, extra?: unknown) => void) {
      onmessage =
        ++assignments === 1
          ? (m, extra) => {
              routed.push('method' in m ? m.method : 'response');
              fn(m, extra);
            }
          : fn;
    },
  });
  return { clientSide, serverSide, routed };
}

test("requests take the fast path into the SDK's _onrequest; notifications take the SDK's router", async () => {
  const core = new Verity({});
  const server = createMcpServer(core, { connectionId: 'fast-path-test' });
  const hook = (server as unknown as { _onrequest?: (...args: unknown[]) => unknown })._onrequest;
  assert.equal(
    typeof hook,
    'function',
    'the MCP SDK no longer has Protocol._onrequest: server/mcp/sdk-fast-path.ts connectFast must move to the public API (Server.connect alone)',
  );
  const dispatched: string[] = [];
  (server as unknown as { _onrequest: (...args: unknown[]) => unknown })._onrequest = function (
    this: unknown,
    message: unknown,
    extra: unknown,
  ) {
    dispatched.push((message as { method: string }).method);
    return hook!.call(this, message, extra);
  };

  // The router the SDK installs on the transport (the first onmessage assigned), counted.
  const { clientSide, serverSide, routed } = countedPair();

  const fast = await connectMcp(server, serverSide, core);
  assert.equal(fast, true, 'connectMcp installed the fast path');
  const client = new Client({ name: 'fast-path-test', version: '1' });
  try {
    await client.connect(clientSide);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('type_text'), tools.join(', '));
    const called = await client.callTool({ name: 'list_sessions', arguments: {} });
    assert.ok(!called.isError, JSON.stringify(called));
    assert.deepEqual(dispatched, ['initialize', 'tools/list', 'tools/call'], 'every request reached _onrequest');
    assert.deepEqual(
      routed,
      ['notifications/initialized'],
      "no request went through the SDK's router; the notification did",
    );
  } finally {
    await client.close();
    await core.close();
  }
});

test("tools/call of the expected shape skips the SDK's re-parses; any other shape gets the SDK's own error", async () => {
  assert.equal(isPlainCall({ name: 'type_text', arguments: { text: 'x' } }), true);
  assert.equal(isPlainCall({ name: 'list_sessions' }), true);
  assert.equal(isPlainCall({ name: 'list_sessions', _meta: { progressToken: 7 } }), true);
  assert.equal(isPlainCall({ name: 'list_sessions', arguments: [1] }), false);
  assert.equal(isPlainCall({ name: 3 }), false);
  assert.equal(isPlainCall({ name: 'list_sessions', task: { ttl: 1 } }), false);
  assert.equal(isPlainCall({ name: 'list_sessions', _meta: { progressToken: 1.5 } }), false);
  assert.equal(isPlainCall(null), false);

  const core = new Verity({});
  const server = createMcpServer(core, { connectionId: 'recheck-test' });
  // The hook itself: without it every call still works (the SDK's path), so only this can tell it is gone.
  const handlers = (server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  assert.ok(
    handlers instanceof Map && typeof handlers.get('tools/call') === 'function',
    'the MCP SDK no longer keeps its handlers in Protocol._requestHandlers: server/mcp/sdk-fast-path.ts skipSdkRechecks must move to the public API (setRequestHandler alone)',
  );
  assert.equal(
    handlers.get('tools/call').name,
    'plainCallFirst',
    'tools/call is not dispatched by skipSdkRechecks: the fast path is not taken',
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await connectMcp(server, serverSide, core);
  const client = new Client({ name: 'recheck-test', version: '1' });
  try {
    await client.connect(clientSide);
    await client.listTools();
    // The fast path: the same result the SDK's path gives (the client checks it against the outputSchema).
    const ok = await client.callTool({ name: 'list_sessions', arguments: {} });
    assert.ok(!ok.isError, JSON.stringify(ok));
    assert.ok(ok.structuredContent && Array.isArray(ok.content), JSON.stringify(ok));
    // Bad arguments of the right shape: the tool's own refusal, naming the field.
    const bad = await client.callTool({ name: 'type_text', arguments: { text: 5 } });
    assert.equal(bad.isError, true);
    assert.equal((bad.structuredContent as { refusal?: { code: string } }).refusal?.code, 'invalid_arguments');
    // Arguments that are not an object: the SDK's path, which rejects the request itself.
    await assert.rejects(
      client.request(
        { method: 'tools/call', params: { name: 'list_sessions', arguments: [1] } } as never,
        CallToolResultSchema,
      ),
      /Invalid/i,
    );
  } finally {
    await client.close();
    await core.close();
  }
});

test('the fast path is pinned to the SDK version package.json pins, and that is the one installed', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  assert.equal(
    pkg.dependencies['@modelcontextprotocol/sdk'],
    PINNED_SDK_VERSION,
    'package.json pins another SDK: check the hooks in server/mcp/sdk-fast-path.ts against it, then move PINNED_SDK_VERSION',
  );
  assert.equal(installedSdkVersion(), PINNED_SDK_VERSION);
  assert.equal(fastPathApplies(), true);
  assert.equal(fastPathApplies('1.33.0'), false);
  assert.equal(fastPathApplies(null), false);
});

test("on another SDK version both hooks stay off and every request takes the SDK's public path", async () => {
  const server = new Server({ name: 'fallback-test', version: '1' }, { capabilities: { tools: {} } });
  let handled = 0;
  const callTool = async () => {
    handled++;
    return { content: [{ type: 'text' as const, text: 'ok' }] };
  };
  server.setRequestHandler(CallToolRequestSchema, callTool);
  const handlers = (server as unknown as { _requestHandlers: Map<string, { name: string }> })._requestHandlers;
  const sdkPath = handlers.get('tools/call');
  assert.equal(skipSdkRechecks(server, callTool, '1.33.0'), false);
  assert.equal(handlers.get('tools/call'), sdkPath, "the SDK's own tools/call handler is kept");
  // Requests reach the SDK's router (the first onmessage it assigns), and anticipate still sees them.
  const { clientSide, serverSide, routed } = countedPair();
  const seen: string[] = [];
  assert.equal(await connectFast(server, serverSide, (request) => seen.push(request.method), '1.33.0'), false);
  const client = new Client({ name: 'fallback-test', version: '1' });
  try {
    await client.connect(clientSide);
    const result = await client.callTool({ name: 'anything', arguments: {} });
    assert.deepEqual(result.content, [{ type: 'text', text: 'ok' }]);
    assert.equal(handled, 1);
    assert.deepEqual(routed, ['initialize', 'notifications/initialized', 'tools/call'], "all through the SDK's router");
    assert.deepEqual(seen, ['initialize', 'tools/call'], 'onRequest saw each request');
  } finally {
    await client.close();
  }
});
