// In-process unit tests of the credential plumbing: flags that never take a credential on the command
// line, credential checks, and the pairing store (secrets kept hashed, replace, revoke, the cap).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../../server/cli.js';
import { checkCredential } from '../../server/token.js';
import { MAX_PAIRINGS, Pairings } from '../../server/gateway/origins.js';
import { urlHost } from '../../server/gateway/server.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-unit-creds-'));
const saved = process.env.VERITY_CONFIG_DIR;
process.env.VERITY_CONFIG_DIR = dir;
after(() => {
  if (saved === undefined) delete process.env.VERITY_CONFIG_DIR;
  else process.env.VERITY_CONFIG_DIR = saved;
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

test('urlHost: a wildcard bind is reached as 127.0.0.1, IPv6 literals get brackets', () => {
  assert.deepEqual(['0.0.0.0', '::', '127.0.0.1', '::1', 'box.lan'].map(urlHost), [
    '127.0.0.1',
    '127.0.0.1',
    '127.0.0.1',
    '[::1]',
    'box.lan',
  ]);
});
