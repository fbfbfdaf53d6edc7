// The approval queue in-process: a call whose client gave up (its request cancelled, its connection
// closed) is withdrawn, said so in its outcome and its refusal; the brake's cancellation stays `cancelled`;
// the card carries the target it was given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Approvals, type ApprovalOutcome, type ApprovalRequest } from '../../server/approvals.js';
import { Refusal } from '../../server/contract/refusal.js';

function queue() {
  const approvals = new Approvals();
  approvals.registerApprovers(() => 1);
  const requested: ApprovalRequest[] = [];
  const resolved: ApprovalOutcome[] = [];
  approvals.on('requested', (r) => requested.push(r));
  approvals.on('resolved', (o) => resolved.push(o));
  return { approvals, requested, resolved };
}

test('a client that gives up: the request is withdrawn with its reason, the call refused saying so', async () => {
  const { approvals, requested, resolved } = queue();
  const gone = new AbortController();
  const target = { kind: 'tab' as const, tab_id: 't1', origin: 'https://claims.example', title: 'Claims' };
  const call = approvals.request(
    'click',
    'element_token=s1:2',
    'http-1/implicit',
    { element_token: 's1:2' },
    {
      clientGone: gone.signal,
      target,
    },
  );
  assert.deepEqual(requested[0].target, target);
  assert.equal(approvals.list().length, 1);
  gone.abort('the client cancelled the request (notifications/cancelled)');
  await assert.rejects(call, (e: Refusal) => {
    assert.equal(e.code, 'not_permitted');
    assert.match(e.message, /withdrawn from the approval queue .*cancelled the request/);
    assert.equal((e.details as { withdrawn?: boolean }).withdrawn, true);
    return true;
  });
  assert.equal(approvals.list().length, 0, 'it left the queue');
  assert.equal(resolved[0].reason, 'withdrawn');
  assert.equal(resolved[0].detail, 'the client cancelled the request (notifications/cancelled)');
  assert.equal(approvals.resolve(requested[0].id, true, 'op'), false, 'nothing is left to approve');
});

test('a client already gone is never queued; the brake still cancels as before', async () => {
  const { approvals, requested, resolved } = queue();
  const gone = new AbortController();
  gone.abort("the client's connection closed");
  await assert.rejects(
    approvals.request('click', '', 'http-1/implicit', {}, { clientGone: gone.signal }),
    /withdrawn .*connection closed/,
  );
  assert.equal(requested.length, 0);
  const brake = new AbortController();
  const held = approvals.request(
    'click',
    '',
    'http-1/implicit',
    {},
    { signal: brake.signal, clientGone: new AbortController().signal },
  );
  brake.abort(new Refusal('session_stopped', 'stopped by the operator'));
  await assert.rejects(held, /stopped by the operator/);
  assert.equal(resolved.at(-1)?.reason, 'cancelled');
});
