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
// The schema is created and migrated at start (postgres-schema.ts: a version table, under an advisory lock so
// that two gateways starting together migrate once), indexed for the Control UI's filters. Every insert notifies
// `verity_audit` (a trigger), so every gateway's Control UI hears of every gateway's entries (LISTEN).
//
// Its parts: the schema (postgres-schema.ts), the spool (postgres-spool.ts), the trail's writer and reads
// (postgres-trail.ts), and here the fleet: each gateway's heartbeat and session rows, the calls it holds and
// the decisions other consoles send for them, and the brake for every gateway.
import type { Approvals } from '../approvals.js';
import type { ApprovalRequest, FleetView, SessionRow } from '../gateway/protocol.js';
import type pg from 'pg';
import { PostgresTrail } from './postgres-trail.js';
import type { FleetBrakeVerb } from './store.js';

export type { PostgresOptions } from './postgres-trail.js';

/** How often a gateway writes its heartbeat (and its session rows, when they changed in between). */
const HEARTBEAT_MS = 2000;
/** A gateway whose heartbeat is older than this is gone: its sessions are shown ended ("gateway gone"). */
export const GONE_MS = 10_000;

/** The shared store the server builds: the trail in the database (postgres-trail.ts), and the fleet shared through it. */
export class PostgresAuditStore extends PostgresTrail {
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
  protected override takeDecisions(): void {
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
  protected override tellFleet(onlyIfChanged = false): void {
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

  protected override async leaveFleet(): Promise<void> {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    // A gateway that stops cleanly takes its sessions off the fleet's list (they ended with it).
    if (this.rowsOf && !this.down)
      await this.pool
        .query(
          "WITH gone AS (DELETE FROM verity_gateways WHERE gateway = $1), held AS (DELETE FROM verity_approvals WHERE gateway = $1) SELECT pg_notify('verity_fleet', $1)",
          [this.gateway],
        )
        .catch(() => {});
  }
}
