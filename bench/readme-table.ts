// Puts the bench's main table into README.md's Benchmarks section (between its bench markers), so the
// README's figures are the latest run's and never typed by hand. The notes after the table stay.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

/** `md` is bench/latest.md's text; `browser` the browser's version (e.g. "Chrome/156.0…"). */
export function writeReadmeTable(root: string, md: string, browser: string, when: Date): void {
  const file = join(root, 'README.md');
  const readme = readFileSync(file, 'utf8');
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) return;
  const lines = readme.slice(start, end).split('\n');
  // The block: its marker, the run's line, a blank line, the table, then notes written by hand.
  let afterTable = 3;
  while (afterTable < lines.length && lines[afterTable].startsWith('|')) afterTable++;
  const all = md.split('\n');
  const first = all.findIndex((l) => l.startsWith('| metric'));
  if (first < 0) return;
  let last = first;
  while (last < all.length && all[last].startsWith('|')) last++;
  const major = browser.match(/\/(\d+)/)?.[1] ?? browser;
  const run =
    `Verity bench — ${when.toISOString().slice(0, 16)}Z (Chromium ${major} headless, Node ` +
    `${process.versions.node.split('.')[0]}, ${cpus().length} cores):`;
  const block = [lines[0], run, '', ...all.slice(first, last), ...lines.slice(afterTable)].join('\n');
  writeFileSync(file, readme.slice(0, start) + block + readme.slice(end));
  // The README is kept formatted (biome pads the table's columns): the lint would refuse it otherwise.
  spawnSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', 'README.md'], {
    cwd: root,
    stdio: 'ignore',
  });
}
