// Verity benchmark: one Chromium, local fixture pages, Verity vs raw CDP floor vs Playwright MCP.
// Usage: node dist/bench/run.js [--iterations N] [--warmup N] [--only name,name] [--no-write]
// Reports targets; exits 0 when a target is missed, non-zero only when something crashed.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchChromium } from './chromium.js';
import { startFixtures } from './fixtures.js';
import { REPO_ROOT, startPlaywright, startVerity } from './mcp.js';
import { writeReadmeFigures } from './readme-table.js';
import { ProcessRegistry } from './procs.js';
import { cellErrors, mergeReport, renderMarkdown } from './report.js';
import { sections as allSections } from './sections/index.js';
import type { BenchConfig, BenchContext, Row, Section } from './types.js';

export { sections } from './sections/index.js';
export type { BenchContext, Row, Section } from './types.js';

interface Options extends BenchConfig {
  only: string[] | null;
  write: boolean;
}

function parseArgs(argv: string[]): Options {
  const opts: Options = {
    warmup: Number(process.env.BENCH_WARMUP ?? 2),
    iterations: Number(process.env.BENCH_ITERATIONS ?? 15),
    only: null,
    write: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--iterations') opts.iterations = Number(next());
    else if (a === '--warmup') opts.warmup = Number(next());
    else if (a === '--only')
      opts.only = next()
        .split(',')
        .map((s) => s.trim().toLowerCase());
    else if (a === '--no-write') opts.write = false;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!(opts.iterations >= 1) || !(opts.warmup >= 0)) throw new Error('--iterations must be ≥ 1 and --warmup ≥ 0');
  return opts;
}

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

export async function runBench(sections: Section[], opts: Options, procs: ProcessRegistry): Promise<number> {
  const chromium = await launchChromium(procs);
  log(`Chromium pid ${chromium.pid} at ${chromium.browserUrl}`);
  const version = await fetch(`${chromium.browserUrl}/json/version`)
    .then((r) => r.json() as Promise<{ Browser?: string }>)
    .then((v) => v.Browser ?? 'unknown')
    .catch(() => 'unknown');
  const fixtures = await startFixtures(procs);
  log(`fixtures at ${fixtures.baseUrl}`);

  const ctx: BenchContext = {
    config: { warmup: opts.warmup, iterations: opts.iterations },
    browserUrl: chromium.browserUrl,
    fixtures,
    procs,
    startVerity: () => startVerity(procs, chromium.browserUrl),
    startPlaywright: (extra) => startPlaywright(procs, chromium.browserUrl, extra),
    log,
    notes: [],
    tables: [],
  };

  const rows: Row[] = [];
  const sectionErrors: string[] = [];
  const chosen = opts.only
    ? sections.filter((s) => opts.only!.some((o) => s.name.toLowerCase().includes(o)))
    : sections;
  for (const section of chosen) {
    log(`section: ${section.name}`);
    try {
      rows.push(...(await section.run(ctx)));
    } catch (e) {
      const msg = `section "${section.name}" crashed: ${(e as Error).stack ?? String(e)}`;
      log(msg);
      sectionErrors.push(msg.split('\n')[0]!);
    }
  }

  const header = [
    `# Verity bench — ${new Date().toISOString()}`,
    '',
    `${version} (headless), Node ${process.version} on ${cpus().length} cores; each time is the median of ${opts.iterations} warm iterations ` +
      `after ${opts.warmup} warmups, measured as the client-side round trip (MCP callTool for the servers). ` +
      `floor = bare CDP WebSocket (Input.insertText / Input.dispatchMouseEvent + read-back after one requestAnimationFrame). ` +
      `Every timed action is checked afterwards by an independent CDP read-back of the field value / click counter.`,
  ];
  const md = renderMarkdown(rows, header, ctx.notes, sectionErrors, ctx.tables);
  process.stdout.write(md);
  if (opts.write) {
    const out = join(REPO_ROOT, 'bench', 'latest.md');
    // An --only run is merged into the last whole run's report (its rows and tables replace theirs), so the
    // report and the README it feeds stay whole.
    const merged =
      opts.only && !sectionErrors.length && existsSync(out)
        ? mergeReport(readFileSync(out, 'utf8'), md, opts.only, new Date())
        : md;
    writeFileSync(out, merged);
    log(`wrote ${out}${merged === md ? '' : ' (merged into the last whole run)'}`);
    if (!opts.only || merged !== md) {
      writeReadmeFigures(REPO_ROOT);
      log("wrote the README's figures");
    }
  }
  return sectionErrors.length || cellErrors(rows).length ? 1 : 0;
}

async function main(): Promise<void> {
  const procs = new ProcessRegistry();
  const onSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: killing everything the bench started`);
    procs.killNow();
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', () => procs.killNow());

  let code = 1;
  try {
    code = await runBench(allSections, parseArgs(process.argv.slice(2)), procs);
  } catch (e) {
    log(`crashed: ${(e as Error).stack ?? String(e)}`);
    code = 1;
  } finally {
    await procs.cleanup();
  }
  process.exit(code);
}

// Run when executed directly (node dist/bench/run.js), not when imported by a later harness.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
