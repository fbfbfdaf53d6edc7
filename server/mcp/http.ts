// MCP over Streamable HTTP at /mcp, one MCP server per HTTP session, behind the gateway token.
// An HTTP client can vanish without ending its session (no DELETE), so an MCP session with no request for
// VERITY_HTTP_SESSION_IDLE_MS (default twice VERITY_SESSION_IDLE_MS, at least a minute: its Verity sessions
// have idled out by then, and their "ended" state stayed readable for a while) is closed here:
// its sessions end as a disconnect and its entries go. The ids of the last reaped sessions are kept
// (bounded) only to tell a returning client why its id is unknown.
// A client that went away shows it sooner when it had a GET stream: that stream closed and no request came
// for VERITY_HTTP_ABANDONED_MS (30 s; the SDK's client reopens a dropped stream within seconds). Such a
// session is closed then, so a pool browser it holds goes back to the pool without the long idle wait.
//
// Fair shares (issue #22 item 5): one client must not take every slot (253 initializes with the agent
// credential locked every other agent out). The agent credential is shared by every agent on the machine,
// so shares are per client: a client is its agent link (X-Verity-Link, minted by the operator's Control UI),
// or else the clientInfo name and version of its initialize with its remote address. A client holds at
// most VERITY_MAX_HTTP_SESSIONS_PER_CLIENT sessions and VERITY_MAX_PENDING_CALLS_PER_CLIENT requests in
// flight; unlinked clients together hold at most VERITY_MAX_HTTP_SESSIONS_UNLINKED sessions (the rest is
// kept for linked agents) and VERITY_MAX_PENDING_CALLS_UNLINKED requests. clientInfo is the client's own
// word, so a hog can take several names; that is why the table is also fair when full: a new client's
// initialize closes the least recently used idle session of the client furthest over its share (pool /
// clients) before it is refused. Fewer requests may be in flight than sessions exist, so some are idle.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
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
  /** GET streams open now, and whether the client ever opened one (only then does a closed one mean it left). */
  streams: number;
  streamSeen: boolean;
  /** Whose share it counts against (see the top of this file); `name` is for logs (no secret in it). */
  client: { key: string; name: string; linked: boolean };
}

const REAPED_REMEMBERED = 1024;
/** An initialize is small; its body is read here (for clientInfo) up to this bound. */
const MAX_INITIALIZE_BYTES = 64 * 1024;

/** A cap was hit: the reply names it and says when a slot frees. */
class ShareRefusal {
  constructor(
    readonly status: number,
    readonly message: string,
    readonly data: { code: string; limit: number; retryable: true; retry_after_s?: number },
  ) {}
}

export class McpHttpEndpoint {
  private readonly sessions = new Map<string, HttpSession>();
  /** Every MCP session counted against a share, the ones still initializing included. */
  private readonly entries = new Set<HttpSession>();
  /** Recently closed session ids (oldest first) and why, so a late client hears it; bounded. */
  private readonly reaped = new Map<string, string>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly idleMs: number;
  private readonly abandonedMs = LIMITS.httpAbandonedMs;

