// In-process unit tests of the credential plumbing: flags that never take a credential on the command
// line, credential checks, and the pairing store (secrets kept hashed, replace, revoke, the cap, expiry).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../../server/cli/parse.js';
import { checkCredential, configDir, setConfigDir } from '../../server/token.js';
import { MAX_PAIRINGS, pairingMaxIdleMs, Pairings, type PairingInfo } from '../../server/gateway/origins.js';
import { urlHost } from '../../server/gateway/server.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-unit-creds-'));
const saved = configDir();
/**
 * The pairings are stored in the config dir: each test that reads their file sets it first, since the fast
 * tier (scripts/test-unit.mjs) loads every unit file into one process, and another file's setting wins.
 */
const inOwnConfigDir = () => {
  setConfigDir(dir);
};
after(() => {
  setConfigDir(saved);
  rmSync(dir, { recursive: true, force: true });
});

const start = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const parsed = parseCommandLine(['start', ...argv], env);
  assert.equal(parsed.kind, 'run');
  return (parsed as { values: Record<string, unknown> }).values;
};

test('--token is refused, naming the environment variables and --token-file', () => {
  assert.throws(
    () => start(['--token', 'secret']),
    /--token is not accepted.*VERITY_TOKEN.*VERITY_AGENT_TOKEN.*--token-file/,
  );
});

test('--token-file, --agent-token-file and --allowed-hosts (and their env vars) are parsed', () => {
  const f = start(['--token-file', '/a', '--agent-token-file', '/b', '--allowed-hosts', 'box.lan,proxy:8443']);
  assert.equal(f['token-file'], '/a');
  assert.equal(f['agent-token-file'], '/b');
  assert.deepEqual(f['allowed-hosts'], ['box.lan', 'proxy:8443']);
  const e = start([], { VERITY_TOKEN_FILE: '/c', VERITY_AGENT_TOKEN_FILE: '/d', VERITY_ALLOWED_HOSTS: 'x.lan' });
  assert.deepEqual([e['token-file'], e['agent-token-file'], e['allowed-hosts']], ['/c', '/d', ['x.lan']]);
});

test('a credential is 8..512 printable characters without spaces', () => {
  assert.equal(checkCredential('abcdefgh', 'x'), 'abcdefgh');
  for (const bad of ['short', 'has a space', 'tab\there!', 'x'.repeat(513), ''])
    assert.throws(() => checkCredential(bad, 'VERITY_TOKEN'), /VERITY_TOKEN/);
});

test('pairings: the secret is returned once and stored hashed; replace, revoke and the cap', () => {
  inOwnConfigDir();
  const store = new Pairings();
  const origin = 'chrome-extension://aehmmekdcffbjdehcemegbhmemnbmdmh';
  const a = store.add(origin)!;
  assert.ok(!readFileSync(join(dir, 'pairings.json'), 'utf8').includes(a.secret));
  assert.equal(store.bySecret(a.secret)?.id, a.pairing.id);
  assert.equal(store.bySecret(a.secret + 'x'), null);
  assert.equal(new Pairings().bySecret(a.secret)?.id, a.pairing.id, 'persisted');
  const b = store.add(origin, a.pairing.id)!;
  assert.equal(store.bySecret(a.secret), null, "the replaced pairing's secret is dead");
  assert.deepEqual(
    store.all().map((p) => p.id),
    [b.pairing.id],
  );
  assert.deepEqual(store.origins(), [origin]);
  assert.equal(store.remove(b.pairing.id)?.id, b.pairing.id);
  assert.equal(store.remove(b.pairing.id), null);
  assert.deepEqual(store.origins(), []);
  for (let i = 0; i < MAX_PAIRINGS; i++) assert.ok(store.add(origin));
  assert.equal(store.add(origin), null, 'more than the cap is refused');
});

