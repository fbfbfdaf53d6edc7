// MCP over Streamable HTTP at /mcp, one MCP server per HTTP session, behind the gateway token.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Verity } from '../core.js';
import { createMcpServer } from './server.js';

export class McpHttpEndpoint {
  private readonly transports = new Map<string, StreamableHTTPServerTransport>();

  constructor(private readonly core: Verity) {}

  get sessionCount(): number { return this.transports.size; }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? this.transports.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(req, res);
    if (sessionId) return reply(res, 404, 'unknown Mcp-Session-Id; start a new MCP session (initialize) without it');
    if (req.method !== 'POST') return reply(res, 405, 'start an MCP session with a POST of initialize');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => { this.transports.set(id, transport); },
    });
    transport.onclose = () => { if (transport.sessionId) this.transports.delete(transport.sessionId); };
    const server = createMcpServer(this.core, { connectionId: `http-${randomUUID()}` });
    await server.connect(transport);
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
