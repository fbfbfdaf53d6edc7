// One MCP server per connection (stdio, or one HTTP session), all sharing one Verity core.
// The low-level Server is used so that argument errors become the contract's refusals and the advertised
// outputSchema is exactly `{type: "object", anyOf: [success, refusal]}`.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { randomUUID } from 'node:crypto';
import type { CallContext, Verity } from '../core.js';
import { Refusal } from '../routing/refusal.js';
import { PROTOCOL_TIMEOUT_MS } from '../cdp/browser.js';
import { actionTools } from '../tools/actions.js';
import { inputSchemaOf, outputSchemaOf, parseArgs, refusalReply, toCallToolResult, type ToolDef } from '../tools/define.js';
import { getWindowState, listApps, listWindows } from '../tools/inspection.js';
import { page } from '../tools/page.js';
import { typeText } from '../tools/typing.js';
import { sessionTools } from '../tools/sessions.js';
import { runActions } from '../tools/batch.js';
import { screen } from '../tools/screen.js';
import { recordStep } from '../sessions/recording.js';
import type { Reply } from '../tools/define.js';
import { summarizeArgs } from '../activity.js';
import { VERSION } from '../version.js';
import { listen, logTo, progressOf, unlisten } from './notify.js';
import { reportWhile, runWithProgress } from '../progress.js';
import { abandonOnAbort } from '../sessions/brake.js';
import { labelsOf, noteCall } from '../audit/trail.js';

export { VERSION };

const LOGGED_REFUSALS = new Set(['unavailable', 'not_permitted', 'timeout']);

export function allTools(): ToolDef[] {
  return [...sessionTools, listApps, listWindows, getWindowState, ...actionTools.slice(0, 3), typeText, ...actionTools.slice(3), runActions, page, screen];
}