test('pairings expire when unused: the idle time restarts on use, a connected relay keeps its pairing, old files too', () => {
  inOwnConfigDir();
  rmSync(join(dir, 'pairings.json'), { force: true });
  const DAY = 24 * 60 * 60_000;
  let now = Date.parse('2026-01-01T00:00:00Z');
  const inUse = new Set<string>();
  const expired: PairingInfo[] = [];
  const options = {
    maxIdleMs: 30 * DAY,
    now: () => now,
    inUse: () => inUse,
    onExpired: (p: PairingInfo) => expired.push(p),
  };
  const store = new Pairings(options);
  const origin = 'chrome-extension://aehmmekdcffbjdehcemegbhmemnbmdmh';
  const used = store.add(origin)!;
  const idle = store.add(origin)!;
  const connected = store.add(origin)!;
  assert.equal(used.pairing.lastUsedAt, used.pairing.createdAt, 'a new pairing counts as used when made');

  now += 20 * DAY;
  store.touch(used.pairing.id);
  inUse.add(connected.pairing.id);
  assert.equal(store.all().find((p) => p.id === used.pairing.id)?.lastUsedAt, new Date(now).toISOString());
  now += 10 * DAY + 1; // idle: 30 days and 1 ms unused; used: 10 days
  assert.equal(store.bySecret(idle.secret), null, "an expired pairing's secret opens nothing");
  assert.deepEqual(
    expired.map((p) => p.id),
    [idle.pairing.id],
    'told once, naming it',
  );
  assert.equal(store.bySecret(used.secret)?.id, used.pairing.id);
  assert.equal(store.bySecret(connected.secret)?.id, connected.pairing.id, 'in use however long ago it connected');
  assert.ok(!readFileSync(join(dir, 'pairings.json'), 'utf8').includes(idle.pairing.id), 'removed from the file');

  // Disconnected now: its idle time starts at the disconnect (the gateway touches it then).
  inUse.clear();
  store.touch(connected.pairing.id);
  now += 29 * DAY;
  assert.deepEqual(store.origins(), [origin]);
  now += 2 * DAY; // used: 41 days unused, connected: 31 days
  assert.deepEqual(store.origins(), [], "the last pairing gone, the extension's origin goes off the allow-list");
  assert.equal(store.bySecret(connected.secret), null);

  // A file written before expiry existed (no lastUsedAt) counts from createdAt; an unreadable time is stale.
  const stored = (id: string, createdAt: unknown) => ({ id, origin, createdAt, secretSha256: '00'.repeat(32) });
  writeFileSync(
    join(dir, 'pairings.json'),
    JSON.stringify([
      stored('recent', new Date(now - DAY).toISOString()),
      stored('old', new Date(now - 31 * DAY).toISOString()),
      stored('garbled', 'yesterday-ish'),
    ]),
  );
  store.load();
  assert.deepEqual(
    store.all().map((p) => [p.id, p.lastUsedAt]),
    [['recent', new Date(now - DAY).toISOString()]],
  );
});

test('the pairing idle bound comes from --pairing-max-idle-days (or VERITY_PAIRING_MAX_IDLE_DAYS), default 30 days', () => {
  assert.equal(pairingMaxIdleMs(), 30 * 86_400_000);
  assert.equal(pairingMaxIdleMs(7), 7 * 86_400_000);
  assert.equal(pairingMaxIdleMs(0), 30 * 86_400_000, 'a bad value is the default');
  assert.equal(start(['--pairing-max-idle-days', '3'])['pairing-max-idle-days'], 3);
  assert.equal(start([], { VERITY_PAIRING_MAX_IDLE_DAYS: '7' })['pairing-max-idle-days'], 7);
  assert.throws(() => start(['--pairing-max-idle-days', '0']), /pairing-max-idle-days/);
});

test('urlHost: a wildcard bind is reached as 127.0.0.1, IPv6 literals get brackets', () => {
  assert.deepEqual(['0.0.0.0', '::', '127.0.0.1', '::1', 'box.lan'].map(urlHost), [
    '127.0.0.1',
    '127.0.0.1',
    '127.0.0.1',
    '[::1]',
    'box.lan',
  ]);
});
