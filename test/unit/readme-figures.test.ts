// The README's figures cannot drift (issue 42 item 8): every number it states about speed, bytes,
// concurrency, the trust fuzz and the suite's time is generated (bench/readme-table.ts) from bench/latest.md
// and the test runner's last full runs (test/last-run.json, test/last-load-run.json). This fails when a
// generated block disagrees with its source, is empty, or when a measured figure (a ratio, a decimal time
// or size, a range of times, a throughput) is written anywhere else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { figureBlocks, readSources, withFigures } from '../../bench/readme-table.js';
import { ROOT } from '../helpers/fixtures.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const GENERATED = ['bench', 'concurrency', 'fuzz', 'suite', 'suite-load'];

/** Markdown tables compared by their cells: biome pads the columns when it formats the README. */
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

test("the README's generated figures are bench/latest.md's and the runner's last full runs'", () => {
  const sources = readSources(ROOT);
  assert.equal(normalized(readme), normalized(withFigures(readme, sources)), 'run `npm run readme:figures`');
  const blocks = figureBlocks(sources);
  for (const name of GENERATED) {
    assert.ok(blocks[name] && blocks[name].length > 0 && blocks[name].at(-1) !== '', `${name}: its source has it`);
    assert.ok(readme.includes(`<!-- ${name}:start -->`), `the README has the ${name} block`);
  }
});

test('no measured figure is written by hand outside the generated blocks', () => {
  let outside = readme;
  for (const name of GENERATED)
    outside = outside.replace(new RegExp(`<!-- ${name}:start -->[\\s\\S]*?<!-- ${name}:end -->`, 'g'), '');
  const measured = [
    /\b\d+(?:\.\d+)?\s?[x×](?![\w-])/, // a ratio: 1.4x
    /\b\d+\.\d+\s?(?:ms|s|min|MB|KB|GB|MiB|KiB|GiB)\b/, // a decimal time or size: 5.8 min, 0.33 s
    /\b\d+(?:\.\d+)?\s?-\s?\d+(?:\.\d+)?\s?(?:ms|s|min)\b/, // a range of times: 6-7 min
    /tasks\/s/, // a throughput
  ];
  const found = outside
    .split('\n')
    .flatMap((line, i) => (measured.some((re) => re.test(line)) ? [`${i + 1}: ${line.trim()}`] : []));
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
