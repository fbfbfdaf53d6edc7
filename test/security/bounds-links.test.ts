// Agent links in-process (pure logic, no server): the per-connection and total caps refuse with
// TOO_MANY, an expired link resolves to nothing and frees its room, a disconnected Control UI's links go.
import { test } from 'node:test';
import assert from 'node:assert/strict';

process.env.VERITY_MAX_LINKS_PER_CONNECTION = '2';
process.env.VERITY_MAX_LINKS = '3';
process.env.VERITY_LINK_TTL_MS = '200';
const { Links } = await import('../../server/gateway/links.js');
const { GatewayError } = await import('../../server/gateway/protocol.js');

const conn = (connId: string) => ({ connId, caps: ['ui-commands'] }) as never;

test('caps per connection and in all, expiry, and forget', async () => {
  const links = new Links(() => 'http://127.0.0.1:1/mcp');
  const a1 = links.mint(conn('a'));
  links.mint(conn('a'));
  assert.throws(
    () => links.mint(conn('a')),
    (e: unknown) => e instanceof GatewayError && e.code === 'TOO_MANY' && /PER_CONNECTION/.test(e.message),
  );
  links.mint(conn('b'));
  assert.throws(
    () => links.mint(conn('c')),
    (e: unknown) => e instanceof GatewayError && e.code === 'TOO_MANY' && /VERITY_MAX_LINKS\)/.test(e.message),
  );
  assert.deepEqual(links.resolve(a1.link_token), { connId: 'a', caps: ['ui-commands'] });
  links.forget('b');
  assert.equal(links.size, 2);
  await new Promise((r) => setTimeout(r, 250));
  assert.equal(links.resolve(a1.link_token), undefined, 'expired');
  assert.equal(links.size, 0, 'expired links are dropped, not kept');
  assert.ok(links.mint(conn('a')).link_token);
});
