// The pool's answers as refusals, and the pool options on the command line (issue #18): pure logic, in process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lossMessage, redactEndpoint, refusalForStatus } from '../../server/cdp/browser/pool.js';
import { parseFlags, UsageError } from '../../server/cli/parse.js';

const endpoint = { url: 'ws://pool.example:3000/chromium?token=s3cret', headers: {}, connectTimeoutMs: 1000 };

test('an endpoint is shown without its query (the token), user or password', () => {
  assert.equal(
    redactEndpoint('ws://user:pw@pool.example:3000/chromium?token=s3cret'),
    'ws://pool.example:3000/chromium (query hidden)',
  );
  assert.equal(redactEndpoint('wss://pool.example/chromium'), 'wss://pool.example/chromium');
});

test("the pool's HTTP answers: 429 is browser_pool_full (retryable), 401/403 name where the token comes from, never the token", () => {
  const where = redactEndpoint(endpoint.url);
  const full = refusalForStatus(429, 'Too many requests', where, endpoint);
  assert.equal(full.code, 'browser_pool_full');
  assert.equal(full.details.retryable, true);
  for (const status of [401, 403]) {
    const denied = refusalForStatus(status, '', where, endpoint);
    assert.equal(denied.code, 'browser_pool_unauthorized');
    assert.equal(denied.details.retryable, false);
    assert.match(denied.message, /token= parameter of --browser-endpoint/);
    assert.doesNotMatch(JSON.stringify([denied.message, denied.details]), /s3cret/);
  }
  const header = refusalForStatus(401, '', 'ws://p/chromium', {
    ...endpoint,
    url: 'ws://p/chromium',
    headers: { Authorization: 'Bearer s3cret' },
  });
  assert.match(header.message, /the Authorization header of --browser-header/);
  assert.doesNotMatch(header.message, /s3cret/);
  assert.equal(refusalForStatus(503, 'busy', where, endpoint).code, 'unavailable');
  assert.equal(refusalForStatus(503, 'busy', where, endpoint).details.retryable, true);
});

test('a lost browser says how long it lived and what closed it', () => {
  assert.match(
    lossMessage('ws://p/chromium', { code: 1006, reason: '', aliveMs: 30_400 }),
    /went away 30 s after it was given: the pool closed it .*WebSocket close 1006/,
  );
});

test('--browser-endpoint, --browser-header, --browser-connect-timeout and --isolated on the command line and in the environment', () => {
  const o = parseFlags([
    '--browser-endpoint',
    'wss://pool/chromium',
    '--browser-header',
    'Authorization: Bearer T',
    '--browser-header',
    'X-Team: a',
    '--browser-connect-timeout',
    '5000',
  ]);
  assert.equal(o.browserEndpoint, 'wss://pool/chromium');
  assert.deepEqual(o.browserHeaders, { Authorization: 'Bearer T', 'X-Team': 'a' });
  assert.equal(o.browserConnectTimeoutMs, 5000);
  const env = parseFlags([], {
    VERITY_BROWSER_ENDPOINT: 'ws://pool/x',
    VERITY_BROWSER_HEADERS: 'Authorization: Bearer T\nX-Team: a',
  });
  assert.deepEqual(env.browserHeaders, { Authorization: 'Bearer T', 'X-Team': 'a' });
  assert.equal(parseFlags(['--isolated']).isolated, true);
  assert.throws(
    () => parseFlags(['--browser-endpoint', 'http://pool/x']),
    (e: unknown) => e instanceof UsageError && /ws:\/\/ or wss:\/\//.test(e.message),
  );
  assert.throws(
    () => parseFlags(['--browser-endpoint', 'ws://pool/x', '--browser-header', 'no colon here']),
    (e: unknown) => e instanceof UsageError && /Name: value/.test(e.message),
  );
  assert.throws(
    () => parseFlags(['--browser-endpoint', 'ws://pool/x', '--browser-url', 'http://127.0.0.1:9222']),
    (e: unknown) => e instanceof UsageError && /--browser-url/.test(e.message),
  );
  assert.throws(
    () => parseFlags(['--browser-endpoint', 'ws://pool/x', '--isolated']),
    (e: unknown) => e instanceof UsageError && /--isolated/.test(e.message),
  );
  assert.throws(
    () => parseFlags(['--browser-header', 'Authorization: Bearer T']),
    (e: unknown) => e instanceof UsageError && /--browser-endpoint/.test(e.message),
  );
});
