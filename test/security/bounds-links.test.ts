// Agent links in-process (pure logic, no server): the per-connection and total caps refuse with
// TOO_MANY, an expired link resolves to nothing and frees its room, a disconnected Control UI's links bind
// nothing and go after the grace period.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Links } from '../../server/gateway/links.js';
import { GatewayError } from '../../server/gateway/protocol.js';
import { configureLimits } from '../../server/limits.js';
import { limitsFromEnv } from '../../server/cli/environment.js';

// The bounds as `verity start` with these variables sets them.
configureLimits(
  limitsFromEnv({
    VERITY_MAX_LINKS_PER_CONNECTION: '2',
    VERITY_MAX_LINKS: '3',
    VERITY_LINK_TTL_MS: '200',
    VERITY_LINK_GRACE_MS: '100',
  }),
);

const conn = (connId: string) => ({ connId, caps: ['ui-commands'] }) as never;

test('caps per connection and in all, expiry, and forget', async () => {
  const links = new Links(() => 'http://127.0.0.1:1/mcp');
  const a1 = links.mint(conn('a'));
  links.mint(conn('a'));
  assert.throws(
    () => links.mint(conn('a')),
    (e: unknown) => e instanceof GatewayError && e.code === 'TOO_MANY' && /PER_CONNECTION/.test(e.message),
  );
  const b1 = links.mint(conn('b'));
  assert.throws(
    () => links.mint(conn('c')),
    (e: unknown) => e instanceof GatewayError && e.code === 'TOO_MANY' && /VERITY_MAX_LINKS\)/.test(e.message),
  );
  assert.deepEqual(links.resolve(a1.link_token), { connId: 'a', caps: ['ui-commands'] });
  // A Control UI that went away: its link binds nothing at once, and is kept only for the grace period
  // (VERITY_LINK_GRACE_MS) in which the same page, reloaded, may reclaim it.
  links.forget('b');
  assert.equal(links.resolve(b1.link_token), undefined, "a gone Control UI's link binds nothing");
  assert.equal(links.size, 3, 'kept for the grace period');
  await new Promise((r) => setTimeout(r, 250));
  assert.equal(links.resolve(a1.link_token), undefined, 'expired');
  assert.equal(links.size, 0, 'expired links are dropped, not kept');
  assert.ok(links.mint(conn('a')).link_token);
});
