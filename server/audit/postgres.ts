// The shared audit store (--audit-store postgres://…, VERITY_AUDIT_URL): the trail kept in PostgreSQL, one
// database for every gateway given the same URL, through the pure-JavaScript `pg` client.
//
// It is the JSONL store (store.ts) plus a database: every entry is still kept in this gateway's files first
// (the same bounds, actors, evidence, retention and admission, and the index its own reads use), then sent,
// in order, by one writer; the call pipeline waits for the database to hold a call's entry before its result
// is returned (written()). When the database is down the call's effect is never hidden: the result and
// stderr say `audit_unavailable`, and the entries wait in a spool file in the config dir, sent when it is
// back, in the order they were written. Each row is keyed by (gateway, id), and a row sent twice (a retry
// after a reply lost on the wire, a spool read again after a crash) is inserted once (ON CONFLICT DO NOTHING).
//
// The schema is created and migrated here at start (a version table, under an advisory lock so that two
// gateways starting together migrate once), indexed for the Control UI's filters. Every insert notifies
// `verity_audit` (a trigger), so every gateway's Control UI hears of every gateway's entries (LISTEN).
import { appendFileSync, existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import type { Approvals } from '../approvals.js';
import type { ApprovalRequest, FleetView, SessionRow } from '../gateway/protocol.js';
import {
  AuditStore,
  type AuditEntry,
  type AuditPage,
  type AuditQuery,
  type AuditUnavailable,
  type FleetBrakeVerb,
  type Retention,
} from './store.js';

/** The schema, one migration per version, applied in order; the version table says how far a database is. */
const MIGRATIONS: string[] = [
  `CREATE TABLE verity_audit (
     seq bigserial PRIMARY KEY,
     gateway text NOT NULL,
     id bigint NOT NULL,
     at timestamptz NOT NULL,
     kind text NOT NULL,
     session_key text NOT NULL,
     tool text NOT NULL,
     verdict text NOT NULL,
     client text NOT NULL DEFAULT '',
     entry jsonb NOT NULL,
     UNIQUE (gateway, id)
   );
   CREATE INDEX verity_audit_at ON verity_audit (at);
   CREATE INDEX verity_audit_session ON verity_audit (session_key, seq);
   CREATE INDEX verity_audit_tool ON verity_audit (tool, seq);
   CREATE INDEX verity_audit_verdict ON verity_audit (verdict, seq);
   CREATE INDEX verity_audit_kind ON verity_audit (kind, seq);
   CREATE INDEX verity_audit_client ON verity_audit (client, seq);
   CREATE INDEX verity_audit_gateway ON verity_audit (gateway, seq);
   CREATE FUNCTION verity_audit_notify() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN PERFORM pg_notify('verity_audit', NEW.seq::text); RETURN NULL; END $$;
   CREATE TRIGGER verity_audit_notify AFTER INSERT ON verity_audit
     FOR EACH ROW EXECUTE FUNCTION verity_audit_notify();`,
  // 2: the fleet's sessions. Each gateway's heartbeat, and its session rows as its Control UI lists them.
  `CREATE TABLE verity_gateways (gateway text PRIMARY KEY, heartbeat timestamptz NOT NULL);
   CREATE TABLE verity_sessions (
     gateway text NOT NULL REFERENCES verity_gateways ON DELETE CASCADE,
     session_key text NOT NULL,
     data jsonb NOT NULL,
     PRIMARY KEY (gateway, session_key)
   );`,
  // 3: calls held on each gateway, and the decisions other consoles send for them (taken once by the holder).
  `CREATE TABLE verity_approvals (gateway text NOT NULL, id text NOT NULL, request jsonb NOT NULL, PRIMARY KEY (gateway, id));
   CREATE TABLE verity_decisions (
     seq bigserial PRIMARY KEY,
     gateway text NOT NULL,
     kind text NOT NULL,
     approval_id text,
     approve boolean,
     verb text,
     session_key text,
     by text NOT NULL
   );`,
];

/** Any number: the advisory lock the migration holds (two gateways starting together migrate once). */
const MIGRATION_LOCK = 7317_46;
/** How long a call's result waits for its entry to reach the database before it says audit_unavailable. */
const WRITE_WAIT_MS = 3000;
/** Rows one insert sends at most (a spool drained after an outage goes in batches). */
const BATCH = 200;
/** The writer's retry delay while the database is down: from the first to the last, doubling. */
const RETRY_MS = [250, 4000] as const;
const PAGE_MAX = 500;
/** How often a gateway writes its heartbeat (and its session rows, when they changed in between). */
const HEARTBEAT_MS = 2000;
/** A gateway whose heartbeat is older than this is gone: its sessions are shown ended ("gateway gone"). */
export const GONE_MS = 10_000;
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

interface Pending {
  entry: AuditEntry;
  /** Its stored line (store.ts storedLine: bounded), without the newline. */
  line: string;
}

export class PostgresAuditStore extends AuditStore {
  readonly gateway: string;
  private readonly pool: pg.Pool;
  /** Entries not yet confirmed by the database, oldest first: sent in this order, removed once inserted. */
  private queue: Pending[] = [];
  /** Calls' results waiting for their entries (written()), by entry id. */
  private readonly waiters = new Map<number, Array<(outcome: AuditUnavailable | null) => void>>();
  private pumping = false;
  /** Why the database is unreachable, while it is (null when the last insert went through). */
  private down: string | null = null;
  /** Whether the spool file holds the queue (it is written while the database is down, and at close). */
  private spooled = false;
  private closed = false;
  /** The last entry (by seq) the Control UIs were shown, or the last there at start (null until read). */
  private shownSeq: number | null = null;
  private catchingUp = false;
  private catchUpAgain = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private listener: pg.Client | null = null;
  private listenTimer: NodeJS.Timeout | null = null;
  private pgSweepTimer: NodeJS.Timeout | null = null;
  private readonly say: (line: string) => void;
  /** This gateway's session rows (the gateway hands the getter over: shareSessions). */
  private rowsOf: (() => SessionRow[]) | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** The rows as last published (idle times aside): published again only when they change. */
  private publishedRows = '';
  private publishing: Promise<void> | null = null;
  private publishAgain = false;
  /** The fleet's view as the Control UIs were last told it (heartbeat times aside): a change is told on the next beat. */
  private toldFleet = '';
  /** Reads of the fleet's view begun: only the newest one's answer is told. */
  private fleetReads = 0;
  /** This gateway's approvals (the gateway hands them over: shareApprovals), decided from any console. */
  private approvals: Approvals | null = null;
  /** Applies a fleet brake decision to this gateway's agents (the gateway hands it over: shareBrake). */
  private applyBrake: ((verb: FleetBrakeVerb, sessionKey: string | null, by: string) => void) | null = null;

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
    for (const p of readSpool(options.spoolFile, this.say)) this.queue.push(p);
    this.spooled = this.queue.length > 0;
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
  private prepare(): Promise<void> {
    this.preparing ??= (async () => {
      await this.migrate();
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

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query('CREATE TABLE IF NOT EXISTS verity_schema (version integer NOT NULL)');
      const { rows } = await client.query<{ version: number }>('SELECT version FROM verity_schema');
      let version = rows[0]?.version ?? 0;
      if (!rows.length) await client.query('INSERT INTO verity_schema (version) VALUES (0)');
      for (; version < MIGRATIONS.length; version++) await client.query(MIGRATIONS[version]);
      await client.query('UPDATE verity_schema SET version = $1', [version]);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
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
    if (this.down && this.spooled) this.appendSpool([pending]);
    else if (this.down) this.writeSpool();
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
        if (this.spooled) this.writeSpool();
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
    this.writeSpool();
    // Every result waiting now hears it: its entry is in the spool, in order.
    for (const [id, list] of this.waiters) {
      for (const settle of list) settle(this.unavailable());
      this.waiters.delete(id);
    }
  }

  /** The spool holds exactly the queue (rewritten through a temporary file, so a crash leaves the old or the new). */
  private writeSpool(): void {
    const file = this.options.spoolFile;
    try {
      if (!this.queue.length) {
        if (existsSync(file)) unlinkSync(file);
        this.spooled = false;
        return;
      }
      writeFileSync(`${file}.tmp`, this.queue.map((p) => `${p.line}\n`).join(''), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
      this.spooled = true;
    } catch (e) {
      this.say(`the audit spool ${file} could not be written: ${(e as Error).message}`);
    }
  }

  private appendSpool(pending: Pending[]): void {
    try {
      appendFileSync(this.options.spoolFile, pending.map((p) => `${p.line}\n`).join(''), { mode: 0o600 });
    } catch (e) {
      this.say(`the audit spool ${this.options.spoolFile} could not be written: ${(e as Error).message}`);
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
  private showOthers(): void {
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

  override shareSessions(rows: () => SessionRow[]): void {
    this.rowsOf = rows;
    void this.publish();
    this.heartbeatTimer = setInterval(() => {
      void this.publish();
      // A gateway going quiet changes no row (and a notification may be missed): the view is looked at on every beat.
      this.tellFleet(true);
      // A decision or an entry whose notification was missed (the listener reconnecting) is taken on the next beat.
      this.takeDecisions();
      this.showOthers();
    }, HEARTBEAT_MS);
    this.heartbeatTimer.unref();
  }

  /**
   * This gateway's held calls, published for every console of the fleet (requested: a row; resolved: gone),
   * and the decisions other consoles send for them, taken once (DELETE … RETURNING) and acted on here.
   */
  override shareApprovals(approvals: Approvals): void {
    this.approvals = approvals;
    // Ids start again with each process (ap-1): what a previous run of this gateway left is not pending now.
    this.pool.query('DELETE FROM verity_approvals WHERE gateway = $1', [this.gateway]).catch(() => {});
    approvals.on('requested', (r) => {
      this.pool
        .query(
          "WITH put AS (INSERT INTO verity_approvals (gateway, id, request) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING) SELECT pg_notify('verity_fleet', $1)",
          [this.gateway, r.id, JSON.stringify(r)],
        )
        .catch(() => {});
    });
    approvals.on('resolved', (o) => {
      this.pool
        .query(
          "WITH gone AS (DELETE FROM verity_approvals WHERE gateway = $1 AND id = $2) SELECT pg_notify('verity_fleet', $1)",
          [this.gateway, o.id],
        )
        .catch(() => {});
    });
  }

  /**
   * An operator's decision on a call another gateway holds: written for that gateway, which takes it and
   * resolves its approval (LISTEN verity_decision). False when no such approval is pending there.
   */
  override async decide(gateway: string, id: string, approve: boolean, by: string): Promise<boolean> {
    const { rows } = await this.pool.query(
      `WITH held AS (SELECT 1 FROM verity_approvals WHERE gateway = $1 AND id = $2),
            put AS (INSERT INTO verity_decisions (gateway, kind, approval_id, approve, by) SELECT $1, 'approval', $2, $3, $4 FROM held RETURNING 1)
       SELECT pg_notify('verity_decision', $1) FROM put`,
      [gateway, id, approve, by],
    );
    return rows.length > 0;
  }

  override shareBrake(apply: (verb: FleetBrakeVerb, sessionKey: string | null, by: string) => void): void {
    this.applyBrake = apply;
  }

  /**
   * The brake for the fleet: one decision per live gateway (or the one named), which each gateway takes and
   * applies to its own agents (all of them, or the session named). Returns how many gateways were sent it.
   */
  override async brakeFleet(
    verb: FleetBrakeVerb,
    gateway: string | null,
    sessionKey: string | null,
    by: string,
  ): Promise<number> {
    const { rows } = await this.pool.query<{ gateway: string }>(
      `WITH targets AS (
         SELECT gateway FROM verity_gateways
         WHERE now() - heartbeat < make_interval(secs => $1) AND ($2::text IS NULL OR gateway = $2)
       ), put AS (
         INSERT INTO verity_decisions (gateway, kind, verb, session_key, by)
         SELECT gateway, 'brake', $3, $4, $5 FROM targets RETURNING gateway
       )
       SELECT gateway, pg_notify('verity_decision', gateway) FROM put`,
      [GONE_MS / 1000, gateway, verb, sessionKey, by],
    );
    return rows.length;
  }

  /** The decisions other consoles wrote for this gateway (approvals, the brake), each taken once, oldest first. */
  private takeDecisions(): void {
    if ((!this.approvals && !this.applyBrake) || this.closed) return;
    this.pool
      .query<{
        kind: string;
        approval_id: string | null;
        approve: boolean | null;
        verb: FleetBrakeVerb | null;
        session_key: string | null;
        by: string;
        seq: string;
      }>(
        'DELETE FROM verity_decisions WHERE gateway = $1 RETURNING kind, approval_id, approve, verb, session_key, by, seq',
        [this.gateway],
      )
      .then(({ rows }) => {
        rows.sort((a, b) => Number(a.seq) - Number(b.seq));
        for (const d of rows) {
          if (d.kind === 'approval' && d.approval_id) this.approvals?.resolve(d.approval_id, !!d.approve, d.by);
          else if (d.kind === 'brake' && d.verb) this.applyBrake?.(d.verb, d.session_key, d.by);
        }
      })
      .catch(() => {});
  }

  override get fleetName(): string {
    return this.gateway;
  }

  override sessionsChanged(): void {
    void this.publish();
  }

  /**
   * The heartbeat, and this gateway's rows when they changed (idle times aside), in one transaction that
   * notifies `verity_fleet`. One at a time: a change during a publish is published right after it.
   */
  private publish(): Promise<void> {
    if (this.publishing) {
      this.publishAgain = true;
      return this.publishing;
    }
    this.publishing = (async () => {
      try {
        do {
          this.publishAgain = false;
          await this.publishOnce();
        } while (this.publishAgain && !this.closed);
      } finally {
        this.publishing = null;
      }
    })();
    return this.publishing;
  }

  private async publishOnce(): Promise<void> {
    if (!this.rowsOf || this.closed) return;
    const rows = this.rowsOf();
    const shape = JSON.stringify(rows.map((r) => ({ ...r, idle_seconds: 0 })));
    const changed = shape !== this.publishedRows;
    let client: pg.PoolClient | undefined;
    try {
      await this.prepare();
      client = await this.pool.connect();
      await client.query('BEGIN');
      await client.query(
        'INSERT INTO verity_gateways (gateway, heartbeat) VALUES ($1, now()) ON CONFLICT (gateway) DO UPDATE SET heartbeat = now()',
        [this.gateway],
      );
      if (changed) {
        await client.query('DELETE FROM verity_sessions WHERE gateway = $1', [this.gateway]);
        await client.query(
          'INSERT INTO verity_sessions (gateway, session_key, data) SELECT $1, * FROM unnest($2::text[], $3::jsonb[])',
          [this.gateway, rows.map((r) => r.sessionKey), rows.map((r) => JSON.stringify(r))],
        );
        await client.query("SELECT pg_notify('verity_fleet', $1)", [this.gateway]);
      }
      await client.query('COMMIT');
      if (changed) this.publishedRows = shape;
    } catch {
      await client?.query('ROLLBACK').catch(() => {});
      // The database is down: the writer says so; the rows are published with the next beat.
    } finally {
      client?.release();
    }
  }

  /** Every gateway's sessions as the database holds them; a gateway past GONE_MS shows its sessions ended. */
  override async fleet(): Promise<FleetView> {
    const view: FleetView = {
      shared: true,
      gateway: this.gateway,
      gone_after_ms: GONE_MS,
      gateways: [],
      sessions: [],
      approvals: [],
    };
    try {
      const [gateways, sessions, held] = await Promise.all([
        this.pool.query<{ gateway: string; heartbeat: Date; live: boolean }>(
          'SELECT gateway, heartbeat, now() - heartbeat < make_interval(secs => $1) AS live FROM verity_gateways ORDER BY gateway',
          [GONE_MS / 1000],
        ),
        this.pool.query<{ gateway: string; row: SessionRow }>(
          'SELECT gateway, data AS row FROM verity_sessions ORDER BY gateway, session_key',
        ),
        this.pool.query<{ gateway: string; request: ApprovalRequest }>(
          'SELECT gateway, request FROM verity_approvals ORDER BY gateway, id',
        ),
      ]);
      const live = new Map(gateways.rows.map((g) => [g.gateway, g.live]));
      view.gateways = gateways.rows.map((g) => ({
        gateway: g.gateway,
        heartbeat: g.heartbeat.toISOString(),
        live: g.live,
      }));
      view.sessions = sessions.rows.map(({ gateway, row }) =>
        live.get(gateway)
          ? { gateway, live: true, row }
          : { gateway, live: false, ended_reason: 'gateway gone' as const, row: { ...row, state: 'ended' as const } },
      );
      // A gone gateway's held calls went with it: only live gateways' are offered.
      view.approvals = held.rows.filter((a) => live.get(a.gateway));
    } catch {
      // Unreachable: this gateway's own rows, as they are (the others cannot be known now).
      view.gateways = [{ gateway: this.gateway, heartbeat: new Date().toISOString(), live: true }];
      view.sessions = (this.rowsOf?.() ?? []).map((row) => ({ gateway: this.gateway, live: true, row }));
      view.approvals = (this.approvals?.list() ?? []).map((request) => ({ gateway: this.gateway, request }));
    }
    return view;
  }

  /**
   * Tells the Control UIs the fleet's view: on a notification, or (onlyIfChanged, on every beat) when it is
   * not what they were last told (a gateway went quiet, or a notification was missed). Only the newest read
   * is told: two notifications close together start two reads, and the older one may answer last (seen: a
   * console left showing an agent running after the fleet brake stopped it).
   */
  private tellFleet(onlyIfChanged = false): void {
    if (this.closed || (onlyIfChanged && this.down)) return;
    const read = ++this.fleetReads;
    void this.fleet().then((view) => {
      if (read !== this.fleetReads) return; // a newer read is under way: it tells (a beat's, when this one changed anything)
      // What the consoles see, heartbeat times aside (they move on every beat).
      const shown = JSON.stringify({ ...view, gateways: view.gateways.map((g) => [g.gateway, g.live]) });
      const changed = shown !== this.toldFleet;
      this.toldFleet = shown;
      if (!onlyIfChanged || changed) this.emit('fleet', view);
    });
  }

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
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    // A gateway that stops cleanly takes its sessions off the fleet's list (they ended with it).
    if (this.rowsOf && !this.down)
      await this.pool
        .query(
          "WITH gone AS (DELETE FROM verity_gateways WHERE gateway = $1), held AS (DELETE FROM verity_approvals WHERE gateway = $1) SELECT pg_notify('verity_fleet', $1)",
          [this.gateway],
        )
        .catch(() => {});
    this.writeSpool();
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

/** A spool's lines as entries, in order; a torn last line (a crash mid-write) is skipped and said. */
function readSpool(file: string, say: (line: string) => void): Pending[] {
  if (!existsSync(file)) return [];
  const out: Pending[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    try {
      out.push({ entry: JSON.parse(line) as AuditEntry, line });
    } catch {
      say(`the audit spool ${file} has a line that is not JSON (a write cut short): skipped`);
    }
  }
  if (out.length) say(`the audit spool ${file} holds ${out.length} entries from before: sending them first`);
  return out;
}
