#!/usr/bin/env node
// Runs every compiled test file (dist/test/**/*.test.js) with Node's own test runner, each file in its own
// process, several files at once (`--lanes N`, 3 unless told; 4 loads two cores past what the timed tests
// bear), plus one lane for the few files that mostly wait (`waiting`). The desktop files (test/native: Xvfb
// or sway, a session bus, real apps, LibreOffice) take one lane between them, one file at a time, so two
// desktops never compete for the two cores while an app is being timed out. Each file's output is printed
// whole when it ends (lanes never interleave lines), with a progress line; the run ends with each file's time,
// the slowest first, and the files that failed. `node scripts/run-tests.mjs [--lanes N] [--cpu] [substring ...]` runs a few; `--cpu`
// also gives each file's CPU time, its descendants' included, and names what a file left running (each file in
// a cgroup v1 cpuacct group of its own; root on Linux): the run is CPU-bound on two cores, so a file's CPU, not
// its wall time, is what it costs the others. One Chromium serves the whole run (SHARED_CHROMIUM_URL and _PID
// in each file's environment): the in-process browser files (test/helpers/suite.ts `browserSuite`) each take a
// browser context of their own in it rather than launching a browser each; with --cpu its CPU is a line of its own.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn, spawnSync } from 'node:child_process';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const testDir = join(root, 'dist', 'test');
const args = process.argv.slice(2);
const lanesAt = args.indexOf('--lanes');
const lanes = lanesAt >= 0 ? Number(args[lanesAt + 1]) : 3;
if (!Number.isInteger(lanes) || lanes < 1 || lanes > 8) {
  process.stderr.write(`run-tests: --lanes takes a whole number from 1 to 8, not ${args[lanesAt + 1]}\n`);
  process.exit(2);
}
const measureCpu = args.includes('--cpu');
const CPUACCT = '/sys/fs/cgroup/cpuacct';
if (measureCpu) {
  try {
    rmdirSync(mkdtempSync(join(CPUACCT, 'verity-probe-')));
  } catch (e) {
    process.stderr.write(
      `run-tests: --cpu needs a writable cgroup v1 cpuacct hierarchy at ${CPUACCT} (root on Linux): ${e.message}\n`,
    );
    process.exit(2);
  }
}
// --load: the load tier (`npm run test:load`): the browser and native files (test/browser, test/native) and
// the load-only files (test/load) with a CPU hog keeping every core busy beside them (stress-ng), the way a
// busy day feels on CI's 2 cores. The load-only files never run without it.
const underLoad = args.includes('--load');
const only = args.filter(
  (a, i) => a !== '--cpu' && a !== '--load' && (lanesAt < 0 || (i !== lanesAt && i !== lanesAt + 1)),
);

const find = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? find(join(dir, e.name)) : e.name.endsWith('.test.js') ? [join(dir, e.name)] : [],
  );
const name = (file) => relative(testDir, file);
const loadOnly = (f) => /^load[\\/]/.test(relative(testDir, f));
const files = find(testDir).filter(
  (f) =>
    (underLoad ? loadOnly(f) || /^(browser|native)[\\/]/.test(relative(testDir, f)) : !loadOnly(f)) &&
    (only.length === 0 || only.some((o) => f.includes(o))),
);

// The packed-tarball test builds the package (npm pack's prepack) and installs it, and the LibreOffice files
// start LibreOffice and open its documents (200-250 s under load, and a hung document's restart adds about
// 80 s more), and the load tier's own files repeat each case many times under the hog: they get a longer bound.
const long = (f) => /[\\/](install[\\/]packed|native[\\/]office(-wayland)?|load[\\/][^\\/]+)\.test\.js$/.test(f);
const desktop = (f) => /^(native|load)[\\/]/.test(name(f));
// Files that mostly wait (a pool's TIMEOUT waited out twice, a frozen page waiting out Verity's bounds,
// sessions' idle ends, starts that must fail): measured at 15-25% of a core over 40-100 s each. They get a
// lane of their own beside the others (when there is more than one), which they leave idle for the CPU-bound
// files rather than holding one of theirs for minutes.
const waiting = (f) =>
  /^(pool[\\/]pool-lost|browser[\\/]faults|sessions[\\/]sessions|install[\\/]start-errors)\.test\.js$/.test(name(f));

