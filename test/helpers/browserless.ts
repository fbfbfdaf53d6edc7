// A real browserless (npm @browserless.io/browserless, a development peer in dev-peers/, run on the peers'
// own Node: it wants Node 24) on loopback, for the pool tests and the bench. It runs from its package with the system Chromium: a ROUTES folder with only its chromium and
// management routes (it refuses to start while a route needs a browser it lacks), and PLAYWRIGHT_BROWSERS_PATH
// whose chromium-<revision>/chrome-linux64/chrome is a link to the system binary (nothing is downloaded).
// Started in its own process group and ended by that PID (its Chromiums with it).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findChromium } from '../../server/cdp/browser/browser.js';
import { PEER_NODE, PEERS_DIR, peerPath, peersMissing } from './peers.js';

const PACKAGE = peerPath('@browserless.io/browserless');

/** Why browserless cannot run here (its package is not installed), or null when it can. */
export function browserlessMissing(): string | null {
  const noNode = peersMissing();
  if (noNode) return noNode;
  if (!existsSync(join(PACKAGE, 'build', 'index.js')))
    return `@browserless.io/browserless is not installed in ${join(PEERS_DIR, 'node_modules')} (node scripts/ensure.mjs --test installs it)`;
  if (
    !existsSync(join(PACKAGE, 'node_modules', 'playwright-core', 'browsers.json')) &&
    !existsSync(peerPath('playwright-core', 'browsers.json'))
  )
    return "browserless's playwright-core is not installed";
  return null;
}

export interface Pressure {
  running: number;
  queued: number;
  maxConcurrent: number;
  maxQueued: number;
}

export interface BrowserlessPool {
  pid: number;
  port: number;
  token: string;
  /** The pool's WebSocket endpoint for Chromium (token in the query unless `token` is null). */
  endpoint(token?: string | null): string;
  pressure(): Promise<Pressure>;
  log(): string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** The system Chromium's binary itself (Debian's /usr/bin/chromium is a shell wrapper around it). */
function chromiumBinary(): string {
  const debian = '/usr/lib/chromium/chromium';
  if (existsSync(debian)) return debian;
  return realpathSync(findChromium(process.env.VERITY_CHROMIUM, undefined, process.env));
}

/** The folder whose node_modules holds browserless's playwright-core: its own, else the peers' hoisted one. */
function playwrightCoreHome(): string {
  return existsSync(join(PACKAGE, 'node_modules', 'playwright-core', 'browsers.json')) ? PACKAGE : PEERS_DIR;
}

/** The Chromium revision browserless's playwright-core looks for (its folder name under PLAYWRIGHT_BROWSERS_PATH). */
function chromiumRevision(): string {
  const file = join(playwrightCoreHome(), 'node_modules', 'playwright-core', 'browsers.json');
  const { browsers } = JSON.parse(readFileSync(file, 'utf8')) as {
    browsers: Array<{ name: string; revision: string }>;
  };
  return browsers.find((b) => b.name === 'chromium')!.revision;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Pools still running: killed (by their process group's PID) if this process ends without closing them. */
const running = new Set<number>();
const killAll = () => {
  for (const pid of running)
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
};
process.once('exit', killAll);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    killAll();
    process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
  });

/** Starts browserless with these limits (CONCURRENT, QUEUED, TIMEOUT in ms) and waits (bounded) until it answers. */
export async function startBrowserless(limits: {
  concurrent: number;
  queued: number;
  timeoutMs: number;
  token?: string;
}): Promise<BrowserlessPool> {
  const dir = mkdtempSync(join(tmpdir(), 'verity-browserless-'));
  mkdirSync(join(dir, 'routes'));
  for (const route of ['chromium', 'management'])
    symlinkSync(join(PACKAGE, 'build', 'routes', route), join(dir, 'routes', route));
  const chrome = join(dir, 'browsers', `chromium-${chromiumRevision()}`, 'chrome-linux64');
  mkdirSync(chrome, { recursive: true });
  symlinkSync(chromiumBinary(), join(chrome, 'chrome'));
  for (const d of ['data', 'downloads']) mkdirSync(join(dir, d));
  const port = await freePort();
  const token = limits.token ?? `pool-token-${Math.random().toString(36).slice(2)}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    TOKEN: token,
    CONCURRENT: String(limits.concurrent),
    QUEUED: String(limits.queued),
    TIMEOUT: String(limits.timeoutMs),
    DATA_DIR: join(dir, 'data'),
    DOWNLOAD_DIR: join(dir, 'downloads'),
    METRICS_JSON_PATH: join(dir, 'metrics.json'),
    ROUTES: join(dir, 'routes'),
    PLAYWRIGHT_BROWSERS_PATH: join(dir, 'browsers'),
    DEBUG: 'browserless*,-**:trace,-**:verbose',
  };
  // It reads node_modules/playwright-core/browsers.json from its cwd: the folder whose node_modules holds the
  // playwright-core it resolves (its own, or the peers' hoisted one).
  const proc = spawn(PEER_NODE, [join(PACKAGE, 'build', 'index.js')], {
    cwd: playwrightCoreHome(),
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (c: Buffer) => {
    out = (out + c.toString()).slice(-20_000);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const pid = proc.pid!;
  running.add(pid);
  const base = `http://127.0.0.1:${port}`;
  const pool: BrowserlessPool = {
    pid,
    port,
    token,
    endpoint: (t = token) => `ws://127.0.0.1:${port}/chromium${t === null ? '' : `?token=${encodeURIComponent(t)}`}`,
    async pressure() {
      const r = await fetch(`${base}/pressure?token=${encodeURIComponent(token)}`);
      if (!r.ok) throw new Error(`/pressure answered ${r.status}`);
      return ((await r.json()) as { pressure: Pressure }).pressure;
    },
    log: () => out,
    async close() {
      const gone = () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      };
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      for (let i = 0; i < 30 && !gone(); i++) await sleep(100);
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      running.delete(pid);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) break;
    if (
      await pool.pressure().then(
        () => true,
        () => false,
      )
    )
      return pool;
    await sleep(100);
  }
  await pool.close();
  throw new Error(`browserless did not start within 60 s:\n${out.slice(-3000)}`);
}

/** Polls (bounded) until the pool's counts satisfy `want`; never a timing assertion. */
export async function untilPressure(
  pool: BrowserlessPool,
  want: (p: Pressure) => boolean,
  what: string,
  tries = 300,
): Promise<Pressure> {
  let last: Pressure | undefined;
  for (let i = 0; i < tries; i++) {
    last = await pool.pressure().catch(() => undefined);
    if (last && want(last)) return last;
    await sleep(100);
  }
  throw new Error(`gave up waiting for the pool: ${what} (last: ${JSON.stringify(last)})`);
}
