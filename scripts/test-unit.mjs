#!/usr/bin/env node
// The fast tier: every test/unit file from source, in this one process (`npm run test:unit [substring ...]`).
// Run with `node --import ./scripts/from-source.mjs` (package.json does): no tsc pass, and one Node start
// and one load of the server's modules for all the files instead of one per file. The full suite
// (scripts/run-tests.mjs) still runs each compiled file in its own process.
import { readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const UNIT = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'unit');
const only = process.argv.slice(2);
const files = readdirSync(UNIT)
  .filter((f) => f.endsWith('.test.ts') && (only.length === 0 || only.some((o) => f.includes(o))))
  .sort();
if (files.length === 0) {
  process.stderr.write(`test-unit: no file in test/unit matches ${only.join(' ')}\n`);
  process.exit(1);
}
// node:test runs the tests each file declares once this module's imports are done, one top-level test at a time.
for (const f of files) await import(pathToFileURL(join(UNIT, f)).href);
