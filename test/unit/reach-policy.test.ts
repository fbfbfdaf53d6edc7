// The reach rules of server/policy.ts, in process: URL schemes, the gateway's own origin in every loopback
// spelling, allowed/blocked origins on a URL, and what the browser-level guard lets through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Policy } from '../../server/policy.js';
import { Refusal } from '../../server/contract/refusal.js';

function refusal(fn: () => void): Refusal {
  try {
    fn();
  } catch (e) {
    if (e instanceof Refusal) return e;
    throw e;
  }
  assert.fail('expected a refusal');
}

test('schemes: http, https, data and about:blank by default; others only by option, named in the refusal', () => {
  const p = new Policy();
  for (const url of ['http://a.example/', 'https://a.example/x', 'data:text/html,hi', 'about:blank'])
    p.checkNavigation(url);
  for (const [url, word] of [
    ['file:///etc/passwd', 'file'],
    ['javascript:alert(1)', 'javascript'],
    ['chrome://version', 'chrome'],
    ['chrome-extension://abc/x', 'chrome'],
    ['devtools://devtools/x', 'chrome'],
    ['view-source:http://a.example/', 'chrome'],
    ['FILE:///x', 'file'],
  ] as const) {
    const r = refusal(() => p.checkNavigation(url));
    assert.equal(r.code, 'not_permitted');
    assert.match(r.message, new RegExp(`--allow-url-schemes ${word}`), r.message);
  }
  assert.equal(refusal(() => p.checkNavigation('about:settings')).code, 'not_permitted');
  const open = new Policy().allowSchemes(['file', 'chrome']);
  open.checkNavigation('file:///tmp/x');
  open.checkNavigation('chrome://version');
  open.checkNavigation('view-source:https://a.example/');
  assert.equal(
    refusal(() => open.checkNavigation('view-source:javascript:alert(1)')).code,
    'not_permitted',
    'view-source: checks the URL inside',
  );
  assert.equal(refusal(() => open.checkNavigation('javascript:1')).code, 'not_permitted');
  // A tab already on a refused scheme is refused for actions too.
  assert.equal(refusal(() => p.checkUrl('file:///etc/passwd')).code, 'not_permitted');
  p.checkUrl('chrome-error://chromewebdata/');
});

test('the gateway origin: every loopback spelling of its port, never another port', () => {
  const p = new Policy();
  p.checkUrl('http://127.0.0.1:7317/');
  p.setGatewayOrigin('127.0.0.1', 7317);
  for (const url of [
    'http://127.0.0.1:7317/?token=x',
    'http://localhost:7317/',
    'http://LOCALHOST:7317/',
    'http://[::1]:7317/mcp',
    'http://0.0.0.0:7317/',
    'http://127.1.2.3:7317/',
    'https://localhost:7317/',
    'http://app.localhost:7317/',
    'http://localhost.:7317/',
    // IPv4-mapped IPv6 spellings of loopback (the URL parser writes them as [::ffff:7f00:1]).
    'http://[::ffff:127.0.0.1]:7317/',
    'http://[::FFFF:127.0.0.1]:7317/',
    'http://[0:0:0:0:0:ffff:7f00:1]:7317/',
    'http://[::ffff:127.1.2.3]:7317/',
    'http://[::ffff:0.0.0.0]:7317/',
  ]) {
    assert.ok(p.isGateway(url), url);
    const r = refusal(() => p.checkNavigation(url));
    assert.match(r.message, /gateway/);
    assert.equal(p.requestAllowed(url), false, url);
  }
  for (const url of [
    'http://127.0.0.1:7318/',
    'http://[::ffff:127.0.0.1]:7318/',
    'http://[::ffff:8.8.8.8]:7317/',
    'http://example.com:7317/',
    'data:text/html,x',
  ])
    assert.equal(p.isGateway(url), false, url);
  assert.deepEqual(p.gatewayPatterns().sort(), [
    '*://*.localhost:7317/*',
    '*://0.0.0.0:7317/*',
    '*://127.*:7317/*',
    '*://127.0.0.1:7317/*',
    '*://[::1]:7317/*',
    '*://[::ffff:0:0]:7317/*',
    '*://[::ffff:7f*]:7317/*',
    '*://localhost:7317/*',
  ]);
});

test('allowed and blocked origins hold on a URL and on each request; blocked wins', () => {
  const p = new Policy({
    allowed_origins: ['https://*.example.com', 'http://127.0.0.1:*'],
    blocked_origins: ['https://evil.example.com'],
    require_approval: [],
  });
  p.checkUrl('https://a.example.com/x');
  p.checkUrl('http://127.0.0.1:8080/');
  assert.match(refusal(() => p.checkUrl('https://evil.example.com/')).message, /blocks/);
  assert.match(refusal(() => p.checkUrl('http://other.test/')).message, /does not allow/);
  assert.equal(p.requestAllowed('https://evil.example.com/a.js'), false);
  assert.equal(p.requestAllowed('http://other.test/img.png'), false);
  assert.equal(p.requestAllowed('https://b.example.com/x'), true);
  assert.equal(p.filtersOrigins, true);
  assert.equal(new Policy().filtersOrigins, false);
  const blockedOnly = new Policy({ blocked_origins: ['http://127.0.0.2:*'], require_approval: [] });
  blockedOnly.checkUrl('http://anything.test/');
  assert.equal(refusal(() => blockedOnly.checkUrl('http://127.0.0.2:99/')).code, 'not_permitted');
});
