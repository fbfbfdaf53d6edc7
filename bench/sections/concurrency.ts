// Many agents at once (issue #18): N = 1, 4, 8 agents, each its own MCP session doing the same fixed task
// (open the task page, type into its 5 fields, click Submit, read the page back; test/helpers/task-page.ts),
// against (a) one `verity start --isolated` on the bench's Chromium (a browser context per session), (b) one
// `verity start --browser-endpoint` on a browserless pool (a browser per session), and (c) N Playwright MCP
// processes, each with a headless Chromium of its own (several attached to one Chromium over CDP share its
// default context and take each other's new tabs as their current one). Per action: median and p95 of the client-side round trip;
// throughput: tasks finished per second of wall time; memory per session: the growth of the memory (PSS) of
// everything the setup runs (server, browser and its children) with N sessions open, over N. Every task is
// checked afterwards by the page's own report of what it held (not through the tool under test).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRef, refArgName } from '../drivers/playwright.js';
import { REPO_ROOT, startMcp, textOf, type McpSession } from '../mcp.js';
import { findChromium } from '../../server/cdp/browser/browser.js';
import { median } from '../stats.js';
import type { BenchContext, Row, Section } from '../types.js';
import { browserlessMissing, startBrowserless, type BrowserlessPool } from '../../test/helpers/browserless.js';
import { type Connection, startGateway, type Gateway } from '../../test/helpers/gateway.js';
import { startTaskServer, TASK_FIELDS, type TaskServer } from '../../test/helpers/task-page.js';

const AGENTS = [1, 4, 8];

/** One timed MCP call: what the agent waits for. */
export type Timed = (tool: string, args: Record<string, unknown>) => Promise<{ ms: number; result: any }>;

export interface Outcome {
  actions: number[];
  tasks: number;
  wallMs: number;
  memoryPerSession: number | null;
  error?: string;
}

export function p95(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)]!;
}

/** Memory (bytes, proportional set size) of processes and all their descendants, from /proc (Linux). */
export function treeRss(roots: number[]): number {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const inTree = (pid: number) => {
    for (let p: number | undefined = pid, i = 0; p && i < 64; p = parent.get(p), i++)
      if (roots.includes(p)) return true;
    return false;
  };
  let total = 0;
  for (const pid of parent.keys()) {
    if (!inTree(pid)) continue;
    // PSS: a page shared by several processes (Chromium's) counts once in all, not once in each.
    try {
      total += Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      /* gone */
    }
  }
  return total;
}

const ok = (what: string, result: any) => {
  if (result?.isError) throw new Error(`${what}: ${textOf(result).slice(0, 300)}`);
  return result;
};

/** Verity's task over one MCP session: every action must be confirmed. */
export async function verityTask(call: Timed, task: TaskServer, run: string, times: number[]): Promise<void> {
  const timed = async (tool: string, args: Record<string, unknown>) => {
    const r = await call(tool, args);
    times.push(r.ms);
    return ok(`${tool}`, r.result);
  };
  await timed('page', { action: 'navigate', url: task.url(run) });
  const state = await timed('get_window_state', { format: 'full', include_screenshot: false });
  const elements = state.structuredContent.elements as Array<{ element_token: string; label: string }>;
  const token = (label: string) =>
    elements.find((e) => e.label === label)?.element_token ??
    (() => {
      throw new Error(`no ${label}`);
    })();
  for (const field of TASK_FIELDS) {
    const typed = await timed('type_text', { element_token: token(field), text: `${field} ${run}` });
    if (typed.structuredContent.effect !== 'confirmed') throw new Error(`type_text ${field}: ${textOf(typed)}`);
  }
  const clicked = await timed('click', { element_token: token('Submit') });
  if (clicked.structuredContent.effect !== 'confirmed') throw new Error(`click: ${textOf(clicked)}`);
  await timed('get_window_state', { include_screenshot: false });
}

/** The same task with Playwright MCP's tools. */
async function playwrightTask(
  pw: McpSession,
  refArg: string,
  task: TaskServer,
  run: string,
  times: number[],
): Promise<void> {
  const timed = async (tool: string, args: Record<string, unknown>) => {
    const r = await pw.timed(tool, args);
    times.push(r.ms);
    return ok(`playwright ${tool}`, r.result);
  };
  await timed('browser_navigate', { url: task.url(run) });
  const snap = textOf(await timed('browser_snapshot', {}));
  for (const field of TASK_FIELDS)
    await timed('browser_type', { element: field, [refArg]: findRef(snap, 'textbox', field), text: `${field} ${run}` });
  await timed('browser_click', { element: 'Submit', [refArg]: findRef(snap, 'button', 'Submit') });
  await timed('browser_snapshot', {});
}

