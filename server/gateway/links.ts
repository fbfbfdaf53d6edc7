// Agent links: how an MCP session is bound to one Control UI connection. The Control UI mints a link;
// an MCP client that connects to /mcp with `X-Verity-Link: <link_token>` is bound to that connection,
// captured when the link is accepted and kept with every call of that MCP session.
import { randomBytes } from 'node:crypto';
import type { GatewayConnection } from './connection.js';
import { GatewayError } from './protocol.js';
import { LIMITS } from '../limits.js';

export interface LinkTarget {
  readonly connId: string;
  readonly caps: string[];
}

/** A link's current owner; `orphanedAt` is set while its Control UI is gone (a reload, a restart of the page). */
interface Entry {
  target: { connId: string; caps: string[] };
  expires: number;
  orphanedAt: number | null;
}

export class Links {
  /** token -> target and expiry; insertion order is minting order, so the oldest come first. */
  private readonly tokens = new Map<string, Entry>();

  constructor(private readonly mcpUrl: () => string) {}

  /** A new link, refused (TOO_MANY) over the per-connection or the total bound; expired links go first. */
  mint(conn: GatewayConnection): { mcp_url: string; link_token: string; expires_at: string } {
    this.prune();
    const mine = [...this.tokens.values()].filter((t) => t.target.connId === conn.connId).length;
    if (mine >= LIMITS.linksPerConnection) {
      throw new GatewayError(
        'TOO_MANY',
        `this connection already holds ${LIMITS.linksPerConnection} agent links (VERITY_MAX_LINKS_PER_CONNECTION); reuse one, or reconnect to start afresh`,
        { limit: LIMITS.linksPerConnection },
      );
    }
    if (this.tokens.size >= LIMITS.links) {
      throw new GatewayError(
        'TOO_MANY',
        `the gateway already holds ${LIMITS.links} agent links (VERITY_MAX_LINKS); they expire, or go when their Control UI disconnects`,
        { limit: LIMITS.links },
      );
    }
    const token = randomBytes(18).toString('base64url');
    const expires = Date.now() + LIMITS.linkTtlMs;
    this.tokens.set(token, { target: { connId: conn.connId, caps: [...conn.caps] }, expires, orphanedAt: null });
    return { mcp_url: this.mcpUrl(), link_token: token, expires_at: new Date(expires).toISOString() };
  }

  /**
   * A reloaded Control UI asks for the link it held back (it keeps the token in its tab's sessionStorage):
   * given back when its old connection is gone (or is this one), so agents bound to it keep working.
   * A link whose Control UI is still connected is never taken over (a duplicated browser tab gets its own).
   */
  reclaim(token: string, conn: GatewayConnection): { mcp_url: string; link_token: string; expires_at: string } | null {
    this.prune();
    const entry = this.tokens.get(token);
    if (!entry || (entry.orphanedAt === null && entry.target.connId !== conn.connId)) return null;
    // The target object is shared with the MCP sessions bound through this link: they follow it.
    entry.target.connId = conn.connId;
    entry.target.caps = [...conn.caps];
    entry.orphanedAt = null;
    return { mcp_url: this.mcpUrl(), link_token: token, expires_at: new Date(entry.expires).toISOString() };
  }

  /**
   * The target of a link, read-only. It follows the link to the Control UI connection that holds it now
   * (the same page after a reload reclaims it); only a holder of the link token and the operator
   * credential can move it.
   */
  resolve(token: string): LinkTarget | undefined {
    this.prune();
    const entry = this.tokens.get(token);
    if (!entry || entry.orphanedAt !== null) return undefined;
    return entry.target;
  }

  get size(): number {
    return this.tokens.size;
  }

  private prune(): void {
    const now = Date.now();
    for (const [token, target] of this.tokens) {
      if (target.expires <= now || (target.orphanedAt !== null && now - target.orphanedAt > LIMITS.linkGraceMs))
        this.tokens.delete(token);
    }
  }

  /**
   * The Control UI connection went away: its links bind no new MCP sessions, and calls through them are
   * UNAVAILABLE, until the same page reclaims them (bounded: VERITY_LINK_GRACE_MS), then they are gone.
   */
  forget(connId: string): void {
    const now = Date.now();
    for (const entry of this.tokens.values())
      if (entry.target.connId === connId && entry.orphanedAt === null) entry.orphanedAt = now;
  }
}
