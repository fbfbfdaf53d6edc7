// The audit trail: every call of every session, every approval, the brake and the operator's own input,
// kept in append-only JSONL segment files under <config dir>/audit/, with an index in memory.
//
// Why files and not an embedded database: an append is the whole write path (a crash loses at most the
// line being written, and a torn last line is skipped on load), the files are readable with any tool and
// export as they are, retention is deleting whole old segments, and nothing has to be compiled or
// downloaded (Node 20 has no node:sqlite; the pure-JS databases on npm keep the whole database in memory
// and rewrite it to disk). The index (id, time, session, tool, verdict, where the line is) is rebuilt
// from the segments at start: one sequential read, and the files stay the only truth.
import { EventEmitter } from 'node:events';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import type { AuditActor, AuditEntry, AuditKind, AuditPage, EvidenceItem } from '../gateway/protocol.js';

// An entry's shape is declared once, in the gateway protocol (audit.query and audit.entry carry it).
export type { AuditActor, AuditEntry, AuditKind, AuditPage };
/** One piece of a call's read-back evidence, as the trail keeps it. */
export type AuditEvidence = EvidenceItem;

export type AuditInput = Omit<AuditEntry, 'id' | 'at'> & { at?: string };

export interface AuditQuery {
  sessionKey?: string;
  tool?: string;
  verdict?: string;
  kind?: AuditKind;
  /** The agent: its actor's client name, across its sessions. */
  client?: string;
  text?: string;
  /** ISO times or epoch ms: entries at or after `from`, before `to`. */
  from?: number;
  to?: number;
  /** Page back: only entries with an id below this. */
  before?: number;
  limit?: number;
}

export interface Retention {
  maxAgeMs: number;
  maxBytes: number;
}

interface Row {
  id: number;
  atMs: number;
  kind: AuditKind;
  sessionKey: string;
  tool: string;
  verdict: string;
  /** The actor's client name ('' for none): the agent filter reads it without reading the line. */
  client: string;
  seg: Segment;
  offset: number;
  length: number;
}
interface Segment {
  file: string;
  firstId: number;
  bytes: number;
  lastAtMs: number;
  rows: number;
}

/** Values a line carries whole up to this; longer strings are cut (a type_text of a book, a page's text). */
const STRING_MAX = 4000;
/** A stored result larger than this is kept as its summary fields only. */
const RESULT_MAX = 64 * 1024;
/** Rows a text search reads per request before it answers with where to go on (bounded work per request). */
const TEXT_SCAN_MAX = 20_000;
const PAGE_MAX = 500;
/** In-memory rows when there is no folder (`verity mcp` on its own): the newest are kept. */
const MEMORY_ROWS = 5000;
/** Distinct session keys, tools and verdicts the rows share one copy of (AuditStore.shared). */
const SHARED_STRINGS = 4096;

/** The trail: appends, pages back, retention; each new entry is also emitted ('entry': the gateway sends it on). */
export class AuditStore extends EventEmitter<{ entry: [entry: AuditEntry] }> {
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

  /** `dir` null: a bounded in-memory trail (a `verity mcp` with no gateway); otherwise durable. */
  constructor(
    readonly dir: string | null,
    readonly retention: Retention = { maxAgeMs: 30 * 86_400_000, maxBytes: 256 * 1024 * 1024 },
  ) {
    super();
    this.segmentBytes = Math.max(64 * 1024, Math.min(16 * 1024 * 1024, Math.floor(retention.maxBytes / 8)));
    if (!dir) return;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.load();
    this.sweep();
    this.sweepTimer = setInterval(() => this.sweep(), 3_600_000);
    this.sweepTimer.unref();
  }