/** The page's own report must hold what was typed, once per run (polled, bounded). */
async function checkReports(task: TaskServer, runs: string[]): Promise<void> {
  for (const run of runs) {
    let report = task.report(run);
    for (let i = 0; i < 50 && !report; i++) {
      await new Promise((r) => setTimeout(r, 100));
      report = task.report(run);
    }
    const want = TASK_FIELDS.map((f) => `${f} ${run}`);
    if (!report || JSON.stringify(report.fields) !== JSON.stringify(want))
      throw new Error(
        `run ${run}: the page reported ${JSON.stringify(report?.fields)}, expected ${JSON.stringify(want)}`,
      );
  }
}

/** N agents at once, `rounds` tasks each after one untimed warm-up task (which opens the session's browser). */
export async function drive(
  n: number,
  rounds: number,
  task: TaskServer,
  label: string,
  agent: (i: number) => Promise<{ run(run: string, times: number[]): Promise<void>; close(): Promise<void> }>,
  memoryRoots: () => number[],
): Promise<Outcome> {
  const before = treeRss(memoryRoots());
  const agents = await Promise.all(Array.from({ length: n }, (_, i) => agent(i)));
  try {
    const warm = agents.map((_, i) => `${label}-n${n}-a${i}-warm`);
    await Promise.all(agents.map((a, i) => a.run(warm[i]!, [])));
    const memoryPerSession = (treeRss(memoryRoots()) - before) / n;
    const times: number[] = [];
    const runs: string[] = [];
    const t0 = performance.now();
    await Promise.all(
      agents.map(async (a, i) => {
        for (let r = 0; r < rounds; r++) {
          const run = `${label}-n${n}-a${i}-r${r}`;
          runs.push(run);
          await a.run(run, times);
        }
      }),
    );
    const wallMs = performance.now() - t0;
    await checkReports(task, [...warm, ...runs]);
    return { actions: times, tasks: runs.length, wallMs, memoryPerSession };
  } finally {
    await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  }
}

/** N agents as HTTP MCP sessions of one gateway. */
function gatewayAgents(gw: Gateway, task: TaskServer) {
  return connectionAgents(() => gw.connect(), task);
}

/** N agents as HTTP MCP sessions, each from `connect` (a gateway's own /mcp, or a balancer in front of several). */
export function connectionAgents(connect: () => Promise<Connection>, task: TaskServer) {
  return async () => {
    const conn = await connect();
    const call: Timed = async (tool, args) => {
      const t0 = performance.now();
      const result = await conn.client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120_000 });
      return { ms: performance.now() - t0, result };
    };
    return {
      run: (run: string, times: number[]) => verityTask(call, task, run, times),
      close: () => conn.disconnect(),
    };
  };
}

