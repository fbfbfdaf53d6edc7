// MCP over Streamable HTTP at /mcp, one MCP server per HTTP session, behind the gateway token.
// An HTTP client can vanish without ending its session (no DELETE), so an MCP session with no request for
// VERITY_HTTP_SESSION_IDLE_MS (default twice VERITY_SESSION_IDLE_MS, at least a minute: its Verity sessions
// have idled out by then, and their "ended" state stayed readable for a while) is closed here:
// its sessions end as a disconnect and its entries go. The ids of the last reaped sessions are kept
// (bounded) only to tell a returning client why its id is unknown.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Verity } from '../core.js';
import { connectMcp, createMcpServer } from './server.js';
import { LIMITS } from '../limits.js';

/** Resolves an X-Verity-Link token to the Control UI connection it binds to. */
export type LinkResolver = (token: string) => { connId: string; caps: string[] } | undefined;

interface HttpSession {
  transport: StreamableHTTPServerTransport;
  connectionId: string;
  lastSeen: number;
  inFlight: number;
}

const REAPED_REMEMBERED = 1024;

export class McpHttpEndpoint {
  private readonly sessions = new Map<string, HttpSession>();
  /** Recently reaped session ids (oldest first), so a late client hears why; bounded. */
  private readonly reaped = new Set<string>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly idleMs: number;

  constructor(
    private readonly core: Verity,
    private readonly links?: LinkResolver,
    private readonly log: (line: string) => void = () => {},
  ) {
    const idleMs = LIMITS.httpSessionIdleMs ?? Math.max(2 * core.sessions.idleMs, 60_000);
    this.idleMs = idleMs;
    this.sweeper = setInterval(() => this.reap(idleMs), Math.max(50, Math.min(5000, idleMs / 4)));
    this.sweeper.unref();
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    if (existing) return this.serve(existing, req, res);
    if (typeof sessionId === 'string' && this.reaped.has(sessionId)) {
      return reply(
        res,
        404,
        `this MCP session was closed after ${Math.round(this.idleMs / 1000)} s without a request (VERITY_HTTP_SESSION_IDLE_MS); start a new MCP session (initialize) without Mcp-Session-Id`,
      );
    }
    if (sessionId) return reply(res, 404, 'unknown Mcp-Session-Id; start a new MCP session (initialize) without it');
    if (req.method !== 'POST') return reply(res, 405, 'start an MCP session with a POST of initialize');
    if (this.sessions.size >= LIMITS.httpMcpSessions) {
      return reply(
        res,
        503,
        `too_many_sessions: the gateway already serves ${LIMITS.httpMcpSessions} MCP sessions over HTTP (VERITY_MAX_HTTP_SESSIONS); end unused ones (DELETE /mcp) or wait for idle ones to close`,
      );
    }
    const linkHeader = req.headers['x-verity-link'];
    let uiTarget: { connId: string; caps: string[] } | undefined;
    if (typeof linkHeader === 'string' && linkHeader) {
      uiTarget = this.links?.(linkHeader);
      if (!uiTarget)
        return reply(
          res,
          403,
          'X-Verity-Link is unknown or its Control UI has disconnected; copy a fresh link from the open Control UI ("connect an agent")',
        );
    }
    const connectionId = `http-${randomUUID()}`;
    const entry: HttpSession = { transport: null!, connectionId, lastSeen: Date.now(), inFlight: 0 };
    entry.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, entry);
      },
    });
    entry.transport.onclose = () => {
      if (entry.transport.sessionId) this.sessions.delete(entry.transport.sessionId);
    };
    const server = createMcpServer(this.core, { connectionId, uiTarget, transport: 'http' });
    await connectMcp(server, entry.transport, this.core);
    return this.serve(entry, req, res);
  }

  /** Counts the POSTs in flight (a long-lived GET stream is not activity) and when the last one was seen. */
  private async serve(entry: HttpSession, req: IncomingMessage, res: ServerResponse): Promise<void> {
    entry.lastSeen = Date.now();
    if (req.method !== 'POST') return entry.transport.handleRequest(req, res);
    entry.inFlight++;
    const done = () => {
      entry.inFlight--;
      entry.lastSeen = Date.now();
    };
    // The SDK answers tool calls on the response stream; the call is over when the response is.
    res.once('close', done);
    try {
      await entry.transport.handleRequest(req, res);
    } catch (e) {
      res.off('close', done);
      done();
      throw e;
    }
  }

  /** Closes sessions idle for the session idle time with nothing in flight (their sessions end as a disconnect). */
  private reap(idleMs: number): void {
    const now = Date.now();
    for (const [id, entry] of this.sessions) {
      if (entry.inFlight > 0 || now - entry.lastSeen < idleMs) continue;
      if (this.core.sessions.list(entry.connectionId).some((s) => s.inFlight > 0)) continue;
      this.sessions.delete(id);
      this.log(
        `closed the idle MCP session ${id} (${this.core.connections.get(entry.connectionId)?.client ?? 'unknown client'}): no request for ${Math.round(idleMs / 1000)} s`,
      );
      this.reaped.add(id);
      if (this.reaped.size > REAPED_REMEMBERED) this.reaped.delete(this.reaped.values().next().value!);
      void entry.transport.close().catch(() => {});
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => s.transport.close().catch(() => {})));
  }
}

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}
