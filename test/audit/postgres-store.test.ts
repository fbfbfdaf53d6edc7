// The shared audit store against a real PostgreSQL (test/helpers/postgres.ts), in process: the schema
// created and versioned at start, entries written before written() resolves, the database stopped and
// started again while entries keep coming (audit_unavailable said meanwhile, the spool kept on disk, sent in
// order afterwards: every entry exactly once), the spool read by the next start, and two stores (two
// gateways) reading each other's entries with the gateway filter and hearing them through LISTEN/NOTIFY.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresAuditStore } from '../../server/audit/postgres.js';
import type { AuditEntry } from '../../server/audit/store.js';
import { retentionOf } from '../../server/audit/store.js';
import { waitFor } from '../helpers/gateway.js';
import { type Postgres, postgresMissing, startPostgres } from '../helpers/postgres.js';

if (postgresMissing) process.stdout.write(`# shared audit store tests skipped: ${postgresMissing}\n`);

describe('the shared audit store in PostgreSQL', { skip: postgresMissing ?? false }, () => {
  let db: Postgres;
  const dir = mkdtempSync(join(tmpdir(), 'verity-pg-store-'));
  const stores: PostgresAuditStore[] = [];
  const said: string[] = [];

  const open = async (name: string) => {
    const store = new PostgresAuditStore(join(dir, name, 'audit'), retentionOf(30, 64), {
      url: db.url,
      gateway: name,
      spoolFile: join(dir, name, 'audit-spool.jsonl'),
      say: (line) => said.push(`${name}: ${line}`),
    });
    stores.push(store);
    await store.start();
    return store;
  };
  const call = (store: PostgresAuditStore, n: number) =>
    store.append({ kind: 'call', sessionKey: 'agent/s1', tool: 'click', verdict: 'confirmed', summary: `call ${n}` })!;
  const rowsOf = (gateway: string) =>
    db.query<{ id: string; summary: string }>(
      "SELECT id::text, entry->>'summary' AS summary FROM verity_audit WHERE gateway = $1 ORDER BY seq",
      [gateway],
    );

  before(async () => {
    db = await startPostgres();
  });
  after(async () => {
    for (const s of stores) await s.close(500);
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the schema is created at start and its version recorded; an entry is in the database when written() resolves', async () => {
    const a = await open('gw-a');
    const [version] = await db.query<{ version: number }>('SELECT version FROM verity_schema');
    assert.equal(version.version, 3, 'every migration applied (the trail, the fleet, its decisions)');
    const indexes = (
      await db.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE tablename = 'verity_audit'")
    ).map((r) => r.indexname);
    for (const name of ['verity_audit_session', 'verity_audit_tool', 'verity_audit_verdict', 'verity_audit_gateway'])
      assert.ok(indexes.includes(name), `index ${name}: ${indexes}`);
    const entry = call(a, 1);
    assert.equal(await a.written(entry), null, 'written() resolves with nothing to say');
    assert.deepEqual(
      (await rowsOf('gw-a')).map((r) => r.summary),
      ['call 1'],
    );
  });

  test('the database stopped and started mid-run: audit_unavailable said meanwhile, the spool on disk, every entry once, in order', async () => {
    const a = stores[0];
    const outcomes: Array<{ entry: AuditEntry; unavailable: boolean }> = [];
    for (let n = 2; n <= 6; n++) {
      const entry = call(a, n);
      outcomes.push({ entry, unavailable: !!(await a.written(entry)) });
    }
    await db.stop();
    for (let n = 7; n <= 16; n++) {
      const entry = call(a, n);
      const outcome = await a.written(entry);
      assert.equal(outcome?.code, 'audit_unavailable', `entry ${n} while the database is down`);
      assert.match(outcome!.message, /audit-spool\.jsonl/);
      outcomes.push({ entry, unavailable: true });
    }
    const spool = join(dir, 'gw-a', 'audit-spool.jsonl');
    assert.ok(existsSync(spool), 'the spool file holds the entries meanwhile');
    const spooled = readFileSync(spool, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).summary);
    assert.deepEqual(
      spooled,
      Array.from({ length: 10 }, (_, i) => `call ${i + 7}`),
    );
    assert.ok(
      said.some((l) => /audit_unavailable/.test(l)),
      `said on stderr: ${said.join('\n')}`,
    );
    await db.start();
    for (let n = 17; n <= 20; n++) {
      const entry = call(a, n);
      outcomes.push({ entry, unavailable: !!(await a.written(entry)) });
    }
    await waitFor(() => a.waiting === 0, 'the writer to send what waited').catch((e) => {
      throw new Error(`${e.message}; ${a.waiting} waiting, unreachable: ${a.unreachable}; said: ${said.join('\n')}`);
    });
    const rows = await rowsOf('gw-a');
    assert.deepEqual(
      rows.map((r) => r.summary),
      Array.from({ length: 20 }, (_, i) => `call ${i + 1}`),
      'every entry exactly once, in the order written',
    );
    assert.equal(existsSync(spool), false, 'the spool is gone once sent');
  });

  test('a spool left by a stopped gateway is sent by its next start, and a row sent twice is kept once', async () => {
    await db.stop();
    const b = await open('gw-b');
    for (let n = 1; n <= 3; n++) assert.equal((await b.written(call(b, n)))?.code, 'audit_unavailable');
    await b.close(200);
    stores.splice(stores.indexOf(b), 1);
    assert.ok(existsSync(join(dir, 'gw-b', 'audit-spool.jsonl')), 'closed with its spool on disk');
    await db.start();
    const again = await open('gw-b');
    await waitFor(() => again.waiting === 0, 'the reopened store to send its spool');
    const entry = call(again, 4);
    assert.equal(await again.written(entry), null);
    assert.deepEqual(
      (await rowsOf('gw-b')).map((r) => r.summary),
      ['call 1', 'call 2', 'call 3', 'call 4'],
    );
    // The same rows again (a retry whose first answer was lost): inserted once.
    await db.query(
      "INSERT INTO verity_audit (gateway, id, at, kind, session_key, tool, verdict, entry) SELECT gateway, id, at, kind, session_key, tool, verdict, entry FROM verity_audit WHERE gateway = 'gw-b' ON CONFLICT (gateway, id) DO NOTHING",
    );
    assert.equal((await rowsOf('gw-b')).length, 4);
  });

  test("each gateway reads every gateway's entries, filters by gateway, and hears the other's as they are written", async () => {
    const [a, b] = [stores.find((s) => s.gateway === 'gw-a')!, stores.find((s) => s.gateway === 'gw-b')!];
    const heard: AuditEntry[] = [];
    a.on('entry', (e) => heard.push(e));
    // LISTEN is set up as the store starts; an entry of b's reaches a's listeners with its gateway named.
    await waitFor(async () => {
      const entry = call(b, 100 + heard.length);
      await b.written(entry);
      await new Promise((r) => setTimeout(r, 200));
      return heard.some((e) => e.gateway === 'gw-b');
    }, "gw-a to hear gw-b's entry through LISTEN/NOTIFY");
    const all = await a.search({ limit: 500 });
    assert.deepEqual([...new Set(all.entries.map((e) => e.gateway))].sort(), ['gw-a', 'gw-b']);
    const onlyB = await a.search({ gateway: 'gw-b', limit: 500 });
    assert.ok(onlyB.entries.length >= 5 && onlyB.entries.every((e) => e.gateway === 'gw-b'));
    const page = await a.search({ limit: 3 });
    assert.equal(page.entries.length, 3);
    const next = await a.search({ limit: 500, before: page.next_before! });
    assert.equal(
      page.entries.length + next.entries.length,
      all.entries.length,
      `paging back covers the rest: ${page.next_before} ${JSON.stringify(next.entries.map((e) => [e.gateway, e.id]))}`,
    );
    assert.equal((await a.search({ text: 'call 17' })).entries.length, 1);
  });
});
