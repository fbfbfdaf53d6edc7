// Lifecycle sessions (seed 000): a lease per connection, an implicit session when none is named, labels
// namespaced per connection, tombstones for ended labels, and cleanup hooks that run exactly once however a
// session ends (end_session, disconnect, idle timeout, shutdown).
// Labels are per connection (issue #22 item 7): "work" of one MCP client and "work" of another are two
// sessions. One namespace across connections told B that A's label existed (B was refused it) and let B
// squat a label before A took it. The operator still sees every session (the gateway keys them by
// connection and label).
import { Refusal } from '../contract/refusal.js';
import { LIMITS } from '../limits.js';
import { normalizeLabel, type SessionKey, sessionKeyOf } from '../contract/session-key.js';
import type { CursorTheme, MotionInput } from './cursor-config.js';

export type EndReason = 'end_session' | 'disconnect' | 'idle_timeout' | 'shutdown';
export type CleanupHook = (session: Session, reason: EndReason) => void | Promise<void>;

export interface Session {
  /** Public label, or null for the connection's implicit session. */
  label: string | null;
  connectionId: string;
  state: 'active' | 'ending' | 'ended';
  lastActive: number;
  /** The tab this session drives when a call names none. */
  currentTabId?: string;
  /** Every tab the session has driven (its cursor may be in any of them). */
  tabs: Set<string>;
  cursor: { start?: MotionInput; set?: MotionInput; theme: CursorTheme; visible: boolean };
  recordingDir: string | null;
  captureScope: 'auto' | 'window' | 'desktop';
  /** Hooks registered by whatever the session touched (cursor, recording, config), run once at the end. */
  hooks: Map<string, CleanupHook>;
  endedBy?: EndReason;
  /** Calls in flight: a session cannot expire in the middle of one. */
  inFlight: number;
  /** The outcome of its last verify_state, for the operators' session list. */
  lastCheck?: 'satisfied' | 'unsatisfied' | 'unknown';
}

export interface SessionManagerOptions {
  idleMs: number;
  onEnd?: (session: Session, reason: EndReason, hook: string) => void;
  /** Sessions appeared, ended or went away (the Control UI's list stays live). */
  onChange?: () => void;
}

export class SessionManager {
  /** By session key (contract/session-key.ts): the one spelling every other part names a session by. */
  private readonly sessions = new Map<SessionKey, Session>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly globalHooks = new Map<string, CleanupHook>();
  /** Sessions whose cleanup hooks are running now, and when they finish. */
  private readonly endings = new Map<Session, Promise<void>>();

  constructor(private readonly options: SessionManagerOptions) {
    this.sweeper = setInterval(() => void this.sweepIdle(), Math.max(50, Math.min(5000, options.idleMs / 4)));
    this.sweeper.unref();
  }

  /** How long a session may go without a call before it ends as idle_timeout. */
  get idleMs(): number {
    return this.options.idleMs;
  }

  /** A hook every session runs at its end (e.g. hide the agent cursor), besides its own. */
  addGlobalHook(name: string, hook: CleanupHook): void {
    this.globalHooks.set(name, hook);
  }

  /**
   * The session an ordinary call runs in: created on first use, refused when its label has ended
   * (only start_session revives a label).
   */
  admit(connectionId: string, rawLabel: string | undefined): Session {
    const label = normalizeLabel(rawLabel);
    const existing = this.sessions.get(sessionKeyOf(connectionId, label));
    if (existing?.state === 'ended') {
      throw new Refusal('session_ended', 'this session has ended; call start_session explicitly to reuse its label');
    }
    if (existing?.state === 'ending') throw new Refusal('session_ended', 'this session is ending');
    const session = existing ?? this.create(connectionId, label, false);
    session.lastActive = Date.now();
    return session;
  }

  /** start_session: create, return, or revive a session. */
  start(connectionId: string, rawLabel: string | undefined): { session: Session; revived: boolean } {
    const label = normalizeLabel(rawLabel);
    const existing = this.sessions.get(sessionKeyOf(connectionId, label));
    if (existing && existing.state !== 'ended') {
      existing.lastActive = Date.now();
      return { session: existing, revived: false };
    }
    return { session: this.create(connectionId, label, !!existing), revived: !!existing };
  }

