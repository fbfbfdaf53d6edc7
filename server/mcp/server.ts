// One MCP server per connection (stdio, or one HTTP session), all sharing one Verity core.
// The low-level Server is used so that argument errors become the contract's refusals and the advertised
// outputSchema is exactly `{type: "object", anyOf: [success, refusal]}`.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import type { CallContext, Verity } from '../core.js';
import { Refusal } from '../routing/refusal.js';
import { actionTools } from '../tools/actions.js';
import { inputSchemaOf, outputSchemaOf, parseArgs, refusalReply, toCallToolResult, type ToolDef } from '../tools/define.js';
import { getWindowState, listApps, listWindows } from '../tools/inspection.js';
import { page } from '../tools/page.js';
import { typeText } from '../tools/typing.js';

export const VERSION = '0.1.0';

export function allTools(): ToolDef[] {
  return [listApps, listWindows, getWindowState, ...actionTools.slice(0, 3), typeText, ...actionTools.slice(3), page];
}

export function createMcpServer(core: Verity, ctx: CallContext = { connectionId: randomUUID() }): Server {
  const tools = allTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server({ name: 'verity', version: VERSION }, { capabilities: { tools: { listChanged: true } } });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.filter((t) => !t.listed || t.listed(ctx)).map((t) => ({
      name: t.name, description: t.description, inputSchema: inputSchemaOf(t) as any, outputSchema: outputSchemaOf(t) as any,
      annotations: t.annotations,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool || (tool.listed && !tool.listed(ctx))) {
      return toCallToolResult(refusalReply(new Refusal('invalid_arguments', `name: no tool named "${request.params.name}"`)));
    }
    return runTool(tool, request.params.arguments, core, ctx);
  });
  return server;
}

/** Validates and runs one tool; every failure becomes a refusal, so the server keeps serving. */
export async function runTool(tool: ToolDef, rawArgs: unknown, core: Verity, ctx: CallContext): Promise<CallToolResult> {
  try {
    const args = parseArgs(tool, rawArgs);
    return toCallToolResult(await tool.handler(args, core, ctx));
  } catch (e) {
    return toCallToolResult(refusalReply(asRefusal(e)));
  }
}

/** Protocol-level failures (a tab closed mid-call, the browser gone) as refusals that say what happened. */
export function asRefusal(e: unknown): Refusal {
  if (e instanceof Refusal) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (/Target closed|Session closed|No target with given id|Target.detachedFromTarget|frame was detached|No frame for given id/i.test(message)) {
    return new Refusal('target_not_found', `the tab or frame closed during the call (${message.slice(0, 160)})`);
  }
  if (/Connection closed|WebSocket is not open|Protocol error.*closed|browser has disconnected|socket hang up/i.test(message)) {
    return new Refusal('unavailable', `the browser went away during the call (${message.slice(0, 160)}); a launched browser is relaunched on the next call`, { retryable: true });
  }
  if (/timed out/i.test(message)) return new Refusal('timeout', message.slice(0, 300), { retryable: true });
  return new Refusal('unavailable', `internal error: ${message.slice(0, 300)}`);
}
