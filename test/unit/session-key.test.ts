// A session's key (contract/session-key.ts): built one way for every part that names a session (the
// manager, the call pipeline, the router's download quota), and taken apart one way (the audit trail's
// actor, the brake's agent).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeLabel, parseSessionKey, sessionKeyOf, sessionKeyOfCall } from '../../server/contract/session-key.js';
import { SessionManager } from '../../server/sessions/manager.js';

test('a key is <connection>/<label>; none, default and implicit all name the implicit session', () => {
  assert.equal(sessionKeyOf('http-1', 'work'), 'http-1/work');
  assert.equal(sessionKeyOf('http-1', ' work '), 'http-1/work');
  for (const label of [undefined, null, '', '  ', 'default', 'implicit'])
    assert.equal(sessionKeyOf('http-1', label), 'http-1/implicit', String(label));
  assert.equal(normalizeLabel('implicit'), null);
  assert.equal(sessionKeyOf('c', 'a/b'), 'c/a/b', 'labels may hold a slash');
});

test("a call's session argument: a label it will be refused for names no session, never the agent's string", () => {
  assert.equal(sessionKeyOfCall('c', 'work'), 'c/work');
  assert.equal(sessionKeyOfCall('c', 42), 'c/implicit', 'not a string: refused, and no session');
  assert.equal(sessionKeyOfCall('c', 'x'.repeat(129)), 'c/(invalid label)');
  assert.equal(sessionKeyOfCall('c', 'a\u202Eb'), 'c/(invalid label)');
});

test('a key parses back into its connection and label (the first slash divides them)', () => {
  assert.deepEqual(parseSessionKey('http-1/work'), { connectionId: 'http-1', label: 'work' });
  assert.deepEqual(parseSessionKey('c/a/b'), { connectionId: 'c', label: 'a/b' });
  assert.deepEqual(parseSessionKey('http-1/implicit'), { connectionId: 'http-1', label: 'implicit' });
  assert.deepEqual(parseSessionKey('operator'), { connectionId: 'operator', label: 'implicit' });
});

test('the session manager keys its sessions by the same key it hands out', async () => {
  const sessions = new SessionManager({ idleMs: 60_000 });
  try {
    const work = sessions.admit('c', 'work');
    assert.equal(sessions.keyOf(work), sessionKeyOf('c', 'work'));
    assert.equal(sessions.keyFor('c', ' work'), sessions.keyOf(work));
    const implicit = sessions.admit('c', undefined);
    assert.equal(sessions.keyOf(implicit), 'c/implicit');
    // One key, one session: the label spelled as the key's implicit part is the implicit session.
    assert.equal(sessions.admit('c', 'implicit'), implicit);
    assert.equal(sessions.find('c', 'default'), implicit);
  } finally {
    await sessions.shutdown();
  }
});