  /** A session visible to this connection, for get/end, without creating one. */
  find(connectionId: string, rawLabel: string | undefined): Session | undefined {
    const label = normalizeLabel(rawLabel);
    return this.sessions.get(sessionKeyOf(connectionId, label));
  }

  /** Refuses a new session over the bounds (a revived label takes no new room). Ended labels count until their connection goes. */
  private checkRoom(connectionId: string, label: string | null): void {
    if (this.sessions.size >= LIMITS.sessions) {
      throw new Refusal(
        'too_many_sessions',
        `the server already holds ${LIMITS.sessions} sessions (VERITY_MAX_SESSIONS); end sessions you no longer need, or disconnect idle clients`,
        { limit: LIMITS.sessions, retryable: true },
      );
    }
    if (label === null) return;
    let labels = 0;
    for (const s of this.sessions.values()) if (s.connectionId === connectionId && s.label !== null) labels++;
    if (labels >= LIMITS.labelsPerConnection) {
      throw new Refusal(
        'too_many_sessions',
        `this connection already has ${LIMITS.labelsPerConnection} session labels (VERITY_MAX_LABELS_PER_CONNECTION; ended ones count until the connection closes); reuse a label (start_session revives an ended one) or reconnect`,
        { limit: LIMITS.labelsPerConnection },
      );
    }
  }

  private create(connectionId: string, label: string | null, revive: boolean): Session {
    if (!revive) this.checkRoom(connectionId, label);
    const session = newSession(connectionId, label);
    this.sessions.set(sessionKeyOf(connectionId, label), session);
    this.options.onChange?.();
    return session;
  }

  /** A stable key naming a session across the server (the Control UI's sessionKey). */
  keyOf(session: Session): SessionKey {
    return sessionKeyOf(session.connectionId, session.label);
  }

  /** The key the session of this connection and label has (or will have once started). */
  keyFor(connectionId: string, rawLabel: string | undefined): SessionKey {
    return sessionKeyOf(connectionId, rawLabel);
  }

  all(): Session[] {
    return [...this.sessions.values()];
  }

  list(connectionId: string): Session[] {
    return [...this.sessions.values()].filter((s) => s.connectionId === connectionId);
  }

  /** Ends a session: the tombstone first, then every hook exactly once. Idempotent. */
  async end(session: Session, reason: EndReason): Promise<void> {
    // A second end while the hooks run waits for them (shutdown must not exit in the middle of a disconnect's).
    if (session.state === 'ending') return this.endings.get(session);
    if (session.state !== 'active') return;
    session.state = 'ending';
    session.endedBy = reason;
    const hooks = [...this.globalHooks.entries(), ...session.hooks.entries()];
    session.hooks.clear();
    let finished!: () => void;
    this.endings.set(
      session,
      new Promise<void>((resolve) => {
        finished = resolve;
      }),
    );
    try {
      for (const [name, hook] of hooks) {
        try {
          await hook(session, reason);
        } catch {
          /* a failed hook must not keep the others from running */
        }
        this.options.onEnd?.(session, reason, name);
      }
    } finally {
      session.state = 'ended';
      this.endings.delete(session);
      finished();
    }
    this.options.onChange?.();
  }

  /** The connection went away: its sessions end and go. */
  async disconnect(connectionId: string): Promise<void> {
    for (const session of this.list(connectionId)) {
      await this.end(session, 'disconnect');
      this.sessions.delete(sessionKeyOf(connectionId, session.label));
    }
    this.options.onChange?.();
  }

  private async sweepIdle(): Promise<void> {
    const now = Date.now();
    for (const session of this.sessions.values()) {
      if (session.state === 'active' && now - session.lastActive >= this.options.idleMs && session.inFlight === 0) {
        await this.end(session, 'idle_timeout');
      }
    }
  }

  async shutdown(): Promise<void> {
    clearInterval(this.sweeper);
    for (const session of this.sessions.values()) await this.end(session, 'shutdown');
  }
}

/** A session as it starts (not yet held by any manager: the console lists an agent's before its first call). */
export function newSession(connectionId: string, label: string | null): Session {
  return {
    label,
    connectionId,
    state: 'active',
    lastActive: Date.now(),
    cursor: { theme: { theme_id: 'default', reduced_motion: 'auto' }, visible: false },
    recordingDir: null,
    captureScope: 'auto',
    hooks: new Map(),
    inFlight: 0,
    tabs: new Set(),
  };
}
