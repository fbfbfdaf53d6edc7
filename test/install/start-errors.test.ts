// Clean start errors (issue #22 item 9): the real `bin/verity.js` as a subprocess, on a fresh config dir.
// A used port, an unreadable or broken policy or config file, a browser that is not there, a bad option
// value: one line on stderr naming what failed and how to fix it, a non-zero exit, no stack trace
// (--verbose adds it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-start-errors-'));
const configDir = join(dir, 'config');
const env = { ...process.env, VERITY_CONFIG_DIR: configDir, VERITY_HEADLESS: '1' } as Record<string, string>;
delete env.VERITY_POLICY;
delete env.VERITY_VERBOSE;
let first: ChildProcess | undefined;
let port = 0;

/** Runs `verity ...args` to its exit (bounded: a start that does not fail within it is killed, and fails the test). */
function verity(args: string[], extraEnv: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'verity.js'), ...args], {
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** One line on stderr, matching `want`, no stack trace, exit code non-zero. */
function cleanFailure(r: { code: number | null; stderr: string }, want: RegExp): void {
  assert.notEqual(r.code, 0, r.stderr);
  assert.notEqual(r.code, null, `killed: it never exited (${r.stderr})`);
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, `one line on stderr, got:\n${r.stderr}`);
  assert.match(lines[0], want);
  assert.doesNotMatch(r.stderr, /^\s+at |node:internal|Node\.js v/m, 'no stack trace');
}

