// The pure parts of cdp/page-activity.ts and the result text, in-process: how URLs are shown (credentials,
// fragments, secret query values, blocked origins, data: URLs, long ones), what an action's `caused` holds
// (failed requests first, bounded and counted, console errors only, nothing when nothing happened), the
// listings' filters and limits, and the lines summarize() writes for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_CAUSED_CONSOLE,
  MAX_CAUSED_REQUESTS,
  causedOf,
  filterConsole,
  filterRequests,
  isSecretParam,
  scrubUrls,
  shownUrl,
  type ConsoleEntry,
  type RequestEntry,
} from '../../server/cdp/tab/page-activity.js';
import { summarize } from '../../server/tools/define.js';
import type { ActionResult } from '../../server/contract/driver.js';

const blocking = { requestAllowed: (url: string) => !url.startsWith('https://blocked.example') };

let seq = 0;
const req = (url: string, more: Partial<RequestEntry> = {}): RequestEntry => ({
  seq: ++seq,
  at: 0,
  method: 'GET',
  url,
  type: 'fetch',
  done: true,
  status: 200,
  ...more,
});
const msg = (level: ConsoleEntry['level'], text: string, more: Partial<ConsoleEntry> = {}): ConsoleEntry => ({
  seq: ++seq,
  at: 0,
  level,
  text,
  ...more,
});

test('isSecretParam: credential-looking names by their words, ordinary ones not', () => {
  for (const name of ['access_token', 'id_token', 'apiKey', 'api-key', 'X-Amz-Signature', 'password', 'sid', 'code'])
    assert.ok(isSecretParam(name), name);
  for (const name of ['page', 'q', 'keyword', 'monkey', 'status', 'sort_by']) assert.ok(!isSecretParam(name), name);
});

test('shownUrl: no credentials or fragment, secret query values masked, the rest kept', () => {
  assert.equal(
    shownUrl('https://user:pw@site.example/a/b?page=2&access_token=abc123&q=x#frag=secret'),
    'https://site.example/a/b?page=2&access_token=•••&q=x',
  );
  assert.equal(shownUrl('https://site.example/a?page=2#top'), 'https://site.example/a?page=2');
});

test('shownUrl: a blocked origin by its origin only; data: by type and length; long URLs cut with their length', () => {
  assert.equal(
    shownUrl('https://blocked.example:8443/private/path?secret=1', blocking),
    'https://blocked.example:8443/… (blocked by the origin policy)',
  );
  assert.equal(shownUrl('https://fine.example/x', blocking), 'https://fine.example/x');
  assert.equal(shownUrl(`data:image/png;base64,${'A'.repeat(50)}`), 'data:image/png,… (72 chars)');
  const long = shownUrl(`https://site.example/${'p'.repeat(400)}`);
  assert.match(long, /… \(421 chars\)$/);
  assert.ok(long.length < 230, long);
  // A buffer keeps only a URL's start; what it shows still says the whole length.
  assert.equal(shownUrl('data:text/plain,abc', undefined, 5_000_000), 'data:text/plain,… (5000000 chars)');
  assert.match(shownUrl(`https://site.example/${'p'.repeat(300)}`, undefined, 9_000), /… \(9000 chars\)$/);
});

test('scrubUrls: URLs inside a console text are shown as shownUrl shows them', () => {
  assert.equal(
    scrubUrls('fetch https://site.example/cb?token=T0K3N failed; see https://blocked.example/x?y', blocking),
    'fetch https://site.example/cb?token=••• failed; see https://blocked.example/… (blocked by the origin policy)',
  );
});

test('causedOf: nothing at all is undefined (a result adds no field)', () => {
  assert.equal(causedOf([], [], undefined, { requests: 0 }), undefined);
  assert.equal(causedOf([], [msg('info', 'hello'), msg('warning', 'careful')], undefined, { requests: 0 }), undefined);
});

test('causedOf: an image, font or style sheet that loaded is left out; one that failed is shown', () => {
  const requests = [
    req('https://s.example/icon.png', { type: 'image' }),
    req('https://s.example/face.woff2', { type: 'font' }),
    req('https://s.example/site.css', { type: 'stylesheet' }),
    req('https://s.example/missing.png', { type: 'image', status: 404 }),
  ];
  assert.deepEqual(causedOf(requests, [], undefined, { requests: requests.length })?.requests, [
    { method: 'GET', url: 'https://s.example/missing.png', status: 404 },
  ]);
  assert.equal(
    causedOf(requests.slice(0, 3), [], undefined, { requests: 3 }),
    undefined,
    'decoration alone adds nothing',
  );
});

test('causedOf: failed requests first, at most MAX_CAUSED_REQUESTS, the rest counted (dropped ones too)', () => {
  const requests = [
    req('https://s.example/ok1'),
    req('https://s.example/ok2'),
    req('https://s.example/post', { method: 'POST', status: 500 }),
    req('https://s.example/pending', { done: false, status: undefined }),
    req('https://s.example/gone', { status: undefined, error: 'net::ERR_CONNECTION_REFUSED' }),
    ...Array.from({ length: 5 }, (_, i) => req(`https://s.example/more${i}`)),
    req('data:image/png;base64,AAAA'),
  ];
  const caused = causedOf(requests, [], 'https://s.example/next#x', { requests: requests.length + 3 })!;
  assert.equal(caused.navigated, 'https://s.example/next');
  assert.equal(caused.requests!.length, MAX_CAUSED_REQUESTS);
  assert.deepEqual(caused.requests!.slice(0, 4), [
    { method: 'POST', url: 'https://s.example/post', status: 500 },
    { method: 'GET', url: 'https://s.example/gone', failed: 'net::ERR_CONNECTION_REFUSED' },
    { method: 'GET', url: 'https://s.example/ok1', status: 200 },
    { method: 'GET', url: 'https://s.example/ok2', status: 200 },
  ]);
  assert.deepEqual(caused.requests![4], { method: 'GET', url: 'https://s.example/pending', pending: true });
  // 11 kept + 3 dropped past the bound, minus the data: URL (no request left the page), minus the 6 shown.
  assert.equal(caused.more_requests, 14 - 1 - MAX_CAUSED_REQUESTS);
});