// The longest files start first, so the run does not end on one lane finishing a long file alone: by the
// times of the last full run (kept beside the build, in dist/test), else by those of a full run on the
// project's 2-core machine (test/run-times.json, committed: a clean checkout, as CI runs it, orders as well),
// else by a guess from the folder (a file newer than both).
const timesFile = join(testDir, '.run-times.json');
const readTimes = (file) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {}; // no full run yet in this build; no committed times
  }
};
const lastTimes = { ...readTimes(join(root, 'test', 'run-times.json')), ...readTimes(timesFile) };
const guess = {
  pool: 60,
  native: 40,
  sessions: 40,
  install: 30,
  extension: 30,
  browser: 20,
  gateway: 15,
  fuzz: 15,
  security: 10,
};
const expected = (f) => lastTimes[name(f)] ?? guess[name(f).split(/[\\/]/)[0]] ?? 2;
const byLongest = (a, b) => expected(b) - expected(a) || name(a).localeCompare(name(b));
// test/unit is pure logic: its files run as one job, from source in one process (scripts/test-unit.mjs, the
// fast tier), not as 43 Node starts that each load the server's modules again.
const unit = (f) => /^unit[\\/]/.test(name(f));
const unitFiles = files.filter(unit);
const UNIT_JOB = 'unit';
const desktopQueue = files.filter(desktop).sort(byLongest);
const waitingQueue = lanes > 1 ? files.filter(waiting).sort(byLongest) : [];
const otherQueue = [
  ...files.filter((f) => !desktop(f) && !unit(f) && !waitingQueue.includes(f)).sort(byLongest),
  ...(unitFiles.length ? [UNIT_JOB] : []),
];

const jobs = desktopQueue.length + waitingQueue.length + otherQueue.length;
const waitingLane = waitingQueue.length > 0 ? ' plus one for the waiting files' : '';
const times = {};
const cpu = {};
/** Each failed file to its own account of why, said again after the summary: a CI log's tail is often all kept. */
const failed = new Map();
const started = performance.now();
let done = 0;
/** Each file running now: its process group (a group of its own, see `stop`) to its own TMPDIR. */
const running = new Map();
/** The signal that stopped the run, if one did. */
let stoppedBy = null;

/**
 * SIGINT or SIGTERM: no new file starts, and everything the running files started is told SIGTERM; when the
 * lanes have ended, what is still there is killed (after at most 10 s) and the files' temp dirs removed
 * (`finishStop`). Whoever stops the run (a terminal, a CI timeout), nothing is left behind. Each file runs as
 * a process group of its own; what it started in groups of their own (puppeteer's Chromium, a pool, a
 * desktop) is found by the file's TMPDIR in its environment (Linux's /proc): a stopped file's `after` never runs.
 */
