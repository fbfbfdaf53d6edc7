// The environment variables that are not options: set by Verity itself (the Control UI terminal's shells),
// credentials (never taken on the command line), and the bounds of server/limits.ts. --help lists them;
// this module and cli/parse.ts are the only readers of the environment (scripts/check-deps.mjs holds it).
import { homedir } from 'node:os';
import { join } from 'node:path';
import { LIMITS, type Limits } from '../limits.js';
/** Variables read from the environment that are not options (set by Verity itself, or for development). */
export const ENV_ONLY: ReadonlyArray<{ env: string; help: string }> = [
  {
    env: 'VERITY_MCP_URL',
    help: "set in the Control UI terminal's shells: the gateway's /mcp, so `verity mcp` started there relays to it",
  },
  {
    env: 'VERITY_LINK',
    help: "set in the Control UI terminal's shells: binds an agent started there to that Control UI",
  },
  {
    env: 'VERITY_TOKEN',
    help: "for `verity start`: the operator credential (else --token-file or the config dir); in the Control UI terminal's shells: the agent credential for the relay",
  },
  {
    env: 'VERITY_AGENT_TOKEN',
    help: 'for `verity start`: the agent credential (else --agent-token-file or the config dir)',
  },
  // Bounds (server/limits.ts): each has a named refusal when reached.
  {
    env: 'VERITY_MAX_SEND_BUFFER_BYTES',
    help: 'unsent bytes a gateway socket may hold before it is closed 4010 "too slow" (default 4194304)',
  },
  {
    env: 'VERITY_MAX_GATEWAY_CONNECTIONS',
    help: 'gateway WebSocket connections at once; more are refused 503 TOO_MANY (default 32)',
  },
  {
    env: 'VERITY_MAX_LINKS_PER_CONNECTION',
    help: 'agent links (agent.link) one Control UI connection may hold; more are refused TOO_MANY (default 32)',
  },
  { env: 'VERITY_MAX_LINKS', help: 'agent links in all (default 256)' },
  {
    env: 'VERITY_RESUME_GRACE_MS',
    help: "how long a Control UI's single-use resume ticket (for a reload) stays valid after its connection closed (default 300000, 5 min)",
  },
  {
    env: 'VERITY_MAX_HTTP_SESSIONS_PER_CLIENT',
    help: 'MCP sessions over HTTP one client (its agent link, else its clientInfo and address) may hold; more are refused 429 too_many_sessions (default 32)',
  },
  {
    env: 'VERITY_MAX_HTTP_SESSIONS_UNLINKED',
    help: 'MCP sessions over HTTP of all clients without an agent link together; the rest is kept for agents linked from the Control UI (default three quarters of VERITY_MAX_HTTP_SESSIONS)',
  },
  {
    env: 'VERITY_MAX_PENDING_CALLS_PER_CLIENT',
    help: 'requests one MCP client may have in flight; more are refused too_many_pending_calls (default 16)',
  },
  {
    env: 'VERITY_MAX_PENDING_CALLS_UNLINKED',
    help: 'requests in flight of all clients without an agent link together (default 128)',
  },
  {
    env: 'VERITY_MAX_NATIVE_WALK_NODES',
    help: "accessibility nodes one native window's tree walk reads at most; past it the snapshot says it is incomplete (default 20000)",
  },
  {
    env: 'VERITY_MAX_NATIVE_MANAGED_CHILDREN',
    help: 'children read by index from one container that manages its own (a document, a sheet) at most (default 2000)',
  },
  { env: 'VERITY_LINK_TTL_MS', help: 'how long an agent link lasts (default 86400000, 24 h)' },
  {
    env: 'VERITY_MAX_LABELS_PER_CONNECTION',
    help: 'session labels one MCP connection may hold; more are refused too_many_sessions (default 64)',
  },
  { env: 'VERITY_MAX_SESSIONS', help: 'sessions in all; more are refused too_many_sessions (default 1024)' },
  {
    env: 'VERITY_MAX_HTTP_SESSIONS',
    help: 'MCP sessions over HTTP at once; more are refused 503 too_many_sessions (default 256)',
  },
  {
    env: 'VERITY_HTTP_SESSION_IDLE_MS',
    help: 'an HTTP MCP session idle this long is closed (default twice the session idle time, at least 60 s)',
  },
  {
    env: 'VERITY_HTTP_ABANDONED_MS',
    help: 'an HTTP MCP session whose GET stream closed and that sent no request since is closed after this long, its pool browser freed (default 30000)',
  },
  {
    env: 'VERITY_MAX_PENDING_APPROVALS',
    help: 'calls waiting for an operator at once; more are refused too_many_approvals (default 64)',
  },
  {
    env: 'VERITY_EXTENSION_ID',
    help: "the companion extension's id, for a build of it signed with another key (default aehmmekdcffbjdehcemegbhmemnbmdmh)",
  },
];

