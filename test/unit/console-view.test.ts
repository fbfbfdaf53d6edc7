// The console's pure view helpers: the state a row shows, the sidebar's mark for a failed last action, the
// one-session main area, closed rows (a connected agent's row that became a session is not "closed"), and
// another gateway's session in a pane (its key, its lines from the shared trail, its state).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  auditAction,
  closedRows,
  entryKey,
  fleetPaneKey,
  fleetPaneState,
  fleetState,
  lastActionMark,
  loneSession,
  mergeActions,
  otherApprovals,
  otherSessions,
  parseFleetPaneKey,
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

  test("another gateway's session in a pane: its key names the gateway, its lines come from the trail's calls", () => {
    const key = fleetPaneKey('host:8080 b', 'http-1a2b/research');
    assert.deepEqual(parseFleetPaneKey(key), { gateway: 'host:8080 b', sessionKey: 'http-1a2b/research' });
    assert.equal(parseFleetPaneKey('http-1a2b/research'), null, "a local session's key is no fleet pane's");
    assert.equal(parseFleetPaneKey('fleet:gw'), null);
    assert.notEqual(fleetPaneKey('gw-a', 'c/x'), fleetPaneKey('gw-b', 'c/x'));
    const entry = (extra: Record<string, unknown>) =>
      ({
        id: 3,
        at: '2026-12-07T06:00:00.000Z',
        kind: 'call',
        sessionKey: 'c/x',
        tool: 'click',
        summary: 'Save',
        ...extra,
      }) as never;
    const confirmed = auditAction(entry({ verdict: 'confirmed', evidence: [1, 2, 3, 4, 5], isError: false }))!;
    assert.equal(confirmed.effect, 'confirmed');
    assert.equal(confirmed.evidence.length, 4, 'the first four pieces of evidence, as the local log keeps');
    assert.equal(confirmed.auditId, 3);
    const refused = auditAction(
      entry({ verdict: 'refused', isError: true, refusal: { code: 'session_paused', message: 'paused' } }),
    )!;
    assert.deepEqual([refused.effect, refused.refusal], [null, 'session_paused: paused']);
    assert.deepEqual(
      [auditAction(entry({ verdict: 'ok' }))!.effect, auditAction(entry({ verdict: 'failed' }))!.isError],
      [null, true],
    );
    assert.equal(auditAction(entry({ kind: 'brake', verdict: 'paused' })), null, 'only calls are lines');
    // Lines merged by id (a newer copy replaces), oldest first, bounded.
    const line = (id: number, effect = 'ok') => ({ ...confirmed, id, effect });
    assert.deepEqual(
      mergeActions([line(2), line(5)], [line(4), line(5, 'mismatch')]).map((a) => `${a.id} ${a.effect}`),
      ['2 ok', '4 ok', '5 mismatch'],
    );
    assert.equal(mergeActions([], [line(1), line(2), line(3)], 2)[0].id, 2);
  });

  test("a fleet pane's state: its row's, ended once its gateway no longer lists it, gateway gone with its gateway", () => {
    const fleetRow = (key: string, extra: Record<string, unknown> = {}) =>
      ({ ...row(key), brake: { state: 'running', by: null }, ...extra }) as never;
    const view = {
      shared: true,
      gateway: 'gw-a',
      gone_after_ms: 10_000,
      gateways: [
        { gateway: 'gw-b', heartbeat: '', live: true },
        { gateway: 'gw-c', heartbeat: '', live: false },
      ],
      sessions: [
        { gateway: 'gw-b', live: true, row: fleetRow('c/x') },
        { gateway: 'gw-b', live: true, row: fleetRow('c/p', { brake: { state: 'paused', by: 'op' } }) },
        { gateway: 'gw-c', live: false, ended_reason: 'gateway gone' as const, row: fleetRow('c/y') },
      ],
      approvals: [],
    };
    assert.equal(fleetPaneState(view, 'gw-b', 'c/x'), 'active');
    assert.equal(fleetPaneState(view, 'gw-b', 'c/p'), 'paused');
    assert.equal(fleetPaneState(view, 'gw-c', 'c/y'), 'ended (gateway gone)');
    assert.equal(fleetPaneState(view, 'gw-b', 'c/gone'), 'ended');
    assert.equal(fleetPaneState(view, 'gw-d', 'c/z'), 'ended (gateway gone)', 'a gateway no longer in the fleet');
    assert.equal(fleetPaneState(null, 'gw-b', 'c/x'), 'unknown');
  });
});