const stoppedDirs = [];
function stop(signal) {
  if (stoppedBy) return;
  stoppedBy = signal;
  process.stdout.write(`run-tests: ${signal}: stopping the ${running.size} file(s) running\n`);
  stoppedDirs.push(...running.values());
  for (const pgid of running.keys()) signalPid(-pgid, 'SIGTERM');
  for (const pid of startedFrom(stoppedDirs)) signalPid(pid, 'SIGTERM');
}
function signalPid(pid, s) {
  try {
    process.kill(pid, s);
  } catch {
    /* already gone */
  }
}
/** The processes whose environment has one of these TMPDIRs (a file's own, given to all it starts). */
function startedFrom(dirs) {
  const marks = dirs.map((dir) => `TMPDIR=${join(dir, 'tmp')}\0`);
  const pids = [];
  for (const entry of existsSync('/proc') ? readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (marks.some((m) => readFileSync(`/proc/${entry}/environ`, 'latin1').includes(m))) pids.push(Number(entry));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return pids;
}
/**
 * The run's one Chromium (test/helpers/chromium.ts: launched as a test's own is, over a pipe, so it ends with
 * this process however that ends), or null when no file of the run is a browser file.
 */
async function launchSharedChromium() {
  if (![...otherQueue, ...waitingQueue].some((f) => f !== UNIT_JOB)) return null;
  const { launchChromium } = await import(join(testDir, 'helpers', 'chromium.js'));
  const chrome = await launchChromium().catch((e) => {
    // Not the end of the run: without SHARED_CHROMIUM_URL each browser file launches a Chromium of its own.
    process.stdout.write(
      `run-tests: the shared Chromium did not start (${e.message.split('\n')[0].trim()}); each file launches its own\n`,
    );
    return null;
  });
  if (!chrome) return null;
  // Its processes so far (the browser, its zygotes, the GPU process) into a group of their own: all they start
  // later (each file's renderers) is then counted there too.
  const group = measureCpu ? mkdtempSync(join(CPUACCT, 'verity-shared-chromium-')) : null;
  if (group) for (const pid of [chrome.pid, ...descendantsOf(chrome.pid)]) moveToGroup(group, pid);
  return { chrome, group };
}
function descendantsOf(root) {
  const parentOf = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const found = [];
  const isBelow = (pid) => {
    for (let p = parentOf.get(pid); p; p = parentOf.get(p)) if (p === root) return true;
    return false;
  };
  for (const pid of parentOf.keys()) if (isBelow(pid)) found.push(pid);
  return found;
}
function moveToGroup(group, pid) {
  try {
    writeFileSync(join(group, 'cgroup.procs'), `${pid}\n`);
  } catch {
    /* gone */
  }
}

async function finishStop() {
  for (let waited = 0; waited < 10_000 && startedFrom(stoppedDirs).length > 0; waited += 200)
    await new Promise((r) => setTimeout(r, 200));
  for (const pid of startedFrom(stoppedDirs)) signalPid(pid, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 200));
  for (const dir of stoppedDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
const minutes = () => ((performance.now() - started) / 60_000).toFixed(1);

/**
 * Runs one file in its own `node --test`, its output kept and printed whole when it ends. Each file gets its
 * own XDG_CONFIG_HOME and TMPDIR: a gateway started without --config-dir uses $XDG_CONFIG_HOME/verity, and
 * a Verity starting removes the browser profiles (in the temp dir) of Verity processes that ended, so two
 * files at once would find each other's gateway, or clean up the profile another file is checking.
 */
function runFile(file) {
  const t0 = performance.now();
  const label = file === UNIT_JOB ? `unit (${unitFiles.length} files, from source)` : name(file);
  const own = mkdtempSync(join(tmpdir(), 'verity-run-'));
  // Open as /tmp is: the Wayland desktop runs sway as nobody, in a runtime dir under TMPDIR.
  chmodSync(own, 0o755);
  mkdirSync(join(own, 'config'));
  mkdirSync(join(own, 'tmp'), { mode: 0o1777 });
  chmodSync(join(own, 'tmp'), 0o1777);
  const command =
    file === UNIT_JOB
      ? [
          '--import',
          './scripts/from-source.mjs',
          'scripts/test-unit.mjs',
          ...unitFiles.map((f) => name(f).replace(/^unit[\\/]|\.js$/g, '')),
        ]
      : ['--test', '--test-concurrency=1', `--test-timeout=${long(file) ? 900_000 : 240_000}`, file];
  // With --cpu the file's process joins its own cpuacct group before it becomes node, so all it starts counts.
  const group = measureCpu ? mkdtempSync(join(CPUACCT, 'verity-test-')) : null;
  const [program, programArgs] = group
    ? ['/bin/sh', ['-c', `echo $$ > ${group}/cgroup.procs && exec "$0" "$@"`, process.execPath, ...command]]
    : [process.execPath, command];
  const sharedEnv = shared
    ? { SHARED_CHROMIUM_URL: shared.chrome.browserUrl, SHARED_CHROMIUM_PID: String(shared.chrome.pid) }
    : {};
  const child = spawn(program, programArgs, {
    cwd: root,
    detached: true, // a process group of its own (see `stop`)
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...sharedEnv, XDG_CONFIG_HOME: join(own, 'config'), TMPDIR: join(own, 'tmp') },
  });
  running.set(child.pid, own);
  const output = [];
  child.stdout.on('data', (b) => output.push(b));
  child.stderr.on('data', (b) => output.push(b));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child.pid);
      try {
        rmSync(own, { recursive: true, force: true, maxRetries: 5 });
      } catch (e) {
        // A process the file started is still writing there: left running, or being stopped (then
        // finishStop removes it once it has ended).
        if (!stoppedBy) process.stdout.write(`run-tests: could not remove ${own}: ${e.message}\n`);
      }
      const seconds = (performance.now() - t0) / 1000;
      times[label] = Math.round(seconds * 10) / 10;
      let cpuNote = '';
      if (group) {
        cpu[label] = Math.round(Number(readFileSync(join(group, 'cpuacct.usage'), 'utf8')) / 1e8) / 10;
        cpuNote = ` (${cpu[label].toFixed(1)} s CPU)`;
        const left = readFileSync(join(group, 'cgroup.procs'), 'utf8').trim().split('\n').filter(Boolean);
        if (left.length) cpuNote += ` and left running: pids ${left.join(' ')}`;
        else rmdirSync(group);
      }
      done += 1;
      const ok = code === 0;
      const text = Buffer.concat(output);
      if (!ok) failed.set(label, whyFailed(text.toString('utf8')));
      if (underLoad) noteTyping(text.toString('utf8'));
      else if (file !== UNIT_JOB) noteMatrix(label, text.toString('utf8'));
      process.stdout.write(text);
      process.stdout.write(
        `run-tests: ${ok ? 'ok    ' : 'FAILED'} ${label} in ${seconds.toFixed(1)} s${cpuNote}` +
          `${signal ? ` (ended by ${signal})` : ''} [${done}/${jobs} jobs, ${minutes()} min]\n`,
      );
      resolve();
    });
  });
}