export function createMcpServer(core: Verity, ctx: CallContext = { connectionId: randomUUID() }): Server {
  const tools = allTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server({ name: 'verity', version: VERSION }, { capabilities: { tools: { listChanged: true }, logging: {} } });

  // The default surface leaves out deprecated tools and advanced arguments; `--tools full` lists everything.
  const surface = core.options.tools === 'full' ? 'full' : 'default';
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.filter((t) => (!t.listed || t.listed(ctx)) && (surface === 'full' || !t.deprecated)).map((t) => ({
      name: t.name, description: t.description, inputSchema: inputSchemaOf(t, surface) as any, outputSchema: outputSchemaOf(t) as any,
      annotations: t.annotations,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool || (tool.listed && !tool.listed(ctx))) {
      return toCallToolResult(refusalReply(new Refusal('invalid_arguments', `name: no tool named "${request.params.name}"`)));
    }
    // Progress only when the client asked for it (a progressToken); deep code finds it through runWithProgress.
    const progress = progressOf(extra);
    const result = progress ? await runWithProgress(progress, () => runTool(tool, request.params.arguments, core, { ...ctx, progress })) : await runTool(tool, request.params.arguments, core, ctx);
    // Refusals an operator of the client would want in its log: the environment failed, not the arguments.
    const refusal = (result.structuredContent as { refusal?: { code: string; message: string } } | undefined)?.refusal;
    if (refusal && LOGGED_REFUSALS.has(refusal.code)) logTo(server, 'warning', `${tool.name} refused (${refusal.code}): ${refusal.message}`);
    return result;
  });
  server.oninitialized = () => {
    listen(server);
    const client = server.getClientVersion();
    core.connections.set(ctx.connectionId, { transport: ctx.transport ?? 'stdio', client: client ? `${client.name} ${client.version}` : 'unknown', since: new Date().toISOString() });
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

/**
 * Connects a server to its transport, with requests handed straight to the SDK's request dispatcher. The
 * SDK's message router first tries every incoming message against both response schemas, and each failed
 * zod parse builds an error: about 70 µs per call, a third of a whole native round trip. Requests skip
 * that; responses and notifications take the SDK's path. Should an SDK release drop the dispatcher,
 * everything takes the SDK's path. With `core`, each request is shown to `Verity.anticipate` as it arrives.
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
      core?.anticipate(message);
      dispatchRequest.call(server, message, extra);
    } else route.call(transport, message, extra as never);
  };
  return true;
}

/** Validates and runs one tool; every failure becomes a refusal, so the server keeps serving. */
export async function runTool(tool: ToolDef, rawArgs: unknown, core: Verity, ctx: CallContext): Promise<CallToolResult> {
  return toCallToolResult(await callTool(tool, rawArgs, core, ctx));
}

/**
 * The one path every call takes, direct or as a batch step: the operator's brake, arguments, the
 * policy's approval list, admission to a session (which may be ended or another connection's), then the
 * handler, recorded when the session records. Every call, refused or not, goes into the audit trail.
 */
export async function callTool(tool: ToolDef, rawArgs: unknown, core: Verity, connection: CallContext): Promise<Reply> {
  const started = performance.now();
  const raw = (rawArgs && typeof rawArgs === 'object' ? rawArgs : {}) as Record<string, unknown>;
  const sessionKey = `${connection.connectionId}/${sessionLabelOf(raw.session)}`;
  // Labels are read before the call runs: its own snapshot would make the tokens stale.
  const labels = labelsOf(core.snapshots, raw);
  const trace: { approval?: { id: string; by?: string }; recording?: { dir: string; step: number; before?: string; after?: string } } = {};
  const reply = await admitAndRun(tool, rawArgs, core, connection, sessionKey, labels, trace);
  // After the reply is on its way; a failure to log must never reach the caller or the process.
  setImmediate(() => {
    try { noteCall(core.audit, { sessionKey, tool: tool.name, args: raw, reply, labels, approval: trace.approval, durationMs: performance.now() - started, recording: trace.recording }); } catch (e) { process.stderr.write(`verity: audit: ${(e as Error).message}\n`); }
  });
  return reply;
}

/** The label a call's `session` argument names, as the session manager normalizes it (`implicit` for none). */
function sessionLabelOf(session: unknown): string {
  const label = typeof session === 'string' ? session.trim() : '';
  return label && label !== 'default' ? label : 'implicit';
}

async function admitAndRun(tool: ToolDef, rawArgs: unknown, core: Verity, connection: CallContext, sessionKey: string, labels: Record<string, string> | undefined,
  trace: { approval?: { id: string; by?: string }; recording?: { dir: string; step: number; before?: string; after?: string } }): Promise<Reply> {
  let running: AbortController | undefined;
  try {
    // The brake comes first: a stopped agent is refused whatever it sends; a paused one waits here.
    await core.brake.admit(connection.connectionId, connection.progress);
    const args = parseArgs(tool, rawArgs) as Record<string, unknown>;
    running = core.brake.begin(sessionKey);
    const signal = running.signal;
    // Every tool the policy holds waits for an operator, the session tools included: the check comes
    // before anything of the call runs, and the operator is shown the arguments whole.
    if (core.policy.needsApproval(tool.name, typeof args.action === 'string' ? args.action : undefined)) {
      trace.approval = await reportWhile(connection.progress, `waiting for an operator to approve ${tool.name}`, core.approvals.request(tool.name, summarizeArgs(args, Infinity), sessionKey, args, { signal, labels }));
    }
    if (tool.sessionless) return await abandonOnAbort(tool.handler(args, core, { ...connection, signal }), signal);
    const session = core.sessions.admit(connection.connectionId, args.session as string | undefined);
    const ctx: CallContext = {
      ...connection, session, signal,
      runStep: async (step, stepArgs) => {
        const reply = await callTool(step, stepArgs, core, connection);
        return { structured: reply.structured, isError: !!reply.isError, images: reply.images };
      },
    };
    const recorded = !!session.recordingDir && !tool.annotations.readOnlyHint && tool.name !== 'run_actions';
    session.inFlight++;
    try {
      const before = recorded ? await core.recordingShot(ctx) : null;
      let reply: Reply;
      try {
        reply = await abandonOnAbort(tool.handler(args, core, ctx), signal);
      } catch (e) {
        reply = refusalReply(asRefusal(e));
      }
      core.afterAction();
      if (recorded) trace.recording = recordStep(session, { tool: tool.name, args, result: reply.structured, isError: !!reply.isError, before, after: await core.recordingShot(ctx) });
      // The operators' log hears of it once the reply is on its way: it never delays the caller.
      if (!tool.annotations.readOnlyHint) setImmediate(() => core.noteAction(ctx, tool.name, args, reply, { labels, approval: trace.approval }));
      return reply;
    } finally {
      session.inFlight--;
      session.lastActive = Date.now();
    }
  } catch (e) {
    return refusalReply(asRefusal(e));
  } finally {
    if (running) core.brake.finish(sessionKey, running);
  }
}

/** Protocol-level failures (a tab closed mid-call, the browser gone) as refusals that say what happened. */
export function asRefusal(e: unknown): Refusal {
  if (e instanceof Refusal) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (/its result is unknown and it is not resent/.test(message)) {
    // The extension relay dropped with this command in flight: it may have reached the page. Not retryable
    // blindly (that could do it twice): the caller reads the page first.
    return new Refusal('unavailable', `the link to the shared tab dropped while the command was in flight, so whether it reached the page is unknown and it was not resent; read the page (get_window_state) before retrying (${message.slice(0, 200)})`, { retryable: false, delivery: 'unknown' });
  }
  if (/the debugger was detached from tab .* was not delivered/.test(message)) {
    return new Refusal('unavailable', `the shared tab's debugger was detached, so nothing was sent to the page; the extension is attaching it again: retry (${message.slice(0, 200)})`, { retryable: true, delivery: 'none' });
  }
  if (/Target closed|Session closed|No target with given id|Target.detachedFromTarget|frame was detached|No frame for given id/i.test(message)) {
    return new Refusal('target_not_found', `the tab or frame closed during the call (${message.slice(0, 160)})`);
  }
  if (/Connection closed|WebSocket is not open|Protocol error.*closed|browser has disconnected|socket hang up/i.test(message)) {
    return new Refusal('unavailable', `the browser went away during the call (${message.slice(0, 160)}); a launched browser is relaunched on the next call`, { retryable: true });
  }
  const protocol = /^([\w.]+) timed out\. Increase the 'protocolTimeout'/.exec(message);
  if (protocol) {
    return new Refusal('timeout', `gave up after ${PROTOCOL_TIMEOUT_MS} ms waiting for the tab to answer ${protocol[1]}; the page is not responding (a script may be stuck)`, { retryable: true, waited_for: protocol[1] });
  }
  if (/timed out/i.test(message)) return new Refusal('timeout', message.slice(0, 300), { retryable: true });
  return new Refusal('unavailable', `internal error: ${message.slice(0, 300)}`);
}
