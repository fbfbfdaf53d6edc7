// One WebSocket connection to the gateway: the handshake state, its scopes and caps, and its own event
// sequence numbers.
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import {
  EVENT_SCHEMAS,
  type EventName,
  type EventPayload,
  type GatewayError,
  hasScope,
  type ConnectParams,
  type Role,
  type Scope,
} from './protocol.js';
import { LIMITS } from '../limits.js';
import type { SecretEcho } from '../contract/secret-echo.js';

/** The close code for a consumer that does not read what it is sent (4000-4999: the application's own). */
export const CLOSE_TOO_SLOW = 4010;

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

  /** Why the gateway closed this connection, when it did (e.g. a consumer too slow to read). */
  closedBecause: string | null = null;

  constructor(
    readonly socket: WebSocket,
    readonly origin: string | null,
    private readonly log: (line: string) => void = () => {},
    /** What an operator may be shown of a frame (operatorView): secrets agents typed are masked. */
    private readonly shown: (frame: unknown) => unknown = (frame) => frame,
  ) {}

  get scopes(): readonly string[] {
    return this.hello?.scopes ?? [];
  }
  get caps(): readonly string[] {
    return this.hello?.caps ?? [];
  }
  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  can(scope: Scope): boolean {
    return hasScope(this.scopes, scope);
  }

  respond(id: string | number, payload: unknown): void {
    this.send({ type: 'res', id, ok: true, payload });
  }

  fail(id: string | number | null, error: GatewayError): void {
    this.send({
      type: 'res',
      id,
      ok: false,
      error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
    });
  }

  /**
   * Sends an event if this connection's scopes allow it. Every event the gateway sends goes through here,
   * typed by protocol.ts (EVENT_SCHEMAS): a payload of the wrong shape does not build.
   */
  event<E extends EventName>(event: E, payload: EventPayload<E>): boolean {
    if (!this.hello || !this.open) return false;
    const required: Scope | null = EVENT_SCHEMAS[event].scope;
    if (required !== null && !this.can(required)) return false;
    this.send({ type: 'event', event, payload, seq: ++this.seq });
    return true;
  }

  /**
   * Every frame the gateway sends goes through here. A consumer that stops reading would otherwise make
   * the gateway buffer without end (events, screencast frames, terminal output); over the bound it is
   * closed with 4010 and a reason saying why. The close frame queues behind the unread data, and ws
   * destroys the socket if the close handshake does not finish: nothing more is queued meanwhile.
   */
  private send(frame: unknown): void {
    if (!this.open) return;
    let text: string;
    try {
      text = JSON.stringify(this.shown(frame));
    } catch (e) {
      // A payload that cannot be written (a defect: a cycle, a BigInt) costs that frame, never the gateway.
      this.log(`gateway connection ${this.connId}: a frame could not be written: ${(e as Error).message}`);
      const id =
        (frame as { type?: string; id?: string | number | null }).type === 'res'
          ? (frame as { id: string | number | null }).id
          : undefined;
      if (id === undefined) return;
      text = JSON.stringify({
        type: 'res',
        id,
        ok: false,
        error: { code: 'UNAVAILABLE', message: 'internal error: the answer could not be written' },
      });
    }
    if (this.socket.bufferedAmount + text.length > LIMITS.sendBufferBytes) {
      this.closedBecause = `too slow: send buffer over ${LIMITS.sendBufferBytes} bytes`;
      this.log(
        `closed gateway connection ${this.connId} (${this.hello?.client.id ?? 'before connect'}): ${this.closedBecause}`,
      );
      this.socket.close(CLOSE_TOO_SLOW, this.closedBecause);
      return;
    }
    this.socket.send(text);
  }

  dispose(): void {
    for (const dispose of this.disposers) {
      try {
        dispose();
      } catch {
        /* already gone */
      }
    }
    this.disposers.clear();
  }
}

/** Events that pass bytes or commands through (the extension's CDP commands, a terminal's output): never rewritten. */
const PASSED_THROUGH = new Set(['relay.command', 'terminal.data']);
/** Pixels, not text (screencast frames, action thumbnails, audit images): never read. */
const PIXEL_KEYS = new Set(['data', 'thumbnail']);

/**
 * A frame as an operator connection is sent it: every text a live session typed into a secret field masked
 * wherever it appears (tab lists and titles, the panel's location, the action log, approval cards, audit
 * entries), however it is encoded (contract/secret-echo.ts). Commands and terminal bytes pass as they are.
 */
export function operatorView(echo: Pick<SecretEcho, 'scrub'>, frame: unknown): unknown {
  const f = frame as { type?: unknown; event?: unknown } | null;
  if (f?.type === 'event' && typeof f.event === 'string' && PASSED_THROUGH.has(f.event)) return frame;
  return echo.scrub(frame, PIXEL_KEYS);
}