/**
 * The load tier's typing counts, per toolkit: test/load/typing.test.ts prints one line for each
 * (`load typing: Qt 10 runs, 240 chars typed, 0 lost`), kept in test/last-load-run.json for the README.
 */
const typing = {};
function noteTyping(output) {
  for (const m of output.matchAll(/load typing: (.+?) (\d+) runs, (\d+) chars typed, (\d+) lost/g))
    typing[m[1]] = { runs: Number(m[2]), typed: Number(m[3]), lost: Number(m[4]) };
}

/**
 * The counted matrix (issue 44 item 8, docs/action-matrix.md): a test that proves an action in one environment
 * and toolkit says so in its title, one tag per row (`[matrix x11 gtk3 click confirmed]`). Each tagged test's
 * rows are kept with whether it passed: TAP's `ok` (a skipped or todo test proves nothing and is left out),
 * `not ok` listed as failing. test/last-matrix.json keeps them (see the end of the run).
 */
const matrixRows = [];
const MATRIX_TAG = /\[matrix (\S+) (\S+) (\S+) (\S+)\]/g;
function noteMatrix(file, tap) {
  for (const m of tap.matchAll(/^\s*(not ok|ok) \d+ - (.*)$/gm)) {
    // TAP escapes `#` in a title (`\#`): an unescaped ` # ` starts the directive.
    const [title, directive] = m[2].split(/(?<!\\) # /);
    if (/^(SKIP|TODO)\b/i.test(directive ?? '')) continue;
    for (const [, env, toolkit, action, outcome] of title.matchAll(MATRIX_TAG))
      matrixRows.push({
        env,
        toolkit,
        action,
        outcome,
        file,
        test: title.trim().replace(/\\([\\#])/g, '$1'),
        passed: m[1] === 'ok',
      });
  }
}

/**
 * A failed file's TAP `not ok` lines with their diagnostics (to the `...` that ends each), at most 80 lines;
 * a file that failed before any test reported (a crash, a timeout of the whole file) gives its last 30 lines.
 */
function whyFailed(tap) {
  const lines = tap.split('\n');
  const kept = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*not ok /.test(lines[i])) continue;
    let end = i + 1;
    while (end < lines.length && !/^\s*\.\.\.$/.test(lines[end])) end++;
    const block = lines.slice(i, end + 1);
    // A suite's own `not ok` only says that its subtests failed (they are listed), a cancelled test only
    // that its suite's hook failed (the suite's block says why).
    if (!block.some((l) => /failureType: '(subtestsFailed|cancelledByParent)'/.test(l))) kept.push(...block);
  }
  const why = kept.length ? kept : lines.filter((l) => l.trim()).slice(-30);
  return (
    why.length > 80 ? [...why.slice(0, 80), `... (${why.length - 80} more lines in its output above)`] : why
  ).join('\n');
}

/**
 * Minutes since `npm test` started (its script's shell, this process's parent: ensure, lint and the run), or
 * null when the run was not started by `npm test`. Read from the kernel: the parent's start in clock ticks
 * after boot (/proc/PPID/stat) and the boot time (/proc/stat btime).
 */
function npmTestMinutes() {
  if (process.env.npm_lifecycle_event !== 'test') return null;
  try {
    const stat = readFileSync(`/proc/${process.ppid}/stat`, 'utf8');
    const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    const startedMs = (boot + startTicks / 100) * 1000;
    return Math.round(((Date.now() - startedMs) / 60_000) * 10) / 10;
  } catch {
    return null;
  }
}

/** One lane: takes the next file from its queues (the first that has one) until they are empty. */
async function lane(queues) {
  for (;;) {
    const queue = queues.find((q) => q.length > 0);
    if (!queue || stoppedBy) return;
    await runFile(queue.shift());
  }
}

const shared = await launchSharedChromium();
const hog = underLoad ? startHog() : null;

/**
 * The load tier's CPU hog: stress-ng with one CPU worker per core, in a process group of its own, bounded by
 * its own --timeout (the run's bound) so that it can never outlive the run; killed by its group when the
 * files are done or the run is stopped.
 */
function startHog() {
  const workers = cpus().length;
  const child = spawn('stress-ng', ['--cpu', String(workers), '--timeout', '5400s', '--quiet'], {
    detached: true,
    stdio: 'ignore',
  });
  child.on('error', (e) => {
    process.stderr.write(
      `run-tests: --load needs stress-ng (apt-get install stress-ng; npm run test:load installs it): ${e.message}\n`,
    );
    process.exit(2);
  });
  process.stdout.write(`run-tests: load tier: stress-ng --cpu ${workers} (pid ${child.pid}) beside the files\n`);
  process.on('exit', () => signalPid(-child.pid, 'SIGKILL'));
  return child;
}

// The desktop lane helps with the other files once the desktop files are done; the other lanes never take a
// desktop file.
await Promise.all([
  lane([desktopQueue, otherQueue]),
  // `--lanes 1` is that one lane alone: one file at a time.
  ...Array.from({ length: lanes - 1 }, () => lane([otherQueue])),
  lane([waitingQueue]),
]);

if (hog) signalPid(-hog.pid, 'SIGKILL');
let sharedCpu = null;
if (shared) {
  await shared.chrome.close();
  if (shared.group) {
    sharedCpu = Math.round(Number(readFileSync(join(shared.group, 'cpuacct.usage'), 'utf8')) / 1e8) / 10;
    const left = readFileSync(join(shared.group, 'cgroup.procs'), 'utf8').trim();
    if (left) process.stdout.write(`run-tests: the shared Chromium left running: pids ${left.split('\n').join(' ')}\n`);
    else rmdirSync(shared.group);
  }
}
const total = (performance.now() - started) / 1000;
const lines = Object.entries(times)
  .sort((a, b) => b[1] - a[1])
  .map(([file, s]) => {
    const used = file in cpu ? `${cpu[file].toFixed(1).padStart(6)} s CPU  ` : '';
    return `run-tests: ${s.toFixed(1).padStart(7)} s  ${used}${file}`;
  });
if (sharedCpu !== null)
  lines.push(`run-tests: ${'-'.padStart(7)}    ${sharedCpu.toFixed(1).padStart(6)} s CPU  the shared Chromium`);
const cpuTotal = Object.values(cpu).reduce((a, b) => a + b, 0) + (sharedCpu ?? 0);
process.stdout.write(
  `\nrun-tests: ${files.length} files (${jobs} jobs) in ${(total / 60).toFixed(1)} min on ${lanes} lane(s)${waitingLane}` +
    `${measureCpu ? `, ${(cpuTotal / 60).toFixed(1)} min of CPU` : ''}, the slowest first:\n` +
    `${lines.join('\n')}\n`,
);
if (only.length === 0 && !stoppedBy) {
  mkdirSync(testDir, { recursive: true });
  // The times that order the next run are an ordinary run's, not the load tier's.
  if (!underLoad) writeFileSync(timesFile, `${JSON.stringify(times, null, 1)}\n`);
  // The README's figure for the suite's time comes from here (`npm run readme:figures`), never typed by hand.
  const npmTest = npmTestMinutes();
  const lastRun = {
    at: new Date().toISOString(),
    files: files.length,
    failed: failed.size,
    minutes: Math.round((total / 60) * 10) / 10,
    lanes,
    cores: cpus().length,
    ...(npmTest !== null ? { npm_test_minutes: npmTest } : {}),
    ...(underLoad ? { load: true, typing } : {}),
  };
  const runFile = underLoad ? 'last-load-run.json' : 'last-run.json';
  writeFileSync(join(root, 'test', runFile), `${JSON.stringify(lastRun, null, 2)}\n`);
}
if (!underLoad && !stoppedBy) writeMatrix();

/**
 * test/last-matrix.json, the counted matrix's record (`npm run readme:figures` writes docs/action-matrix.md
 * from it). A full run writes it whole (`full: true`). A run of a few files never touches a full run's record:
 * where there is none, or only a partial one, it writes a partial record (`full: false`), its rows for the
 * files it ran replacing theirs and the files named (`partial_files`), so that the doc says it is not a full
 * run's. A file that ran but reported no test (crashed) keeps no rows.
 */
/** Written as biome formats it (a short list on one line), so that the committed record stays lint clean. */
function writeRecord(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
  spawnSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', file], { cwd: root, stdio: 'ignore' });
}
function writeMatrix() {
  const record = join(root, 'test', 'last-matrix.json');
  const byFile = (a, b) =>
    a.file.localeCompare(b.file) ||
    a.env.localeCompare(b.env) ||
    a.toolkit.localeCompare(b.toolkit) ||
    a.action.localeCompare(b.action) ||
    a.test.localeCompare(b.test);
  const ran = Object.keys(times).filter((f) => f !== `unit (${unitFiles.length} files, from source)`);
  if (only.length === 0) {
    const full = { at: new Date().toISOString(), full: true, files: files.length, rows: matrixRows.sort(byFile) };
    writeRecord(record, full);
    return;
  }
  let before = null;
  try {
    before = JSON.parse(readFileSync(record, 'utf8'));
  } catch {
    /* no record yet */
  }
  if (before?.full) {
    process.stdout.write(
      `run-tests: test/last-matrix.json is a full run's (${before.at}): this run of ${ran.length} file(s) leaves it as it is\n`,
    );
    return;
  }
  // Nothing of this run's is in the matrix (no tagged test ran, none of its files had rows): left as it is.
  if (!matrixRows.length && !ran.some((f) => before?.rows.some((r) => r.file === f))) return;
  const kept = (before?.rows ?? []).filter((r) => !ran.includes(r.file));
  const partialFiles = [...new Set([...(before?.partial_files ?? []), ...ran])]
    .filter((f) => kept.some((r) => r.file === f) || matrixRows.some((r) => r.file === f))
    .sort();
  const partial = {
    at: new Date().toISOString(),
    full: false,
    partial_files: partialFiles,
    rows: [...kept, ...matrixRows].sort(byFile),
  };
  writeRecord(record, partial);
  process.stdout.write(
    `run-tests: test/last-matrix.json: a partial record (${partial.rows.length} rows from ${partialFiles.length} file(s); a full run replaces it)\n`,
  );
}
if (failed.size) {
  for (const [label, why] of failed) process.stdout.write(`\nrun-tests: why ${label} failed:\n${why}\n`);
  process.stdout.write(`run-tests: ${failed.size} file(s) failed: ${[...failed.keys()].join(', ')}\n`);
}
if (stoppedBy) {
  await finishStop();
  process.stdout.write(`run-tests: stopped by ${stoppedBy} after ${done} of ${jobs} jobs\n`);
  process.exit(1);
}
process.exit(failed.size ? 1 : 0);
