// Agent links: how an MCP session is bound to one Control UI connection. The Control UI mints a link;
// an MCP client that connects to /mcp with `X-Verity-Link: <link_token>` is bound to that connection,
// captured when the link is accepted and kept with every call of that MCP session.
import { randomBytes } from 'node:crypto';
import type { GatewayConnection } from './connection.js';

export interface LinkTarget { connId: string; caps: string[] }

export class Links {
  private readonly tokens = new Map<string, LinkTarget>();

  constructor(private readonly mcpUrl: () => string) {}

  mint(conn: GatewayConnection): { mcp_url: string; link_token: string } {
    const token = randomBytes(18).toString('base64url');
    this.tokens.set(token, { connId: conn.connId, caps: [...conn.caps] });
    return { mcp_url: this.mcpUrl(), link_token: token };
  }

  /** The captured target of a link (a frozen copy: later changes to the link table do not move it). */
  resolve(token: string): LinkTarget | undefined {
    const target = this.tokens.get(token);
    return target ? Object.freeze({ ...target, caps: [...target.caps] }) : undefined;
  }

  /** The Control UI connection went away: its links can no longer bind new MCP sessions. */
  forget(connId: string): void {
    for (const [token, target] of this.tokens) if (target.connId === connId) this.tokens.delete(token);
  }
}
