// Approvals: a tool the policy holds waits for an operator with operator.approvals, who approves or
// denies it from the Control UI's queue (here: the same gateway methods the UI calls).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operatorSocket, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';

let gw: Gateway;
const dir = mkdtempSync(join(tmpdir(), 'verity-approvals-'));
before(async () => {
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['press_key'] }));
  gw = await startGateway(['--policy', join(dir, 'policy.json')], { VERITY_CONFIG_DIR: dir });
});
after(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const operator = (scopes: string[]) => operatorSocket(gw, scopes);

test('with no approver connected, a held tool is refused at once, saying why', async () => {
  const agent = await gw.connect();
  try {
    const r = await agent.call('press_key', { key: 'Tab' });
    assert.equal(r.structured.refusal.code, 'not_permitted');
    assert.match(r.structured.refusal.message, /approval/);
  } finally {
    await agent.disconnect();
  }
});

test('an operator approves: the call runs; denies: it is refused; a reader never sees the queue', async () => {
  const approver = await operator(['operator.approvals']);
  const reader = await operator(['operator.read']);
  const agent = await gw.connect();
  try {
    await agent.call('page', { action: 'navigate', url: 'data:text/html,<input autofocus>' });
    const pending = agent.call('press_key', { key: 'Tab' });
    const requested = await waitFor(
      () => approver.events.find((e) => e.event === 'approval.requested'),
      'the approval request',
    );
    assert.equal(requested.payload.tool, 'press_key');
    const listed = await approver.request('approvals.list');
    assert.equal(listed.payload.approvals.length, 1);
    assert.equal((await approver.request('approvals.resolve', { id: requested.payload.id, approve: true })).ok, true);
    const approved = await pending;
    assert.equal(approved.isError, false, approved.text);
    assert.equal(approved.structured.effect, 'confirmed');

    const denied = agent.call('press_key', { key: 'Tab' });
    const second = await waitFor(
      () => approver.events.filter((e) => e.event === 'approval.requested')[1],
      'the second request',
    );
    await approver.request('approvals.resolve', { id: second.payload.id, approve: false });
    const r = await denied;
    assert.equal(r.structured.refusal.code, 'not_permitted');
    assert.match(r.structured.refusal.message, /denied/);
    // The denial is a decision the operators' log shows, as the calls that ran are (issue #26 item 1).
    const logged = await waitFor(
      () => reader.events.find((e) => e.event === 'action' && e.payload.tool === 'press_key' && e.payload.refusal),
      'the denied call in the action log',
    );
    assert.match(logged.payload.refusal, /^not_permitted: .*denied/);
    assert.equal(logged.payload.sessionKey.endsWith('/implicit'), true, logged.payload.sessionKey);
    assert.ok(
      !reader.events.some((e) => e.event.startsWith('approval.')),
      'operator.read alone does not see approvals',
    );
    assert.equal(
      (await approver.request('approvals.resolve', { id: second.payload.id, approve: true })).error.code,
      'NOT_FOUND',
    );
  } finally {
    await agent.disconnect();
    approver.ws.close();
    reader.ws.close();
  }
});
