// Agent links: how an MCP session is bound to one Control UI connection. The Control UI mints a link;
// an MCP client that connects to /mcp with `X-Verity-Link: <link_token>` is bound to that connection,
// captured when the link is accepted and kept with every call of that MCP session.
import { randomBytes } from 'node:crypto';
import type { GatewayConnection } from './connection.js';
import { GatewayError } from './protocol.js';
import { LIMITS } from '../limits.js';

export interface LinkTarget { connId: string; caps: string[] }

export class Links {
  /** token -> target and expiry; insertion order is minting order, so the oldest come first. */
  private readonly tokens = new Map<string, LinkTarget & { expires: number }>();

  constructor(private readonly mcpUrl: () => string) {}

  /** A new link, refused (TOO_MANY) over the per-connection or the total bound; expired links go first. */
  mint(conn: GatewayConnection): { mcp_url: string; link_token: string; expires_at: string } {
    this.prune();
    const mine = [...this.tokens.values()].filter((t) => t.connId === conn.connId).length;
    if (mine >= LIMITS.linksPerConnection) {
      throw new GatewayError('TOO_MANY', `this connection already holds ${LIMITS.linksPerConnection} agent links (VERITY_MAX_LINKS_PER_CONNECTION); reuse one, or reconnect to start afresh`, { limit: LIMITS.linksPerConnection });
    }
    if (this.tokens.size >= LIMITS.links) {
      throw new GatewayError('TOO_MANY', `the gateway already holds ${LIMITS.links} agent links (VERITY_MAX_LINKS); they expire, or go when their Control UI disconnects`, { limit: LIMITS.links });
    }
    const token = randomBytes(18).toString('base64url');
    const expires = Date.now() + LIMITS.linkTtlMs;
    this.tokens.set(token, { connId: conn.connId, caps: [...conn.caps], expires });
    return { mcp_url: this.mcpUrl(), link_token: token, expires_at: new Date(expires).toISOString() };
  }

  /** The captured target of a link (a frozen copy: later changes to the link table do not move it). */
  resolve(token: string): LinkTarget | undefined {
    this.prune();
    const target = this.tokens.get(token);
    return target ? Object.freeze({ connId: target.connId, caps: [...target.caps] }) : undefined;
  }

  get size(): number { return this.tokens.size; }

  private prune(): void {
    const now = Date.now();
    for (const [token, target] of this.tokens) if (target.expires <= now) this.tokens.delete(token);
  }

  /** The Control UI connection went away: its links can no longer bind new MCP sessions. */
  forget(connId: string): void {
    for (const [token, target] of this.tokens) if (target.connId === connId) this.tokens.delete(token);
  }
}
