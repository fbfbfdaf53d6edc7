// The call's boundary (server/mcp/pipeline.ts), in process over the real SDK client: a defect on any
// per-call path (here injected: Verity has no known one left) becomes that call's logged `internal_error`
// refusal, or (after the reply, in the action log) a log line; the process and the connection carry on.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { inMemoryVerity, type InMemoryAgent, type InMemoryVerity } from '../helpers/in-memory.js';

let v: InMemoryVerity;
let agent: InMemoryAgent;
const escaped: unknown[] = [];
const onUncaught = (e: unknown) => escaped.push(e);
before(async () => {
  process.on('uncaughtException', onUncaught);
  v = await inMemoryVerity();
  agent = await v.connect();
});
after(async () => {
  await v?.close();
  process.off('uncaughtException', onUncaught);
});

/** Captures what the process writes to stderr while `run` runs. */
async function stderrOf(run: () => Promise<void>): Promise<string> {
  const write = process.stderr.write.bind(process.stderr);
  let text = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    await run();
  } finally {
    process.stderr.write = write;
  }
  return text;
}

test('a defect inside the call (an engine error) is that call refused internal_error, logged with its stack', async () => {
  const sessions = v.core.sessions;
  const admit = sessions.admit.bind(sessions);
  sessions.admit = () => {
    throw new TypeError("Cannot read properties of undefined (reading 'injected')");
  };
  let reply: Awaited<ReturnType<InMemoryAgent['call']>> | undefined;
  const log = await stderrOf(async () => {
    reply = await agent.call('click', { element_token: 'e-none' });
  });
  sessions.admit = admit;
  assert.equal(reply!.isError, true);
  assert.equal(reply!.structured.refusal.code, 'internal_error', reply!.text);
  assert.match(reply!.structured.refusal.message, /internal error in click \(call\): Cannot read properties/);
  assert.match(log, /verity: internal error in click \(call\): TypeError: Cannot read properties[\s\S]*at /);
  // The next call takes its ordinary path (an unknown token: refused as such).
  const next = await agent.call('click', { element_token: 'e-none' });
  assert.equal(next.structured.refusal.code, 'invalid_element_token', next.text);
});

test('a defect after the reply (the action log) is logged; the process and the next call carry on', async () => {
  const activity = v.core.activity;
  const record = activity.record.bind(activity);
  activity.record = () => {
    throw new RangeError('Maximum call stack size exceeded (injected)');
  };
  const log = await stderrOf(async () => {
    const r = await agent.call('click', { element_token: 'e-none' });
    assert.equal(r.structured.refusal.code, 'invalid_element_token', r.text);
    // The action log runs once the reply is on its way.
    await new Promise((resolve) => setTimeout(resolve, 100));
  });
  activity.record = record;
  assert.deepEqual(escaped, [], 'nothing escaped to the process');
  assert.match(log, /verity: internal error in click \(action log\): RangeError/);
  const next = await agent.call('list_sessions', {});
  assert.equal(next.isError, false, next.text);
});
