// One MCP server per connection (stdio, or one HTTP session), all sharing one Verity core; each call goes
// through the core's call pipeline (pipeline.ts).
// The low-level Server is used so that argument errors become the contract's refusals and the advertised
// outputSchema is exactly `{type: "object", anyOf: [success, refusal]}`.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { randomUUID } from 'node:crypto';
import type { Verity } from '../core.js';
import { Refusal } from '../contract/refusal.js';
import type { CallContext } from '../tools/context.js';
import { inputSchemaOf, outputSchemaOf } from '../tools/advertised.js';
import { refusalReply, toCallToolResult } from '../tools/reply.js';
import { allTools } from '../tools/index.js';
import { VERSION } from '../version.js';
import { listen, logTo, progressOf, unlisten } from './notify.js';
import { runWithProgress } from '../progress.js';
import { plainOf } from '../contract/names.js';
import { capabilityOffMessage, capabilityOn } from '../contract/capabilities.js';
import {
  type CallToolExtra,
  type CallToolRequest,
  connectFast,
  isPlainCall,
  skipSdkRechecks,
} from './sdk-fast-path.js';

export { allTools, isPlainCall, VERSION };

const LOGGED_REFUSALS = new Set(['unavailable', 'not_permitted', 'timeout']);

export function createMcpServer(core: Verity, ctx: CallContext = { connectionId: randomUUID() }): Server {
  const tools = allTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server(
    { name: 'verity', version: VERSION },
    { capabilities: { tools: { listChanged: true }, logging: {} } },
  );

  // The default surface leaves out deprecated tools, advanced arguments and the capabilities not turned on
  // (`--caps`); `--tools full` lists everything.
  const on = core.pipeline.tools.options.surface;
  const { surface } = on;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools
      .filter((t) => (!t.listed || t.listed(ctx)) && (surface === 'full' || !t.deprecated) && capabilityOn(t.cap, on))
      .map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: inputSchemaOf(t, surface) as any,
        outputSchema: outputSchemaOf(t) as any,
        annotations: t.annotations,
      })),
  }));

  // Aborted when the connection closes (the client went away), for the calls still waiting on it.
  const closed = new AbortController();
  const callTool = async (request: CallToolRequest, extra: CallToolExtra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool || (tool.listed && !tool.listed(ctx))) {
      return toCallToolResult(
        refusalReply(new Refusal('invalid_arguments', `name: no tool named "${request.params.name}"`)),
      );
    }
    if (tool.cap && !capabilityOn(tool.cap, on))
      return toCallToolResult(
        refusalReply(new Refusal('invalid_arguments', capabilityOffMessage(tool.name, tool.cap), { field: 'name' })),
      );
    // Progress only when the client asked for it (a progressToken); deep code finds it through runWithProgress.
    const progress = progressOf(extra);
    // The client gives up on a call by cancelling its request or by going away: a call held for approval is then withdrawn.
    const gone = clientGoneOf(extra.signal, closed.signal);
    const run = (call: CallContext) => core.pipeline.call(tool, request.params.arguments, call).then(toCallToolResult);
    const clientGone = gone.signal;
    const result = await (progress
      ? runWithProgress(progress, () => run({ ...ctx, progress, clientGone }))
      : run({ ...ctx, clientGone })
    ).finally(gone.dispose);
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
      client: client ? plainOf(`${client.name} ${client.version}`.slice(0, 200)) : 'unknown',
      since: new Date().toISOString(),
      // The client's own name is shown to operators as it is: it may not hold bidi or control characters.
      clientName: client ? plainOf(client.name.slice(0, 128)) : 'unknown',
      clientVersion: client ? plainOf(client.version.slice(0, 64)) : '',
      credential: ctx.credential ?? (ctx.transport === 'http' ? 'agent' : 'stdio'),
    });
    core.activity.emit('sessions');
  };
  // A connection's sessions end with it (cleanup hooks run once).
  const previousOnClose = server.onclose;
  server.onclose = () => {
    previousOnClose?.();
    closed.abort("the client's connection closed");
    unlisten(server);
    core.connections.delete(ctx.connectionId);
    core.activity.emit('sessions'); // an agent that never called is listed too (its row goes now)
    core.brake.forget(ctx.connectionId);
    void core.sessions.disconnect(ctx.connectionId);
  };
  return server;
}

/** One signal for "the client gave up": its request cancelled, or its connection closed (each with its reason). */
function clientGoneOf(
  request: AbortSignal | undefined,
  connection: AbortSignal,
): { signal: AbortSignal; dispose: () => void } {
  const gone = new AbortController();
  // The SDK aborts every handler's request signal as its connection closes, just before its onclose: the
  // check waits a microtask so that a close is said as a close, not as a cancellation.
  const cancelled = () =>
    queueMicrotask(() =>
      gone.abort(connection.aborted ? connection.reason : 'the client cancelled the request (notifications/cancelled)'),
    );
  const closed = () => gone.abort(connection.reason);
  if (request?.aborted) cancelled();
  else if (connection.aborted) closed();
  request?.addEventListener('abort', cancelled, { once: true });
  connection.addEventListener('abort', closed, { once: true });
  // The connection's signal outlives every call: each call's listener goes when the call is done.
  const dispose = () => {
    request?.removeEventListener('abort', cancelled);
    connection.removeEventListener('abort', closed);
  };
  return { signal: gone.signal, dispose };
}

/** Connects a server to its transport (sdk-fast-path.ts); with `core`, the call pipeline's `anticipate` sees each request as it arrives. */
export function connectMcp(server: Server, transport: Transport, core?: Verity): Promise<boolean> {
  return connectFast(server, transport, core ? (message) => core.pipeline.anticipate(message) : undefined);
}
