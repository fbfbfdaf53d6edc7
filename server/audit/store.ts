// The audit trail: every call of every session, every approval, the brake and the operator's own input,
// kept in append-only JSONL segment files under <config dir>/audit/, with an index in memory.
//
// Why files and not an embedded database: an append is the whole write path (a crash loses at most the
// line being written, and a torn last line is skipped on load), the files are readable with any tool and
// export as they are, retention is deleting whole old segments, and nothing has to be compiled or
// downloaded (Node 20 has no node:sqlite; the pure-JS databases on npm keep the whole database in memory
// and rewrite it to disk). The index (id, time, session, tool, verdict, where the line is) is rebuilt
// from the segments at start: one sequential read, and the files stay the only truth.
//
// Bounded as it is written, so that a flood cannot push evidence out: every string an entry keeps has a
// bound (entry-bounds.ts), a line has one (LINE_MAX), a segment is rolled before a line would take it past its
// size, and the size cap and the index's row cap hold on every append. Entries leave only by age (the
// retention the operator set), never to make room: when the trail, or one session's share of it, is full,
// that session's calls are refused before they run (admits(), the call pipeline asks), the refusals are
// counted rather than written, and the operator sees what each session holds (sessions()).
import { EventEmitter } from 'node:events';
import type { Approvals } from '../approvals.js';
import { appendFileSync, mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type {
  AuditActor,
  AuditEntry,
  AuditKind,
  AuditPage,
  AuditSession,
  EvidenceItem,
  FleetView,
  SessionRow,
} from '../gateway/protocol.js';
import { type LinePlace, newSegment, readLineAt, readSegments, type Segment } from './segments.js';
import { type AuditInput, boundedActor, boundedInput, boundedKey, LINE_MAX, storedLine } from './entry-bounds.js';
import type { AuditQuery, AuditUnavailable, FleetBrakeVerb, NoRoom, Retention } from './shapes.js';

export { LINE_MAX };

// An entry's shape is declared once, in the gateway protocol (audit.query and audit.entry carry it).
export type { AuditActor, AuditEntry, AuditKind, AuditPage };
/** One piece of a call's read-back evidence, as the trail keeps it. */
export type AuditEvidence = EvidenceItem;

export type { AuditInput };

// What the trail's callers and the stores share: a query, the retention, the fleet brake's verbs, and why an
// entry or a session's call is held back.
export type { AuditQuery, AuditUnavailable, FleetBrakeVerb, NoRoom, Retention } from './shapes.js';
export { retentionOf } from './shapes.js';

/** What one session holds of the trail, and what it was refused for lack of room. */
interface SessionUse {
  bytes: number;
  entries: number;
  /** Entries not written because the trail or the session's share was full (counted, not kept). */
  refused: number;
}

/** An entry in the index: what the filters read without reading its line, and where that line lies. */
interface Row extends LinePlace {
  id: number;
  atMs: number;
  kind: AuditKind;
  sessionKey: string;
  tool: string;
  verdict: string;
  /** The actor's client name ('' for none): the agent filter reads it without reading the line. */
  client: string;
}

/** Rows a text search reads per request before it answers with where to go on (bounded work per request). */
const TEXT_SCAN_MAX = 20_000;
const PAGE_MAX = 500;
/** In-memory rows and bytes when there is no folder (`verity mcp` on its own): the newest are kept. */
const MEMORY_ROWS = 5000;
const MEMORY_BYTES = 32 * 1024 * 1024;
/** Rows the in-memory index holds at most (about 150 bytes each), whatever the size cap allows. */
const ROWS_MAX = 250_000;
/** Distinct session keys, tools and verdicts the rows share one copy of (AuditStore.shared). */
const SHARED_STRINGS = 4096;

/** The trail: appends, pages back, retention; each new entry is also emitted ('entry': the gateway sends it on). */
export class AuditStore extends EventEmitter<{ entry: [entry: AuditEntry]; fleet: [view: FleetView] }> {
  private readonly rows: Row[] = [];
  private readonly segments: Segment[] = [];
  private nextId = 1;
  private buffer: string[] = [];
  private flushScheduled = false;
  /** Entries kept in memory when there is no folder. */
  private readonly memory = new Map<number, string>();
  private readonly segmentBytes: number;
  private sweepTimer: NodeJS.Timeout | null = null;
  /** One copy of each session key, tool and verdict for the rows to share (see shared()). */
  private readonly strings = new Map<string, string>();
  /** Each session's agent as its entries last named it: sessions() names ended sessions by it. */
  private readonly actors = new Map<string, AuditActor>();
  /**
   * Who a session's agent is, while its connection is open (the core tells): append() names every entry's
   * actor with it, so the trail keeps the name once the connection is gone.
   */
  actorOf: (sessionKey: string) => AuditActor | undefined = () => undefined;

  /** What each session holds of the trail (bytes, entries) and was refused: the operator's view and the shares. */
  private readonly use = new Map<string, SessionUse>();
  /** Entries of operators' kinds that did not fit under the cap (said on stderr, at most once a minute). */
  private dropped = 0;
  private droppedSaidAt = 0;
  /** Rows the index holds at most. */
  readonly maxRows: number;
  /** The in-memory trail's one segment: its bytes and rows, for the memory bound. */
  private readonly memorySegment: Segment = { file: '', firstId: 0, bytes: 0, lastAtMs: 0, rows: 0 };

  /** `dir` null: a bounded in-memory trail (a `verity mcp` with no gateway); otherwise durable. */
  constructor(
    readonly dir: string | null,
    readonly retention: Retention = { maxAgeMs: 30 * 86_400_000, maxBytes: 256 * 1024 * 1024 },
  ) {
    super();
    this.segmentBytes = Math.max(LINE_MAX, Math.min(16 * 1024 * 1024, Math.floor(retention.maxBytes / 8)));
    this.maxRows = Math.min(ROWS_MAX, Math.max(1000, Math.floor(retention.maxBytes / 512)));
    if (!dir) return;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.load();
    this.sweep();
    this.sweepTimer = setInterval(() => this.sweep(), 3_600_000);
    this.sweepTimer.unref();
  }

  /**
   * Room kept back for what operators do (approvals, the brake, their input) and for the entries of calls
   * already running when the agents' part filled up: agents are refused before the last eighth of the cap.
   */
  private get agentBytes(): number {
    return this.retention.maxBytes - Math.max(2 * LINE_MAX, Math.floor(this.retention.maxBytes / 8));
  }

  /**
   * One session's share of the trail: a quarter of what agents may fill, so one flood leaves room for the
   * rest (never less than two of the longest lines, so that a small cap still admits a call).
   */
  get shareBytes(): number {
    return Math.min(this.agentBytes, Math.max(2 * LINE_MAX, Math.floor(this.agentBytes / 4)));
  }

  /**
   * Whether an agent's call in this session may run: only while its entry is sure to fit within the
   * session's share, the agents' part of the cap and the index's rows. The call pipeline asks before every
   * call, so that nothing runs that the trail could not keep. Always room for the in-memory trail.
   */
  noRoomFor(sessionKey: string): NoRoom | null {
    if (!this.dir) return null;
    const key = boundedKey(sessionKey);
    const held = this.use.get(key)?.bytes ?? 0;
    const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
    const retryAfterS = this.secondsUntilAged();
    if (this.bytes + LINE_MAX > this.agentBytes || this.rows.length >= this.maxRows - Math.floor(this.maxRows / 8))
      return {
        message: `the audit trail is full (${mib(this.bytes)} of ${mib(this.retention.maxBytes)}, ${this.rows.length} entries); no call runs that it could not record. Entries leave only by age: room in about ${retryAfterS} s, or sooner if the operator raises --audit-max-mb`,
        retryAfterS,
      };
    if (held + LINE_MAX > this.shareBytes)
      return {
        message: `this session holds ${mib(held)} of the audit trail, its share (a quarter of what agents may fill, ${mib(this.shareBytes)}); no call of it runs that the trail could not record. Room in about ${retryAfterS} s, as its oldest entries age out`,
        retryAfterS,
      };
    return null;
  }

  /** Seconds until the oldest segment is past the age bound (at least 1). */
  private secondsUntilAged(now = Date.now()): number {
    const oldest = this.segments[0];
    if (!oldest) return 1;
    return Math.max(1, Math.ceil((oldest.lastAtMs + this.retention.maxAgeMs - now) / 1000));
  }

  private usageOf(sessionKey: string): SessionUse {
    let u = this.use.get(sessionKey);
    if (u) return u;
    // Sessions that hold nothing and were only refused are forgotten first when there are too many to count.
    if (this.use.size >= this.maxRows) for (const [key, held] of this.use) if (held.entries === 0) this.use.delete(key);
    this.use.set(sessionKey, (u = { bytes: 0, entries: 0, refused: 0 }));
    return u;
  }

  /**
   * Records one entry (written with the next flush, at most a tick later) and tells listeners; null when it
   * was not kept: a refused agent call while its session or the trail has no room (counted for the operator,
   * so a flood of refusals cannot fill the room kept back), or anything at all that would pass the size cap.
   */
  append(input: AuditInput): AuditEntry | null {
    const bounded = boundedInput(input);
    // A line written after its connection closed (a call's entry follows its reply) keeps the session's last actor.
    const actor =
      bounded.actor ?? boundedActor(this.actorOf(bounded.sessionKey)) ?? this.actors.get(bounded.sessionKey);
    const entry: AuditEntry = {
      ...bounded,
      ...(actor ? { actor } : {}),
      id: this.nextId,
      at: bounded.at ?? new Date().toISOString(),
    };
    const line = storedLine(entry) + '\n';
    const length = Buffer.byteLength(line);
    const sessionKey = this.shared(entry.sessionKey);
    if (this.dir) {
      const refusedCall = entry.kind === 'call' && entry.verdict === 'refused';
      if (refusedCall && this.noRoomFor(sessionKey)) {
        this.usageOf(sessionKey).refused++;
        return null;
      }
      if (this.bytes + length > this.retention.maxBytes || this.rows.length >= this.maxRows) {
        this.usageOf(sessionKey).refused++;
        this.sayDropped();
        return null;
      }
    }
    this.nextId++;
    if (actor) this.actors.set(sessionKey, actor);
    const atMs = Date.parse(entry.at);
    const u = this.usageOf(sessionKey);
    u.bytes += length;
    u.entries++;
    const seg = this.dir ? this.segmentFor(entry.id, length) : this.memorySegment;
    this.rows.push({
      id: entry.id,
      atMs,
      kind: entry.kind,
      sessionKey,
      tool: this.shared(entry.tool),
      verdict: this.shared(entry.verdict),
      client: this.shared(actor?.client ?? ''),
      seg,
      offset: seg.bytes,
      length,
    });
    seg.bytes += length;
    seg.lastAtMs = atMs;
    seg.rows++;
    if (!this.dir) {
      this.memory.set(entry.id, line);
      if (this.rows.length > MEMORY_ROWS + 500 || seg.bytes > MEMORY_BYTES) {
        // The newest are kept: down to MEMORY_ROWS rows and nine tenths of MEMORY_BYTES.
        let drop = Math.max(0, this.rows.length - MEMORY_ROWS);
        let freed = this.bytesOf(drop);
        while (drop < this.rows.length - 1 && seg.bytes - freed > MEMORY_BYTES * 0.9) freed += this.rows[drop++].length;
        for (let i = 0; i < drop; i++) this.memory.delete(this.rows[i].id);
        this.dropRows(drop);
        this.forgetActors();
      }
    } else {
      this.buffer.push(line);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    }
    this.kept(entry, line);
    this.emit('entry', entry);
    return entry;
  }

  /** A hook for a store that keeps entries elsewhere too (postgres.ts): each kept entry and its stored line. */
  protected kept(_entry: AuditEntry, _line: string): void {}

  /**
   * When the entry is durable where the operators read it: null when it already is, or will be with the
   * next flush a tick later (these files); a shared store's promise resolves once its database holds the
   * entry, or says why it could not (the entry is then kept locally and sent later). The call pipeline
   * waits for it before a call's result is returned.
   */
  written(_entry: AuditEntry): Promise<AuditUnavailable | null> | null {
    return null;
  }

  /** audit.query's reader: these files; a shared store reads every gateway's entries from its database. */
  search(q: AuditQuery = {}): Promise<AuditPage> | AuditPage {
    return this.query(q);
  }

  /** The fleet's sessions: a trail on one machine has no fleet (a shared store's are every gateway's). */
  fleet(): Promise<FleetView> | FleetView {
    return { shared: false, gateway: null, gone_after_ms: 0, gateways: [], sessions: [], approvals: [] };
  }

  /** This gateway's session rows, for a shared store to publish with its heartbeat (nothing to do here). */
  shareSessions(_rows: () => SessionRow[]): void {}

  /** This gateway's sessions changed: a shared store publishes them now rather than at the next heartbeat. */
  sessionsChanged(): void {}

  /** This gateway's held calls, for a shared store to offer to every console of the fleet (nothing to do here). */
  shareApprovals(_approvals: Approvals): void {}

  /** A decision on a call another gateway holds: only a shared store carries one (false: no such call there). */
  decide(_gateway: string, _id: string, _approve: boolean, _by: string): Promise<boolean> {
    return Promise.resolve(false);
  }

  /** How this gateway applies a fleet brake decision to its own agents (a shared store takes them; nothing here). */
  shareBrake(_apply: (verb: FleetBrakeVerb, sessionKey: string | null, by: string) => void): void {}

  /** The brake sent to every live gateway of a shared store (or the one named): how many were sent it (0 here). */
  brakeFleet(_verb: FleetBrakeVerb, _gateway: string | null, _sessionKey: string | null, _by: string): Promise<number> {
    return Promise.resolve(0);
  }

  /** This gateway's name in a shared trail (entry.gateway); null for these files. */
  get fleetName(): string | null {
    return null;
  }

  /** The id the next entry gets; a shared store raises it past what its database already holds of this gateway. */
  protected raiseNextId(past: number): void {
    if (past >= this.nextId) this.nextId = past + 1;
  }

  /** This trail's entries with an id above `id`, oldest first, at most `max` (what a shared store has not yet sent). */
  entriesAfter(id: number, max = 100_000): Array<{ entry: AuditEntry; line: string }> {
    this.flush();
    const out: Array<{ entry: AuditEntry; line: string }> = [];
    for (let i = this.indexBelow(id + 1) + 1; i < this.rows.length && out.length < max; i++) {
      const line = this.readLine(this.rows[i]);
      if (!line) continue;
      try {
        out.push({ entry: JSON.parse(line) as AuditEntry, line });
      } catch {
        /* a torn line: skipped, as on load */
      }
    }
    return out;
  }

  /** The segment a line of `length` bytes goes to: a new one when it would take the current one past its size. */
  private segmentFor(id: number, length: number): Segment {
    const seg = this.segments.at(-1);
    if (seg && (seg.bytes === 0 || seg.bytes + length <= this.segmentBytes)) return seg;
    return this.roll(id);
  }

  /** Bytes of the first `n` rows. */
  private bytesOf(n: number): number {
    let bytes = 0;
    for (let i = 0; i < n; i++) bytes += this.rows[i].length;
    return bytes;
  }

  /** Takes the oldest `n` rows out of the index, and out of their sessions' and segment's counts. */
  private dropRows(n: number): void {
    for (const row of this.rows.splice(0, n)) {
      const u = this.use.get(row.sessionKey);
      if (u) {
        u.bytes -= row.length;
        u.entries--;
        if (u.entries <= 0 && u.refused === 0) this.use.delete(row.sessionKey);
      }
      if (row.seg === this.memorySegment) {
        row.seg.bytes -= row.length;
        row.seg.rows--;
      }
    }
  }

  private sayDropped(): void {
    this.dropped++;
    const now = Date.now();
    if (now - this.droppedSaidAt < 60_000) return;
    this.droppedSaidAt = now;
    process.stderr.write(
      `verity: the audit trail is at its cap (${this.retention.maxBytes} bytes, ${this.rows.length} entries): ${this.dropped} entries could not be kept; raise --audit-max-mb or shorten --audit-max-age-days\n`,
    );
  }

  /**
   * The one copy of `text` the rows share: each call's session key is a string of its own (~80 bytes), and
   * the index holds a row per entry for the whole retention (the soak's heap growth was mostly these).
   * Bounded: past SHARED_STRINGS distinct values the table starts afresh (rows keep the copies they have).
   */
  private shared<T extends string | undefined>(text: T): T {
    if (text === undefined) return text;
    const known = this.strings.get(text);
    if (known !== undefined) return known as T;
    if (this.strings.size >= SHARED_STRINGS) this.strings.clear();
    this.strings.set(text, text);
    return text;
  }

  /** Writes what is buffered. Called a tick after appends, before every read, and at close. */
  flush(): void {
    this.flushScheduled = false;
    if (!this.buffer.length || !this.dir) return;
    // Lines are grouped by segment: a roll in the middle of a buffer sends the rest to the new file.
    const lines = this.buffer;
    this.buffer = [];
    const start = this.rows.length - lines.length;
    let i = 0;
    while (i < lines.length) {
      const seg = this.rows[start + i].seg;
      let chunk = '';
      while (i < lines.length && this.rows[start + i].seg === seg) chunk += lines[i++];
      // A full disk must not take the gateway down: the failure is said once per flush, on stderr.
      try {
        appendFileSync(join(this.dir, seg.file), chunk, { mode: 0o600 });
      } catch (e) {
        process.stderr.write(`verity: the audit trail could not be written to ${this.dir}: ${(e as Error).message}\n`);
      }
    }
  }

  /** Writes what is buffered; a shared store also gives its writer a bounded moment (hence the promise). */
  close(): void | Promise<void> {
    this.flush();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
  }

  get(id: number): AuditEntry | null {
    this.flush();
    const row = this.findRow(id);
    return row ? this.read(row) : null;
  }

  /** Pages back from `before` (newest first), with every filter applied; `next_before` continues the search. */
  query(q: AuditQuery = {}): AuditPage {
    this.flush();
    const limit = Math.min(Math.max(1, q.limit ?? 100), PAGE_MAX);
    const text = q.text?.trim().toLowerCase() || null;
    const entries: AuditEntry[] = [];
    let scanned = 0;
    let i = q.before !== undefined ? this.indexBelow(q.before) : this.rows.length - 1;
    for (; i >= 0; i--) {
      const row = this.rows[i];
      if (q.from !== undefined && row.atMs < q.from) {
        i = -1;
        break;
      } // rows are in time order: nothing older matches
      if (q.to !== undefined && row.atMs >= q.to) continue;
      if (q.sessionKey && row.sessionKey !== q.sessionKey) continue;
      if (q.tool && row.tool !== q.tool) continue;
      if (q.verdict && row.verdict !== q.verdict) continue;
      if (q.kind && row.kind !== q.kind) continue;
      if (q.client && row.client !== q.client) continue;
      if (text) {
        if (++scanned > TEXT_SCAN_MAX) break;
        const line = this.readLine(row);
        if (!line?.toLowerCase().includes(text)) continue;
      }
      const entry = this.read(row);
      if (entry) entries.push(entry);
      if (entries.length >= limit) {
        i--;
        break;
      }
    }
    return { entries, next_before: i >= 0 ? this.rows[i].id + 1 : null, total: this.rows.length };
  }

  /** Every entry of a session, oldest first (an export); bounded by `max`. */
  sessionEntries(sessionKey: string, max = 100_000): AuditEntry[] {
    this.flush();
    const out: AuditEntry[] = [];
    for (const row of this.rows) {
      if (row.sessionKey !== sessionKey) continue;
      const entry = this.read(row);
      if (entry) out.push(entry);
      if (out.length >= max) break;
    }
    return out;
  }

  /**
   * The sessions the trail knows, newest first: how many entries and bytes each holds, when its last entry
   * was, and how many of its entries were not kept for lack of room (refused calls while it or the trail was full).
   */
  sessions(): AuditSession[] {
    const lastMs = new Map<string, number>();
    for (const row of this.rows) lastMs.set(row.sessionKey, row.atMs);
    return [...this.use]
      .map(([sessionKey, u]) => ({ sessionKey, u, lastMs: lastMs.get(sessionKey) ?? 0 }))
      .sort((a, b) => b.lastMs - a.lastMs)
      .slice(0, 1000)
      .map(({ sessionKey, u, lastMs: at }) => {
        const actor = this.actors.get(sessionKey);
        return {
          sessionKey,
          entries: u.entries,
          bytes: u.bytes,
          ...(u.refused ? { refused: u.refused } : {}),
          last: new Date(at).toISOString(),
          ...(actor ? { actor } : {}),
        };
      });
  }

  /** Drops the actors of sessions no row is left of (retention took them): the map stays as big as the trail. */
  private forgetActors(): void {
    for (const key of this.actors.keys()) if (!this.use.has(key)) this.actors.delete(key);
  }

  /** The folder's size in bytes (segments), for the retention and the operator. */
  get bytes(): number {
    return this.segments.reduce((n, s) => n + s.bytes, 0);
  }

  /**
   * Deletes the segments whose newest entry is past the age bound, oldest first; never one with a younger
   * entry, whatever the size: the size cap is held on append (agents are refused), not by deleting evidence.
   */
  sweep(now = Date.now()): void {
    if (!this.dir) return;
    this.flush();
    while (this.segments.length && now - this.segments[0].lastAtMs > this.retention.maxAgeMs) {
      const oldest = this.segments.shift()!;
      try {
        unlinkSync(join(this.dir, oldest.file));
      } catch {
        /* already gone */
      }
      this.dropRows(oldest.rows);
    }
    if (this.bytes > this.retention.maxBytes)
      process.stderr.write(
        `verity: the audit trail holds ${this.bytes} bytes, over its cap of ${this.retention.maxBytes} (a lower --audit-max-mb than it was written with): entries younger than ${Math.round(this.retention.maxAgeMs / 86_400_000)} days are kept, and agents are refused until enough age out\n`,
      );
    this.forgetActors();
  }

  private roll(firstId: number): Segment {
    const seg = newSegment(firstId);
    this.segments.push(seg);
    return seg;
  }

  /** The index rebuilt from the segments: one sequential read, the files staying the only truth. */
  private load(): void {
    const { segments, tornEnd } = readSegments(this.dir!, (e, { seg, offset, length }) => {
      if (e.id < this.nextId) return;
      const atMs = Date.parse(e.at);
      this.rows.push({
        id: e.id,
        atMs,
        kind: e.kind,
        sessionKey: this.shared(e.sessionKey),
        tool: this.shared(e.tool),
        verdict: this.shared(e.verdict),
        client: this.shared(e.actor?.client ?? ''),
        seg,
        offset,
        length,
      });
      seg.rows++;
      seg.lastAtMs = atMs;
      const u = this.usageOf(this.shared(e.sessionKey));
      u.bytes += length;
      u.entries++;
      this.nextId = e.id + 1;
      if (e.actor) this.actors.set(e.sessionKey, e.actor);
    });
    this.segments.push(...segments);
    // A torn line at the end of the last segment would glue onto the next append: start a new segment.
    if (tornEnd) this.roll(this.nextId);
  }

  private indexBelow(id: number): number {
    let lo = 0,
      hi = this.rows.length - 1,
      found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.rows[mid].id < id) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  private findRow(id: number): Row | undefined {
    const i = this.indexBelow(id + 1);
    return i >= 0 && this.rows[i].id === id ? this.rows[i] : undefined;
  }

  private readLine(row: Row): string | null {
    if (!this.dir) return this.memory.get(row.id) ?? null;
    return readLineAt(this.dir, row);
  }

  private read(row: Row): AuditEntry | null {
    const line = this.readLine(row);
    if (!line) return null;
    try {
      return JSON.parse(line) as AuditEntry;
    } catch {
      return null;
    }
  }
}
