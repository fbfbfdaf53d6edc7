// Approvals: a tool the policy holds waits for an operator with operator.approvals, who approves or
// denies it from the Control UI's queue (here: the same gateway methods the UI calls).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startGateway, waitFor, type Gateway } from '../helpers/gateway.js';

let gw: Gateway;
const dir = mkdtempSync(join(tmpdir(), 'verity-approvals-'));
before(async () => {
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['press_key'] }));
  gw = await startGateway(['--policy', join(dir, 'policy.json')], { VERITY_CONFIG_DIR: dir });
});
after(async () => { await gw?.close(); rmSync(dir, { recursive: true, force: true }); });

async function operator(scopes: string[]) {
  const ws = new WebSocket(gw.base.replace('http', 'ws') + '/gateway');
  const events: any[] = [];
  const waiters = new Map<number, (f: any) => void>();
  let id = 0;
  ws.on('message', (d) => { const f = JSON.parse(String(d)); if (f.type === 'event') events.push(f); else waiters.get(f.id)?.(f); });
  await new Promise((r) => ws.on('open', r));
  const request = (method: string, params?: unknown) => new Promise<any>((resolve) => { const n = ++id; waiters.set(n, resolve); ws.send(JSON.stringify({ type: 'req', id: n, method, params })); });
  assert.equal((await request('connect', { client: { id: 'approver', version: '1', mode: 'ui' }, caps: [], role: 'operator', scopes, auth: { token: gw.token } })).ok, true);
  return { ws, events, request };
}

test('with no approver connected, a held tool is refused at once, saying why', async () => {
  const agent = await gw.connect();
  try {
    const r = await agent.call('press_key', { key: 'Tab' });
    assert.equal(r.structured.refusal.code, 'not_permitted');
    assert.match(r.structured.refusal.message, /approval/);
  } finally { await agent.disconnect(); }
});

test('an operator approves: the call runs; denies: it is refused; a reader never sees the queue', async () => {
  const approver = await operator(['operator.approvals']);
  const reader = await operator(['operator.read']);
  const agent = await gw.connect();
  try {
    await agent.call('page', { action: 'navigate', url: 'data:text/html,<input autofocus>' });
    const pending = agent.call('press_key', { key: 'Tab' });
    const requested = await waitFor(() => approver.events.find((e) => e.event === 'approval.requested'), 'the approval request');
    assert.equal(requested.payload.tool, 'press_key');
    const listed = await approver.request('approvals.list');
    assert.equal(listed.payload.approvals.length, 1);
    assert.equal((await approver.request('approvals.resolve', { id: requested.payload.id, approve: true })).ok, true);
    const approved = await pending;
    assert.equal(approved.isError, false, approved.text);
    assert.equal(approved.structured.effect, 'confirmed');

    const denied = agent.call('press_key', { key: 'Tab' });
    const second = await waitFor(() => approver.events.filter((e) => e.event === 'approval.requested')[1], 'the second request');
    await approver.request('approvals.resolve', { id: second.payload.id, approve: false });
    const r = await denied;
    assert.equal(r.structured.refusal.code, 'not_permitted');
    assert.match(r.structured.refusal.message, /denied/);
    assert.ok(!reader.events.some((e) => e.event.startsWith('approval.')), 'operator.read alone does not see approvals');
    assert.equal((await approver.request('approvals.resolve', { id: second.payload.id, approve: true })).error.code, 'NOT_FOUND');
  } finally { await agent.disconnect(); approver.ws.close(); reader.ws.close(); }
});