  constructor(
    private readonly core: Verity,
    private readonly links?: LinkResolver,
    private readonly log: (line: string) => void = () => {},
  ) {
    const idleMs = LIMITS.httpSessionIdleMs ?? Math.max(2 * core.sessions.idleMs, 60_000);
    this.idleMs = idleMs;
    const every = Math.max(50, Math.min(5000, Math.min(idleMs, this.abandonedMs) / 4));
    this.sweeper = setInterval(() => this.reap(idleMs), every);
    this.sweeper.unref();
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    if (existing) return this.serve(existing, req, res);
    if (typeof sessionId === 'string' && this.reaped.has(sessionId))
      return reply(res, 404, this.reaped.get(sessionId)!);
    if (sessionId) return reply(res, 404, 'unknown Mcp-Session-Id; start a new MCP session (initialize) without it');
    if (req.method !== 'POST') return reply(res, 405, 'start an MCP session with a POST of initialize');
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
    // A linked client's share is its link; an unlinked one's needs its clientInfo, so its body is read here.
    let parsed: unknown;
    if (!uiTarget) {
      const body = await readBody(req, MAX_INITIALIZE_BYTES);
      if (body === null) return reply(res, 413, `an initialize request must not exceed ${MAX_INITIALIZE_BYTES} bytes`);
      try {
        parsed = JSON.parse(body);
      } catch {
        return reply(res, 400, 'Parse error: the request body is not JSON', undefined, -32700);
      }
    }
    const client = clientOf(uiTarget ? (linkHeader as string) : undefined, parsed, req.socket.remoteAddress);
    const refused = this.admit(client);
    if (refused) return reply(res, refused.status, refused.message, refused.data);
    const connectionId = `http-${randomUUID()}`;
    const entry: HttpSession = {
      transport: null!,
      connectionId,
      lastSeen: Date.now(),
      inFlight: 0,
      streams: 0,
      streamSeen: false,
      client,
    };
    this.entries.add(entry);
    entry.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, entry);
      },
    });
    entry.transport.onclose = () => {
      this.entries.delete(entry);
      if (entry.transport.sessionId) this.sessions.delete(entry.transport.sessionId);
    };
    // The audit trail names the credential: the agent credential, and the link (by a hash: the link token is a secret).
    const credential = uiTarget
      ? `agent+link:${createHash('sha256')
          .update(linkHeader as string)
          .digest('hex')
          .slice(0, 12)}`
      : 'agent';
    const server = createMcpServer(this.core, { connectionId, uiTarget, transport: 'http', credential });
    await connectMcp(server, entry.transport, this.core);
    try {
      await this.serve(entry, req, res, parsed);
    } finally {
      // Not an initialize the SDK accepted: it holds no slot.
      if (!entry.transport.sessionId) {
        this.entries.delete(entry);
        void entry.transport.close().catch(() => {});
      }
    }
  }

  /**
   * Room for one more MCP session of this client, or the refusal naming the cap and when a slot frees.
   * When the whole table (or the unlinked clients' part of it) is full, the least recently used idle
   * session of the client furthest over its fair share is closed first, so the newcomer gets in.
   */
  private admit(client: HttpSession['client']): ShareRefusal | null {
    const frees = `a slot frees when one of them ends (DELETE /mcp) or has gone ${Math.round(this.idleMs / 1000)} s without a request`;
    const own = [...this.entries].filter((e) => e.client.key === client.key).length;
    if (own >= LIMITS.httpSessionsPerClient)
      return new ShareRefusal(
        429,
        `too_many_sessions: this client (${client.name}) already holds ${LIMITS.httpSessionsPerClient} MCP sessions (VERITY_MAX_HTTP_SESSIONS_PER_CLIENT); ${frees}`,
        { code: 'too_many_sessions', limit: LIMITS.httpSessionsPerClient, retryable: true, retry_after_s: this.idleS },
      );
    const pools: Array<{ cap: number; member: (e: HttpSession) => boolean; message: string }> = [
      {
        cap: LIMITS.httpMcpSessions,
        member: () => true,
        message: `too_many_sessions: the gateway already serves ${LIMITS.httpMcpSessions} MCP sessions over HTTP (VERITY_MAX_HTTP_SESSIONS) and none is idle over its client's share; ${frees}`,
      },
    ];
    if (!client.linked)
      pools.push({
        cap: LIMITS.httpSessionsUnlinked,
        member: (e) => !e.client.linked,
        message: `too_many_sessions: clients without an agent link already hold ${LIMITS.httpSessionsUnlinked} MCP sessions (VERITY_MAX_HTTP_SESSIONS_UNLINKED; the rest is kept for agents linked from the Control UI) and none is idle over its client's share; ${frees}`,
      });
    for (const pool of pools) {
      const members = [...this.entries].filter(pool.member);
      if (members.length < pool.cap) continue;
      if (!this.evictOverShare(members, pool.cap, client.key))
        return new ShareRefusal(503, pool.message, {
          code: 'too_many_sessions',
          limit: pool.cap,
          retryable: true,
          retry_after_s: this.idleS,
        });
    }
    return null;
  }

  private get idleS(): number {
    return Math.round(this.idleMs / 1000);
  }

  /** Closes the least recently used idle session of the client furthest over its share of `cap`; false when none is. */
  private evictOverShare(members: HttpSession[], cap: number, newcomer: string): boolean {
    const byClient = new Map<string, HttpSession[]>();
    for (const e of members) byClient.set(e.client.key, [...(byClient.get(e.client.key) ?? []), e]);
    const share = Math.max(1, Math.floor(cap / (byClient.size + (byClient.has(newcomer) ? 0 : 1))));
    const over = [...byClient.values()].filter((list) => list.length > share).sort((x, y) => y.length - x.length);
    for (const list of over) {
      const idle = list.filter((e) => e.transport.sessionId && this.idle(e)).sort((x, y) => x.lastSeen - y.lastSeen)[0];
      if (!idle) continue;
      this.closeSession(
        idle,
        `this MCP session was closed to make room for another client: its client (${idle.client.name}) held ${list.length} of ${cap} sessions, over its share of ${share} (VERITY_MAX_HTTP_SESSIONS_PER_CLIENT); end sessions you do not use, then start a new MCP session (initialize) without Mcp-Session-Id`,
        `closed the MCP session ${idle.transport.sessionId} (${idle.client.name}): over its client's share (${list.length} of ${cap}, share ${share}), room for a new client`,
      );
      return true;
    }
    return false;
  }

  /** Nothing in flight, over HTTP or in any of its Verity sessions. */
  private idle(entry: HttpSession): boolean {
    return entry.inFlight === 0 && !this.core.sessions.list(entry.connectionId).some((s) => s.inFlight > 0);
  }

  /** Closes an MCP session (its Verity sessions end as a disconnect); a late request with its id hears `why`. */
  private closeSession(entry: HttpSession, why: string, logLine: string): void {
    const id = entry.transport.sessionId!;
    this.sessions.delete(id);
    this.entries.delete(entry);
    this.log(logLine);
    this.reaped.set(id, why);
    if (this.reaped.size > REAPED_REMEMBERED) this.reaped.delete(this.reaped.keys().next().value!);
    void entry.transport.close().catch(() => {});
  }

  /** Refuses a request over its client's (or the unlinked clients') share of requests in flight. */
  private pendingRefusal(entry: HttpSession): ShareRefusal | null {
    let own = 0;
    let unlinked = 0;
    for (const e of this.entries) {
      if (e.client.key === entry.client.key) own += e.inFlight;
      if (!e.client.linked) unlinked += e.inFlight;
    }
    const frees = 'a slot frees as soon as one of them is answered';
    if (own >= LIMITS.pendingCallsPerClient)
      return new ShareRefusal(
        429,
        `too_many_pending_calls: this client (${entry.client.name}) already has ${LIMITS.pendingCallsPerClient} requests in flight (VERITY_MAX_PENDING_CALLS_PER_CLIENT); ${frees}`,
        { code: 'too_many_pending_calls', limit: LIMITS.pendingCallsPerClient, retryable: true },
      );
    if (!entry.client.linked && unlinked >= LIMITS.pendingCallsUnlinked)
      return new ShareRefusal(
        429,
        `too_many_pending_calls: clients without an agent link already have ${LIMITS.pendingCallsUnlinked} requests in flight (VERITY_MAX_PENDING_CALLS_UNLINKED); ${frees}`,
        { code: 'too_many_pending_calls', limit: LIMITS.pendingCallsUnlinked, retryable: true },
      );
    return null;
  }

  /**
   * Counts the POSTs in flight (a long-lived GET stream is not activity) and when the last one was seen,
   * and the GET streams open (one closing counts as the client's last sign of life).
   */
  private async serve(entry: HttpSession, req: IncomingMessage, res: ServerResponse, parsed?: unknown): Promise<void> {
    entry.lastSeen = Date.now();
    if (req.method === 'GET') {
      entry.streams++;
      entry.streamSeen = true;
      res.once('close', () => {
        entry.streams--;
        entry.lastSeen = Date.now();
      });
    }
    if (req.method !== 'POST') return entry.transport.handleRequest(req, res);
    const refused = this.pendingRefusal(entry);
    if (refused) return reply(res, refused.status, refused.message, refused.data);
    entry.inFlight++;
    const done = () => {
      entry.inFlight--;
      entry.lastSeen = Date.now();
    };
    // The SDK answers tool calls on the response stream; the call is over when the response is.
    res.once('close', done);
    try {
      await entry.transport.handleRequest(req, res, parsed);
    } catch (e) {
      res.off('close', done);
      done();
      throw e;
    }
  }

  /**
   * Closes sessions with nothing in flight that idled for the session idle time, or whose client left
   * (its GET stream closed, then no request for VERITY_HTTP_ABANDONED_MS); their sessions end as a disconnect.
   */
  private reap(idleMs: number): void {
    const now = Date.now();
    for (const entry of this.sessions.values()) {
      const quiet = now - entry.lastSeen;
      if (quiet < Math.min(idleMs, this.abandonedMs) || !this.idle(entry)) continue;
      if (quiet < idleMs) {
        if (!entry.streamSeen || entry.streams > 0) continue;
        const s = Math.round(this.abandonedMs / 1000);
        this.closeSession(
          entry,
          `this MCP session was closed: its GET stream closed and no request came for ${s} s (VERITY_HTTP_ABANDONED_MS), so its client was taken to have gone; start a new MCP session (initialize) without Mcp-Session-Id`,
          `closed the MCP session ${entry.transport.sessionId} (${this.core.connections.get(entry.connectionId)?.client ?? entry.client.name}): its GET stream closed and no request came for ${s} s`,
        );
        continue;
      }
      this.closeSession(
        entry,
        `this MCP session was closed after ${Math.round(idleMs / 1000)} s without a request (VERITY_HTTP_SESSION_IDLE_MS); start a new MCP session (initialize) without Mcp-Session-Id`,
        `closed the idle MCP session ${entry.transport.sessionId} (${this.core.connections.get(entry.connectionId)?.client ?? entry.client.name}): no request for ${Math.round(idleMs / 1000)} s`,
      );
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((s) => s.transport.close().catch(() => {})));
  }
}

function reply(res: ServerResponse, status: number, message: string, data?: ShareRefusal['data'], code = -32000): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (data?.retry_after_s) headers['retry-after'] = String(data.retry_after_s);
  res.writeHead(status, headers);
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null }));
}

/** The request body as text, or null past `max` bytes (the rest is not read). */
async function readBody(req: IncomingMessage, max: number): Promise<string | null> {
  if (Number(req.headers['content-length']) > max) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Whose share a new MCP session counts against: its link, or its clientInfo and remote address. */
function clientOf(link: string | undefined, body: unknown, remote: string | undefined): HttpSession['client'] {
  const info = (body as { params?: { clientInfo?: { name?: unknown; version?: unknown } } } | null)?.params?.clientInfo;
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 128) : '?');
  const name = `${text(info?.name)} ${text(info?.version)}`;
  if (link) return { key: `link\u0000${link}`, name: `${name}, linked`, linked: true };
  return { key: `info\u0000${name}\u0000${remote ?? ''}`, name, linked: false };
}
