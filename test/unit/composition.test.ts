// The composition root (server/core.ts) gets every part at construction (issue #25 item 7): the audit store
// `verity start` makes is the one every call is noted in, from the first call on; nothing sets it later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuditStore } from '../../server/audit/store.js';
import { inMemoryVerity } from '../helpers/in-memory.js';

test("the audit store passed at construction is the core's, and the calls land in it", async () => {
  const audit = new AuditStore(null);
  const verity = await inMemoryVerity({ audit });
  try {
    assert.equal(verity.core.audit, audit);
    const agent = await verity.connect();
    const reply = await agent.call('list_sessions');
    assert.equal(reply.isError, false, reply.text);
    // The call is noted just after its reply is sent (setImmediate): wait, bounded, for it.
    const deadline = Date.now() + 10_000;
    while (!audit.query({}).entries.some((e) => e.tool === 'list_sessions') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(
      audit.query({}).entries.some((e) => e.tool === 'list_sessions'),
      `no list_sessions entry in the store passed to the core within 10 s: ${JSON.stringify(audit.query({}).entries)}`,
    );
    await agent.close();
  } finally {
    await verity.close();
  }
});
