// The sessions as the Control UI sees them: the full list (sessions.list) and the sessions.changed feed.
// Changes are gathered for a moment, then sent as one delta: rows added, rows updated, keys removed. Sending
// the whole list on every change cost O(n) per change and O(n^2) bytes per burst (600 labels pushed 110 MB
// to one Control UI); `sessions.list` still returns the full list.
import type { Verity } from '../core.js';
import { LIMITS } from '../limits.js';
import { newSession } from '../sessions/manager.js';
import { sessionSummary, type SessionRow } from '../sessions/summary.js';

export type SessionsDelta = { added: SessionRow[]; updated: SessionRow[]; removed: string[] };

export class SessionFeed {
  /** The session rows as last sent in sessions.changed (key -> row without idle_seconds), for the next delta. */
  private sent = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly core: Pick<Verity, 'sessions' | 'cursor' | 'connections' | 'brake'>,
    /** Sends a delta to every connection whose scopes allow sessions.changed. */
    private readonly send: (delta: SessionsDelta) => void,
  ) {}

  /** The sessions that have not ended, as rows; and an agent connected with no call yet, as its default session. */
  list(): SessionRow[] {
    const core = this.core;
    const sessions = core.sessions.all();
    const rows: SessionRow[] = sessions
      .filter((s) => s.state !== 'ended')
      .map((s) => ({
        sessionKey: core.sessions.keyOf(s),
        ...sessionSummary(core.cursor, s),
        transport: core.connections.get(s.connectionId)?.transport ?? 'unknown',
        client: core.connections.get(s.connectionId)?.client ?? '',
        tab_id: s.currentTabId ?? null,
        brake: core.brake.status(s.connectionId),
        ...(s.lastCheck ? { last_check: s.lastCheck } : {}),
      }));
    // An agent is listed as soon as it connects, not only after its first call: until then, as the default
    // session that call will have (marked, so the console tells it apart and does not call it "closed").
    for (const [connectionId, conn] of core.connections) {
      if (sessions.some((s) => s.connectionId === connectionId)) continue;
      const session = newSession(connectionId, null);
      session.lastActive = Date.parse(conn.since) || Date.now();
      rows.push({
        sessionKey: core.sessions.keyOf(session),
        ...sessionSummary(core.cursor, session),
        transport: conn.transport,
        client: conn.client,
        tab_id: null,
        brake: core.brake.status(connectionId),
        awaiting_first_call: true,
      });
    }
    return rows;
  }

  /** Something a row shows may have changed: a delta follows after the debounce, if anything did. */
  changed(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const delta = this.delta();
      if (delta) this.send(delta);
    }, LIMITS.sessionsDebounceMs);
  }

  private delta(): SessionsDelta | null {
    const now = new Map<string, string>();
    const added: SessionRow[] = [],
      updated: SessionRow[] = [];
    for (const row of this.list()) {
      // idle_seconds changes every second by itself: it is not a change worth a frame.
      const { idle_seconds: _idle, ...compared } = row;
      const text = JSON.stringify(compared);
      now.set(row.sessionKey, text);
      const before = this.sent.get(row.sessionKey);
      if (before === undefined) added.push(row);
      else if (before !== text) updated.push(row);
    }
    const removed = [...this.sent.keys()].filter((key) => !now.has(key));
    this.sent = now;
    return added.length || updated.length || removed.length ? { added, updated, removed } : null;
  }

  /** The gateway closes: a pending delta is not sent. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