test("causedOf: a blocked origin's failure says the policy blocked it, never its path", () => {
  const caused = causedOf(
    [req('https://blocked.example/p?k=v', { status: undefined, error: 'net::ERR_BLOCKED_BY_CLIENT' })],
    [],
    undefined,
    { requests: 1 },
    blocking,
  )!;
  assert.deepEqual(caused.requests, [
    {
      method: 'GET',
      url: 'https://blocked.example/… (blocked by the origin policy)',
      failed: 'blocked by the origin policy',
    },
  ]);
});

test("causedOf: console errors and exceptions only, bounded and counted; the browser's failed-load line left out; secrets masked", () => {
  const messages = [
    msg('info', 'a log'),
    msg('error', 'Failed to load resource: the server responded with a status of 500', { browser: true }),
    msg('exception', 'TypeError: x is undefined'),
    ...Array.from({ length: MAX_CAUSED_CONSOLE + 2 }, (_, i) => msg('error', `error ${i}`)),
  ];
  const caused = causedOf([], messages, undefined, { requests: 0 })!;
  assert.equal(caused.console!.length, MAX_CAUSED_CONSOLE);
  assert.deepEqual(caused.console![0], { level: 'exception', text: 'TypeError: x is undefined' });
  assert.equal(caused.more_console, 3);
  const secret = causedOf([], [msg('error', 'typed hunter2', { secret: true })], undefined, { requests: 0 })!;
  assert.deepEqual(secret.console, [{ level: 'error', text: '•••••••••••••' }]);
});

test('filterConsole: a level and the ones above it, a text substring, the latest `limit`', () => {
  const entries = [
    msg('debug', 'd'),
    msg('info', 'i1'),
    msg('warning', 'w'),
    msg('error', 'e'),
    msg('exception', 'x'),
    msg('info', 'i2'),
  ];
  const levels = (f: Parameters<typeof filterConsole>[1]) => filterConsole(entries, f).messages.map((m) => m.text);
  assert.deepEqual(levels({ limit: 50 }), ['d', 'i1', 'w', 'e', 'x', 'i2']);
  assert.deepEqual(levels({ level: 'warning', limit: 50 }), ['w', 'e', 'x']);
  assert.deepEqual(levels({ level: 'error', limit: 50 }), ['e', 'x']);
  assert.deepEqual(levels({ text: 'i', limit: 50 }), ['i1', 'i2']);
  const limited = filterConsole(entries, { limit: 2 });
  assert.deepEqual(
    limited.messages.map((m) => m.text),
    ['x', 'i2'],
  );
  assert.equal(limited.matched, 6);
});

test('filterRequests: a status, failed or not, a substring of the URL as shown (never of what is masked)', () => {
  const entries = [
    req('https://s.example/a?access_token=SECRET'),
    req('https://s.example/b', { status: 404 }),
    req('https://s.example/c', { status: undefined, error: 'net::ERR_FAILED' }),
    req('https://s.example/d', { status: 201 }),
  ];
  const urls = (f: Parameters<typeof filterRequests>[1]) => filterRequests(entries, f).requests.map((r) => r.url);
  assert.deepEqual(urls({ failed: true, limit: 50 }), ['https://s.example/b', 'https://s.example/c']);
  assert.deepEqual(urls({ failed: false, limit: 50 }), ['https://s.example/a?access_token=•••', 'https://s.example/d']);
  assert.deepEqual(urls({ status: 201, limit: 50 }), ['https://s.example/d']);
  assert.deepEqual(urls({ url: 'SECRET', limit: 50 }), []);
  assert.deepEqual(urls({ url: '/b', limit: 50 }), ['https://s.example/b']);
  assert.equal(filterRequests(entries, { limit: 1 }).requests[0].url, 'https://s.example/d');
});

test('summarize: one line per request, console error and exception, the navigation and what was left out', () => {
  const result: ActionResult = {
    effect: 'confirmed',
    route: 'dom',
    delivery: { mode: 'background' },
    evidence: [{ kind: 'event', observed: 'click at button "Submit"' }],
    timings_ms: { resolve: 0, deliver: 0, verify: 0 },
    caused: {
      navigated: 'https://s.example/done',
      requests: [
        { method: 'POST', url: 'https://s.example/save', status: 500 },
        { method: 'GET', url: 'https://s.example/gone', failed: 'net::ERR_FAILED' },
        { method: 'GET', url: 'https://s.example/slow', pending: true },
      ],
      more_requests: 2,
      console: [
        { level: 'exception', text: 'Error: boom' },
        { level: 'error', text: 'bad' },
      ],
      more_console: 1,
    },
  };
  const lines = summarize(result).split('\n');
  for (const line of [
    'Navigated to https://s.example/done',
    'Request POST https://s.example/save: 500',
    'Request GET https://s.example/gone: failed (net::ERR_FAILED)',
    'Request GET https://s.example/slow: no answer yet',
    '…and 2 more requests (page network_requests lists them)',
    'Uncaught exception: Error: boom',
    'Console error: bad',
    '…and 1 more console errors (page console_messages lists them)',
  ])
    assert.ok(lines.includes(line), `${line}\n---\n${lines.join('\n')}`);
  assert.ok(!lines.some((l) => l.startsWith('caused:')), 'caused is written as lines, not as JSON');
});
