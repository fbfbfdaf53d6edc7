// The launched browser is Verity's alone: DevTools over a pipe (no TCP port any local process could drive),
// no sandbox only as root on Linux (said once), and a killed server leaves no Chromium and no profile:
// the pipe ends Chromium, the watchdog ends one that cannot notice, and the next start removes what is left.
// Linux only (it reads /proc). Every process started here is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { killPid, waitFor } from '../helpers/gateway.js';

const skip = process.platform !== 'linux' ? 'reads /proc (Linux only)' : false;

interface Proc {
  pid: number;
  ppid: number;
  state: string;
  argv: string[];
}

function procs(): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      out.push({ pid: Number(entry), ppid: Number(fields[1]), state: fields[0], argv });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** `root` and everything below it. */
function tree(root: number): Proc[] {
  const all = procs();
  const found = all.filter((p) => p.pid === root);
  for (let i = 0; i < found.length; i++) found.push(...all.filter((p) => p.ppid === found[i].pid));
  return found;
}

/** Alive and not a zombie (a zombie has already let go of everything). */
function running(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function listeningInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === '0A') inodes.add(cols[9]); // 0A: LISTEN
    }
  }
  return inodes;
}

function socketInodes(pid: number): string[] {
  const out: string[] = [];
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.push(m[1]);
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

/** The launched browser under a `verity mcp`: its processes, the main one, its profile, the watchdog. */
function launched(v: Verity) {
  const all = tree(v.pid).filter((p) => p.pid !== v.pid);
  const watchdog = all.find((p) => p.argv.includes('verity-watchdog'));
  const chromium = all.filter((p) => p !== watchdog && !(watchdog && tree(watchdog.pid).some((w) => w.pid === p.pid)));
  const main = chromium.find((p) => p.ppid === v.pid && p.argv.some((a) => a.startsWith('--user-data-dir=')));
  assert.ok(main, `a browser process under verity ${v.pid}: ${JSON.stringify(all.map((p) => p.argv.slice(0, 2)))}`);
  const profile = main.argv.find((a) => a.startsWith('--user-data-dir='))!.slice('--user-data-dir='.length);
  return { chromium, main, profile, watchdog };
}

describe('the launched browser', { skip }, () => {
  let server: Server;
  let url: string;
  const started: Verity[] = [];
  before(async () => {
    server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<title>mine</title><p>only mine</p>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  after(async () => {
    for (const v of started) {
      await v.close();
      killPid(v.pid);
    }
    await new Promise((r) => server.close(r));
  });
  const start = async () => {
    const v = await startVerity();
    started.push(v);
    return v;
  };

  test('speaks DevTools over a pipe: no TCP port is listened on, no DevToolsActivePort', async () => {
    const v = await start();
    const r = await v.call('page', { action: 'new_tab', url });
    assert.equal(r.isError, false, r.text);
    const b = launched(v);
    assert.ok(b.main.argv.includes('--remote-debugging-pipe'), b.main.argv.join(' '));
    assert.ok(!b.main.argv.some((a) => a.startsWith('--remote-debugging-port')), b.main.argv.join(' '));
    assert.match(basename(b.profile), new RegExp(`^verity-profile-${v.pid}-`), 'the profile is named after its owner');
    const listening = listeningInodes();
    const sockets = b.chromium.flatMap((p) => socketInodes(p.pid));
    assert.ok(b.chromium.length >= 2, 'the browser and its helpers were found');
    assert.deepEqual(
      sockets.filter((i) => listening.has(i)),
      [],
      'no Chromium process listens on TCP',
    );
    assert.equal(existsSync(`${b.profile}/DevToolsActivePort`), false);
    // Everything still works over the pipe.
    const text = await v.call('page', { action: 'get_text', tab_id: r.structured.tab_id });
    assert.match(text.text, /only mine/);
    // A server that ends normally takes its browser and profile with it.
    await v.close();
    await waitFor(() => b.chromium.every((p) => !running(p.pid)), 'the browser to end with its server', 300);
    await waitFor(() => !existsSync(b.profile), `${b.profile} to be removed`, 100);
  });

  test('as root on Linux: --no-sandbox, said once on stderr even across a relaunch', {
    skip: process.getuid?.() !== 0 ? 'not root: the sandbox stays on (unit-tested)' : false,
  }, async () => {
    const v = await start();
    assert.equal((await v.call('page', { action: 'new_tab', url })).isError, false);
    const first = launched(v);
    assert.ok(first.main.argv.includes('--no-sandbox'));
    killPid(first.main.pid); // a crash: the next call relaunches
    await waitFor(() => !running(first.main.pid), 'the killed browser to end');
    const again = await waitFor(
      async () => {
        const r = await v.call('page', { action: 'new_tab', url });
        return r.isError ? null : r;
      },
      'a relaunch',
      50,
      200,
    );
    assert.equal(again.isError, false);
    assert.notEqual(launched(v).main.pid, first.main.pid);
    const said = v
      .stderr()
      .split('\n')
      .filter((l) => l.includes('without its sandbox'));
    assert.equal(said.length, 1, v.stderr());
    assert.equal(
      v
        .stderr()
        .split('\n')
        .filter((l) => l.includes('launching')).length,
      2,
      v.stderr(),
    );
  });

  test('SIGKILL of the server: the pipe alone ends Chromium, and the next start removes the stale profile', async () => {
    const v = await start();
    assert.equal((await v.call('page', { action: 'new_tab', url })).isError, false);
    const b = launched(v);
    assert.ok(b.watchdog, 'a watchdog runs');
    killPid(b.watchdog.pid); // so that only the pipe can end Chromium here
    killPid(v.pid);
    await waitFor(
      () => b.chromium.every((p) => !running(p.pid)),
      `Chromium ${b.chromium.map((p) => p.pid)} to end after its server died`,
      300,
    );
    assert.equal(existsSync(b.profile), true, 'nobody removed the profile yet');
    const next = await start();
    await waitFor(() => !existsSync(b.profile), `the next start to remove ${b.profile}`);
    // Said once the removal is done: the folder is gone a moment before the line reaches this process.
    await waitFor(
      () => /removed 1 browser profile\(s\) left by ended Verity processes/.test(next.stderr()),
      'the next start to say it removed the stale profile',
    ).catch((e: Error) => {
      throw new Error(`${e.message}; its stderr: ${next.stderr()}`);
    });
    assert.equal((await next.call('page', { action: 'new_tab', url })).isError, false, 'and it launches its own');
  });

  test('SIGKILL of the server while Chromium cannot react: the watchdog ends it and removes the profile', async () => {
    const v = await start();
    assert.equal((await v.call('page', { action: 'new_tab', url })).isError, false);
    const b = launched(v);
    assert.ok(b.watchdog, 'a watchdog runs');
    for (const p of b.chromium)
      try {
        process.kill(p.pid, 'SIGSTOP');
      } catch {
        /* gone */
      } // hung: deaf to the pipe
    killPid(v.pid);
    try {
      await waitFor(() => b.chromium.every((p) => !running(p.pid)), 'the watchdog to end the stopped Chromium', 200);
      await waitFor(() => !existsSync(b.profile), `the watchdog to remove ${b.profile}`, 100);
      await waitFor(() => !running(b.watchdog!.pid), 'the watchdog to exit');
    } finally {
      for (const p of b.chromium) killPid(p.pid);
    }
  });
});
