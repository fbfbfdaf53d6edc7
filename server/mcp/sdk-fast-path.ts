// The one place that touches the MCP SDK's private members (issue #25 item 7). Two hooks save most of the
// SDK's per-call work, and both lean on internals no release promises to keep:
//   - Protocol._requestHandlers: tools/call of the expected shape skips three zod parses (skipSdkRechecks);
//   - Protocol._onrequest: requests skip the message router's failed response parses (connectFast).
// They are taken only on the SDK version they were written and tested against (PINNED_SDK_VERSION, the exact
// version package.json pins). On any other version, or should a hook be missing, everything takes the
// SDK's public path (setRequestHandler, Server.connect): slower, never wrong. test/unit/mcp-fast-path.test.ts
// checks both: the fast path on the pinned version, the fallback on another.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolRequestSchema, JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

/** The SDK release whose internals these hooks match; the same as package.json's exact pin (a unit test checks). */
export const PINNED_SDK_VERSION = '1.32.2';

const SDK_NAME = '@modelcontextprotocol/sdk';

/** The installed SDK's version, read from its package.json (found above its resolved server module); null if unreadable. */
export function installedSdkVersion(): string | null {
  try {
    let dir = dirname(fileURLToPath(import.meta.resolve(`${SDK_NAME}/server/index.js`)));
    for (let depth = 0; depth < 8; depth++, dir = dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
        if (pkg.name === SDK_NAME) return pkg.version ?? null;
      } catch {
        /* not here: one folder up */
      }
    }
  } catch {
    /* not resolvable from here */
  }
  return null;
}

const INSTALLED = installedSdkVersion();

/** Whether the private hooks may be used with this SDK version. */
export const fastPathApplies = (version: string | null = INSTALLED): boolean => version === PINNED_SDK_VERSION;

export type CallToolRequest = z.infer<typeof CallToolRequestSchema>;
export type CallToolExtra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];

/**
 * The SDK wraps a tools/call handler in three zod parses per call: the request against CallToolRequestSchema
 * twice (Server's wrapper, then Protocol's) and the handler's own result against CallToolResultSchema; a
 * fifth of the server's work on a native type_text. The arguments are checked by the tool's own schema
 * (parseArgs, which names the field) and the result is built by toCallToolResult, so a request of the
 * expected shape goes straight to the handler. Any other shape (no name, arguments that are not an
 * object, a task request, an odd progress token) takes the SDK's wrapped path and gets its errors.
 * Call after setRequestHandler(CallToolRequestSchema, callTool); returns whether the hook was installed.
 */
export function skipSdkRechecks(
  server: Server,
  callTool: (request: CallToolRequest, extra: CallToolExtra) => unknown,
  version: string | null = INSTALLED,
): boolean {
  if (!fastPathApplies(version)) return false;
  const handlers = (server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) return false;
  const sdkPath = handlers.get('tools/call') as ((request: unknown, extra: unknown) => unknown) | undefined;
  if (typeof sdkPath !== 'function') return false;
  // Named, so the test (test/unit/mcp-fast-path.test.ts) can tell it is the one installed.
  const plainCallFirst = (request: { params?: unknown }, extra: CallToolExtra) =>
    isPlainCall(request.params) ? callTool(request as CallToolRequest, extra) : sdkPath(request, extra);
  handlers.set('tools/call', plainCallFirst);
  return true;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A tools/call's params in the shape CallToolRequestSchema accepts, without a task. */
export function isPlainCall(params: unknown): boolean {
  if (!isObject(params) || typeof params.name !== 'string' || params.task !== undefined) return false;
  if (params.arguments !== undefined && !isObject(params.arguments)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isObject(meta)) return false;
  const token = meta.progressToken;
  return token === undefined || typeof token === 'string' || (typeof token === 'number' && Number.isInteger(token));
}

/**
 * Connects a server to its transport, with requests handed straight to the SDK's request dispatcher. The
 * SDK's message router first tries every incoming message against both response schemas, and each failed
 * zod parse builds an error: about 70 µs per call, a third of a whole native round trip. Requests skip
 * that; responses and notifications take the SDK's path. `onRequest` sees each request as it arrives
 * (on either path). Returns whether the fast path was installed.
 */
export async function connectFast(
  server: Server,
  transport: Transport,
  onRequest?: (request: JSONRPCRequest) => void,
  version: string | null = INSTALLED,
): Promise<boolean> {
  await server.connect(transport);
  const route = transport.onmessage;
  const dispatchRequest = (server as unknown as { _onrequest?: (request: unknown, extra: unknown) => void })._onrequest;
  const fast = fastPathApplies(version) && typeof dispatchRequest === 'function';
  if (!route || (!fast && !onRequest)) return false;
  // The transport has already checked the message against the SDK's JSON-RPC schema, so the one kind with
  // both a method and an id is a request (the SDK's own request check is another zod parse per call).
  transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
    const request = 'method' in message && 'id' in message;
    if (request) onRequest?.(message as JSONRPCRequest);
    if (request && fast) dispatchRequest.call(server, message, extra);
    else route.call(transport, message, extra as never);
  };
  return fast;
}
