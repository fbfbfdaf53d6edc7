// The fuzz suite's gateway tier (issue #22): a real `verity start` (fresh config dir, no DISPLAY), fed
// generated frames for every gateway method (valid-but-odd and hostile params), connect frames on fresh
// sockets, frames that are not requests, then requests to /pair, /audit/export and /mcp (odd methods,
// origins, credentials and bodies) and odd request lines, then tool calls over MCP Streamable HTTP.
// After every case the process must be alive; every answer must be a well-formed response frame (and a
// success must match the method's result schema), an HTTP answer below 500, or a tool result / refusal;
// the gateway's RSS stays bounded. Fixed seeds; the process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  connectCases,
  frameCases,
  fuzzFrames,
  fuzzHttp,
  fuzzTools,
  openFuzzSocket,
  safeOverrides,
  type Tally,
} from '../../bench/fuzz.js';
import { allTools } from '../../server/tools/index.js';
import { alive, startGateway, type Gateway } from '../helpers/gateway.js';
import { stillServing } from '../security/wire.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

describe('fuzz: a real verity start', () => {
  let gw: Gateway;
  let dir: string;
  let baselineKb = 0;
  const report = (name: string, t: Tally) =>
    process.stdout.write(
      `# fuzz ${name}: ${t.inputs} answered, ${t.crashes} crashes, ${t.hangs} hangs, ${t.malformed} malformed\n# outcomes: ${t.summary()}\n`,
    );
  const up = () => alive(gw.pid);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verity-fuzz-gateway-'));
    gw = await startGateway([], {
      VERITY_CONFIG_DIR: dir,
      DISPLAY: undefined,
      WAYLAND_DISPLAY: undefined,
      DBUS_SESSION_BUS_ADDRESS: undefined,
      AT_SPI_BUS_ADDRESS: undefined,
    });
    baselineKb = rssKb(gw.pid);
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // Before the frames: their random audit.export calls leave tickets waiting (at most 16 per gateway, a
  // minute each), and with the gateway's exports all waiting, this test could download none.
  test('/pair, /audit/export, /mcp and odd request lines', async () => {
    const exporter = await openFuzzSocket(gw.base, gw.token);
    let n = 0;
    const exportUrl = async () => {
      exporter.ws.send(
        JSON.stringify({
          type: 'req',
          id: `x${++n}`,
          method: 'audit.export',
          params: { sessionKey: 'fuzz', format: n % 2 ? 'zip' : 'jsonl' },
        }),
      );
      const answer = (await exporter.next(10_000)) as { ok?: boolean; payload?: { url: string } };
      return answer?.ok ? answer.payload!.url : null;
    };
    const tally = await fuzzHttp(
      { base: gw.base, agentToken: gw.agentToken, operatorToken: gw.token, exportUrl },
      RUNS * 10,
      up,
    );
    exporter.ws.close();
    report('http', tally);
    assert.deepEqual(tally.failures, [], `the gateway's log:\n${gw.stderr().slice(-3000)}`);
    assert.ok(
      [...tally.outcomes.keys()].some((k) => k === 'http:export:200'),
      `an export was downloaded: ${tally.summary()}`,
    );
    await stillServing(gw);
  });

  test(`every gateway method (${RUNS} params each), connect frames and frames that are not requests`, async () => {
    const cases = [...frameCases(RUNS, undefined, safeOverrides(dir)), ...connectCases(gw.token, RUNS * 4)];
    const tally = await fuzzFrames((connected) => openFuzzSocket(gw.base, connected ? gw.token : undefined), cases, up);
    report('frames', tally);
    const defects = gw
      .stderr()
      .split('\n')
      .filter((l) => /internal error/.test(l));
    // A defect the boundary contained is still a defect: the log names none.
    assert.deepEqual(defects.slice(0, 5), [], 'internal errors in the log');
    assert.deepEqual(tally.failures, [], `the gateway's log:\n${gw.stderr().slice(-3000)}`);
    assert.ok(tally.inputs >= 1000, `${tally.inputs} frames`);
    assert.ok(
      (tally.outcomes.get('error:INVALID_REQUEST') ?? 0) > 0 && (tally.outcomes.get('ok') ?? 0) > 0,
      tally.summary(),
    );
    await stillServing(gw);
  });

  test('tool calls over MCP Streamable HTTP (JSON on the wire: NaN and -0 as JSON writes them)', async () => {
    let current: { client: Client; transport: StreamableHTTPClientTransport } | null = null;
    const fresh = async () => {
      if (current) {
        await current.transport.terminateSession().catch(() => {});
        await current.client.close().catch(() => {});
      }
      const client = new Client({ name: 'fuzz', version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${gw.agentToken}` } },
      });
      await client.connect(transport);
      await client.listTools();
      current = { client, transport };
      return client;
    };
    const tally = await fuzzTools(await fresh(), allTools(), {
      runs: Math.max(4, Math.round(RUNS / 4)),
      seed: 7,
      overrides: safeOverrides(dir),
      fresh,
      alive: async () => assert.ok(up(), 'verity start is alive'),
      every: 1,
    });
    await fresh();
    report('mcp-http', tally);
    assert.deepEqual(tally.failures, [], `the gateway's log:\n${gw.stderr().slice(-3000)}`);
    assert.equal(tally.outcomes.get('refused:internal_error'), undefined, tally.summary());
    assert.deepEqual(
      gw
        .stderr()
        .split('\n')
        .filter((l) => /internal error/.test(l))
        .slice(0, 5),
      [],
    );
    await stillServing(gw);
    const grownMb = (rssKb(gw.pid) - baselineKb) / 1024;
    process.stdout.write(
      `# gateway RSS: ${(baselineKb / 1024).toFixed(0)} MB at start, +${grownMb.toFixed(0)} MB after the fuzz\n`,
    );
    assert.ok(grownMb < 400, `the gateway's RSS grew ${grownMb.toFixed(0)} MB`);
  });
});
