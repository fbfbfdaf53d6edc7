// Every table a client can grow has a bound here, and every bound has a named refusal where it is hit.
// The defaults hold for an operator with a few Control UIs and dozens of agents; each can be changed at
// start (configureLimits: the CLI gives the bounds it read from the environment, cli/environment.ts), mainly so
// tests can reach a bound quickly.

const httpMcpSessions = 256;

/** Three quarters of the HTTP sessions go to clients without an agent link, unless set apart. */
function unlinkedShareOf(sessions: number): number {
  return Math.max(1, Math.floor((3 * sessions) / 4));
}

export const LIMITS = {
  /** Bytes a gateway socket may have queued but unsent; a consumer over it is closed with 4010. */
  sendBufferBytes: 4 * 1024 * 1024,
  /** Accessible objects one native window's walk reads; more make its snapshot incomplete (said, never complete). */
  nativeWalkNodes: 20_000,
  /** Children read from one self-managing container (a sheet's cells in view, a document's paragraphs); the same. */
  nativeManagedChildren: 2_000,
  /**
   * The shortest bound of an app's Cache.GetItems, in ms (it scales with the app's last answer, see
   * native/atspi.ts); past its bound a window is read live instead.
   */
  nativeCacheWaitMs: 8000,
  /** Gateway WebSocket connections at once (Control UIs, the extension, CLI clients). */
  gatewayConnections: 32,
  /** Live agent links (`agent.link` and terminal links) per Control UI connection, and in all. */
  linksPerConnection: 32,
  links: 256,
  /** A link binds new MCP sessions for this long after it was minted (and while its Control UI is open). */
  linkTtlMs: 24 * 60 * 60_000,
  /** A link whose Control UI went away (a reload) waits this long for the page to reclaim it. */
  linkGraceMs: 300_000,
  /** A Control UI's resume ticket (gateway/resume.ts) stays good this long after its connection closed (a reload). */
  resumeGraceMs: 300_000,
  /** A terminal whose panel is hidden (or whose Control UI went away) keeps its shell this long, then it is killed. */
  terminalDetachMs: 300_000,
  /** Labelled sessions one MCP connection may hold (live or ended), and sessions in the whole server. */
  labelsPerConnection: 64,
  sessions: 1024,
  /** MCP sessions over HTTP at once (each holds an MCP server until it ends or idles out). */
  httpMcpSessions,
  /**
   * Fair shares of /mcp (mcp/http.ts): MCP sessions one client may hold, and all clients without an agent
   * link together (the agent credential is shared by every agent on the machine; the rest of the room is
   * kept for agents the operator linked). A client is its agent link, or else its clientInfo name and
   * version with its remote address.
   */
  httpSessionsPerClient: 32,
  httpSessionsUnlinked: unlinkedShareOf(httpMcpSessions),
  /** Requests one client may have in flight at /mcp, and all unlinked clients together. */
  pendingCallsPerClient: 16,
  pendingCallsUnlinked: 128,
  /**
   * An HTTP MCP session with no request for this long is closed (null: twice the session idle time, at
   * least a minute, so an idled-out session's tombstone stays readable to a client that comes back).
   */
  httpSessionIdleMs: null as number | null,
  /**
   * An HTTP MCP session whose client had a GET stream open, closed it and sent nothing since is taken to
   * have gone after this long (a client reopens a dropped stream within seconds): closed, its pool browser freed.
   */
  httpAbandonedMs: 30_000,
  /** Tool calls waiting for an operator's approval at once. */
  pendingApprovals: 64,
  /** How long a call of a paused agent waits for the operator to resume it before it is refused `session_paused`. */
  pauseTimeoutMs: 600_000,
  /** Calls of one paused agent that may wait at once; one more is refused `session_paused`. */
  pausedCallsPerAgent: 64,
  /** How long sessions.changed deltas are gathered before one is sent. */
  sessionsDebounceMs: 100,
};

export type Limits = typeof LIMITS;

/**
 * Sets bounds at start, before the parts that hold them are built (the CLI from the variables it read; a test
 * as values). A bound not given keeps its value; the unlinked share of HTTP sessions follows their number.
 */
export function configureLimits(values: Partial<Limits>): void {
  Object.assign(LIMITS, values);
  if (values.httpMcpSessions !== undefined && values.httpSessionsUnlinked === undefined)
    LIMITS.httpSessionsUnlinked = unlinkedShareOf(values.httpMcpSessions);
}