  /** Records one entry (written with the next flush, at most a tick later) and tells listeners. */
  append(input: AuditInput): AuditEntry {
    // A line written after its connection closed (a call's entry follows its reply) keeps the session's last actor.
    const actor = input.actor ?? this.actorOf(input.sessionKey) ?? this.actors.get(input.sessionKey);
    const entry: AuditEntry = {
      ...input,
      ...(actor ? { actor } : {}),
      id: this.nextId++,
      at: input.at ?? new Date().toISOString(),
    };
    if (actor) this.actors.set(input.sessionKey, actor);
    const client = this.shared(actor?.client ?? '');
    const line = storedLine(entry) + '\n';
    const length = Buffer.byteLength(line);
    const atMs = Date.parse(entry.at);
    if (!this.dir) {
      this.memory.set(entry.id, line);
      this.rows.push({
        id: entry.id,
        atMs,
        kind: entry.kind,
        sessionKey: this.shared(entry.sessionKey),
        tool: this.shared(entry.tool),
        verdict: this.shared(entry.verdict),
        client,
        seg: MEMORY_SEGMENT,
        offset: 0,
        length,
      });
      if (this.rows.length > MEMORY_ROWS + 500) {
        for (const row of this.rows.splice(0, this.rows.length - MEMORY_ROWS)) this.memory.delete(row.id);
        this.forgetActors();
      }
    } else {
      let seg = this.segments.at(-1);
      if (!seg || seg.bytes >= this.segmentBytes) seg = this.roll(entry.id);
      this.rows.push({
        id: entry.id,
        atMs,
        kind: entry.kind,
        sessionKey: this.shared(entry.sessionKey),
        tool: this.shared(entry.tool),
        verdict: this.shared(entry.verdict),
        client,
        seg,
        offset: seg.bytes,
        length,
      });
      seg.bytes += length;
      seg.lastAtMs = atMs;
      seg.rows++;
      this.buffer.push(line);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    }
    this.emit('entry', entry);
    return entry;
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

  close(): void {
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

  /** The sessions the trail knows, newest first, with how many entries and when the last one was. */
  sessions(): Array<{ sessionKey: string; entries: number; last: string; actor?: AuditActor }> {
    const seen = new Map<string, { entries: number; lastMs: number }>();
    for (const row of this.rows) {
      const s = seen.get(row.sessionKey);
      if (s) {
        s.entries++;
        s.lastMs = row.atMs;
      } else seen.set(row.sessionKey, { entries: 1, lastMs: row.atMs });
    }
    return [...seen]
      .sort((a, b) => b[1].lastMs - a[1].lastMs)
      .slice(0, 1000)
      .map(([sessionKey, s]) => {
        const actor = this.actors.get(sessionKey);
        return { sessionKey, entries: s.entries, last: new Date(s.lastMs).toISOString(), ...(actor ? { actor } : {}) };
      });
  }

  /** Drops the actors of sessions no row is left of (retention took them): the map stays as big as the trail. */
  private forgetActors(): void {
    const kept = new Set(this.rows.map((row) => row.sessionKey));
    for (const key of this.actors.keys()) if (!kept.has(key)) this.actors.delete(key);
  }

  /** The folder's size in bytes (segments), for the retention and the operator. */
  get bytes(): number {
    return this.segments.reduce((n, s) => n + s.bytes, 0);
  }

  /** Deletes segments older than the age bound, then the oldest while over the size bound (never the one being written). */
  sweep(now = Date.now()): void {
    if (!this.dir) return;
    this.flush();
    let total = this.bytes;
    while (this.segments.length > 1) {
      const oldest = this.segments[0];
      const tooOld = now - oldest.lastAtMs > this.retention.maxAgeMs;
      if (!tooOld && total <= this.retention.maxBytes) break;
      try {
        unlinkSync(join(this.dir, oldest.file));
      } catch {
        /* already gone */
      }
      this.segments.shift();
      total -= oldest.bytes;
      this.rows.splice(0, oldest.rows);
    }
    // The one being written is dropped too once everything in it is past the age bound.
    const last = this.segments.at(-1);
    if (last && now - last.lastAtMs > this.retention.maxAgeMs) {
      try {
        unlinkSync(join(this.dir, last.file));
      } catch {
        /* already gone */
      }
      this.segments.pop();
      this.rows.length = 0;
    }
    this.forgetActors();
  }

  private roll(firstId: number): Segment {
    const seg: Segment = {
      file: `audit-${String(firstId).padStart(12, '0')}.jsonl`,
      firstId,
      bytes: 0,
      lastAtMs: Date.now(),
      rows: 0,
    };
    this.segments.push(seg);
    return seg;
  }

  private load(): void {
    const files = readdirSync(this.dir!)
      .filter((f) => /^audit-\d{12}\.jsonl$/.test(f))
      .sort();
    for (const file of files) {
      const path = join(this.dir!, file);
      const data = readFileSync(path);
      const seg: Segment = {
        file,
        firstId: Number(file.slice(6, 18)),
        bytes: data.length,
        lastAtMs: statSync(path).mtimeMs,
        rows: 0,
      };
      let offset = 0;
      while (offset < data.length) {
        let end = data.indexOf(10, offset);
        if (end < 0) end = data.length; // a torn last line (a crash mid-write) is skipped below
        const length = end + 1 - offset;
        try {
          const e = JSON.parse(data.subarray(offset, end).toString('utf8')) as AuditEntry;
          if (typeof e.id === 'number' && e.id >= this.nextId) {
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
            this.nextId = e.id + 1;
            if (e.actor) this.actors.set(e.sessionKey, e.actor);
          }
        } catch {
          /* not a whole line */
        }
        offset = end + 1;
      }
      this.segments.push(seg);
    }
    // A torn line at the end of the last segment would glue onto the next append: start a new segment.
    const last = this.segments.at(-1);
    if (last && last.bytes > 0 && readFileSync(join(this.dir!, last.file)).at(-1) !== 10) this.roll(this.nextId);
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
    const path = join(this.dir, row.seg.file);
    if (!existsSync(path)) return null;
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(row.length);
      readSync(fd, buf, 0, row.length, row.offset);
      return buf.toString('utf8');
    } finally {
      closeSync(fd);
    }
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

const MEMORY_SEGMENT: Segment = { file: '', firstId: 0, bytes: 0, lastAtMs: 0, rows: 0 };

/**
 * The entry's line as stored. Most entries need nothing cut: those are written as they are, in one
 * stringify (their result cannot be over RESULT_MAX when the whole line is not), without the copies and
 * the second stringify `compact` makes. The line is the same either way.
 */
function storedLine(entry: AuditEntry): string {
  if (!needsCut(entry.args) && !needsCut(entry.result) && !needsCut(entry.evidence)) {
    const line = JSON.stringify(entry);
    if (line.length <= RESULT_MAX) return line;
  }
  return JSON.stringify(compact(entry));
}

/** Whether `cut` would change `value`: a string over STRING_MAX, or an object that is not plain (cut copies it into one). */
function needsCut(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.length > STRING_MAX;
  if (!value || typeof value !== 'object' || depth > 12) return false;
  if (Array.isArray(value)) return value.some((v) => needsCut(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return true;
  for (const v of Object.values(value)) if (needsCut(v, depth + 1)) return true;
  return false;
}

/** An entry as stored: long strings cut (saying how long they were), a huge result reduced to its verdict fields. */
function compact(entry: AuditEntry): AuditEntry {
  const out = { ...entry };
  if (out.args) out.args = cut(out.args) as Record<string, unknown>;
  if (out.result !== undefined) {
    const json = JSON.stringify(out.result) ?? '';
    if (json.length > RESULT_MAX) {
      const r = out.result as Record<string, unknown>;
      out.result = {
        truncated: true,
        bytes: json.length,
        ...(r && typeof r === 'object'
          ? pick(r, ['status', 'refusal', 'effect', 'method', 'target', 'route', 'observed', 'evidence'])
          : {}),
      };
    }
    out.result = cut(out.result);
  }
  if (out.evidence) out.evidence = cut(out.evidence) as AuditEvidence[];
  return out;
}

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}

function cut(value: unknown, depth = 0): unknown {
  if (typeof value === 'string')
    return value.length > STRING_MAX ? `${value.slice(0, STRING_MAX)}… (${value.length} chars in all)` : value;
  if (!value || typeof value !== 'object' || depth > 12) return value;
  if (Array.isArray(value)) return value.map((v) => cut(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v, depth + 1)]));
}

/** Retention from the environment: VERITY_AUDIT_MAX_AGE_DAYS (default 30) and VERITY_AUDIT_MAX_MB (default 256). */
export function retentionOf(maxAgeDays: number | undefined, maxMb: number | undefined): Retention {
  return { maxAgeMs: (maxAgeDays ?? 30) * 86_400_000, maxBytes: (maxMb ?? 256) * 1024 * 1024 };
}
