// The fleet's throughput (issue 46 item 6): 8 agents doing the concurrency section's fixed task (open the task
// page, type into its 5 fields, click Submit, read the page back), against (a) one gateway and (b) two gateways
// behind HAProxy as docs/deploy.md runs them (its config as written, addresses made loopback ones:
// test/helpers/haproxy.ts), both setups keeping the audit trail in one PostgreSQL (`--audit-store`, started by
// the section on a port of its own). Each gateway is `--isolated` on a Chromium of its own, as on a machine of
// its own (a): the bench's Chromium; (b) gw1 the bench's, gw2 a second one). Throughput: tasks finished per
// second of wall time; every task is checked by the page's own report, and the database must hold one call
// entry for each call the agents made. All on this one machine: two gateways share its cores, where on two
// machines each would have its own.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from '../chromium.js';
import { postgresMissing, startPostgres, type Postgres } from '../postgres.js';
import { median } from '../stats.js';
import type { BenchContext, Row, Section } from '../types.js';
import { startGateway, type Gateway } from '../../test/helpers/gateway.js';
import { deployExample, haproxyMissing, startBalancer, type Balancer } from '../../test/helpers/haproxy.js';
import { startTaskServer, TASK_FIELDS } from '../../test/helpers/task-page.js';
import { connectionAgents, drive, p95, summary, type Outcome } from './concurrency.js';

const AGENTS = 8;
const AGENT_TOKEN = 'bench-fleet-agent';
/** Calls of one task (verityTask): navigate, read, a type_text per field, click, read. */
const CALLS_PER_TASK = 3 + TASK_FIELDS.length + 1;

