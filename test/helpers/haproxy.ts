// docs/deploy.md's balancer example ("Running at scale"), run as written: its HAProxy config and its
// `verity start` line are read from the guide between <!-- balancer:start --> and <!-- balancer:end -->, and
// only the addresses are swapped for loopback ones, so the guide cannot drift from what the tests and the
// bench run. A real haproxy, started and ended by its PID; MCP SDK clients through it as agents connect.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT } from './fixtures.js';
import { type Connection, type Gateway, alive, killPid, sleep, waitFor, wrap } from './gateway.js';

export const haproxyMissing = spawnSync('haproxy', ['-v']).error
  ? 'haproxy is not installed (apt-get install haproxy)'
  : null;

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

export interface DeployExample {
  /** The guide's `verity start` line and HAProxy config, as written. */
  command: string;
  config: string;
  /** The balancer's loopback port (free when read) the gateways are told to answer to. */
  port: number;
  /** The `verity start` arguments of the guide's line, addresses made loopback ones (`--host`, `--allowed-hosts`). */
  args: string[];
}

/** The guide's example, with a free loopback port for the balancer. Throws, naming what is missing, when the guide lacks a part. */
export async function deployExample(): Promise<DeployExample> {
  const guide = readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8');
  const section = /<!-- balancer:start -->([\s\S]*?)<!-- balancer:end -->/.exec(guide)?.[1] ?? '';
  const [command, config] = [...section.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]);
  if (!command || !config)
    throw new Error('docs/deploy.md has no command and HAProxy config between the balancer markers');
  const port = await freePort();
  const allowed = /--allowed-hosts (\S+)/.exec(command)?.[1];
  const line = /^VERITY_AGENT_TOKEN=\S+ verity start (.*)$/m.exec(command);
  if (!allowed || !line)
    throw new Error(`the guide's command gives every gateway one agent credential and --allowed-hosts: ${command}`);
  const args = line[1]
    .replace('--host 0.0.0.0', '--host 127.0.0.1')
    .replace(`--allowed-hosts ${allowed}`, `--allowed-hosts 127.0.0.1:${port}`)
    .split(' ');
  return { command, config, port, args };
}

export interface Balancer {
  pid: number;
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  log(): string;
  /** An MCP client through the balancer, as an agent connects (its GET stream included). */
  connect(token: string, name?: string): Promise<Connection>;
  /** Which of `gateways` issued this MCP session: the ones that know its id when asked directly. */
  ownerOf(sessionId: string, token: string): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * haproxy with the guide's config, its `bind` moved to the example's loopback port and its servers
 * (10.0.0.1:7317, 10.0.0.2:7317, …) swapped for `gateways`' addresses; checked with `haproxy -c` first.
 */
export async function startBalancer(example: DeployExample, gateways: Gateway[], dir: string): Promise<Balancer> {
  let cfg = example.config.replace(/^(\s*bind) :\d+/m, `$1 127.0.0.1:${example.port}`);
  for (const [i, gw] of gateways.entries()) {
    const from = new RegExp(`10\\.0\\.0\\.${i + 1}:7317`);
    if (!from.test(cfg)) throw new Error(`the guide's HAProxy config names no gw${i + 1} (10.0.0.${i + 1}:7317)`);
    cfg = cfg.replace(from, new URL(gw.base).host);
  }
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, cfg);
  const checked = spawnSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' });
  if (checked.status !== 0) throw new Error(`haproxy refuses the guide's config: ${checked.stdout}${checked.stderr}`);
  const proc: ChildProcess = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout!.on('data', (d) => (log += d));
  proc.stderr!.on('data', (d) => (log += d));
  const pid = proc.pid!;
  const url = `http://127.0.0.1:${example.port}/mcp`;
  const clients: Client[] = [];
  try {
    await waitFor(
      () =>
        fetch(url).then(
          (r) => r.status !== 503,
          () => false,
        ),
      `haproxy (pid ${pid}) to answer on ${url}`,
    );
  } catch (e) {
    killPid(pid);
    throw new Error(`${(e as Error).message}; its log: ${log}`);
  }
  return {
    pid,
    url,
    log: () => log,
    async connect(token, name = `balanced-${clients.length}`) {
      const client = new Client({ name, version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      clients.push(client);
      return {
        client,
        transport,
        call: wrap(client),
        async disconnect() {
          await transport.terminateSession().catch(() => {});
          await client.close().catch(() => {});
        },
      };
    },
    async ownerOf(sessionId, token) {
      const owners: number[] = [];
      for (const [i, gw] of gateways.entries()) {
        const r = await fetch(`${gw.base}/mcp`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${token}`,
            'Mcp-Session-Id': sessionId,
            'Mcp-Protocol-Version': '2025-06-18',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        }).catch(() => null);
        if (r && r.status === 200) owners.push(i);
        await r?.body?.cancel();
      }
      return owners;
    },
    async close() {
      for (const c of clients) await c.close().catch(() => {});
      killPid(pid, 'SIGTERM');
      for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
      killPid(pid);
    },
  };
}
