// The operator's brake on an agent: stop (its calls are refused `session_stopped` and whatever it waits
// for is cancelled), pause (its calls wait, bounded, until resume) and resume. The brake holds the agent,
// that is its MCP connection with every session label it uses: an agent could otherwise step around a
// stopped session by naming another label. Ending one session is the session manager's (`end`).
import { EventEmitter } from 'node:events';
import { Refusal } from '../contract/refusal.js';
import { parseSessionKey } from '../contract/session-key.js';
import { LIMITS } from '../limits.js';
import { reportWhile, type Progress } from '../progress.js';

/** What the operator's views show of a held agent (the state, who set it and when, calls waiting): contract/wire.ts. */
export type { BrakeStatus } from '../contract/wire.js';
import type { BrakeStatus } from '../contract/wire.js';

export type BrakeState = BrakeStatus['state'];

interface Held {
  state: 'paused' | 'stopped';
  by: string;
  since: string;
  waiters: Set<Waiter>;
}
interface Waiter {
  release(): void;
  cancel(reason: Refusal): void;
}

/** The connection part of a sessionKey: the agent the brake holds. */
export function connectionOfKey(sessionKey: string): string {
  return parseSessionKey(sessionKey).connectionId;
}

export function stoppedRefusal(by: string): Refusal {
  return new Refusal(
    'session_stopped',
    `an operator (${by}) stopped this agent; its calls are refused until the operator resumes it. Nothing more will run: tell the user and wait for them`,
    { by, retryable: false },
  );
}

export class Brake extends EventEmitter {
  private readonly held = new Map<string, Held>();
  /** Calls running now, per sessionKey: stop and end cancel what they wait for (queue, approval, wait_for). */
  private readonly running = new Map<string, Set<AbortController>>();

  constructor(private readonly pauseTimeoutMs: number = LIMITS.pauseTimeoutMs) {
    super();
  }

  /** Agents paused or stopped now (the approvals sidebar cannot be hidden while any is). */
  get heldCount(): number {
    return this.held.size;
  }

  status(connectionId: string): BrakeStatus {
    const held = this.held.get(connectionId);
    return held
      ? { state: held.state, by: held.by, since: held.since, waiting: held.waiters.size }
      : { state: 'running', by: null, since: null, waiting: 0 };
  }

  /**
   * The first step of every call: refused when the agent is stopped; held while it is paused (bounded by
   * VERITY_PAUSE_TIMEOUT_MS, then refused `session_paused`), with a progress notification each second.
   */
  async admit(connectionId: string, progress?: Progress): Promise<void> {
    const held = this.held.get(connectionId);
    if (!held) return;
    if (held.state === 'stopped') throw stoppedRefusal(held.by);
    if (held.waiters.size >= LIMITS.pausedCallsPerAgent) {
      throw new Refusal(
        'session_paused',
        `an operator (${held.by}) paused this agent and ${held.waiters.size} of its calls already wait (VERITY_MAX_PAUSED_CALLS); wait for the operator to resume it`,
        { by: held.by, retryable: true, limit: LIMITS.pausedCallsPerAgent },
      );
    }
    const seconds = Math.round(this.pauseTimeoutMs / 1000);
    const wait = new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        release: () => {
          clearTimeout(timer);
          held.waiters.delete(waiter);
          resolve();
        },
        cancel: (reason) => {
          clearTimeout(timer);
          held.waiters.delete(waiter);
          reject(reason);
        },
      };
      const timer = setTimeout(
        () =>
          waiter.cancel(
            new Refusal(
              'session_paused',
              `an operator (${held.by}) paused this agent and did not resume it within ${seconds} s (VERITY_PAUSE_TIMEOUT_MS); nothing was done; call again later`,
              { by: held.by, retryable: true, waited_ms: this.pauseTimeoutMs },
            ),
          ),
        this.pauseTimeoutMs,
      );
      held.waiters.add(waiter);
      this.emit('changed', connectionId);
    });
    try {
      await reportWhile(
        progress,
        `paused by an operator (${held.by}); this call waits for resume (at most ${seconds} s)`,
        wait,
      );
    } finally {
      this.emit('changed', connectionId);
    }
  }

  /** Registers a running call of `sessionKey`; its signal fires when the operator stops the agent or ends the session. */
  begin(sessionKey: string): AbortController {
    const controller = new AbortController();
    let set = this.running.get(sessionKey);
    if (!set) this.running.set(sessionKey, (set = new Set()));
    set.add(controller);
    return controller;
  }

  finish(sessionKey: string, controller: AbortController): void {
    const set = this.running.get(sessionKey);
    if (!set) return;
    set.delete(controller);
    if (set.size === 0) this.running.delete(sessionKey);
  }

  stop(connectionId: string, by: string): void {
    const before = this.held.get(connectionId);
    const held: Held = { state: 'stopped', by, since: new Date().toISOString(), waiters: new Set() };
    this.held.set(connectionId, held);
    const refusal = stoppedRefusal(by);
    for (const waiter of [...(before?.waiters ?? [])]) waiter.cancel(refusal);
    this.cancelRunning((key) => connectionOfKey(key) === connectionId, refusal);
    this.emit('changed', connectionId);
  }

  pause(connectionId: string, by: string): void {
    const before = this.held.get(connectionId);
    if (before?.state === 'paused') return;
    // Pausing a stopped agent would let its calls through after a resume; a stop stays a stop until resumed.
    if (before?.state === 'stopped') return;
    this.held.set(connectionId, { state: 'paused', by, since: new Date().toISOString(), waiters: new Set() });
    this.emit('changed', connectionId);
  }

  /** Lets the agent run again (after a pause or a stop); calls held by the pause go on. Idempotent. */
  resume(connectionId: string): boolean {
    const held = this.held.get(connectionId);
    if (!held) return false;
    this.held.delete(connectionId);
    for (const waiter of [...held.waiters]) waiter.release();
    this.emit('changed', connectionId);
    return true;
  }

  /** Cancels the running calls of one session (it ended), each with `reason`. */
  cancelSession(sessionKey: string, reason: Refusal): void {
    this.cancelRunning((key) => key === sessionKey, reason);
  }

  /** The connection went away: its held calls are refused and its brake forgotten (the map holds live agents only). */
  forget(connectionId: string): void {
    const held = this.held.get(connectionId);
    if (!held) return;
    this.held.delete(connectionId);
    for (const waiter of [...held.waiters])
      waiter.cancel(
        new Refusal('session_ended', 'the connection closed while this call waited for the operator to resume it'),
      );
    this.emit('changed', connectionId);
  }

  private cancelRunning(matches: (sessionKey: string) => boolean, reason: Refusal): void {
    for (const [key, set] of this.running) if (matches(key)) for (const c of set) c.abort(reason);
  }
}

/**
 * Runs `work`, giving up with the signal's reason when it fires first. What gave up is the caller's wait:
 * work that was already acting may finish in the background, so the refusal says its outcome is unknown.
 */
export function abandonOnAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      const reason = signal.reason as Refusal;
      reject(
        reason instanceof Refusal
          ? new Refusal(
              reason.code,
              `${reason.message}. This call was cancelled while it ran: if it had already begun acting, what it did is unknown; read the target before going on`,
              { ...reason.details, delivery: 'unknown' },
            )
          : reason,
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