async function callEntries(db: Postgres): Promise<number> {
  const [row] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM verity_audit WHERE kind = 'call'`);
  return Number(row?.n ?? 0);
}

export const fleetSection: Section = {
  name: 'fleet',
  async run(ctx: BenchContext): Promise<Row[]> {
    const missing = postgresMissing ?? haproxyMissing;
    if (missing) {
      ctx.notes.push(`fleet: skipped: ${missing}`);
      return [];
    }
    const rounds = Math.max(1, Math.round(ctx.config.iterations / 5));
    const dir = mkdtempSync(join(tmpdir(), 'verity-bench-fleet-'));
    ctx.procs.addDir(dir);
    const task = await startTaskServer();
    ctx.procs.addCloser('fleet task server', () => task.close());
    const db = await startPostgres();
    ctx.procs.addCloser('fleet postgres', () => db.close());
    const results: Array<[string, Outcome, string]> = [];
    const env = (name: string) => ({
      VERITY_CONFIG_DIR: join(dir, name),
      VERITY_AGENT_TOKEN: AGENT_TOKEN,
      VERITY_POLICY: undefined,
    });
    const failed = (e: unknown): Outcome => ({
      actions: [],
      tasks: 0,
      wallMs: 0,
      memoryPerSession: null,
      error: (e as Error).message.split('\n')[0]!.slice(0, 200),
    });
    /** The setup's outcome, and whether the database holds one call entry per call the agents made. */
    const measure = async (
      setup: string,
      gateways: Gateway[],
      agents: ReturnType<typeof connectionAgents>,
      memoryRoots: () => number[],
    ) => {
      const before = await callEntries(db);
      let outcome: Outcome;
      try {
        outcome = await drive(AGENTS, rounds, task, `fleet${gateways.length}`, agents, memoryRoots);
      } catch (e) {
        outcome = failed(e);
      }
      const entries = (await callEntries(db)) - before;
      const calls = (outcome.tasks + AGENTS) * CALLS_PER_TASK; // the timed tasks and each agent's warm-up one
      const audit = outcome.error ? '—' : `${entries} for ${calls} calls`;
      if (!outcome.error && entries !== calls)
        ctx.notes.push(`fleet: ${setup}: the audit store holds ${entries} call entries for the ${calls} calls made`);
      results.push([setup, outcome, audit]);
      ctx.log(`fleet: ${setup} (${gateways.length} gateway(s)): ${summary(outcome)}; audit entries ${audit}`);
    };
    const chromiumPids = () =>
      ctx.procs
        .pids()
        .filter((p) => p.name === 'chromium')
        .map((p) => p.pid);

    // (a) one gateway.
    {
      let gw: Gateway | null = null;
      try {
        gw = await startGateway(['--isolated', '--browser-url', ctx.browserUrl, '--audit-store', db.url], env('one'));
        ctx.procs.addProcess(gw.pid, 'verity gateway (fleet, one)');
        const one = gw;
        await measure(
          'one gateway',
          [one],
          connectionAgents(() => one.connect(), task),
          () => [one.pid, ...chromiumPids()],
        );
      } catch (e) {
        results.push(['one gateway', failed(e), '—']);
      } finally {
        if (gw) {
          await gw.close();
          ctx.procs.forgetProcess(gw.pid);
        }
      }
    }

    // (b) two gateways behind HAProxy, each on a Chromium of its own, one PostgreSQL.
    {
      const gateways: Gateway[] = [];
      let balancer: Balancer | null = null;
      try {
        const second = await launchChromium(ctx.procs);
        const example = await deployExample();
        for (const [i, browserUrl] of [ctx.browserUrl, second.browserUrl].entries()) {
          const gw = await startGateway(
            [...example.args, '--isolated', '--browser-url', browserUrl, '--audit-store', db.url],
            env(`gw${i + 1}`),
          );
          ctx.procs.addProcess(gw.pid, `verity gateway (fleet, gw${i + 1})`);
          gateways.push(gw);
        }
        balancer = await startBalancer(example, gateways, dir);
        ctx.procs.addProcess(balancer.pid, 'haproxy');
        const lb = balancer;
        await measure(
          'two gateways behind HAProxy',
          gateways,
          connectionAgents(() => lb.connect(AGENT_TOKEN), task),
          () => [...gateways.map((g) => g.pid), ...chromiumPids()],
        );
      } catch (e) {
        results.push(['two gateways behind HAProxy', failed(e), '—']);
      } finally {
        if (balancer) {
          await balancer.close();
          ctx.procs.forgetProcess(balancer.pid);
        }
        for (const gw of gateways) {
          await gw.close();
          ctx.procs.forgetProcess(gw.pid);
        }
      }
    }

    const tput = (o: Outcome) => o.tasks / (o.wallMs / 1000);
    const lines = [
      `### Fleet: ${AGENTS} agents on two gateways behind HAProxy against one gateway, one PostgreSQL audit store (${rounds} timed tasks per agent after one warm-up)`,
      '',
      "The concurrency section's task (9 calls); each gateway `--isolated` on a Chromium of its own, the trail in one PostgreSQL (`--audit-store`); all on this one machine, so the two gateways share its cores.",
      '',
      '| setup | agents | per-action median | per-action p95 | throughput | audit entries in PostgreSQL |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
    ];
    for (const [setup, o, audit] of results)
      lines.push(
        o.error
          ? `| ${setup} | ${AGENTS} | error | error | error | ${audit} |`
          : `| ${setup} | ${AGENTS} | ${median(o.actions).toFixed(1)} ms | ${p95(o.actions).toFixed(1)} ms | ${tput(o).toFixed(2)} tasks/s | ${audit} |`,
      );
    const [one, two] = results.map(([, o]) => o);
    if (one && two && !one.error && !two.error)
      lines.push(`| two against one | | | | ×${(tput(two) / tput(one)).toFixed(2)} | |`);
    ctx.tables.push(lines.join('\n'));
    ctx.notes.push(...results.filter(([, o]) => o.error).map(([setup, o]) => `fleet: ${setup}: ${o.error}`));
    return [];
  },
};
