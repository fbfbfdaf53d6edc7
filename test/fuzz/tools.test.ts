// The fuzz suite's tool tier (issue #22): every tool, and every `page` action on its own, fed generated
// valid-but-odd and hostile arguments (fast-check, fixed seed) through the real MCP SDK client over the
// in-memory transport into Verity's real core (the same pipeline, tools, router and a real headless
// Chromium as `verity mcp`). Each reply must match the tool's output schema or be a refusal; nothing may
// escape as an uncaught exception or an unhandled rejection; the server answers after every batch; RSS
// stays bounded. The native route is out of reach (no DISPLAY, no session bus), so nothing touches the
// desktop; URLs, paths and waits are kept harmless (bench/fuzz.ts safeOverrides).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allTools } from '../../server/tools/index.js';
import { PAGE_ACTIONS } from '../../server/tools/page.js';
import { fuzzTools, safeOverrides, Tally, toolCases } from '../../bench/fuzz.js';
import { inMemoryVerity, type InMemoryAgent, type InMemoryVerity } from '../helpers/in-memory.js';

for (const name of ['DISPLAY', 'WAYLAND_DISPLAY', 'DBUS_SESSION_BUS_ADDRESS', 'AT_SPI_BUS_ADDRESS'])
  delete process.env[name];

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const escaped: string[] = [];
const onUncaught = (e: unknown) => escaped.push(`uncaught: ${(e as Error)?.stack ?? String(e)}`);
const onRejection = (e: unknown) => escaped.push(`unhandled rejection: ${(e as Error)?.stack ?? String(e)}`);

let v: InMemoryVerity;
let agent: InMemoryAgent;
let dir: string;
before(async () => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onRejection);
  dir = mkdtempSync(join(tmpdir(), 'verity-fuzz-tools-'));
  writeFileSync(join(dir, 'fuzz.txt'), 'fuzz');
  v = await inMemoryVerity({ headless: true });
  agent = await v.connect();
});
after(async () => {
  await v?.close();
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onRejection);
  rmSync(dir, { recursive: true, force: true });
});

test('the cases cover every tool and every page action', () => {
  const cases = toolCases(allTools(), { runs: RUNS, overrides: safeOverrides(dir) });
  const names = new Set(cases.map((c) => c.tool.name));
  for (const t of allTools()) assert.ok(names.has(t.name), t.name);
  const actions = new Set(
    cases.filter((c) => c.tool.name === 'page').map((c) => (c.args as { action?: unknown })?.action),
  );
  for (const a of PAGE_ACTIONS) assert.ok(actions.has(a), a);
});

test(`every tool and page action, ${RUNS} generated inputs each: well-formed replies, no escape, server up, RSS bounded`, async () => {
  const rssBefore = process.memoryUsage().rss;
  const stillServing = async () => {
    const r = await agent.call('list_sessions', {});
    assert.equal(r.isError, false, `list_sessions after a batch: ${r.text}`);
  };
  const tally = await fuzzTools(
    agent.client,
    allTools(),
    {
      runs: RUNS,
      overrides: safeOverrides(dir),
      alive: stillServing,
      every: 100,
      fresh: async () => {
        await agent.close();
        agent = await v.connect();
        return agent.client;
      },
    },
    new Tally(),
  );
  await stillServing();
  // Whatever the calls left running (the audit, the action log) has had its turn.
  await new Promise((r) => setTimeout(r, 200));
  const rssMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
  process.stdout.write(
    `# fuzz tools: ${tally.inputs} answered, ${tally.crashes} crashes, ${tally.hangs} hangs, ${tally.malformed} malformed; RSS +${rssMb.toFixed(0)} MB\n# outcomes: ${tally.summary()}\n`,
  );
  assert.deepEqual(escaped, [], 'nothing escapes a call');
  assert.deepEqual(tally.failures, [], 'every reply well formed, none hung');
  // A defect the boundary contained is still a defect.
  assert.equal(tally.outcomes.get('refused:internal_error'), undefined, tally.summary());
  assert.ok(tally.inputs >= 1500, `${tally.inputs} inputs`);
  assert.ok((tally.outcomes.get('refused:invalid_arguments') ?? 0) > 0, 'hostile inputs are refused invalid_arguments');
  assert.ok(
    [...tally.outcomes.keys()].some((k) => k === 'ok' || k.startsWith('effect:')),
    'valid inputs run',
  );
  assert.ok(rssMb < 512, `RSS grew ${rssMb.toFixed(0)} MB`);
});
