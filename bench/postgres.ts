// A real PostgreSQL for a test or the bench (Debian's `postgresql` package): initdb into a temp dir, then
// `postgres -D dir -p <free port> -k <sockdir>` on loopback, started and stopped by its PID. PostgreSQL
// refuses to run as root, so as root the server runs as the `postgres` user (spawned with its uid and
// gid: the PID is the server's own, not a wrapper's) in a dir that user owns.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function killPid(pid: number | undefined, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (pid)
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
}

/** The newest installed server's bin dir, or null when the package is missing (tests then skip, saying so). */
export function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(root, versions[0], 'bin') : null;
}

export const postgresMissing = postgresBin()
  ? null
  : 'PostgreSQL is not installed (apt-get install postgresql; scripts/ensure.mjs --test does)';

export interface Postgres {
  /** postgres://verity@127.0.0.1:<port>/postgres (trust authentication, loopback only). */
  url: string;
  port: number;
  /** The server's PID while it runs (null while stopped). */
  pid(): number | null;
  /** Stops it (a fast shutdown, SIGINT, by its PID), bounded; the data dir stays for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data dir. */
  start(): Promise<void>;
  /** One query on a connection of its own. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  /** Stops it and removes its dirs. */
  close(): Promise<void>;
  log(): string;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** The uid and gid the server runs as: the `postgres` user when this process is root, else this process's own. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export async function startPostgres(): Promise<Postgres> {
  const bin = postgresBin();
  if (!bin) throw new Error(postgresMissing!);
  const root = mkdtempSync(join(tmpdir(), 'verity-pg-'));
  const data = join(root, 'data');
  const sockets = join(root, 'sock');
  const user = runAs();
  if (user.uid !== undefined) chownSync(root, user.uid, user.gid!);
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'verity', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    { ...user, encoding: 'utf8', timeout: 120_000 },
  );
  if (init.status !== 0) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`initdb failed (status ${init.status}): ${init.stderr}${init.stdout}`);
  }
  mkdirSync(sockets);
  if (user.uid !== undefined) chownSync(sockets, user.uid, user.gid!);
  const port = await freePort();
  const url = `postgres://verity@127.0.0.1:${port}/postgres`;
  let proc: ChildProcess | null = null;
  let log = '';

  const start = async () => {
    const child = spawn(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-k', sockets, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
      { ...user, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc = child;
    child.stdout!.on('data', (d) => (log += d));
    child.stderr!.on('data', (d) => (log += d));
    // Ready when it answers a query (bounded: 30 s, named).
    for (let i = 0; i < 300; i++) {
      if (child.exitCode !== null)
        throw new Error(`postgres exited with status ${child.exitCode}: ${log.slice(-2000)}`);
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      const ok = await client.connect().then(
        () => client.query('SELECT 1').then(() => true),
        () => false,
      );
      await client.end().catch(() => {});
      if (ok) return;
      await sleep(100);
    }
    killPid(child.pid);
    throw new Error(`gave up waiting for postgres on port ${port} to answer (30 s): ${log.slice(-2000)}`);
  };

  const stop = async () => {
    const child = proc;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    killPid(child.pid, 'SIGINT');
    const done = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
    if (!done) {
      killPid(child.pid, 'SIGKILL');
      await exited;
    }
    proc = null;
  };

  await start();
  return {
    url,
    port,
    pid: () => proc?.pid ?? null,
    stop,
    start,
    async query(sql, params) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql, params)).rows;
      } finally {
        await client.end();
      }
    },
    async close() {
      await stop();
      rmSync(root, { recursive: true, force: true });
    },
    log: () => log,
  };
}
