// What the audit trail costs a call, with the JSONL files (the default) and with the shared store in
// PostgreSQL (--audit-store), side by side: the store's part of one action, from the entry's append to the
// moment the call's result may be returned (JSONL: the line written; PostgreSQL: the files' line written and
// the database holding the row). The entry is a verified click's as the trail keeps it (arguments, labels,
// result, evidence). Both stores run in this process against a PostgreSQL the section starts on a port of
// its own (postgres.ts), on loopback: a database across a network adds its round trip to the PostgreSQL column.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresAuditStore } from '../../server/audit/postgres.js';
import { type AuditInput, AuditStore, retentionOf } from '../../server/audit/store.js';
import { postgresMissing, startPostgres } from '../postgres.js';
import { median } from '../stats.js';
import type { BenchContext, Row, Section } from '../types.js';

/** A verified click's entry, about as the trail keeps one. */
function clickEntry(i: number): AuditInput {
  return {
    kind: 'call',
    sessionKey: 'http-1/claims',
    tool: 'click',
    verdict: 'confirmed',
    summary: `click button "Submit claim ${i}"`,
    args: { element_token: `e${i}`, session: 'claims' },
    labels: { [`e${i}`]: `button "Submit claim ${i}"` },
    result: {
      status: 'ok',
      effect: 'confirmed',
      route: 'cdp',
      method: 'dom',
      evidence: [{ kind: 'text', expected: 'Sent', observed: 'Sent', source: 'dom' }],
    },
    isError: false,
    duration_ms: 40,
  } as AuditInput;
}

const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!;

/** Per-entry times (ms) of `n` appends, each until the store says the call's result may be returned. */
async function timeWrites(store: AuditStore, n: number, warmup: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < warmup + n; i++) {
    const t0 = performance.now();
    const entry = store.append(clickEntry(i))!;
    const written = store.written(entry);
    const outcome = written ? await written : null;
    store.flush(); // the files' line on disk (the pipeline's flush is a tick later, batched)
    const dt = performance.now() - t0;
    if (outcome) throw new Error(`the shared store did not take entry ${i}: ${outcome.message}`);
    if (i >= warmup) times.push(dt);
  }
  return times;
}

export const auditSection: Section = {
  name: 'audit',
  async run(ctx: BenchContext): Promise<Row[]> {
    const n = Math.max(50, ctx.config.iterations * 20);
    const dir = mkdtempSync(join(tmpdir(), 'verity-bench-audit-'));
    const rows: string[] = [];
    try {
      const jsonl = new AuditStore(join(dir, 'jsonl'), retentionOf(30, 256));
      const jsonlTimes = await timeWrites(jsonl, n, ctx.config.warmup * 10);
      jsonl.close();
      rows.push(row('JSONL files (default)', jsonlTimes));
      if (postgresMissing) ctx.notes.push(`audit: PostgreSQL column skipped: ${postgresMissing}`);
      else {
        const db = await startPostgres();
        try {
          const pg = new PostgresAuditStore(join(dir, 'pg', 'audit'), retentionOf(30, 256), {
            url: db.url,
            gateway: 'bench',
            spoolFile: join(dir, 'pg', 'audit-spool.jsonl'),
            say: (line) => ctx.log(`audit: ${line}`),
          });
          await pg.start();
          const pgTimes = await timeWrites(pg, n, ctx.config.warmup * 10);
          await pg.close();
          rows.push(row('PostgreSQL (`--audit-store`, loopback)', pgTimes));
          // In the table itself (not only a note): an --only run merged into bench/latest.md keeps its tables.
          const plus = (a: number, b: number) => `${a - b >= 0 ? '+' : '−'}${Math.abs(a - b).toFixed(2)} ms`;
          rows.push(
            `| what the shared store adds to each action's result (a verified click's included) | | ${plus(median(pgTimes), median(jsonlTimes))} | ${plus(p95(pgTimes), p95(jsonlTimes))} |`,
          );
          ctx.notes.push(
            `audit: the shared store adds ${(median(pgTimes) - median(jsonlTimes)).toFixed(2)} ms (median) to each action's result`,
          );
        } finally {
          await db.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    ctx.tables.push(
      [
        "### Audit write cost per action: a verified click's entry, until the call's result may be returned",
        '',
        '| store | entries | median | p95 |',
        '| --- | ---: | ---: | ---: |',
        ...rows,
      ].join('\n'),
    );
    return [];
  },
};

function row(store: string, times: number[]): string {
  return `| ${store} | ${times.length} | ${median(times).toFixed(2)} ms | ${p95(times).toFixed(2)} ms |`;
}