/** The bounds of server/limits.ts each variable sets. */
const BOUND_VARIABLES: ReadonlyArray<[string, keyof Limits]> = [
  ['VERITY_MAX_SEND_BUFFER_BYTES', 'sendBufferBytes'],
  ['VERITY_MAX_NATIVE_WALK_NODES', 'nativeWalkNodes'],
  ['VERITY_MAX_NATIVE_MANAGED_CHILDREN', 'nativeManagedChildren'],
  ['VERITY_NATIVE_CACHE_WAIT_MS', 'nativeCacheWaitMs'],
  ['VERITY_MAX_GATEWAY_CONNECTIONS', 'gatewayConnections'],
  ['VERITY_MAX_LINKS_PER_CONNECTION', 'linksPerConnection'],
  ['VERITY_MAX_LINKS', 'links'],
  ['VERITY_LINK_TTL_MS', 'linkTtlMs'],
  ['VERITY_LINK_GRACE_MS', 'linkGraceMs'],
  ['VERITY_RESUME_GRACE_MS', 'resumeGraceMs'],
  ['VERITY_TERMINAL_DETACH_MS', 'terminalDetachMs'],
  ['VERITY_MAX_LABELS_PER_CONNECTION', 'labelsPerConnection'],
  ['VERITY_MAX_SESSIONS', 'sessions'],
  ['VERITY_MAX_HTTP_SESSIONS', 'httpMcpSessions'],
  ['VERITY_MAX_HTTP_SESSIONS_PER_CLIENT', 'httpSessionsPerClient'],
  ['VERITY_MAX_HTTP_SESSIONS_UNLINKED', 'httpSessionsUnlinked'],
  ['VERITY_MAX_PENDING_CALLS_PER_CLIENT', 'pendingCallsPerClient'],
  ['VERITY_MAX_PENDING_CALLS_UNLINKED', 'pendingCallsUnlinked'],
  ['VERITY_HTTP_SESSION_IDLE_MS', 'httpSessionIdleMs'],
  ['VERITY_HTTP_ABANDONED_MS', 'httpAbandonedMs'],
  ['VERITY_MAX_PENDING_APPROVALS', 'pendingApprovals'],
  ['VERITY_PAUSE_TIMEOUT_MS', 'pauseTimeoutMs'],
  ['VERITY_MAX_PAUSED_CALLS', 'pausedCallsPerAgent'],
];

/**
 * The bounds the environment sets (for configureLimits). A value that is not a positive integer is said on
 * stderr and left at its default (VERITY_HTTP_SESSION_IDLE_MS, whose default is derived: at a minute).
 */
export function limitsFromEnv(env: NodeJS.ProcessEnv): Partial<Limits> {
  const limits: Partial<Record<keyof Limits, number>> = {};
  for (const [name, key] of BOUND_VARIABLES) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (Number.isInteger(n) && n >= 1) limits[key] = n;
    else {
      const fallback = key === 'httpSessionIdleMs' ? 60_000 : LIMITS[key];
      process.stderr.write(
        `verity: ${name} must be a positive integer, got ${JSON.stringify(raw)}; using ${fallback}\n`,
      );
      if (key === 'httpSessionIdleMs') limits[key] = fallback;
    }
  }
  return limits;
}

/** The companion extension's id: VERITY_EXTENSION_ID for a build signed with another key. */
export function extensionIdFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  return env.VERITY_EXTENSION_ID || undefined;
}

/** The config dir: --config-dir (or VERITY_CONFIG_DIR, for `verity doctor` too), else under XDG_CONFIG_HOME. */
export function configDirFrom(given: string | undefined, env: NodeJS.ProcessEnv): string {
  return given ?? env.VERITY_CONFIG_DIR ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'verity');
}
