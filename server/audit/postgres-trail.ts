// The shared audit store's trail in PostgreSQL (postgres.ts adds the fleet on top of it): the JSONL store
// (store.ts) plus a database. Every entry is kept in this gateway's files first, then sent, in order, by one
// writer; a call's result waits for the database to hold its entry (written()), and when the database is down
// the result and stderr say `audit_unavailable` and the entries wait in the spool (postgres-spool.ts), sent
// when it is back. Rows are keyed by (gateway, id) and inserted once (ON CONFLICT DO NOTHING). It reads every
// gateway's entries back (search), shows other gateways' entries live (LISTEN), and sweeps by the retention.
import pg from 'pg';
import { migrate } from './postgres-schema.js';
import { type Pending, Spool } from './postgres-spool.js';
import {
  AuditStore,
  type AuditEntry,
  type AuditPage,
  type AuditQuery,
  type AuditUnavailable,
  type Retention,
} from './store.js';

/** How long a call's result waits for its entry to reach the database before it says audit_unavailable. */
const WRITE_WAIT_MS = 3000;
/** Rows one insert sends at most (a spool drained after an outage goes in batches). */
const BATCH = 200;
/** The writer's retry delay while the database is down: from the first to the last, doubling. */
const RETRY_MS = [250, 4000] as const;
const PAGE_MAX = 500;
/** A gone gateway's row is forgotten after this long (its sessions with it). */
const FORGET_GONE_MS = 86_400_000;

export interface PostgresOptions {
  url: string;
  /** This gateway's name in the shared trail (entry.gateway): stable across its restarts (the spool's rows keep it). */
  gateway: string;
  /** Where entries wait while the database is down (one JSON line each, in order). */
  spoolFile: string;
  /** stderr, for what the operator must hear (the database down, back, the spool sent). */
  say?: (line: string) => void;
}

/** The trail's half of the shared store; postgres.ts's PostgresAuditStore adds the fleet's (the abstract members). */
export abstract class PostgresTrail extends AuditStore {
  readonly gateway: string;
  protected readonly pool: pg.Pool;
  /** Entries not yet confirmed by the database, oldest first: sent in this order, removed once inserted. */
  private queue: Pending[] = [];
  /** Calls' results waiting for their entries (written()), by entry id. */
  private readonly waiters = new Map<number, Array<(outcome: AuditUnavailable | null) => void>>();
  private pumping = false;
  /** Why the database is unreachable, while it is (null when the last insert went through). */
  protected down: string | null = null;
  /** Where the queue waits while the database is down (and what a previous run left unsent). */
  private readonly spool: Spool;
  protected closed = false;
  /** The last entry (by seq) the Control UIs were shown, or the last there at start (null until read). */
  private shownSeq: number | null = null;
  private catchingUp = false;
  private catchUpAgain = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private listener: pg.Client | null = null;
  private listenTimer: NodeJS.Timeout | null = null;
  private pgSweepTimer: NodeJS.Timeout | null = null;
  protected readonly say: (line: string) => void;

