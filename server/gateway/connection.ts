// One WebSocket connection to the gateway: the handshake state, its scopes and caps, and its own event
// sequence numbers.
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { EVENT_SCOPES, GatewayError, hasScope, type ConnectParams, type Role, type Scope } from './protocol.js';

export class GatewayConnection {
  readonly connId = randomUUID();
  hello: ConnectParams | null = null;
  /** Set at connect from the credential presented (never from the request). */
  role: Role | null = null;
  /** The extension pairing whose relay secret this connection presented (revoking it closes this). */
  pairingId: string | null = null;
  private seq = 0;
  /** Resources this connection owns (terminals, screencasts), released when it closes. */
  readonly disposers = new Set<() => void>();

  constructor(readonly socket: WebSocket, readonly origin: string | null) {}

  get scopes(): readonly string[] { return this.hello?.scopes ?? []; }
  get caps(): readonly string[] { return this.hello?.caps ?? []; }
  get open(): boolean { return this.socket.readyState === this.socket.OPEN; }

  can(scope: Scope): boolean { return hasScope(this.scopes, scope); }

  respond(id: string | number, payload: unknown): void {
    this.send({ type: 'res', id, ok: true, payload });
  }

  fail(id: string | number | null, error: GatewayError): void {
    this.send({ type: 'res', id, ok: false, error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } });
  }

  /** Sends an event if this connection's scopes allow it; unknown events fail closed. */
  event(event: string, payload: unknown): boolean {
    if (!this.hello || !this.open) return false;
    const required = EVENT_SCOPES[event];
    if (required === undefined) return false;
    if (required !== null && !this.can(required)) return false;
    this.send({ type: 'event', event, payload, seq: ++this.seq });
    return true;
  }

  private send(frame: unknown): void {
    if (this.open) this.socket.send(JSON.stringify(frame));
  }

  dispose(): void {
    for (const dispose of this.disposers) { try { dispose(); } catch { /* already gone */ } }
    this.disposers.clear();
  }
}
