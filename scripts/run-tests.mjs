#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with Node's own test runner, one file at a time
// (each file starts its own browsers, displays and buses; two cores do not run two suites well).
import { readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
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
// 80 s more): they get a longer bound.
const long = (f) => /[\\/](install[\\/]packed|native[\\/]office(-wayland)?)\.test\.js$/.test(f);
const run = (list, timeoutMs) =>
  list.length === 0
    ? 0
    : (spawnSync(process.execPath, ['--test', '--test-concurrency=1', `--test-timeout=${timeoutMs}`, ...list], {
        stdio: 'inherit',
        cwd: root,
      }).status ?? 1);
const status = [
  run(
    files.filter((f) => !long(f)),
    240_000,
  ),
  run(files.filter(long), 900_000),
];
process.exit(status.find((s) => s !== 0) ?? 0);
