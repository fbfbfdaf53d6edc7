// Resume tickets: how a reloaded Control UI tab reconnects without the operator credential in web storage
// (issue #22 item 4). The page keeps the credential in memory only; the gateway gives each operator
// connection a ticket (hello-ok `resume_token`), the page keeps that in its tab's sessionStorage, and after
// a reload it connects once with it. A ticket is worth nothing to a squatter: it lives in this process's
// memory only, so a process that binds the port while the gateway is down (the only time it can) reads a
// ticket that no later gateway accepts; it is single-use, and expires a grace period after its connection
// closed.
import { randomBytes } from 'node:crypto';
import { LIMITS } from '../limits.js';

interface Ticket {
  connId: string;
  /** When its connection closed (null: still open). */
  closedAt: number | null;
}

export class ResumeTickets {
  /** ticket -> its connection; insertion order is issuing order, so the oldest go first. */
  private readonly tickets = new Map<string, Ticket>();
  /** Bound: a ticket per open connection, and as many again of closed ones within their grace period. */
  private readonly max = 2 * LIMITS.gatewayConnections;

  /** A new ticket for this connection (its earlier one, if any, is void). */
  issue(connId: string): string {
    this.prune();
    for (const [t, entry] of this.tickets) if (entry.connId === connId) this.tickets.delete(t);
    while (this.tickets.size >= this.max) this.tickets.delete(this.tickets.keys().next().value!);
    const ticket = `resume.${randomBytes(24).toString('base64url')}`;
    this.tickets.set(ticket, { connId, closedAt: null });
    return ticket;
  }

  /** True once for a live ticket (it is used up); false for anything else. */
  redeem(ticket: string): boolean {
    this.prune();
    return this.tickets.delete(ticket);
  }

  /** The connection went away: its ticket stays good for the grace period (a reload comes back within it). */
  closed(connId: string): void {
    for (const entry of this.tickets.values()) if (entry.connId === connId) entry.closedAt ??= Date.now();
  }

  private prune(): void {
    const now = Date.now();
    for (const [t, entry] of this.tickets)
      if (entry.closedAt !== null && now - entry.closedAt > LIMITS.resumeGraceMs) this.tickets.delete(t);
  }
}
