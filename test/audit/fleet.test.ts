// Two real gateways (`verity start`, each its own config dir) on one real PostgreSQL (test/helpers/postgres.ts),
// behind a real HAProxy with docs/deploy.md's balancer example as written (test/helpers/haproxy.ts): eight
// agents (real MCP SDK clients) connect through the balancer, four land on each gateway. The database is
// stopped and started again mid-run, then one gateway is killed (SIGKILL) mid-run: its agents' sessions are
// unknown to the other, so they re-initialize through HAProxy, land on the gateway left and go on. Entries
// are counted against what the agents got back: every returned result has exactly one entry in the database
// afterwards, audit_unavailable was said (in the result and on stderr) while the database was down, and
// either gateway's operator reads the other's trail (the gateway filter) and hears its entries live
// (LISTEN/NOTIFY). Every process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Connection, type Gateway, killPid, operatorSocket, startGateway, waitFor } from '../helpers/gateway.js';
import { type Balancer, deployExample, haproxyMissing, startBalancer } from '../helpers/haproxy.js';
import { type Postgres, postgresMissing, startPostgres } from '../helpers/postgres.js';

const missing = postgresMissing ?? haproxyMissing;
if (missing) process.stdout.write(`# fleet audit tests skipped: ${missing}\n`);

interface Agent {
  /** The gateway its MCP session is on now (an agent whose gateway died re-initializes on the other). */
  gateway: number;
  /** The gateway it first landed on. */
  home: number;
  label: string;
  conn: Connection;
  /** Results it got back, by the gateway that returned them (each one must have exactly one entry there). */
  returned: [number, number];
  /** Of those, the ones that said audit_unavailable. */
  unavailable: number;
  /** Calls in flight when their gateway died, by gateway (an entry may exist without a result). */
  lost: [number, number];
  /** MCP sessions it started again through the balancer after its gateway died. */
  reinits: number;
  /** How each lost call ended, and after how long (the test's diagnostics say it). */
  why: string[];
}

const AGENT_TOKEN = 'fleet-agent';
const total = (a: Agent) => a.returned[0] + a.returned[1];

