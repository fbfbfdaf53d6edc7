// One pass over a call's arguments (mcp/call-args.ts): in process over the real SDK client, each call's
// arguments are masked for the approval card at most once and masked and summarized for what is kept of
// them (the audit trail, the operators' action log, a recording, the secret echoes) exactly once, however
// many parts keep them; the audit entry and the action log line carry the same summary.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { inMemoryVerity, type InMemoryAgent, type InMemoryVerity } from '../helpers/in-memory.js';

let v: InMemoryVerity;
let agent: InMemoryAgent;
before(async () => {
  v = await inMemoryVerity();
  agent = await v.connect();
});
after(async () => {
  await v?.close();
});

/** The passes one call makes, once its audit entry and action log line are written (after the reply). */
async function passesOf(name: string, args: Record<string, unknown>) {
  const { argumentPasses } = v.core.pipeline;
  const before = { ...argumentPasses };
  const reply = await agent.call(name, args);
  await new Promise((resolve) => setImmediate(resolve));
  return {
    reply,
    passes: {
      shown: argumentPasses.shown - before.shown,
      kept: argumentPasses.kept - before.kept,
      summary: argumentPasses.summary - before.summary,
    },
  };
}

test('a session tool that runs: its arguments are masked and summarized once each', async () => {
  const { reply, passes } = await passesOf('start_session', { session: 'passes' });
  assert.equal(reply.isError, false, reply.text);
  // kept: the audit trail and the action log share it (a session tool runs in no session: no echo to teach).
  assert.deepEqual(passes, { shown: 0, kept: 1, summary: 1 });
  const audited = v.core.audit.sessionEntries(`${agent.connectionId}/passes`);
  assert.deepEqual(
    audited.map((e) => [e.tool, e.summary]),
    [['start_session', '']], // the session is the entry's, not its summary's,
  );
});

test('a call in a session, a read-only call and a call refused for its arguments pass over them once too', async () => {
  // In its session (its handler refuses it: the Control UI is gone): the secret echoes learn from the
  // arguments as shown before it runs, and from them as kept after.
  const bound = await v.connect({ uiTarget: { connId: 'ui-gone', caps: ['ui-commands'] } });
  const before = { ...v.core.pipeline.argumentPasses };
  const screen = await bound.call('screen', { action: 'split_right' });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(screen.structured.refusal.code, 'unavailable', screen.text);
  assert.deepEqual(
    ['shown', 'kept', 'summary'].map((k) => v.core.pipeline.argumentPasses[k as 'shown'] - before[k as 'shown']),
    [1, 1, 1],
  );
  const key = `${bound.connectionId}/implicit`;
  const [audited] = v.core.audit.sessionEntries(key);
  const [logged] = v.core.activity.list(key);
  assert.equal(audited.summary, 'action=split_right');
  assert.equal(logged.summary, audited.summary, 'the action log and the audit trail show one summary');
  const read = await passesOf('get_session', { session: 'passes' });
  assert.equal(read.reply.isError, false, read.reply.text);
  assert.deepEqual(read.passes, { shown: 0, kept: 1, summary: 1 });
  // Refused by its schema before it runs: nothing to show an operator, the refusal still kept and logged.
  const refused = await passesOf('end_session', { session: 'passes', no_such_argument: 1 });
  assert.equal(refused.reply.isError, true);
  assert.deepEqual(refused.passes, { shown: 0, kept: 1, summary: 1 });
});
