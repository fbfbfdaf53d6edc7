// Every table a client can grow has a bound here, and every bound has a named refusal where it is hit.
// The defaults hold for an operator with a few Control UIs and dozens of agents; each can be changed by
// an environment variable (read once, at start), mainly so tests can reach a bound quickly.

function fromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (Number.isInteger(n) && n >= 1) return n;
  process.stderr.write(`verity: ${name} must be a positive integer, got ${JSON.stringify(raw)}; using ${fallback}\n`);
  return fallback;
}

const httpMcpSessions = fromEnv('VERITY_MAX_HTTP_SESSIONS', 256);

export const LIMITS = {
  /** Bytes a gateway socket may have queued but unsent; a consumer over it is closed with 4010. */
  sendBufferBytes: fromEnv('VERITY_MAX_SEND_BUFFER_BYTES', 4 * 1024 * 1024),
  /** Accessible objects one native window's walk reads; more make its snapshot incomplete (said, never complete). */
  nativeWalkNodes: fromEnv('VERITY_MAX_NATIVE_WALK_NODES', 20_000),
  /** Children read from one self-managing container (a sheet's cells in view, a document's paragraphs); the same. */
  nativeManagedChildren: fromEnv('VERITY_MAX_NATIVE_MANAGED_CHILDREN', 2_000),
  /**
   * The shortest bound of an app's Cache.GetItems, in ms (it scales with the app's last answer, see
   * native/atspi.ts); past its bound a window is read live instead.
   */
  nativeCacheWaitMs: fromEnv('VERITY_NATIVE_CACHE_WAIT_MS', 8000),
  /** Gateway WebSocket connections at once (Control UIs, the extension, CLI clients). */
  gatewayConnections: fromEnv('VERITY_MAX_GATEWAY_CONNECTIONS', 32),
  /** Live agent links (`agent.link` and terminal links) per Control UI connection, and in all. */
  linksPerConnection: fromEnv('VERITY_MAX_LINKS_PER_CONNECTION', 32),
  links: fromEnv('VERITY_MAX_LINKS', 256),
  /** A link binds new MCP sessions for this long after it was minted (and while its Control UI is open). */
  linkTtlMs: fromEnv('VERITY_LINK_TTL_MS', 24 * 60 * 60_000),
  /** A link whose Control UI went away (a reload) waits this long for the page to reclaim it. */
  linkGraceMs: fromEnv('VERITY_LINK_GRACE_MS', 300_000),
  /** A Control UI's resume ticket (gateway/resume.ts) stays good this long after its connection closed (a reload). */
  resumeGraceMs: fromEnv('VERITY_RESUME_GRACE_MS', 300_000),
  /** A terminal whose panel is hidden (or whose Control UI went away) keeps its shell this long, then it is killed. */
  terminalDetachMs: fromEnv('VERITY_TERMINAL_DETACH_MS', 300_000),
  /** Labelled sessions one MCP connection may hold (live or ended), and sessions in the whole server. */
  labelsPerConnection: fromEnv('VERITY_MAX_LABELS_PER_CONNECTION', 64),
  sessions: fromEnv('VERITY_MAX_SESSIONS', 1024),
  /** MCP sessions over HTTP at once (each holds an MCP server until it ends or idles out). */
  httpMcpSessions,
  /**
   * Fair shares of /mcp (mcp/http.ts): MCP sessions one client may hold, and all clients without an agent
   * link together (the agent credential is shared by every agent on the machine; the rest of the room is
   * kept for agents the operator linked). A client is its agent link, or else its clientInfo name and
   * version with its remote address.
   */
  httpSessionsPerClient: fromEnv('VERITY_MAX_HTTP_SESSIONS_PER_CLIENT', 32),
  httpSessionsUnlinked: fromEnv(
    'VERITY_MAX_HTTP_SESSIONS_UNLINKED',
    Math.max(1, Math.floor((3 * httpMcpSessions) / 4)),
  ),
  /** Requests one client may have in flight at /mcp, and all unlinked clients together. */
  pendingCallsPerClient: fromEnv('VERITY_MAX_PENDING_CALLS_PER_CLIENT', 16),
  pendingCallsUnlinked: fromEnv('VERITY_MAX_PENDING_CALLS_UNLINKED', 128),
  /**
   * An HTTP MCP session with no request for this long is closed (null: twice the session idle time, at
   * least a minute, so an idled-out session's tombstone stays readable to a client that comes back).
   */
  httpSessionIdleMs: process.env.VERITY_HTTP_SESSION_IDLE_MS
    ? fromEnv('VERITY_HTTP_SESSION_IDLE_MS', 60_000)
    : (null as number | null),
  /**
   * An HTTP MCP session whose client had a GET stream open, closed it and sent nothing since is taken to
   * have gone after this long (a client reopens a dropped stream within seconds): closed, its pool browser freed.
   */
  httpAbandonedMs: fromEnv('VERITY_HTTP_ABANDONED_MS', 30_000),
  /** Tool calls waiting for an operator's approval at once. */
  pendingApprovals: fromEnv('VERITY_MAX_PENDING_APPROVALS', 64),
  /** How long a call of a paused agent waits for the operator to resume it before it is refused `session_paused`. */
  pauseTimeoutMs: fromEnv('VERITY_PAUSE_TIMEOUT_MS', 600_000),
  /** Calls of one paused agent that may wait at once; one more is refused `session_paused`. */
  pausedCallsPerAgent: fromEnv('VERITY_MAX_PAUSED_CALLS', 64),
  /** How long sessions.changed deltas are gathered before one is sent. */
  sessionsDebounceMs: 100,
};
