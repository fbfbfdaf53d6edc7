// The README's and docs/' figures, generated: every number they state about speed, bytes, concurrency, the
// trust fuzz and the suite's time comes from bench/latest.md (the last `npm run bench`) and
// test/last-run.json (the test runner's last full run), and the counted matrix from test/last-matrix.json
// (bench/action-matrix.ts), written between markers (`<!-- NAME:start -->` ...
// `<!-- NAME:end -->`) in the files FIGURE_FILES names. The bench writes them after a whole run,
// `npm run readme:figures` after a full test run, and test/unit/readme-figures.test.ts fails when a file
// disagrees with its sources or states a measured figure anywhere else.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type MatrixRecord, matrixBlocks, readMatrix } from './action-matrix.js';

/** What test/last-run.json holds: scripts/run-tests.mjs writes it at the end of a full run. */
export interface LastRun {
  /** ISO time the run ended. */
  at: string;
  files: number;
  failed: number;
  minutes: number;
  lanes: number;
  cores: number;
  /** Minutes from `npm test`'s start (ensure, lint and the run), when the run was started by it. */
  npm_test_minutes?: number;
  /** The run was under the load tier's CPU hog (`npm run test:load`). */
  load?: boolean;
  /** The load tier's typing, per toolkit (test/load/typing.test.ts): runs, characters typed and lost. */
  typing?: Record<string, { runs: number; typed: number; lost: number }>;
}

/** One run of scripts/fresh-clone-runs.mjs: a fresh clone's `npm test`, quiet or beside a CPU hog. */
export interface FreshCloneRun {
  at: string;
  commit: string;
  hog: boolean;
  cores: number;
  passed: boolean;
  minutes: number;
  files: number | null;
  failed: string[];
}

/** The sources of the figures, as files. */
export interface FigureSources {
  latest: string;
  lastRun: LastRun | null;
  lastLoadRun: LastRun | null;
  /** test/fresh-clone-runs.json, oldest first (none recorded: empty). */
  freshClones: FreshCloneRun[];
  /** test/last-matrix.json: the counted matrix's rows (bench/action-matrix.ts). */
  matrix: MatrixRecord | null;
}

export function readSources(root: string): FigureSources {
  const run = (name: string) => {
    const file = join(root, 'test', name);
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as LastRun) : null;
  };
  return {
    latest: readFileSync(join(root, 'bench', 'latest.md'), 'utf8'),
    lastRun: run('last-run.json'),
    lastLoadRun: run('last-load-run.json'),
    freshClones: existsSync(join(root, 'test', 'fresh-clone-runs.json'))
      ? (JSON.parse(readFileSync(join(root, 'test', 'fresh-clone-runs.json'), 'utf8')) as FreshCloneRun[])
      : [],
    matrix: readMatrix(root),
  };
}

/** The lines of the first markdown table after the line that starts with `heading` (none: []). */
function tableAfter(lines: string[], heading: (line: string) => boolean): string[] {
  const at = lines.findIndex(heading);
  if (at < 0) return [];
  const first = lines.findIndex((l, i) => i > at && l.startsWith('|'));
  if (first < 0) return [];
  let last = first;
  while (last < lines.length && lines[last].startsWith('|')) last++;
  return lines.slice(first, last);
}

/** The bench run's time and browser, from latest.md's first lines. */
function benchRun(lines: string[]): string {
  const when = /— (\d{4}-\d\d-\d\dT\d\d:\d\d)/.exec(lines[0] ?? '')?.[1] ?? 'unknown time';
  // The line that names the browser (the third, or later: each merged --only run adds a line of its own), before the table.
  const table = lines.findIndex((l) => l.startsWith('|'));
  const about = lines.slice(0, table < 0 ? lines.length : table).find((l) => l.includes('(headless)')) ?? '';
  const browser = /Chrome\/(\d+)/.exec(about)?.[1];
  const node = /Node v(\d+)/.exec(about)?.[1];
  const cores = /on (\d+) cores/.exec(about)?.[1];
  return `${when}Z (${[browser && `Chromium ${browser} headless`, node && `Node ${node}`, cores && `${cores} cores`].filter(Boolean).join(', ')})`;
}

