// The console's pure view helpers: the state a row shows, the sidebar's mark for a failed last action, the
// one-session main area, and closed rows (a connected agent's row that became a session is not "closed").
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  closedRows,
  entryKey,
  fleetState,
  lastActionMark,
  loneSession,
  otherApprovals,
  otherSessions,
  shownState,
} from '../../control-ui/src/console.js';

const row = (key: string, extra: Record<string, unknown> = {}) => ({
  sessionKey: key,
  session: null,
  client: 'agent 1',
  transport: 'http',
  state: 'active',
  ...extra,
});

describe('console view helpers', () => {
  test('a held agent shows the brake state, never "active" beside "stopped"', () => {
    assert.equal(shownState(row('a', { brake: { state: 'stopped' } })), 'stopped');
    assert.equal(shownState(row('a', { brake: { state: 'paused' } })), 'paused');
    assert.equal(shownState(row('a', { brake: { state: 'running' } })), 'active');
    assert.equal(shownState(row('a', { awaiting_first_call: true })), 'connected');
  });

  test('the sidebar marks a session whose last action failed or mismatched, not one that recovered', () => {
    assert.equal(lastActionMark([]), null);
    assert.equal(lastActionMark([{ effect: 'confirmed' }, { effect: 'mismatch' }]), 'mismatch');
    assert.equal(lastActionMark([{ effect: 'partial' }]), 'partial');
    assert.equal(lastActionMark([{ effect: null, isError: true }]), 'failed');
    assert.equal(lastActionMark([{ effect: 'mismatch' }, { effect: 'confirmed' }]), null);
    // A refusal is a decision (the policy, the operator), not an action that went wrong.
    assert.equal(lastActionMark([{ effect: null, refusal: 'denied', isError: true }]), null);
  });

  test('one live session alone is the lone session; closed rows do not count', () => {
    assert.equal(loneSession([row('a')])?.sessionKey, 'a');
    assert.equal(loneSession([row('a'), row('b')]), null);
    assert.equal(loneSession([row('a'), row('b', { state: 'closed' })])?.sessionKey, 'a');
    assert.equal(loneSession([]), null);
    // A connected agent that made no call yet is not yet a session to watch (its first call makes one).
    assert.equal(loneSession([row('c/implicit', { awaiting_first_call: true })]), null);
  });

  test("a connected agent's row that goes is not kept as closed; a session's is", () => {
    const current = [row('c/implicit', { awaiting_first_call: true }), row('d/x')];
    const closed = closedRows([], current, { removed: ['c/implicit', 'd/x'] });
    assert.deepEqual(
      closed.map((r) => [r.sessionKey, r.state]),
      [['d/x', 'closed']],
    );
  });

  test("the fleet: other gateways' sessions and held calls, a gone gateway's sessions ended; entries keyed by gateway and id", () => {
    const fleetRow = (key: string, extra: Record<string, unknown> = {}) =>
      ({ ...row(key), brake: { state: 'running', by: null }, ...extra }) as never;
    const view = {
      shared: true,
      gateway: 'gw-a',
      gone_after_ms: 10_000,
      gateways: [],
      sessions: [
        { gateway: 'gw-a', live: true, row: fleetRow('c1/x') },
        { gateway: 'gw-b', live: true, row: fleetRow('c1/x', { brake: { state: 'paused', by: 'op' } }) },
        {
          gateway: 'gw-c',
          live: false,
          ended_reason: 'gateway gone' as const,
          row: fleetRow('c2/y', { state: 'ended' }),
        },
      ],
      approvals: [
        { gateway: 'gw-a', request: { id: '1' } as never },
        { gateway: 'gw-b', request: { id: '1' } as never },
      ],
    };
    assert.deepEqual(
      otherSessions(view).map((s) => `${s.gateway} ${fleetState(s)}`),
      ['gw-b paused', 'gw-c ended (gateway gone)'],
    );
    assert.deepEqual(
      otherApprovals(view).map((a) => a.gateway),
      ['gw-b'],
    );
    // Without a shared store there is no fleet to show.
    assert.deepEqual(otherSessions({ ...view, shared: false }), []);
    assert.deepEqual(otherApprovals(null), []);
    // Two gateways' entries of one id are two entries; without a shared store entries name no gateway.
    assert.notEqual(entryKey({ id: 7, gateway: 'gw-a' }), entryKey({ id: 7, gateway: 'gw-b' }));
    assert.equal(entryKey({ id: 7 }), '/7');
  });
});
