// The README's and docs/' figures cannot drift (issue 42 item 8, issue 43 item 9): every number they state
// about speed, bytes, concurrency, the trust fuzz and the suite's time is generated (bench/readme-table.ts)
// from bench/latest.md and the test runner's last full runs (test/last-run.json, test/last-load-run.json),
// into the files its FIGURE_FILES table names. This fails when a generated block disagrees with its source,
// is empty or is missing from its file, or when a measured figure (a ratio, a decimal time or size, a range
// of times, a throughput) is written anywhere else in the README or docs/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIGURE_FILES, figureBlocks, readSources, withFigures } from '../../bench/readme-table.js';
import { ROOT } from '../helpers/fixtures.js';

const GENERATED = [
  'bench',
  'concurrency',
  'fuzz',
  'suite',
  'suite-load',
  'fresh-clones',
  'action-matrix',
  'matrix-counts',
];
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
// docs/contract.md states targets (at most 0.5x Playwright MCP's bytes), not measurements.
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md') && f !== 'contract.md')
    .map((f) => `docs/${f}`),
];

/** Markdown tables compared by their cells: biome pads the columns when it formats markdown. */
const normalized = (text: string) =>
  text
    .split('\n')
    .map((line) =>
      line.startsWith('|')
        ? line
            .split('|')
            .map((cell) =>
              cell
                .trim()
                .replace(/^(-+):?$/, '-')
                .replace(/^-+:$/, '-:'),
            )
            .join('|')
        : line,
    )
    .join('\n');

test("the generated figures of the README and docs/ are bench/latest.md's and the runner's last full runs'", () => {
  const sources = readSources(ROOT);
  const blocks = figureBlocks(sources);
  for (const name of GENERATED)
    assert.ok(blocks[name] && blocks[name].length > 0 && blocks[name].at(-1) !== '', `${name}: its source has it`);
  for (const [file, names] of Object.entries(FIGURE_FILES)) {
    const text = read(file);
    assert.equal(normalized(text), normalized(withFigures(text, sources)), `${file}: run \`npm run readme:figures\``);
    for (const name of names) assert.ok(text.includes(`<!-- ${name}:start -->`), `${file} has the ${name} block`);
  }
  const placed = new Set(Object.values(FIGURE_FILES).flat());
  assert.deepEqual(
    GENERATED.filter((name) => !placed.has(name)),
    [],
    'every generated block stands in a file of FIGURE_FILES',
  );
});

test('a file holds only the generated blocks FIGURE_FILES gives it, so that each one is written', () => {
  for (const file of DOCUMENTS) {
    const held = [...read(file).matchAll(/<!-- ([\w-]+):start -->/g)]
      .map((m) => m[1]!)
      .filter((name) => GENERATED.includes(name));
    assert.deepEqual(
      held.filter((name) => !FIGURE_FILES[file]?.includes(name)),
      [],
      `${file}: a block not in its FIGURE_FILES row would never be rewritten`,
    );
  }
});

test('no measured figure is written by hand outside the generated blocks', () => {
  const measured = [
    /\b\d+(?:\.\d+)?\s?[x×](?![\w-])/, // a ratio: 1.4x
    /\b\d+\.\d+\s?(?:ms|s|min|MB|KB|GB|MiB|KiB|GiB)\b/, // a decimal time or size: 5.8 min, 0.33 s
    /\b\d+(?:\.\d+)?\s?-\s?\d+(?:\.\d+)?\s?(?:ms|s|min)\b/, // a range of times: 6-7 min
    /tasks\/s/, // a throughput
  ];
  const found: string[] = [];
  for (const file of DOCUMENTS) {
    let outside = read(file);
    for (const name of GENERATED)
      outside = outside.replace(new RegExp(`<!-- ${name}:start -->[\\s\\S]*?<!-- ${name}:end -->`, 'g'), '');
    outside.split('\n').forEach((line, i) => {
      if (measured.some((re) => re.test(line))) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, [], 'measured figures belong in a generated block');
});

test("the load tier's block names the characters typed and lost per toolkit, from its run's record", () => {
  const sources = readSources(ROOT);
  const lastLoadRun = {
    at: '2026-12-06T21:00:00.000Z',
    files: 40,
    failed: 0,
    minutes: 20.5,
    lanes: 3,
    cores: 2,
    load: true,
    typing: { qt: { runs: 10, typed: 240, lost: 0 }, swing: { runs: 10, typed: 250, lost: 1 } },
  };
  const block = figureBlocks({ ...sources, lastLoadRun })['suite-load'].join('\n');
  assert.match(block, /The last load-tier run \(2026-12-06T21:00Z, 2 cores, every core kept busy by stress-ng\)/);
  assert.match(block, /\| qt \| 10 \| 240 \| 0 \|/);
  assert.match(block, /\| swing \| 10 \| 250 \| 1 \|/);
});
