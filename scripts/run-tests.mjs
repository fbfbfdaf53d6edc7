#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with Node's own test runner, one file at a time
// (each file starts its own browsers, displays and buses; two cores do not run two suites well), and ends
// with each file's time, the slowest first, and the files that failed: where the suite's time goes.
import { readdirSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const find = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? find(join(dir, e.name)) : e.name.endsWith('.test.js') ? [join(dir, e.name)] : [],
  );
const only = process.argv.slice(2);
const files = find(join(root, 'dist', 'test'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
// The packed-tarball test builds the package (npm pack's prepack) and installs it, and the LibreOffice files
// start LibreOffice and open its documents (200-250 s under load, and a hung document's restart adds about
// 80 s more): they get a longer bound, and run last.
const long = (f) => /[\\/](install[\\/]packed|native[\\/]office(-wayland)?)\.test\.js$/.test(f);
const ordered = [...files.filter((f) => !long(f)), ...files.filter(long)];

const times = [];
const failed = [];
const started = performance.now();
for (const file of ordered) {
  const t0 = performance.now();
  const status =
    spawnSync(
      process.execPath,
      ['--test', '--test-concurrency=1', `--test-timeout=${long(file) ? 900_000 : 240_000}`, file],
      { stdio: 'inherit', cwd: root },
    ).status ?? 1;
  const name = relative(join(root, 'dist', 'test'), file);
  times.push([name, (performance.now() - t0) / 1000]);
  if (status !== 0) failed.push(name);
}
const total = (performance.now() - started) / 1000;
const lines = times.sort((a, b) => b[1] - a[1]).map(([name, s]) => `run-tests: ${s.toFixed(1).padStart(7)} s  ${name}`);
process.stdout.write(
  `\nrun-tests: ${ordered.length} files in ${(total / 60).toFixed(1)} min, the slowest first:\n${lines.join('\n')}\n`,
);
if (failed.length) process.stdout.write(`run-tests: ${failed.length} file(s) failed: ${failed.join(', ')}\n`);
process.exit(failed.length ? 1 : 0);
