// MCP over Streamable HTTP at /mcp, one MCP server per HTTP session, behind the gateway token.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Verity } from '../core.js';
import { connectMcp, createMcpServer } from './server.js';

/** Resolves an X-Verity-Link token to the Control UI connection it binds to. */
export type LinkResolver = (token: string) => { connId: string; caps: string[] } | undefined;

export class McpHttpEndpoint {
  private readonly transports = new Map<string, StreamableHTTPServerTransport>();

  constructor(private readonly core: Verity, private readonly links?: LinkResolver) {}

  get sessionCount(): number { return this.transports.size; }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? this.transports.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(req, res);
    if (sessionId) return reply(res, 404, 'unknown Mcp-Session-Id; start a new MCP session (initialize) without it');
    if (req.method !== 'POST') return reply(res, 405, 'start an MCP session with a POST of initialize');
    const linkHeader = req.headers['x-verity-link'];
    let uiTarget: { connId: string; caps: string[] } | undefined;
    if (typeof linkHeader === 'string' && linkHeader) {
      uiTarget = this.links?.(linkHeader);
      if (!uiTarget) return reply(res, 403, 'X-Verity-Link is unknown or its Control UI has disconnected; copy a fresh link from the open Control UI ("connect an agent")');
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => { this.transports.set(id, transport); },
    });
    transport.onclose = () => { if (transport.sessionId) this.transports.delete(transport.sessionId); };
    const connectionId = `http-${randomUUID()}`;
    const server = createMcpServer(this.core, { connectionId, uiTarget, transport: 'http' });
    await connectMcp(server, transport, this.core);
    return transport.handleRequest(req, res);
  }

  async close(): Promise<void> {
    await Promise.all([...this.transports.values()].map((t) => t.close().catch(() => {})));
  }
}

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}
