// The balancer example of docs/deploy.md ("Running at scale"), run as written (issue #28 item 8): its HAProxy
// config and its `verity start` line are read from docs/deploy.md between <!-- balancer:start --> and
// <!-- balancer:end -->, and only the addresses are swapped for loopback ones, so the guide cannot drift from
// what works. Two real gateways (each its own config dir, one agent credential), a real haproxy, real MCP SDK
// clients through it; one gateway is killed mid-run. Every process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killPid, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';
import { type Balancer, type DeployExample, deployExample, haproxyMissing, startBalancer } from '../helpers/haproxy.js';

if (haproxyMissing) process.stdout.write(`# balancer test skipped: ${haproxyMissing}\n`);

/** The seconds a HAProxy duration (`5s`, `1h`, `30m`, plain milliseconds) stands for. */
function seconds(value: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(value);
  assert.ok(m, `a HAProxy duration: ${value}`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 'ms') as 'ms'];
}

describe("docs/deploy.md's balancer example with two gateways", { skip: haproxyMissing ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-balancer-'));
  const gateways: Gateway[] = [];
  let example: DeployExample;
  let balancer: Balancer | undefined;
  const TOKEN = 'balancer-agent-token';

  before(async () => {
    example = await deployExample();
    // The Host the clients send, port included, is what each gateway must be told to answer to.
    const allowed = /--allowed-hosts (\S+)/.exec(example.command)?.[1];
    const bind = /^\s*bind :(\d+)\s*$/m.exec(example.config)?.[1];
    assert.equal(allowed, `verity.internal:${bind}`, "--allowed-hosts names the clients' Host with the bind port");
    for (const name of ['gw1', 'gw2'])
      gateways.push(
        await startGateway(example.args, {
          VERITY_AGENT_TOKEN: TOKEN,
          VERITY_TOKEN: `balancer-operator-${name}`,
          VERITY_CONFIG_DIR: join(dir, name),
          VERITY_POLICY: undefined,
        }),
      );
    balancer = await startBalancer(example, gateways, dir);
  });

  after(async () => {
    await balancer?.close();
    for (const gw of gateways) await gw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const connect = (name: string) => balancer!.connect(TOKEN, name);
  const ownerOf = (sessionId: string) => balancer!.ownerOf(sessionId, TOKEN);

  test('its timeouts outlast the GET stream and a session idling out, and every call sticks to its gateway', async () => {
    for (const name of ['client', 'server']) {
      const value = new RegExp(`^\\s*timeout ${name} (\\S+)`, 'm').exec(example.config)?.[1];
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
