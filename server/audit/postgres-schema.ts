// The shared audit store's schema in PostgreSQL (postgres-trail.ts migrates it at start): one migration per
// version, applied in order under an advisory lock, so that two gateways starting together migrate once; a
// version table says how far a database is. Indexed for the Control UI's filters; every insert notifies
// `verity_audit` (a trigger), and the fleet's tables (sessions, held calls, decisions) come with version 2 and 3.
import type pg from 'pg';

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

/** Creates or migrates the schema: the versions this database lacks, in one transaction under MIGRATION_LOCK. */
export async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
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