export const concurrencySection: Section = {
  name: 'concurrency',
  async run(ctx: BenchContext): Promise<Row[]> {
    const rounds = Math.max(1, Math.round(ctx.config.iterations / 5));
    // The gateways' config dir is the bench's own (never the user's, where a running gateway would be advertised).
    const configDir = mkdtempSync(join(tmpdir(), 'verity-bench-concurrency-'));
    ctx.procs.addDir(configDir);
    const env = { VERITY_CONFIG_DIR: configDir, VERITY_POLICY: undefined };
    const task = await startTaskServer();
    ctx.procs.addCloser('concurrency task server', () => task.close());
    const results = new Map<string, Map<number, Outcome>>();
    const record = (setup: string, n: number, o: Outcome) => {
      if (!results.has(setup)) results.set(setup, new Map());
      results.get(setup)!.set(n, o);
    };
    const failedOutcome = (e: unknown): Outcome => ({
      actions: [],
      tasks: 0,
      wallMs: 0,
      memoryPerSession: null,
      error: (e as Error).message.split('\n')[0]!.slice(0, 200),
    });
    const browserPids = () =>
      ctx.procs
        .pids()
        .filter((p) => p.name === 'chromium')
        .map((p) => p.pid);

    // (a) one local browser, a context per session.
    for (const n of AGENTS) {
      let gw: Gateway | null = null;
      try {
        gw = await startGateway(['--isolated', '--browser-url', ctx.browserUrl], env);
        ctx.procs.addProcess(gw.pid, 'verity gateway (--isolated)');
        record(
          'isolated',
          n,
          await drive(n, rounds, task, 'iso', gatewayAgents(gw, task), () => [gw!.pid, ...browserPids()]),
        );
      } catch (e) {
        record('isolated', n, failedOutcome(e));
      } finally {
        if (gw) {
          await gw.close();
          ctx.procs.forgetProcess(gw.pid);
        }
      }
      ctx.log(`concurrency: --isolated, ${n} agents: ${summary(results.get('isolated')!.get(n)!)}`);
    }

    // (b) a browserless pool, a browser per session.
    const missing = browserlessMissing();
    if (missing) ctx.notes.push(`concurrency: the browserless rows were skipped: ${missing}`);
    else {
      let pool: BrowserlessPool | null = null;
      try {
        pool = await startBrowserless({
          concurrent: Math.max(...AGENTS),
          queued: Math.max(...AGENTS),
          timeoutMs: 600_000,
        });
        ctx.procs.addProcess(pool.pid, 'browserless', true);
        for (const n of AGENTS) {
          let gw: Gateway | null = null;
          try {
            gw = await startGateway([], { ...env, VERITY_BROWSER_ENDPOINT: pool.endpoint() });
            ctx.procs.addProcess(gw.pid, 'verity gateway (--browser-endpoint)');
            record(
              'pool',
              n,
              await drive(n, rounds, task, 'pool', gatewayAgents(gw, task), () => [gw!.pid, pool!.pid]),
            );
          } catch (e) {
            record('pool', n, failedOutcome(e));
          } finally {
            if (gw) {
              await gw.close();
              ctx.procs.forgetProcess(gw.pid);
            }
          }
          ctx.log(`concurrency: browserless pool, ${n} agents: ${summary(results.get('pool')!.get(n)!)}`);
        }
      } catch (e) {
        for (const n of AGENTS) if (!results.get('pool')?.has(n)) record('pool', n, failedOutcome(e));
      } finally {
        if (pool) {
          await pool.close();
          ctx.procs.forgetProcess(pool.pid);
        }
      }
    }

    // (c) N Playwright MCP processes on the bench's Chromium, a tab each.
    for (const n of AGENTS) {
      const sessions: McpSession[] = [];
      try {
        const outcome = await drive(
          n,
          rounds,
          task,
          'pw',
          async () => {
            const work = mkdtempSync(join(tmpdir(), 'verity-bench-pwmcp-'));
            ctx.procs.addDir(work);
            const pw = await startMcp(ctx.procs, {
              name: 'playwright-mcp',
              command: process.execPath,
              cwd: work,
              args: [
                join(REPO_ROOT, 'node_modules', '@playwright', 'mcp', 'cli.js'),
                '--headless',
                '--isolated',
                '--executable-path',
                findChromium(process.env.VERITY_CHROMIUM, undefined, process.env),
                ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
                '--output-dir',
                join(work, 'out'),
              ],
            });
            sessions.push(pw);
            const refArg = await refArgName(pw, 'browser_click');
            return {
              run: (run: string, times: number[]) => playwrightTask(pw, refArg, task, run, times),
              close: () => pw.close(),
            };
          },
          () => sessions.map((s) => s.pid ?? 0).filter(Boolean),
        );
        record('playwright', n, outcome);
      } catch (e) {
        record('playwright', n, failedOutcome(e));
      } finally {
        await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
      }
      ctx.log(`concurrency: Playwright MCP, ${n} processes: ${summary(results.get('playwright')!.get(n)!)}`);
    }

    ctx.tables.push(renderTable(results, rounds));
    const errors = [...results.entries()].flatMap(([setup, byN]) =>
      [...byN.entries()].filter(([, o]) => o.error).map(([n, o]) => `concurrency: ${setup}, ${n} agents: ${o.error}`),
    );
    ctx.notes.push(...errors);
    return [];
  },
};

export function summary(o: Outcome): string {
  if (o.error) return `FAILED: ${o.error}`;
  return `median ${median(o.actions).toFixed(0)} ms, p95 ${p95(o.actions).toFixed(0)} ms, ${(o.tasks / (o.wallMs / 1000)).toFixed(2)} tasks/s, ${o.memoryPerSession === null ? '?' : `${(o.memoryPerSession / 2 ** 20).toFixed(0)} MB`}/session`;
}

const SETUPS: Array<[string, string]> = [
  ['isolated', 'Verity `--isolated` (one Chromium, a context per session)'],
  ['pool', 'Verity `--browser-endpoint` (browserless, a browser per session)'],
  ['playwright', 'Playwright MCP (a process and a headless Chromium per agent)'],
];

function renderTable(results: Map<string, Map<number, Outcome>>, rounds: number): string {
  const lines = [
    `### Concurrency: N agents, each its own session doing the fixed task (${rounds} timed tasks per agent after one warm-up)`,
    '',
    "The task: open the page, type into 5 fields, click Submit, read the page back (9 calls); every task is checked by the page's own report.",
    '',
    '| setup | agents | per-action median | per-action p95 | throughput | memory per session |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [key, name] of SETUPS) {
    for (const n of AGENTS) {
      const o = results.get(key)?.get(n);
      if (!o) continue;
      if (o.error) {
        lines.push(`| ${name} | ${n} | error | error | error | error |`);
        continue;
      }
      lines.push(
        `| ${name} | ${n} | ${median(o.actions).toFixed(1)} ms | ${p95(o.actions).toFixed(1)} ms | ${(o.tasks / (o.wallMs / 1000)).toFixed(2)} tasks/s | ${o.memoryPerSession === null ? '—' : `${(o.memoryPerSession / 2 ** 20).toFixed(0)} MB`} |`,
      );
    }
  }
  return lines.join('\n');
}
