// The balancer example of docs/deploy.md ("Running at scale"), run as written (issue #28 item 8): its HAProxy
// config and its `verity start` line are read from docs/deploy.md between <!-- balancer:start --> and
// <!-- balancer:end -->, and only the addresses are swapped for loopback ones, so the guide cannot drift from
// what works. Two real gateways (each its own config dir, one agent credential), a real haproxy, real MCP SDK
// clients through it; one gateway is killed mid-run. Every process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ROOT } from '../helpers/fixtures.js';
import { killPid, startGateway, waitFor, wrap, type Gateway } from '../helpers/gateway.js';

const GUIDE = readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8');
const section = /<!-- balancer:start -->([\s\S]*?)<!-- balancer:end -->/.exec(GUIDE)?.[1] ?? '';
const [command, config] = [...section.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]);
const haproxyMissing = spawnSync('haproxy', ['-v']).error ? 'haproxy is not installed (apt-get install haproxy)' : null;
if (haproxyMissing) process.stdout.write(`# balancer test skipped: ${haproxyMissing}\n`);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** The seconds a HAProxy duration (`5s`, `1h`, `30m`, plain milliseconds) stands for. */
function seconds(value: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(value);
  assert.ok(m, `a HAProxy duration: ${value}`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 'ms') as 'ms'];
}

describe("docs/deploy.md's balancer example with two gateways", { skip: haproxyMissing ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-balancer-'));
  const gateways: Gateway[] = [];
  let haproxy: ChildProcess | undefined;
  let haproxyLog = '';
  let url = '';
  const clients: Client[] = [];

  before(async () => {
    assert.ok(command && config, 'docs/deploy.md has the command and the HAProxy config between the balancer markers');
    const lbPort = await freePort();
    // The Host the clients send, port included, is what each gateway must be told to answer to.
    const allowed = /--allowed-hosts (\S+)/.exec(command)?.[1];
    const bind = /^\s*bind :(\d+)\s*$/m.exec(config)?.[1];
    assert.equal(allowed, `verity.internal:${bind}`, "--allowed-hosts names the clients' Host with the bind port");
    const env = /^VERITY_AGENT_TOKEN=\S+ verity start (.*)$/m.exec(command);
    assert.ok(env, `the guide's command gives every gateway the same agent credential: ${command}`);
    const args = env[1]
      .replace('--host 0.0.0.0', '--host 127.0.0.1')
      .replace(`--allowed-hosts ${allowed}`, `--allowed-hosts 127.0.0.1:${lbPort}`)
      .split(' ');
    for (const name of ['gw1', 'gw2'])
      gateways.push(
        await startGateway(args, {
          VERITY_AGENT_TOKEN: 'balancer-agent-token',
          VERITY_TOKEN: `balancer-operator-${name}`,
          VERITY_CONFIG_DIR: join(dir, name),
          VERITY_POLICY: undefined,
        }),
      );
    let cfg = config.replace(/^(\s*bind) :\d+/m, `$1 127.0.0.1:${lbPort}`);
    for (const [i, gw] of gateways.entries()) {
      const from = new RegExp(`10\\.0\\.0\\.${i + 1}:7317`);
      assert.match(cfg, from, `the config names gw${i + 1}`);
      cfg = cfg.replace(from, new URL(gw.base).host);
    }
    const file = join(dir, 'haproxy.cfg');
    writeFileSync(file, cfg);
    const checked = spawnSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' });
    assert.equal(checked.status, 0, `haproxy accepts the guide's config: ${checked.stdout}${checked.stderr}`);
    haproxy = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    haproxy.stdout!.on('data', (d) => (haproxyLog += d));
    haproxy.stderr!.on('data', (d) => (haproxyLog += d));
    url = `http://127.0.0.1:${lbPort}/mcp`;
    await waitFor(
      () =>
        fetch(url).then(
          (r) => r.status !== 503,
          () => false,
        ),
      `haproxy to answer on ${url} (${haproxyLog})`,
    );
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    killPid(haproxy?.pid, 'SIGTERM');
    for (const gw of gateways) await gw.close();
    killPid(haproxy?.pid);
    rmSync(dir, { recursive: true, force: true });
  });

  /** An MCP client through the balancer, as an agent would connect (its GET stream included). */
  async function connect(name: string) {
    const client = new Client({ name, version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: 'Bearer balancer-agent-token' } },
    });
    await client.connect(transport);
    clients.push(client);
    return { client, transport, call: wrap(client) };
  }

  /** Which gateway issued this MCP session: the one that knows its id when asked directly. */
  async function ownerOf(sessionId: string): Promise<number[]> {
    const owners: number[] = [];
    for (const [i, gw] of gateways.entries()) {
      const r = await fetch(`${gw.base}/mcp`, {
        method: 'POST',
        headers: {
          Authorization: 'Bearer balancer-agent-token',
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
  }

  test('its timeouts outlast the GET stream and a session idling out, and every call sticks to its gateway', async () => {
    for (const name of ['client', 'server']) {
      const value = new RegExp(`^\\s*timeout ${name} (\\S+)`, 'm').exec(config)?.[1];
      assert.ok(value, `the config sets timeout ${name}`);
      assert.ok(seconds(value) >= 600, `timeout ${name} (${value}) outlasts the 10-minute HTTP session idle time`);
    }
    const agents = await Promise.all([0, 1, 2, 3].map((i) => connect(`balanced-${i}`)));
    for (let round = 0; round < 3; round++)
      for (const [i, a] of agents.entries()) {
        const r = await a.call('get_session');
        assert.equal(r.isError, false, `agent ${i}, round ${round}: ${r.text}`);
      }
    const owners = await Promise.all(agents.map((a) => ownerOf(a.transport.sessionId!)));
    for (const o of owners)
      assert.equal(o.length, 1, `each session is on exactly one gateway: ${JSON.stringify(owners)}`);
    assert.deepEqual(
      [...new Set(owners.flat())].sort(),
      [0, 1],
      `initializes spread over both gateways: ${JSON.stringify(owners)}`,
    );
  });

  test('one gateway killed mid-run: its clients get 404 and start again on the other; the others go on', async () => {
    const agents = await Promise.all([0, 1].map((i) => connect(`survivor-${i}`)));
    const owners = await Promise.all(agents.map((a) => ownerOf(a.transport.sessionId!)));
    const [lost, kept] = owners[0][0] === 0 ? [agents[0], agents[1]] : [agents[1], agents[0]];
    assert.notDeepEqual(
      owners[0],
      owners[1],
      `two consecutive initializes go to two gateways: ${JSON.stringify(owners)}`,
    );
    killPid(gateways[0].pid);
    await waitFor(() => gateways[0].proc.exitCode !== null || gateways[0].proc.signalCode !== null, 'gw1 to die');
    const stranded = await lost.call('get_session').then(
      (r) => ({ code: 0, message: `answered: ${r.text}` }),
      (e: Error & { code?: number }) => ({ code: e.code, message: e.message }),
    );
    assert.equal(stranded.code, 404, `the dead gateway's session is unknown to the other: ${stranded.message}`);
    assert.match(stranded.message, /unknown Mcp-Session-Id; start a new MCP session/);
    const again = await connect('survivor-again');
    assert.equal((await again.call('get_session')).isError, false, 'a new session on the gateway left');
    assert.deepEqual(await ownerOf(again.transport.sessionId!), [1]);
    assert.equal((await kept.call('get_session')).isError, false, "the other gateway's session goes on");
  });
});
