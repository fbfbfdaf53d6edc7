// The counted matrix (issue 44 item 8, docs/action-matrix.md) is generated from the tests that passed: each
// test tags the rows it proves in its title (`[matrix x11 gtk3 click confirmed]`), scripts/run-tests.mjs keeps
// them in test/last-matrix.json, and bench/action-matrix.ts writes the doc's table and the README's counts
// (through readme-table.ts's FIGURE_FILES, which test/unit/readme-figures.test.ts holds to the record). This
// holds the tags' words to the matrix's lists and the tools' names, the record to the tests that exist, and
// the table to its rule: a row counts only when a test of it passed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  MATRIX_ENVS,
  MATRIX_OUTCOMES,
  MATRIX_TOOLKITS,
  type MatrixRecord,
  matrixBlocks,
  matrixCounts,
  readMatrix,
  sourceOf,
} from '../../bench/action-matrix.js';
import { FIGURE_FILES } from '../../bench/readme-table.js';
import { ROOT } from '../helpers/fixtures.js';

/** Every tool's name, from the generated reference (docs/tools.md: one `## name` per tool). */
const TOOLS = new Set(
  [...readFileSync(join(ROOT, 'docs', 'tools.md'), 'utf8').matchAll(/^## ([a-z_]+)$/gm)].map((m) => m[1]!),
);
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
// A shared case file builds its tags with a helper that puts in the environment (and toolkit) it runs in:
// `row('click', 'confirmed')` beside a template `[matrix ${env} ${toolkit} ${action} ${outcome}]`.
const ROW_CALL = /\brow\('([^']*)', '([^']*)'\)/g;

test("every matrix tag in the tests' titles uses the matrix's words and a tool's name", () => {
  let tags = 0;
  const bad: string[] = [];
  for (const file of sources(join(ROOT, 'test'))) {
    if (file.endsWith('action-matrix.test.ts')) continue; // this file's own examples
    const text = readFileSync(file, 'utf8');
    const at = relative(ROOT, file);
    for (const m of text.matchAll(/\[matrix ([^\]]*)\]/g)) {
      tags += 1;
      if (m[1]!.includes('${')) continue; // a helper's template: its calls are checked below
      const parts = m[1]!.split(' ');
      const [env, toolkit, action, outcome] = parts;
      if (
        parts.length !== 4 ||
        !(env! in MATRIX_ENVS) ||
        !(toolkit! in MATRIX_TOOLKITS) ||
        !TOOLS.has(action!) ||
        !(MATRIX_OUTCOMES as readonly string[]).includes(outcome!)
      )
        bad.push(`${at}: ${m[0]}`);
    }
    // Only where a helper builds the tags: a `row(...)` elsewhere is something else.
    if (!text.includes('[matrix ${')) continue;
    for (const m of text.matchAll(ROW_CALL)) {
      tags += 1;
      if (!TOOLS.has(m[1]!) || !(MATRIX_OUTCOMES as readonly string[]).includes(m[2]!)) bad.push(`${at}: ${m[0]}`);
    }
  }
  assert.ok(tags >= 60, `${tags} tags in the tests`);
  assert.deepEqual(bad, [], 'a tag is [matrix <env> <toolkit> <tool> <outcome>], each from its list');
});

test("the record's rows name the tests' files and the matrix's words", () => {
  const record = readMatrix(ROOT);
  if (!record) return; // none yet: the doc says so (readme-figures.test.ts holds it)
  assert.ok(record.full || (record.partial_files ?? []).length > 0, 'a partial record names its files');
  for (const r of record.rows) {
    assert.ok(existsSync(join(ROOT, sourceOf(r.file))), `${r.file}: ${sourceOf(r.file)} exists`);
    assert.ok(r.env in MATRIX_ENVS && r.toolkit in MATRIX_TOOLKITS, JSON.stringify(r));
    assert.ok(TOOLS.has(r.action) && (MATRIX_OUTCOMES as readonly string[]).includes(r.outcome), JSON.stringify(r));
    assert.ok(r.test.includes(`[matrix ${r.env} ${r.toolkit} ${r.action} ${r.outcome}]`), r.test);
  }
});

test('the doc and the README hold the generated table and counts', () => {
  assert.deepEqual(FIGURE_FILES['docs/action-matrix.md'], ['action-matrix', 'matrix-counts']);
  assert.ok(FIGURE_FILES['README.md']?.includes('matrix-counts'));
  const doc = readFileSync(join(ROOT, 'docs', 'action-matrix.md'), 'utf8');
  assert.match(doc, /\[native-matrix\.md\]\(native-matrix\.md\)/, 'linked to the hand-written matrix');
  assert.match(
    readFileSync(join(ROOT, 'docs', 'native-matrix.md'), 'utf8'),
    /\[action-matrix\.md\]\(action-matrix\.md\)/,
    'and back',
  );
});

const row = (over: Partial<MatrixRecord['rows'][number]>) => ({
  env: 'x11',
  toolkit: 'gtk3',
  action: 'click',
  outcome: 'confirmed',
  file: 'native/gtk.test.js',
  test: 'a click [matrix x11 gtk3 click confirmed]',
  passed: true,
  ...over,
});

test('a row counts once per environment however many tests prove it; one whose tests all failed is listed, not counted', () => {
  const record: MatrixRecord = {
    at: '2026-12-07T02:00:00.000Z',
    full: true,
    files: 160,
    rows: [
      row({}),
      row({ file: 'native/toolkits.test.js' }),
      row({ action: 'drag', passed: false }),
      row({ env: 'sway', file: 'native/wayland.test.js' }),
      row({ env: 'sway', toolkit: 'qt5', action: 'set_value', file: 'native/wayland.test.js', passed: false }),
      row({ env: 'sway', toolkit: 'qt5', action: 'set_value', file: 'native/wayland.test.js' }),
    ],
  };
  assert.deepEqual(matrixCounts(record), [
    { env: 'x11', proven: 1, listed: 2 },
    { env: 'sway', proven: 2, listed: 2 },
  ]);
  const blocks = matrixBlocks(record);
  assert.deepEqual(blocks['matrix-counts'], [
    'From the last full run (2026-12-07T02:00Z, 160 files): X11 1 of 2 rows, sway (Wayland) 2 rows proven ' +
      '(a row: an action in one toolkit with one outcome).',
  ]);
  const table = blocks['action-matrix']!.filter((l) => l.startsWith('| '));
  assert.deepEqual(table.slice(2), [
    '| X11 | GTK 3 | `click` | confirmed | 2 passed | [gtk.test.ts](../test/native/gtk.test.ts), [toolkits.test.ts](../test/native/toolkits.test.ts) |',
    '| X11 | GTK 3 | `drag` | confirmed | 0 passed, 1 failed: not counted | [gtk.test.ts](../test/native/gtk.test.ts) |',
    '| sway (Wayland) | GTK 3 | `click` | confirmed | 1 passed | [wayland.test.ts](../test/native/wayland.test.ts) |',
    '| sway (Wayland) | Qt 5 | `set_value` | confirmed | 1 passed, 1 failed | [wayland.test.ts](../test/native/wayland.test.ts) |',
  ]);
});

test('a partial record says it is one, naming its files', () => {
  const record: MatrixRecord = {
    at: '2026-12-07T02:00:00.000Z',
    full: false,
    partial_files: ['native/windows.test.js'],
    rows: [row({ action: 'bring_to_front', toolkit: 'any', file: 'native/windows.test.js' })],
  };
  assert.match(
    matrixBlocks(record)['matrix-counts']![0]!,
    /^From runs of 1 test file alone, not a full run .*\): X11 1 row proven/,
  );
  assert.ok(
    matrixBlocks(record)['action-matrix']!.includes(
      'The files run: [windows.test.ts](../test/native/windows.test.ts).',
    ),
  );
  assert.match(matrixBlocks(null)['action-matrix']![0]!, /No counted matrix is recorded yet/);
});