/** One line for a run of the test runner. */
function runLine(what: string, run: LastRun): string {
  const min = (m: number) => `${m.toFixed(1)} min`;
  return (
    `${what} (${run.at.slice(0, 16)}Z, ${run.cores} cores${run.load ? ', every core kept busy by stress-ng' : ''}): ` +
    `${run.files} files ${run.failed ? `(${run.failed} failed)` : 'passing'} in ${min(run.minutes)} on ${run.lanes} lanes` +
    `${run.npm_test_minutes !== undefined ? `; \`npm test\` from its start, ${min(run.npm_test_minutes)}` : ''}.`
  );
}

/** The load tier's typing counts as a table, one row per toolkit (none recorded: no lines). */
function typingTable(typing: LastRun['typing']): string[] {
  const rows = Object.entries(typing ?? {});
  if (!rows.length) return [];
  return [
    '',
    'Typed by pixels right after a click elsewhere, under the hog (test/load/typing.test.ts):',
    '',
    '| toolkit | runs | characters typed | characters lost |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map(([toolkit, t]) => `| ${toolkit} | ${t.runs} | ${t.typed} | ${t.lost} |`),
  ];
}

/** The fresh clones' runs, quiet ones and those beside the hog, each as its time and outcome. */
function freshCloneLines(runs: FreshCloneRun[]): string[] {
  if (!runs.length)
    return ['No fresh-clone run is recorded yet: `npm run test:fresh-clones` writes test/fresh-clone-runs.json.'];
  const line = (hog: boolean) => {
    const these = runs.filter((r) => r.hog === hog);
    const what = hog ? 'with `stress-ng` keeping every core busy beside it' : 'on a quiet machine';
    if (!these.length) return `- ${what}: none recorded yet.`;
    const each = these.map(
      (r) =>
        `${r.minutes.toFixed(1)} min ${r.passed ? 'passed' : `failed (${r.failed.join(', ') || 'see its log'})`} (${r.at.slice(0, 16)}Z, ${r.commit})`,
    );
    return `- ${what}: ${these.filter((r) => r.passed).length} of ${these.length} passed: ${each.join('; ')}.`;
  };
  return [
    `A fresh clone's \`npm test\` (\`npm run test:fresh-clones\`, ${runs[0].cores} cores), oldest first:`,
    '',
    line(false),
    line(true),
  ];
}

/** Each generated block's lines, by marker name. */
export function figureBlocks({
  latest,
  lastRun,
  lastLoadRun,
  freshClones,
  matrix,
}: FigureSources): Record<string, string[]> {
  const lines = latest.split('\n');
  const run = benchRun(lines);
  const blocks: Record<string, string[]> = {
    bench: [`Verity bench — ${run}:`, '', ...tableAfter(lines, (l) => l.startsWith('# Verity bench'))],
    concurrency: [`Run of ${run}:`, '', ...tableAfter(lines, (l) => l.startsWith('### Concurrency'))],
    fuzz: [`Run of ${run}:`, '', ...tableAfter(lines, (l) => l.startsWith('### Trust fuzz'))],
  };
  if (lastRun) blocks.suite = [runLine('The last full run', lastRun)];
  blocks['suite-load'] = lastLoadRun
    ? [runLine('The last load-tier run', lastLoadRun), ...typingTable(lastLoadRun.typing)]
    : ['No load-tier run is recorded yet: `npm run test:load` writes test/last-load-run.json.'];
  blocks['fresh-clones'] = freshCloneLines(freshClones);
  return { ...blocks, ...matrixBlocks(matrix) };
}

/**
 * Which file holds which generated blocks (a block may stand in more than one: the suite's time is said at
 * the README's top and in the contributors' guide). A block moved to another file moves here too.
 */
export const FIGURE_FILES: Readonly<Record<string, readonly string[]>> = {
  'README.md': ['suite', 'fresh-clones', 'matrix-counts'],
  'docs/action-matrix.md': ['action-matrix', 'matrix-counts'],
  'docs/architecture.md': ['suite', 'suite-load'],
  'docs/benchmarks.md': ['bench', 'fuzz'],
  'docs/deploy.md': ['concurrency'],
};

/** A markdown file with every generated block replaced by its figures (a block whose source has none is kept). */
export function withFigures(markdown: string, sources: FigureSources): string {
  let out = markdown;
  for (const [name, block] of Object.entries(figureBlocks(sources))) {
    if (block.length === 0 || block.at(-1) === '') continue; // its source has no such figures
    const start = `<!-- ${name}:start -->`;
    const end = `<!-- ${name}:end -->`;
    // Every place the block stands in this file.
    for (let from = out.indexOf(start); from >= 0; from = out.indexOf(start, from + start.length)) {
      const to = out.indexOf(end, from);
      if (to < 0) break;
      out = `${out.slice(0, from + start.length)}\n${block.join('\n')}\n${out.slice(to)}`;
    }
  }
  return out;
}

/** Writes the figures of every file of FIGURE_FILES from bench/latest.md and test/last-run.json. */
export function writeReadmeFigures(root: string): void {
  const sources = readSources(root);
  for (const name of Object.keys(FIGURE_FILES)) {
    const file = join(root, name);
    writeFileSync(file, withFigures(readFileSync(file, 'utf8'), sources));
  }
  // Formats what biome formats (it pads tables where it handles markdown; else it leaves the files as written).
  spawnSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', ...Object.keys(FIGURE_FILES)], {
    cwd: root,
    stdio: 'ignore',
  });
}
