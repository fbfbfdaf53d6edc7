// One MCP server per connection (stdio, or one HTTP session), all sharing one Verity core; each call goes
// through the core's call pipeline (pipeline.ts).
// The low-level Server is used so that argument errors become the contract's refusals and the advertised
// outputSchema is exactly `{type: "object", anyOf: [success, refusal]}`.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Verity } from '../core.js';
import { Refusal } from '../routing/refusal.js';
import type { CallContext } from '../tools/context.js';
import { inputSchemaOf, outputSchemaOf, refusalReply, toCallToolResult } from '../tools/define.js';
import { allTools } from '../tools/index.js';
import { VERSION } from '../version.js';
import { listen, logTo, progressOf, unlisten } from './notify.js';
import { runWithProgress } from '../progress.js';

export { allTools, VERSION };

const LOGGED_REFUSALS = new Set(['unavailable', 'not_permitted', 'timeout']);

export function createMcpServer(core: Verity, ctx: CallContext = { connectionId: randomUUID() }): Server {
  const tools = allTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server(
    { name: 'verity', version: VERSION },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );

  // The default surface leaves out deprecated tools and advanced arguments; `--tools full` lists everything.
  const surface = core.options.tools === 'full' ? 'full' : 'default';
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools
      .filter((t) => (!t.listed || t.listed(ctx)) && (surface === 'full' || !t.deprecated))
      .map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: inputSchemaOf(t, surface) as any,
        outputSchema: outputSchemaOf(t) as any,
        annotations: t.annotations,
      })),
  }));

  const callTool = async (request: CallToolRequest, extra: CallToolExtra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool || (tool.listed && !tool.listed(ctx))) {
      return toCallToolResult(
        refusalReply(new Refusal('invalid_arguments', `name: no tool named "${request.params.name}"`)),
      );
    }
    // Progress only when the client asked for it (a progressToken); deep code finds it through runWithProgress.
    const progress = progressOf(extra);
    const run = (call: CallContext) => core.pipeline.call(tool, request.params.arguments, call).then(toCallToolResult);
    const result = progress ? await runWithProgress(progress, () => run({ ...ctx, progress })) : await run(ctx);
    // Refusals an operator of the client would want in its log: the environment failed, not the arguments.
    const refusal = (result.structuredContent as { refusal?: { code: string; message: string } } | undefined)?.refusal;
    if (refusal && LOGGED_REFUSALS.has(refusal.code))
      logTo(server, 'warning', `${tool.name} refused (${refusal.code}): ${refusal.message}`);
    return result;
  };
  server.setRequestHandler(CallToolRequestSchema, callTool);
  skipSdkRechecks(server, callTool);
  server.oninitialized = () => {
    listen(server);
    const client = server.getClientVersion();
    core.connections.set(ctx.connectionId, {
      transport: ctx.transport ?? 'stdio',
      client: client ? `${client.name} ${client.version}` : 'unknown',
      since: new Date().toISOString(),
    });
    core.activity.emit('sessions');
  };
  // A connection's sessions end with it (cleanup hooks run once).
  const previousOnClose = server.onclose;
  server.onclose = () => {
    previousOnClose?.();
    unlisten(server);
    core.connections.delete(ctx.connectionId);
    core.brake.forget(ctx.connectionId);
    void core.sessions.disconnect(ctx.connectionId);
  };
  return server;
}

type CallToolRequest = z.infer<typeof CallToolRequestSchema>;
type CallToolExtra = Parameters<Parameters<Server['setRequestHandler']>[1]>[1];

/**
 * The SDK wraps a tools/call handler in three zod parses per call: the request against CallToolRequestSchema
 * twice (Server's wrapper, then Protocol's) and the handler's own result against CallToolResultSchema; a
 * fifth of the server's work on a native type_text. The arguments are checked by the tool's own schema
 * (parseArgs, which names the field) and the result is built by toCallToolResult, so a request of the
 * expected shape goes straight to the handler. Any other shape (no name, arguments that are not an
 * object, a task request, an odd progress token) takes the SDK's wrapped path and gets its errors.
 * Should an SDK release rename its handler map, everything takes the SDK's path.
 */
function skipSdkRechecks(server: Server, callTool: (request: CallToolRequest, extra: CallToolExtra) => unknown): void {
  const handlers = (server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) return;
  const sdkPath = handlers.get('tools/call') as ((request: unknown, extra: unknown) => unknown) | undefined;
  if (typeof sdkPath !== 'function') return;
  // Named, so the test (test/unit/mcp-fast-path.test.ts) can tell it is the one installed.
  const plainCallFirst = (request: { params?: unknown }, extra: CallToolExtra) =>
    isPlainCall(request.params) ? callTool(request as CallToolRequest, extra) : sdkPath(request, extra);
  handlers.set('tools/call', plainCallFirst);
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
 * that; responses and notifications take the SDK's path. Should an SDK release drop the dispatcher,
 * everything takes the SDK's path. With `core`, each request is shown to the call pipeline's `anticipate` as it arrives.
 */
export async function connectMcp(server: Server, transport: Transport, core?: Verity): Promise<boolean> {
  await server.connect(transport);
  const dispatchRequest = (server as unknown as { _onrequest?: (request: unknown, extra: unknown) => void })._onrequest;
  const route = transport.onmessage;
  if (typeof dispatchRequest !== 'function' || !route) return false;
  // The transport has already checked the message against the SDK's JSON-RPC schema, so the one kind with
  // both a method and an id is a request (the SDK's own request check is another zod parse per call).
  transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
    if ('method' in message && 'id' in message) {
      core?.pipeline.anticipate(message);
      dispatchRequest.call(server, message, extra);
    } else route.call(transport, message, extra as never);
  };
  return true;
}