describe('two gateways behind HAProxy on one PostgreSQL audit store', { skip: missing ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'verity-fleet-'));
  let db: Postgres;
  let balancer: Balancer | undefined;
  const gateways: Gateway[] = [];
  const names: string[] = [];
  const agents: Agent[] = [];

  /** Which gateway holds this connection's MCP session (asked of each gateway directly; exactly one must). */
  const ownerOf = async (conn: Connection) => {
    const owners = await balancer!.ownerOf(conn.transport.sessionId!, AGENT_TOKEN);
    assert.equal(owners.length, 1, `one gateway holds session ${conn.transport.sessionId}: ${JSON.stringify(owners)}`);
    return owners[0];
  };

  // Gateway 2 holds list_sessions for an operator; the decision comes from gateway 1's console.
  const policy = join(dir, 'policy.json');

  before(async () => {
    writeFileSync(policy, JSON.stringify({ require_approval: ['list_sessions'] }));
    db = await startPostgres();
    // Each gateway is started with the guide's line (--host, --allowed-hosts for the balancer's Host).
    const example = await deployExample();
    // One gateway is given the flag, the other the environment variable (CONTRACT: --audit-store or VERITY_AUDIT_URL).
    gateways.push(
      await startGateway([...example.args, '--audit-store', db.url], {
        VERITY_CONFIG_DIR: join(dir, 'gw1'),
        VERITY_AGENT_TOKEN: AGENT_TOKEN,
        VERITY_TOKEN: 'fleet-operator-1',
        VERITY_POLICY: undefined,
      }),
    );
    gateways.push(
      await startGateway([...example.args, '--policy', policy], {
        VERITY_CONFIG_DIR: join(dir, 'gw2'),
        VERITY_AUDIT_URL: db.url,
        VERITY_AGENT_TOKEN: AGENT_TOKEN,
        VERITY_TOKEN: 'fleet-operator-2',
        VERITY_POLICY: undefined,
      }),
    );
    for (const g of ['gw1', 'gw2']) names.push(readFileSync(join(dir, g, 'gateway-name'), 'utf8').trim());
    balancer = await startBalancer(example, gateways, dir);
    // Eight agents through the balancer, four on each gateway: HAProxy's roundrobin spreads the initializes;
    // which gateway took each is asked of the gateways, and a fifth on one is let go (bounded).
    const landed = [0, 0];
    for (let tries = 0; agents.length < 8; tries++) {
      assert.ok(tries < 32, `gave up spreading 8 agents 4 and 4 over the gateways through HAProxy (${landed})`);
      const conn: Connection = await balancer.connect(AGENT_TOKEN, `fleet-agent-${tries}`);
      const gateway = await ownerOf(conn);
      if (landed[gateway] === 4) {
        await conn.disconnect();
        continue;
      }
      const label = `g${gateway + 1}-a${agents.length}`;
      landed[gateway]++;
      const started = await conn.call('start_session', { session: label });
      assert.equal(started.isError, false, started.text);
      agents.push({
        gateway,
        home: gateway,
        label,
        conn,
        returned: [0, 0],
        unavailable: 0,
        lost: [0, 0],
        reinits: 0,
        why: [],
      });
    }
  });

  after(async () => {
    for (const a of agents) await a.conn.client.close().catch(() => {});
    await balancer?.close();
    for (const gw of gateways) await gw.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sorted = (o: object) => Object.fromEntries(Object.entries(o).sort(([x], [y]) => x.localeCompare(y)));

  /**
   * An agent whose gateway died starts over as the README says: a new MCP session through the balancer (it
   * lands on the gateway left), its session started again under the same label. Bounded, and named.
   */
  const reinitialize = async (a: Agent) => {
    await a.conn.client.close().catch(() => {});
    let last = '';
    for (let i = 0; i < 10; i++) {
      try {
        const conn = await balancer!.connect(AGENT_TOKEN, `${a.label}-again-${a.reinits}`);
        const started = await conn.call('start_session', { session: a.label });
        assert.equal(started.isError, false, started.text);
        a.conn = conn;
        a.gateway = await ownerOf(conn);
        a.reinits++;
        return;
      } catch (e) {
        last = (e as Error).message;
      }
    }
    throw new Error(`${a.label} could not start a new MCP session through HAProxy (10 tries): ${last}`);
  };

  /**
   * `n` calls of each agent, all agents at once. A call that fails (its gateway died under it) is counted
   * apart as lost on that gateway; the agent then stops, or with `reinit` starts again through the balancer
   * and goes on with its remaining calls.
   */
  const round = (n: number, who: Agent[] = agents, reinit = false) =>
    Promise.all(
      who.map(async (a) => {
        for (let i = 0; i < n; i++) {
          let text: string;
          const at = a.gateway;
          const t0 = performance.now();
          try {
            text = (await a.conn.call('get_session', { session: a.label })).text;
          } catch (e) {
            a.lost[at]++;
            a.why.push(`${((performance.now() - t0) / 1000).toFixed(1)} s: ${(e as Error).message.split('\n')[0]}`);
            if (!reinit) return;
            await reinitialize(a);
            continue;
          }
          a.returned[at]++;
          if (/audit_unavailable/.test(text)) a.unavailable++;
        }
      }),
    );

  /** Entries of each agent's get_session calls in the database, by gateway name and session label. */
  const counted = async () => {
    const rows = await db.query<{ gateway: string; label: string; n: string; distinct_ids: string }>(
      `SELECT gateway, split_part(session_key, '/', 2) AS label, count(*)::text AS n, count(DISTINCT (gateway, id))::text AS distinct_ids
       FROM verity_audit WHERE kind = 'call' AND tool = 'get_session' GROUP BY 1, 2`,
    );
    return new Map(rows.map((r) => [`${r.gateway} ${r.label}`, { n: Number(r.n), distinct: Number(r.distinct_ids) }]));
  };
  const on = (c: Awaited<ReturnType<typeof counted>>, g: number, a: Agent) =>
    c.get(`${names[g]} ${a.label}`) ?? { n: 0, distinct: 0 };
  /** Every result `who` got back from gateway `g` (both when not said) has its entry there, and no more. */
  const matches = async (who: Agent[], gs = [0, 1]) => {
    const c = await counted();
    return who.every((a) => gs.every((g) => on(c, g, a).n === a.returned[g]));
  };

  test('the database restarted mid-run: audit_unavailable said meanwhile, then every returned result has exactly one entry', async () => {
    await round(5);
    assert.ok(await matches(agents), 'every result so far has its entry, before any outage');
    await db.stop();
    await round(4);
    for (const g of [0, 1]) {
      const saidBy = agents.filter((a) => a.gateway === g).reduce((n, a) => n + a.unavailable, 0);
      assert.ok(saidBy > 0, `gateway ${g + 1}'s results said audit_unavailable while the database was down`);
      assert.match(gateways[g].stderr(), /audit_unavailable/, `gateway ${g + 1} said it on stderr`);
    }
    await db.start();
    await round(3);
    await waitFor(() => matches(agents), 'the spooled entries to reach the database after its restart', 200);
    const c = await counted();
    for (const a of agents) {
      const { n, distinct } = on(c, a.gateway, a);
      assert.equal(distinct, n, `${a.label}: no entry twice`);
    }
  });

  test("either console reads the other gateway's trail with the gateway filter and hears its entries live", async () => {
    const op1 = await operatorSocket(gateways[0], ['operator.read']);
    try {
      const page = await op1.request('audit.query', { gateway: names[1], tool: 'get_session', limit: 500 });
      assert.equal(page.ok, true, JSON.stringify(page));
      const entries = page.payload.entries as Array<{ gateway: string; sessionKey: string }>;
      assert.ok(entries.length > 0 && entries.every((e) => e.gateway === names[1]), JSON.stringify(entries[0]));
      assert.deepEqual(
        [...new Set(entries.map((e) => e.sessionKey.split('/')[1]))].sort(),
        agents
          .filter((a) => a.gateway === 1)
          .map((a) => a.label)
          .sort(),
      );
      // A session's history is the gateway's own (connection ids, hence session keys, are each gateway's):
      // asked by one of this gateway's session keys, only this gateway's entries, with this gateway's ids.
      const own = (await op1.request('audit.query', { gateway: names[0], limit: 1 })).payload.entries[0];
      const history = await op1.request('audit.query', { sessionKey: own.sessionKey, limit: 500 });
      assert.ok(history.payload.entries.length > 0);
      assert.ok(
        history.payload.entries.every((e: { gateway: string }) => e.gateway === names[0]),
        'only its own',
      );
      await round(
        1,
        agents.filter((a) => a.gateway === 1),
      );
      await waitFor(
        () => op1.events.find((e) => e.event === 'audit.entry' && e.payload.gateway === names[1]),
        "gateway 1's console to hear gateway 2's entry (audit.entry through LISTEN/NOTIFY)",
      );
    } finally {
      op1.ws.close();
    }
  });

  /** Each agent's session as `fleet.sessions` on gateway `g`'s console shows it: which gateway holds it, live or not. */
  const fleetOf = async (g: number) => {
    const op = await operatorSocket(gateways[g], ['operator.read']);
    try {
      const r = await op.request('fleet.sessions');
      assert.equal(r.ok, true, JSON.stringify(r));
      return r.payload as {
        shared: boolean;
        gateway: string;
        sessions: Array<{
          gateway: string;
          live: boolean;
          ended_reason?: string;
          row: { session: string; state: string };
        }>;
      };
    } finally {
      op.ws.close();
    }
  };
  /** `label on gwN` → `live active` / `gateway gone ended`, for the agents' sessions in a fleet view. */
  const holders = (view: Awaited<ReturnType<typeof fleetOf>>) =>
    Object.fromEntries(
      view.sessions
        .filter((s) => agents.some((a) => a.label === s.row.session))
        .map((s) => [
          `${s.row.session} on gw${names.indexOf(s.gateway) + 1}`,
          `${s.live ? 'live' : s.ended_reason} ${s.row.state}`,
        ])
        .sort(([a], [b]) => a.localeCompare(b)),
    );

  test("either console lists both gateways' sessions, each with the gateway that holds it", async () => {
    const expected = Object.fromEntries(
      agents.map((a) => [`${a.label} on gw${a.gateway + 1}`, 'live active']).sort(([a], [b]) => a.localeCompare(b)),
    );
    for (const g of [0, 1]) {
      let last: unknown;
      const view = await waitFor(
        async () => {
          const v = await fleetOf(g);
          last = holders(v);
          return JSON.stringify(last) === JSON.stringify(expected) ? v : null;
        },
        `gateway ${g + 1}'s console to list all eight sessions`,
      ).catch((e) => {
        throw new Error(`${e.message}; it listed ${JSON.stringify(last)}`);
      });
      assert.equal(view.shared, true);
      assert.equal(view.gateway, names[g]);
    }
  });

  test("a call held on gateway 2 is approved from gateway 1's console; the decision names the operator and gateway 1", async () => {
    // Gateway 2 has a console with the approvals scope (a held call needs one where it is held).
    const op2 = await operatorSocket(gateways[1], ['operator.read', 'operator.approvals']);
    const op1 = await operatorSocket(gateways[0], ['operator.read', 'operator.approvals']);
    try {
      const agent = agents.find((a) => a.gateway === 1)!;
      const held = agent.conn.call('list_sessions', {});
      const offered = await waitFor(async () => {
        const r = await op1.request('fleet.sessions');
        return (r.payload.approvals as Array<{ gateway: string; request: { id: string; tool: string } }>).find(
          (a) => a.gateway === names[1] && a.request.tool === 'list_sessions',
        );
      }, "gateway 1's console to be offered the call held on gateway 2");
      // The live view hears of it too (the notification, then the view read again: it may follow the query above).
      await waitFor(
        () => op1.events.some((e) => e.event === 'fleet.changed' && e.payload.approvals.length > 0),
        'fleet.changed to tell gateway 1 of the held call',
      );
      const decided = await op1.request('fleet.resolve', { gateway: names[1], id: offered.request.id, approve: true });
      assert.equal(decided.ok, true, JSON.stringify(decided));
      assert.match(decided.payload.by, new RegExp(`on ${names[0]}$`));
      const result = await held;
      assert.equal(result.isError, false, `the held call ran once approved from the other gateway: ${result.text}`);
      // Gateway 2 acted on it: its own approval.resolved and its trail name who decided, and from where.
      const resolved = await waitFor(
        () => op2.events.find((e) => e.event === 'approval.resolved' && e.payload.id === offered.request.id),
        "gateway 2's approval.resolved",
      );
      assert.equal(resolved.payload.approved, true);
      assert.equal(resolved.payload.by, decided.payload.by);
      const trail = await waitFor(async () => {
        const r = await op1.request('audit.query', { gateway: names[1], kind: 'approval', verdict: 'approved' });
        return r.payload.entries[0];
      }, "the approval's entry in the shared trail");
      assert.equal(trail.by, decided.payload.by);
      // Decided once: no longer offered, and the same decision again finds nothing pending.
      await waitFor(async () => {
        const r = await op1.request('fleet.sessions');
        return !r.payload.approvals.some((x: { request: { id: string } }) => x.request.id === offered.request.id);
      }, 'the decided call to leave the fleet list');
      const again = await op1.request('fleet.resolve', { gateway: names[1], id: offered.request.id, approve: false });
      assert.equal(again.ok, false);
      assert.equal(again.error.code, 'NOT_FOUND');
    } finally {
      op1.ws.close();
      op2.ws.close();
    }
  });

  test("the brake fleet-wide from gateway 1's console: every agent of both gateways paused, then resumed", async () => {
    const op1 = await operatorSocket(gateways[0], ['operator.read', 'operator.write']);
    try {
      const states = async () =>
        Object.fromEntries(
          (
            (await op1.request('fleet.sessions')).payload.sessions as Array<{
              row: { session: string; brake: { state: string; by: string | null } };
            }>
          )
            .filter((s) => agents.some((a) => a.label === s.row.session))
            .map((s) => [s.row.session, `${s.row.brake.state} ${s.row.brake.by}`]),
        );
      const paused = await op1.request('fleet.brake', { verb: 'pause' });
      assert.equal(paused.ok, true, JSON.stringify(paused));
      assert.equal(paused.payload.gateways, 2, 'sent to both live gateways');
      const every = (state: string, by: string | null) =>
        Object.fromEntries(agents.map((a) => [a.label, `${state} ${by}`]));
      let last: unknown;
      await waitFor(async () => {
        last = await states();
        return JSON.stringify(sorted(last as object)) === JSON.stringify(sorted(every('paused', paused.payload.by)));
      }, 'all eight agents shown paused by the operator on gateway 1').catch((e) => {
        throw new Error(`${e.message}; ${JSON.stringify(last)}`);
      });
      // Each gateway's trail names who paused its agents, and from which gateway.
      for (const g of names) {
        const r = await op1.request('audit.query', { gateway: g, kind: 'brake', verdict: 'paused' });
        assert.equal(r.payload.entries.length, 4, `gateway ${g} noted its four agents paused`);
        assert.ok(r.payload.entries.every((e: { by: string }) => e.by === paused.payload.by));
      }
      const resumed = await op1.request('fleet.brake', { verb: 'resume' });
      assert.equal(resumed.ok, true, JSON.stringify(resumed));
      await waitFor(async () => {
        last = await states();
        return Object.values(last as object).every((v) => String(v).startsWith('running'));
      }, 'all eight agents running again').catch((e) => {
        throw new Error(`${e.message}; ${JSON.stringify(last)}`);
      });
    } finally {
      op1.ws.close();
    }
    await round(1);
  });

  test("a gateway killed mid-run: its agents start over on the other through HAProxy; its trail is complete up to its last returned result, and the other's goes on", async (t) => {
    const returned = () => agents.reduce((n, a) => n + total(a), 0);
    const before = returned();
    const running = round(60, agents, true);
    await waitFor(() => returned() >= before + 16, 'the agents to be mid-run');
    // Gateway 1's console is open before the kill: it hears the moment gateway 2 goes quiet (fleet.changed).
    const op1 = await operatorSocket(gateways[0], ['operator.read']);
    killPid(gateways[1].pid, 'SIGKILL');
    await running;
    const survivors = agents.filter((a) => a.home === 0);
    const moved = agents.filter((a) => a.home === 1);
    assert.ok(
      survivors.every((a) => a.returned[0] >= 60 && a.lost[0] === 0 && a.reinits === 0),
      'the other gateway served its agents on',
    );
    for (const a of moved) t.diagnostic(`${a.label}: lost on gw2 ${JSON.stringify(a.why)}`);
    for (const a of moved) {
      // Its session was unknown to the gateway left: one call failed, then one new MCP session through the
      // balancer, on gateway 1, and the rest of its calls returned there.
      assert.equal(a.reinits, 1, `${a.label} started over once`);
      assert.equal(a.gateway, 0, `${a.label} landed on the gateway left`);
      assert.ok(a.lost[1] >= 1 && a.lost[0] === 0, `${a.label}: calls lost ${JSON.stringify(a.lost)}`);
      assert.ok(a.returned[0] > 0, `${a.label} went on on gateway 1`);
    }
    // Every result gateway 1 returned, to its own agents and to those that moved, has exactly one entry.
    await waitFor(() => matches(agents, [0]), "gateway 1's entries, its own agents' and the moved ones'");
    // The other console shows the dead gateway's sessions ended, "gateway gone", once its heartbeat is stale
    // (a bound: GONE_MS after its last beat); its own sessions stay live.
    try {
      await waitFor(
        () =>
          op1.events.find((e) => e.event === 'fleet.changed' && e.payload.sessions.some((s: any) => s.ended_reason)),
        "gateway 1's console to hear that gateway 2 is gone (fleet.changed)",
        300,
      ).catch(async (e) => {
        throw new Error(
          `${e.message}; events ${op1.events.map((x) => x.event)}; fleet ${JSON.stringify(await fleetOf(0))}`,
        );
      });
      // Gateway 2's sessions ended ("gateway gone"); the moved agents' new sessions live on gateway 1.
      const expected = Object.fromEntries(
        [
          ...survivors.map((a) => [`${a.label} on gw1`, 'live active']),
          ...moved.flatMap((a) => [
            [`${a.label} on gw1`, 'live active'],
            [`${a.label} on gw2`, 'gateway gone ended'],
          ]),
        ].sort(([a], [b]) => a.localeCompare(b)),
      );
      let last: unknown;
      await waitFor(async () => {
        last = holders(await fleetOf(0));
        return JSON.stringify(last) === JSON.stringify(expected);
      }, "gateway 1's fleet view to show gateway 2's sessions gone and the moved agents live on gateway 1").catch(
        (e) => {
          throw new Error(`${e.message}; it listed ${JSON.stringify(last)}`);
        },
      );
    } finally {
      op1.ws.close();
    }
    const c = await counted();
    for (const a of agents) {
      for (const g of [0, 1])
        assert.equal(on(c, g, a).distinct, on(c, g, a).n, `${a.label} on gw${g + 1}: no entry twice`);
      assert.equal(on(c, 0, a).n, a.returned[0], `${a.label}: one entry on gw1 for each result it returned`);
    }
    for (const a of moved) {
      const { n } = on(c, 1, a);
      // Its entry is written before its result returns: a call cut off by the kill may have an entry without a result.
      assert.ok(
        n >= a.returned[1] && n <= a.returned[1] + a.lost[1],
        `${a.label}: ${n} entries on gw2 for ${a.returned[1]} results (${a.lost[1]} cut off)`,
      );
    }
  });
});