  constructor(
    dir: string,
    retention: Retention,
    private readonly options: PostgresOptions,
  ) {
    super(dir, retention);
    this.gateway = options.gateway;
    this.say = options.say ?? ((line) => process.stderr.write(`verity: ${line}\n`));
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: 3,
      connectionTimeoutMillis: 2000,
      query_timeout: 5000,
      idleTimeoutMillis: 10_000,
      application_name: `verity ${options.gateway}`,
    });
    // An idle connection that breaks (the database restarted) is an event, not the process's end: the pool
    // drops it, and the next insert says whether the database is there.
    this.pool.on('error', () => {});
    // What a previous run left unsent comes first, in its order.
    this.spool = new Spool(options.spoolFile, this.say);
    for (const p of this.spool.read()) this.queue.push(p);
    this.spool.held = this.queue.length > 0;
  }

  /**
   * Creates or migrates the schema, then sends what is waiting. A database that is down at start is not
   * fatal: the gateway serves, its entries wait in the spool, and the migration runs when it is back.
   */
  async start(): Promise<void> {
    try {
      await this.prepare();
    } catch (e) {
      this.wentDown(e);
    }
    this.listen();
    this.sweepDatabase();
    this.pgSweepTimer = setInterval(() => this.sweepDatabase(), 3_600_000);
    this.pgSweepTimer.unref();
    this.pump();
  }

  private preparing: Promise<void> | null = null;

  /**
   * Once per process, before the first insert: the schema, and what this gateway's files hold beyond it.
   * One attempt at a time (the writer and the heartbeat both ask); a failed one is tried again next time.
   */
  protected prepare(): Promise<void> {
    this.preparing ??= (async () => {
      await migrate(this.pool);
      await this.catchUp();
      if (this.shownSeq === null) {
        const { rows } = await this.pool.query<{ seq: string }>(
          'SELECT coalesce(max(seq), 0)::text AS seq FROM verity_audit',
        );
        this.shownSeq = Number(rows[0]!.seq);
      }
    })().catch((e) => {
      this.preparing = null;
      throw e;
    });
    return this.preparing;
  }

  /**
   * What this gateway's files hold beyond the database's last row of it (a crash between the files and the
   * insert), queued; and the next id raised past the database's, so that ids stay this gateway's own even
   * when retention emptied its files.
   */
  private async catchUp(): Promise<void> {
    const { rows } = await this.pool.query<{ max: string | null }>(
      'SELECT max(id)::text AS max FROM verity_audit WHERE gateway = $1',
      [this.gateway],
    );
    const last = Number(rows[0]?.max ?? 0);
    this.raiseNextId(last);
    const queued = new Set(this.queue.map((p) => p.entry.id));
    const missing = this.entriesAfter(last).filter((p) => !queued.has(p.entry.id));
    if (missing.length) {
      this.queue = [...missing, ...this.queue].sort((a, b) => a.entry.id - b.entry.id);
      this.say(`the shared audit trail lacks ${missing.length} entries of this gateway's files: sending them`);
    }
  }

  protected override kept(entry: AuditEntry, line: string): void {
    const pending = { entry, line: line.endsWith('\n') ? line.slice(0, -1) : line };
    this.queue.push(pending);
    // While the database is down, each entry is on disk in the spool before its call's result says so.
    if (this.down && this.spool.held) this.spool.append([pending]);
    else if (this.down) this.spool.write(this.queue);
    this.pump();
  }

  override written(entry: AuditEntry): Promise<AuditUnavailable | null> | null {
    if (!this.queue.some((p) => p.entry.id === entry.id)) return null;
    // Down and waiting to retry: said at once (the entry is in the spool). Otherwise the writer is trying now.
    if (this.down && this.retryTimer) return Promise.resolve(this.unavailable());
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => settle(this.unavailable(`no answer from it in ${WRITE_WAIT_MS} ms`)),
        WRITE_WAIT_MS,
      );
      const settle = (outcome: AuditUnavailable | null) => {
        clearTimeout(timer);
        resolve(outcome);
      };
      const list = this.waiters.get(entry.id) ?? [];
      list.push(settle);
      this.waiters.set(entry.id, list);
    });
  }

  private unavailable(why = this.down ?? 'unreachable'): AuditUnavailable {
    return {
      code: 'audit_unavailable',
      message: `the shared audit store (PostgreSQL) did not take this call's entry (${why}): it is kept in ${this.options.spoolFile} and sent when the database is back (${this.queue.length} entries waiting)`,
    };
  }

  /** The one writer: sends the queue in order, a batch at a time; while the database is down, retries. */
  private pump(delay: number = RETRY_MS[0]): void {
    if (this.pumping || this.closed || this.retryTimer) return;
    this.pumping = true;
    void this.drain(delay);
  }

  /**
   * Sends the queue until it is empty. `pumping` is cleared in the same turn the loop ends (not a promise's
   * tick later), so an entry appended in between starts the writer again instead of waiting unsent.
   */
  private async drain(delay: number): Promise<void> {
    try {
      while (this.queue.length && !this.closed) {
        let batch: Pending[] = [];
        try {
          await this.prepare();
          batch = this.queue.slice(0, BATCH);
          await this.insert(batch);
        } catch (e) {
          this.wentDown(e);
          if (this.closed) return;
          // Retried on a timer, not in this loop: appends meanwhile only queue (and go to the spool).
          this.retryTimer = setTimeout(() => {
            this.retryTimer = null;
            this.pump(Math.min(delay * 2, RETRY_MS[1]));
          }, delay);
          this.retryTimer.unref();
          return;
        }
        this.queue.splice(0, batch.length);
        for (const p of batch) for (const settle of this.waiters.get(p.entry.id) ?? []) settle(null);
        for (const p of batch) this.waiters.delete(p.entry.id);
        if (this.down) {
          this.say(
            `the shared audit store is back: sending the ${this.queue.length + batch.length} entries kept meanwhile`,
          );
          this.down = null;
        }
        if (this.spool.held) this.spool.write(this.queue);
      }
    } finally {
      this.pumping = false;
    }
  }

  private async insert(batch: Pending[]): Promise<void> {
    await this.pool.query(
      `INSERT INTO verity_audit (gateway, id, at, kind, session_key, tool, verdict, client, entry)
       SELECT $1, * FROM unnest($2::bigint[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::jsonb[])
       ON CONFLICT (gateway, id) DO NOTHING`,
      [
        this.gateway,
        batch.map((p) => p.entry.id),
        batch.map((p) => p.entry.at),
        batch.map((p) => p.entry.kind),
        batch.map((p) => p.entry.sessionKey),
        batch.map((p) => p.entry.tool),
        batch.map((p) => p.entry.verdict),
        batch.map((p) => p.entry.actor?.client ?? ''),
        batch.map((p) => p.line),
      ],
    );
  }

  private wentDown(e: unknown): void {
    const why = (e as Error)?.message || String(e);
    if (!this.down)
      this.say(
        `audit_unavailable: the shared audit store (PostgreSQL) is unreachable (${why}); entries are kept in ${this.options.spoolFile} and sent when it is back`,
      );
    this.down = why;
    this.spool.write(this.queue);
    // Every result waiting now hears it: its entry is in the spool, in order.
    for (const [id, list] of this.waiters) {
      for (const settle of list) settle(this.unavailable());
      this.waiters.delete(id);
    }
  }

  /** Rows older than the retention leave the database too (whichever gateway wrote them). */
  private sweepDatabase(): void {
    if (this.down) return;
    this.pool
      .query('DELETE FROM verity_audit WHERE at < now() - make_interval(secs => $1)', [this.retention.maxAgeMs / 1000])
      .catch(() => {
        /* said by the writer when the database is down; retried in an hour */
      });
    this.pool
      .query('DELETE FROM verity_gateways WHERE heartbeat < now() - make_interval(secs => $1)', [FORGET_GONE_MS / 1000])
      .catch(() => {});
  }

  /** Every gateway's entries from the database, newest first; this gateway's files when it is unreachable. */
  override async search(q: AuditQuery = {}): Promise<AuditPage> {
    // A session's history (the Control UI asks by the sessionKey of its own session list: connection ids are
    // each gateway's own, so another gateway may have a session of the same key) is read from this gateway's
    // files, with their ids (the pane's log lines open entries by id); so is everything while the database is down.
    if (this.down || (q.sessionKey && (!q.gateway || q.gateway === this.gateway))) {
      const page = this.query(q);
      return { ...page, entries: page.entries.map((e) => ({ ...e, gateway: this.gateway })) };
    }
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (q.sessionKey) add('session_key = ?', q.sessionKey);
    if (q.tool) add('tool = ?', q.tool);
    if (q.verdict) add('verdict = ?', q.verdict);
    if (q.kind) add('kind = ?', q.kind);
    if (q.client) add('client = ?', q.client);
    if (q.gateway) add('gateway = ?', q.gateway);
    if (q.from !== undefined) add('at >= to_timestamp(?::double precision / 1000)', q.from);
    if (q.to !== undefined) add('at < to_timestamp(?::double precision / 1000)', q.to);
    if (q.before !== undefined) add('seq < ?', q.before);
    if (q.text?.trim())
      add(
        "entry::text ILIKE '%' || ? || '%'",
        q.text.trim().replace(/[\\%_]/g, (c) => `\\${c}`),
      );
    const limit = Math.min(Math.max(1, q.limit ?? 100), PAGE_MAX);
    try {
      const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
      const [page, total] = await Promise.all([
        this.pool.query<{ seq_text: string; gateway: string; entry: AuditEntry }>(
          `SELECT seq::text AS seq_text, gateway, entry FROM verity_audit ${clause} ORDER BY seq DESC LIMIT ${limit + 1}`,
          params,
        ),
        this.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM verity_audit'),
      ]);
      const rows = page.rows.slice(0, limit);
      return {
        // Another gateway's recording images are on its disk, not here (audit.image reads this gateway's own).
        entries: rows.map((r) =>
          r.gateway === this.gateway
            ? { ...r.entry, gateway: r.gateway }
            : { ...withoutRecording(r.entry), gateway: r.gateway },
        ),
        next_before: page.rows.length > limit ? Number(rows.at(-1)!.seq_text) : null,
        total: Number(total.rows[0].n),
      };
    } catch (e) {
      this.wentDown(e);
      return this.query(q);
    }
  }

  /** Entries every gateway writes, as they are inserted: emitted as 'entry' (other gateways' ones name their gateway). */
  private listen(): void {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.options.url, connectionTimeoutMillis: 2000 });
    this.listener = client;
    const again = () => {
      if (this.listener !== client || this.closed) return;
      this.listener = null;
      client.end().catch(() => {});
      this.listenTimer = setTimeout(() => this.listen(), 1000);
      this.listenTimer.unref();
    };
    client.on('error', again);
    client.on('end', again);
    client.on('notification', (n) => {
      if (n.channel === 'verity_fleet') {
        this.tellFleet();
        return;
      }
      if (n.channel === 'verity_decision') {
        if (n.payload === this.gateway) this.takeDecisions();
        return;
      }
      const seq = Number(n.payload);
      if (Number.isSafeInteger(seq)) this.showOthers();
    });
    client
      .connect()
      .then(() => client.query('LISTEN verity_audit; LISTEN verity_fleet; LISTEN verity_decision'))
      .catch(again);
  }

  /**
   * Other gateways' entries since the last one this gateway's Control UIs were shown, read on the pool (the
   * listening connection only listens) and emitted in order. Asked on each notification and on every
   * heartbeat: a notification is not guaranteed (measured here: a listener that re-listened after a database
   * restart heard none), so the beat shows a missed entry within HEARTBEAT_MS; `shownSeq` keeps each once. (An
   * insert that commits after a later seq was shown is left out of the live log; audit.query has it.)
   */
  protected showOthers(): void {
    if (this.closed || this.shownSeq === null) return;
    if (this.catchingUp) {
      this.catchUpAgain = true;
      return;
    }
    this.catchingUp = true;
    this.pool
      .query<{ seq: string; gateway: string; entry: AuditEntry }>(
        'SELECT seq, gateway, entry FROM verity_audit WHERE seq > $1 ORDER BY seq LIMIT 500',
        [this.shownSeq],
      )
      .then(({ rows }) => {
        for (const row of rows) {
          this.shownSeq = Math.max(this.shownSeq ?? 0, Number(row.seq));
          // This gateway's own entries were emitted as they were appended.
          if (row.gateway !== this.gateway) this.emit('entry', { ...row.entry, gateway: row.gateway });
        }
        if (rows.length === 500) this.catchUpAgain = true;
      })
      .catch(() => {
        // The database is away: the next notification or beat asks again.
      })
      .finally(() => {
        this.catchingUp = false;
        if (this.catchUpAgain) {
          this.catchUpAgain = false;
          this.showOthers();
        }
      });
  }

  /** Tells the Control UIs the fleet's view (a `verity_fleet` notice, or a beat when a gateway went quiet). */
  protected abstract tellFleet(onlyIfChanged?: boolean): void;

  /** Takes the decisions other consoles wrote for this gateway (a `verity_decision` notice). */
  protected abstract takeDecisions(): void;

  /** Closing: stops the heartbeat and takes this gateway off the fleet's list (its sessions ended with it). */
  protected abstract leaveFleet(): Promise<void>;

  /** Entries still waiting for the database (the tests and the operator's status read it). */
  get waiting(): number {
    return this.queue.length;
  }

  /** Whether the database is unreachable now, and why. */
  get unreachable(): string | null {
    return this.down;
  }

  /**
   * Gives the writer a bounded moment to send what is queued, then keeps the rest in the spool (sent by the
   * next start) and closes the connections.
   */
  override async close(waitMs = 2000): Promise<void> {
    const deadline = Date.now() + waitMs;
    while (this.queue.length && !this.down && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    this.closed = true;
    super.close();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.listenTimer) clearTimeout(this.listenTimer);
    if (this.pgSweepTimer) clearInterval(this.pgSweepTimer);
    await this.leaveFleet();
    this.spool.write(this.queue);
    for (const [, list] of this.waiters) for (const settle of list) settle(this.unavailable('the gateway is closing'));
    this.waiters.clear();
    const listener = this.listener;
    this.listener = null;
    await Promise.allSettled([listener?.end(), this.pool.end()]);
  }
}

function withoutRecording(entry: AuditEntry): AuditEntry {
  const { recording: _, ...rest } = entry;
  return rest;
}