before(async () => {
  mkdirSync(configDir, { recursive: true });
  // A first gateway on a free port: the second start meets its port in use.
  first = spawn(process.execPath, [join(ROOT, 'bin', 'verity.js'), 'start', '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  first.stdout!.on('data', (d) => (out += d));
  const deadline = Date.now() + 30_000;
  while (!/127\.0\.0\.1:(\d+)\//.test(out)) {
    if (Date.now() > deadline) throw new Error(`the first verity start printed no URL: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  port = Number(/127\.0\.0\.1:(\d+)\//.exec(out)![1]);
});
after(async () => {
  if (first?.pid) {
    const gone = new Promise((r) => first!.once('exit', r));
    first.kill('SIGTERM');
    await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))]);
    if (first.exitCode === null) first.kill('SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
});

test('a second verity start on a used port: one line naming the port, the running gateway and --port', async () => {
  const r = await verity(['start', '--port', String(port)]);
  cleanFailure(
    r,
    new RegExp(`^verity start: port ${port} is in use .*by a running verity start \\(pid \\d+\\).*--port`),
  );
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '', 'no URL printed for a gateway that did not start');
});

test('--verbose (or VERITY_VERBOSE=1) adds the stack trace after that line', async () => {
  for (const r of [
    await verity(['start', '--port', String(port), '--verbose']),
    await verity(['start', '--port', String(port)], { VERITY_VERBOSE: '1' }),
  ]) {
    assert.equal(r.code, 1);
    assert.match(r.stderr.split('\n')[0], /^verity start: port \d+ is in use/);
    assert.match(r.stderr, /EADDRINUSE[\s\S]*\n\s+at /, 'the stack trace');
  }
});

test('a policy file that cannot be read, is not JSON, or is not there', async () => {
  const broken = join(dir, 'broken.json');
  writeFileSync(broken, '{"allowed_apps": [');
  const table: Array<[string, RegExp]> = [
    [
      dir,
      /^verity: policy file .* cannot be read \(EISDIR.*\); make it a readable file, or name another with --policy$/,
    ],
    [broken, /^verity: policy file .*broken\.json: not valid JSON/],
    [join(dir, 'none.json'), /^verity: policy file .*none\.json does not exist; create it/],
  ];
  for (const [file, want] of table) {
    const r = await verity(['start', '--port', '0', '--policy', file]);
    cleanFailure(r, want);
  }
  const bad = join(dir, 'bad-type.json');
  writeFileSync(bad, JSON.stringify({ blocked_apps: 'xterm' }));
  cleanFailure(await verity(['start', '--port', '0', '--policy', bad]), /^verity: policy file .*: blocked_apps: /);
});

test('with an origin list, a socks --proxy-server or a --browser-arg that sets the proxy is refused at start, naming both options', async () => {
  const origins = join(dir, 'origins.json');
  writeFileSync(origins, JSON.stringify({ allowed_origins: ['https://a.example'] }));
  const socks = await verity([
    'start',
    '--port',
    '0',
    '--policy',
    origins,
    '--proxy-server',
    'socks5://127.0.0.1:1080',
  ]);
  cleanFailure(
    socks,
    /^verity: --proxy-server socks5:\/\/127\.0\.0\.1:1080 cannot be used with an origin policy .*--policy.*http --proxy-server, or drop the origin lists/,
  );
  assert.equal(socks.code, 2);
  cleanFailure(
    await verity(['start', '--port', '0', '--policy', origins, '--browser-arg', '--no-proxy-server']),
    /^verity: --browser-arg --no-proxy-server cannot be used with an origin policy .*--proxy-server/,
  );
});

test('a config file that cannot be read or is not JSON', async () => {
  cleanFailure(
    await verity(['start', '--config', dir]),
    /^verity: --config .* cannot be read \(EISDIR.*name a readable JSON file/,
  );
  const broken = join(dir, 'broken-config.json');
  writeFileSync(broken, '{port: 1}');
  cleanFailure(await verity(['start', '--config', broken]), /^verity: --config .*: not valid JSON/);
});

test('a browser that is not there is refused at start, naming the option', async () => {
  const r = await verity(['start', '--port', '0', '--chromium', join(dir, 'no-such-chromium')]);
  cleanFailure(
    r,
    /^verity: no browser at --chromium .*no-such-chromium: no executable file there; install it, or name another/,
  );
  assert.equal(r.code, 2);
  const viaEnv = await verity(['start', '--port', '0'], { VERITY_CHROMIUM: 'no-such-browser-command' });
  cleanFailure(viaEnv, /^verity: no browser at --chromium no-such-browser-command: not found on PATH/);
});

test('a bad option value and an address this machine does not have', async () => {
  cleanFailure(await verity(['start', '--port', '99999']), /^verity: --port: expected a port.*99999.*--help/);
  cleanFailure(await verity(['start', '--native-backend', 'bogus']), /native-backend/);
  // 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
  const r = await verity(['start', '--port', '0', '--host', '192.0.2.55']);
  cleanFailure(r, /^verity start: cannot listen on 192\.0\.2\.55: .*not an address of this machine; .*--host/);
});

test('a second gateway on the same config dir is refused, naming --config-dir; the first keeps its gateway.json', async () => {
  const r = await verity(['start', '--port', '0']);
  cleanFailure(
    r,
    new RegExp(
      `^verity start: another gateway \\(pid ${first!.pid}\\) already uses the config dir .*config \\(its audit trail and gateway\\.json\\); give each gateway its own --config-dir`,
    ),
  );
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '', 'no URL printed for a gateway that did not start');
  const running = JSON.parse(readFileSync(join(configDir, 'gateway.json'), 'utf8'));
  assert.equal(running.pid, first!.pid, "the refused start left the first gateway's gateway.json alone");
});

test('a config dir whose lock was left by a gateway that is gone is taken over', async () => {
  const other = join(dir, 'left-behind');
  mkdirSync(other, { recursive: true });
  const gone = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => gone.once('exit', r));
  writeFileSync(join(other, 'gateway.lock'), String(gone.pid));
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'verity.js'), 'start', '--port', '0'], {
    env: { ...env, VERITY_CONFIG_DIR: other },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise((r) => child.once('exit', r));
  const began = Date.now();
  let stopping = 0;
  try {
    for (let i = 0; i < 300 && !/\/mcp/.test(out) && child.exitCode === null; i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.match(out, /\/mcp/, `the gateway started (stderr: ${err.slice(-600)})`);
    assert.equal(readFileSync(join(other, 'gateway.lock'), 'utf8'), String(child.pid), 'the lock is its own now');
  } finally {
    stopping = Date.now();
    child.kill('SIGTERM');
    // Its orderly shutdown (the browser it started included) took over 10 s once on the loaded machine.
    await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  // What the gateway did, for a failure to name: a stop it never finished is not the same bug as a lock left behind.
  const stopped =
    child.exitCode !== null
      ? `exited ${child.exitCode} ${Date.now() - stopping} ms after SIGTERM`
      : child.signalCode === 'SIGTERM'
        ? 'was killed by the SIGTERM itself (no handler yet)'
        : 'did not exit within 30 s of SIGTERM (killed)';
  assert.ok(
    !existsSync(join(other, 'gateway.lock')),
    `a gateway that stops gives its config dir up: it started in ${stopping - began} ms and ${stopped}; its stderr: ${err.slice(-1500)}`,
  );
});
