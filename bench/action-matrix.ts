// The counted matrix (issue 44 item 8): one row per action per environment and toolkit, each backed by a test
// whose truth is the app's or the window manager's own state. A test says which rows it proves in its title,
// one tag per row (`[matrix x11 gtk3 click confirmed]`); scripts/run-tests.mjs keeps each tagged test's rows
// with whether it passed in test/last-matrix.json, and `npm run readme:figures` writes docs/action-matrix.md's
// table and the README's counts per environment from that record (bench/readme-table.ts's FIGURE_FILES).
// test/unit/action-matrix.test.ts holds the tags' words to the lists below.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The environments, in the order the table gives them, with the name a reader knows them by. */
export const MATRIX_ENVS: Readonly<Record<string, string>> = {
  x11: 'X11',
  sway: 'sway (Wayland)',
  xwayland: 'XWayland beside Wayland',
  nutjs: 'nut-js',
};
/** The toolkits, in the table's order: `no-tree` is an app with no accessibility tree, `any` a window of any. */
export const MATRIX_TOOLKITS: Readonly<Record<string, string>> = {
  gtk3: 'GTK 3',
  gtk4: 'GTK 4',
  qt5: 'Qt 5',
  libreoffice: 'LibreOffice',
  'no-tree': 'no-tree app',
  tk: 'Tk',
  swing: 'Swing',
  any: 'any window',
};
/** A row's outcome: the verdict its test holds (`refused`: an exact refusal). */
export const MATRIX_OUTCOMES = ['confirmed', 'partial', 'unverifiable', 'no_effect', 'refused'] as const;

/** One tag of one test, as the runner kept it. */
export interface MatrixRow {
  env: string;
  toolkit: string;
  /** The MCP tool's name. */
  action: string;
  outcome: string;
  /** The test file that ran it, as the runner names it (`native/gtk.test.js`). */
  file: string;
  /** The test's title. */
  test: string;
  passed: boolean;
}

/** test/last-matrix.json. */
export interface MatrixRecord {
  /** ISO time the record was written. */
  at: string;
  /** Written by a full run; else by runs of a few files (`partial_files`), never over a full run's record. */
  full: boolean;
  /** A full run's number of files. */
  files?: number;
  /** A partial record's files, each as the runner names it. */
  partial_files?: string[];
  rows: MatrixRow[];
}

export function readMatrix(root: string): MatrixRecord | null {
  const file = join(root, 'test', 'last-matrix.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as MatrixRecord) : null;
}

/** A runner's file name as its source (`native/gtk.test.js` is test/native/gtk.test.ts). */
export const sourceOf = (file: string) => `test/${file.replace(/\.js$/, '.ts')}`;

/** One line of the table: an action in an environment and toolkit with one outcome, and the tests behind it. */
export interface MatrixLine {
  env: string;
  toolkit: string;
  action: string;
  outcome: string;
  passed: number;
  failed: number;
  files: string[];
}

const order = (list: readonly string[], x: string) => {
  const at = list.indexOf(x);
  return at < 0 ? list.length : at;
};

/** The record's rows gathered into the table's lines, in its order (environment, toolkit, action, outcome). */
export function matrixLines(record: MatrixRecord): MatrixLine[] {
  const lines = new Map<string, MatrixLine>();
  for (const r of record.rows) {
    const key = [r.env, r.toolkit, r.action, r.outcome].join(' ');
    const line = lines.get(key) ?? {
      env: r.env,
      toolkit: r.toolkit,
      action: r.action,
      outcome: r.outcome,
      passed: 0,
      failed: 0,
      files: [],
    };
    if (r.passed) line.passed += 1;
    else line.failed += 1;
    if (!line.files.includes(r.file)) line.files.push(r.file);
    lines.set(key, line);
  }
  const envs = Object.keys(MATRIX_ENVS);
  const toolkits = Object.keys(MATRIX_TOOLKITS);
  return [...lines.values()]
    .map((l) => ({ ...l, files: l.files.sort() }))
    .sort(
      (a, b) =>
        order(envs, a.env) - order(envs, b.env) ||
        a.env.localeCompare(b.env) ||
        order(toolkits, a.toolkit) - order(toolkits, b.toolkit) ||
        a.toolkit.localeCompare(b.toolkit) ||
        a.action.localeCompare(b.action) ||
        order(MATRIX_OUTCOMES, a.outcome) - order(MATRIX_OUTCOMES, b.outcome),
    );
}

/** Each environment's lines: those proven (a test of the line passed) and all listed. */
export function matrixCounts(record: MatrixRecord): Array<{ env: string; proven: number; listed: number }> {
  const counts = new Map<string, { env: string; proven: number; listed: number }>();
  for (const l of matrixLines(record)) {
    const c = counts.get(l.env) ?? { env: l.env, proven: 0, listed: 0 };
    c.listed += 1;
    if (l.passed > 0) c.proven += 1;
    counts.set(l.env, c);
  }
  return [...counts.values()];
}

const files = (n: number) => `${n} test file${n === 1 ? '' : 's'}`;

/** Where the record came from, said once above the table and the counts. */
function provenance(record: MatrixRecord): string {
  const at = `${record.at.slice(0, 16)}Z`;
  return record.full
    ? `From the last full run (${at}, ${record.files} files)`
    : `From runs of ${files(record.partial_files?.length ?? 0)} alone, not a full run (the last at ${at}; ` +
        'a full `npm test` replaces it)';
}

/** The README's line: rows proven per environment. */
function countsLine(record: MatrixRecord): string {
  const counts = matrixCounts(record);
  if (!counts.length) return `${provenance(record)}: no tagged test ran.`;
  const each = counts.map(
    (c) =>
      `${MATRIX_ENVS[c.env] ?? c.env} ${c.proven}${c.proven === c.listed ? '' : ` of ${c.listed}`} ` +
      `row${c.listed === 1 ? '' : 's'}`,
  );
  return `${provenance(record)}: ${each.join(', ')} proven (a row: an action in one toolkit with one outcome).`;
}

/** The generated blocks: `action-matrix` (the table) and `matrix-counts` (the counts per environment). */
export function matrixBlocks(record: MatrixRecord | null): Record<string, string[]> {
  if (!record) {
    const none = ['No counted matrix is recorded yet: a full `npm test` writes test/last-matrix.json.'];
    return { 'action-matrix': none, 'matrix-counts': none };
  }
  const link = (file: string, from: string) =>
    `[${sourceOf(file).replace(/^test\/native\//, '')}](${from}${sourceOf(file)})`;
  const table = matrixLines(record).map((l) => {
    const tests =
      l.failed === 0
        ? `${l.passed} passed`
        : `${l.passed} passed, ${l.failed} failed${l.passed ? '' : ': not counted'}`;
    return (
      `| ${MATRIX_ENVS[l.env] ?? l.env} | ${MATRIX_TOOLKITS[l.toolkit] ?? l.toolkit} | \`${l.action}\` | ` +
      `${l.outcome} | ${tests} | ${l.files.map((f) => link(f, '../')).join(', ')} |`
    );
  });
  return {
    'action-matrix': [
      countsLine(record),
      ...(record.full
        ? []
        : ['', `The files run: ${(record.partial_files ?? []).map((f) => link(f, '../')).join(', ')}.`]),
      '',
      '| environment | toolkit | action | outcome | tests | proven by |',
      '| --- | --- | --- | --- | --- | --- |',
      ...table,
    ],
    'matrix-counts': [countsLine(record)],
  };
}
