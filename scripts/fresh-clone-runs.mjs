#!/usr/bin/env node
// `node scripts/fresh-clone-runs.mjs [--runs N] [--hog]`: what a newcomer's first `npm test` does, measured
// (issue 42: "a fresh clone's `npm test` passes three times in a row on a quiet machine and three times with
// a CPU hog on both cores beside it"). Each run clones this repository's HEAD into a new temporary
// directory, runs the README's test command there exactly (`npm test`, with its `npm ci` and build), records
// whether it passed and how long it took in test/fresh-clone-runs.json (whose figures `npm run
// readme:figures` writes into the README), and removes the clone. With --hog, `stress-ng --cpu <cores>`
// keeps every core busy for the whole run beside it, started and stopped by PID.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RECORD = join(root, 'test', 'fresh-clone-runs.json');
const KEEP = 10; // runs kept in the record of each kind (quiet, hog), newest last

function parseArgs(argv) {
  const options = { runs: 3, hog: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--hog') options.hog = true;
    else if (arg === '--runs') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 1 || n > 10)
        throw new Error(`--runs: a whole number from 1 to 10, got ${argv[i]}`);
      options.runs = n;
    } else throw new Error(`unknown argument ${arg} (usage: fresh-clone-runs.mjs [--runs N] [--hog])`);
  }
  return options;
}

/** Runs `npm test` in `dir`, its output to `log`; resolves with its exit code. */
function npmTest(dir, log) {
  return new Promise((resolve) => {
    const out = createWriteStream(log);
    const child = spawn('npm', ['test'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    // Progress: the runner's own summary lines, as they come.
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (/^run-tests: (ok|FAILED|why|\d+ files?)/.test(line)) process.stdout.write(`    ${line}\n`);
    });
    child.on('close', (code, signal) => {
      out.end();
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

/** What failed: the files, from the runner's `why <file> failed` lines, or the step before the tests that did. */
function failedFiles(log) {
  const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
  const files = [...new Set([...text.matchAll(/why (\S+) failed/g)].map((m) => m[1]))];
  if (files.length) return files;
  if (/^> biome check/m.test(text) && /Some errors were emitted/.test(text)) return ['lint (biome)'];
  if (/^check-deps: (?!.*ok$)/m.test(text)) return ['lint (check-deps)'];
  const ensure = /^ensure: .*failed.*$/m.exec(text);
  return ensure ? [ensure[0]] : [];
}

async function main() {
  const { runs, hog } = parseArgs(process.argv.slice(2));
  const cores = availableParallelism();
  const record = existsSync(RECORD) ? JSON.parse(readFileSync(RECORD, 'utf8')) : [];
  for (let i = 1; i <= runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'verity-fresh-clone-'));
    // The clone is of HEAD as it is now: a run of several may test newer commits than the first.
    const cloned = spawnSync('git', ['clone', '--quiet', root, dir], { stdio: 'inherit' });
    if (cloned.status !== 0) throw new Error(`git clone into ${dir} failed (exit ${cloned.status})`);
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: dir, encoding: 'utf8' }).stdout.trim();
    const log = join(tmpdir(), `verity-fresh-clone-${commit}-${hog ? 'hog' : 'quiet'}-${i}.log`);
    console.log(`fresh clone ${i}/${runs} of ${commit}${hog ? `, beside stress-ng --cpu ${cores}` : ''}: ${dir}`);
    const stress = hog ? spawn('stress-ng', ['--cpu', String(cores), '--quiet'], { stdio: 'ignore' }) : null;
    const load = loadavg()[0];
    const started = Date.now();
    let code;
    try {
      code = await npmTest(dir, log);
    } finally {
      if (stress?.pid) {
        try {
          process.kill(stress.pid, 'SIGTERM');
        } catch {}
      }
    }
    const minutes = Math.round((Date.now() - started) / 6000) / 10;
    const lastRun = join(dir, 'test', 'last-run.json');
    const run = existsSync(lastRun) ? JSON.parse(readFileSync(lastRun, 'utf8')) : null;
    const entry = {
      at: new Date().toISOString(),
      commit,
      hog,
      cores,
      passed: code === 0,
      minutes,
      files: run?.files ?? null,
      failed: code === 0 ? [] : failedFiles(log),
      load_at_start: Math.round(load * 10) / 10,
    };
    record.push(entry);
    // The last KEEP of each kind: a day of hog runs must not push the quiet ones out of the README.
    const kept = record.filter((r, i) => record.slice(i + 1).filter((later) => later.hog === r.hog).length < KEEP);
    writeFileSync(RECORD, `${JSON.stringify(kept, null, 2)}\n`);
    // As the linter wants it (it folds short arrays onto one line), so the record is committed as written.
    spawnSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', RECORD], { stdio: 'ignore' });
    console.log(
      `fresh clone ${i}/${runs}: ${entry.passed ? 'passed' : `FAILED (${entry.failed.join(', ') || `exit ${code}`}; log ${log})`} in ${minutes} min`,
    );
    // A quiet run that passed is this checkout's last full run too: the README's suite figure comes from it.
    if (entry.passed && !hog && run) {
      writeFileSync(join(root, 'test', 'last-run.json'), `${JSON.stringify(run, null, 2)}\n`);
      // And so is its action matrix (docs/action-matrix.md and the README's counts are generated from it).
      const matrix = join(dir, 'test', 'last-matrix.json');
      if (existsSync(matrix)) writeFileSync(join(root, 'test', 'last-matrix.json'), readFileSync(matrix));
    }
    rmSync(dir, { recursive: true, force: true });
    if (entry.passed) rmSync(log, { force: true });
  }
}

main().catch((error) => {
  console.error(`fresh-clone-runs: ${error.message}`);
  process.exit(1);
});
