// Issue #12's Host, Origin and pairing findings, replayed against a real `verity start`: DNS rebinding
// (Host: evil.example with a matching Origin) on every path, the Control UI's gateway taken from its URL
// fragment, a missing CSP, /pair from any extension id, and any credential holder standing in as the tab
// relay. Each is refused, nothing leaks, and the server stays up. The Control UI is checked in a real
// Chromium: it connects to its own origin only and the CSP it is served with reports no violation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { EXTENSION_ID } from '../../server/gateway/extension-id.js';
import { METHOD_SCHEMAS } from '../../server/gateway/protocol.js';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { alive, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';
import { ALL_SCOPES, connectAs, INITIALIZE, MCP_HEADERS, openSocket, raw, stillServing } from './wire.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-sec-origins-'));
const EXT_ORIGIN = `chrome-extension://${EXTENSION_ID}`;
let gw: Gateway;
let port = '';
before(async () => {
  gw = await startGateway([], { VERITY_CONFIG_DIR: dir });
  port = new URL(gw.base).port;
});
after(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Host names (DNS rebinding)', () => {
  const evil = { host: 'evil.example', origin: 'http://evil.example' };

  test('Host: evil.example with a matching Origin is refused on /mcp, static, /pair and /gateway', async () => {
    const mcp = await raw(gw, '/mcp', {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...evil, authorization: `Bearer ${gw.agentToken}` },
      body: INITIALIZE,
    });
    assert.equal(mcp.status, 403);
    assert.match(mcp.body, /DNS-rebinding/);
    assert.ok(!mcp.headers['mcp-session-id'], 'no MCP session was made');
    const page = await raw(gw, '/', { headers: evil });
    assert.equal(page.status, 403);
    assert.ok(!page.body.includes('<verity-app'), 'the Control UI is not served to it');
    const pair = await raw(gw, '/pair', {
      method: 'POST',
      headers: { host: 'evil.example', origin: EXT_ORIGIN },
      body: JSON.stringify({ token: gw.token }),
    });
    assert.equal(pair.status, 403);
    await assert.rejects(openSocket(gw, evil), (e: any) => e.status === 403 && /DNS-rebinding/.test(e.message));
    assert.ok(!existsSync(join(dir, 'pairings.json')), 'nothing was paired');
    await stillServing(gw);
  });

  test('the loopback names on the bound port are served; another port or name is not', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
      assert.equal((await raw(gw, '/', { headers: { host } })).status, 200, host);
    }
    for (const host of [
      '127.0.0.1',
      `127.0.0.1:${Number(port) + 1}`,
      `localhost.evil.example:${port}`,
      `0.0.0.0:${port}`,
    ]) {
      assert.equal((await raw(gw, '/', { headers: { host } })).status, 403, host);
    }
  });

  test("the gateway's own origin is not built from the Host header", async () => {
    // A loopback Host with a foreign Origin: refused (the "own origin" comes from the configuration).
    const r = await raw(gw, '/mcp', {
      method: 'POST',
      headers: {
        ...MCP_HEADERS,
        host: `localhost:${port}`,
        origin: 'http://evil.example',
        authorization: `Bearer ${gw.agentToken}`,
      },
      body: INITIALIZE,
    });
    assert.equal(r.status, 403);
    await assert.rejects(
      openSocket(gw, { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${Number(port) + 1}` }),
      (e: any) => e.status === 403,
    );
    // The gateway's own origins (any loopback name on its port) still connect.
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const s = await connectAs(gw, gw.token, ['operator.read'], [], { origin });
      assert.equal(s.reply.ok, true, origin);
      s.ws.close();
    }
  });
});

describe('IPv4-mapped IPv6 spellings of loopback', () => {
  // [::ffff:127.0.0.1] reaches the same loopback socket; the URL parser writes it [::ffff:7f00:1].
  const mapped = ['[::ffff:127.0.0.1]', '[::FFFF:127.0.0.1]', '[0:0:0:0:0:ffff:7f00:1]', '[::ffff:7f00:1]'];

  test('an agent cannot drive a tab to the gateway under a mapped spelling, and a page there gets no socket', async () => {
    const agent = await gw.connect();
    try {
      for (const name of mapped) {
        const url = `http://${name}:${port}/?token=${gw.token}`;
        for (const action of ['navigate', 'new_tab']) {
          const r = await agent.call('page', { action, url });
          assert.equal(r.isError, true, `${action} ${url}: ${r.text}`);
          assert.equal(r.structured.refusal.code, 'not_permitted', r.text);
          assert.equal(r.structured.refusal.gateway, true, r.text);
          assert.match(r.text, /gateway/);
        }
        // The gateway itself: such an Origin is not one of its own (its Host check refuses the Host too).
        await assert.rejects(
          openSocket(gw, { host: `127.0.0.1:${port}`, origin: `http://${name}:${port}` }),
          (e: any) => e.status === 403,
          name,
        );
      }
    } finally {
      await agent.disconnect();
    }
    await stillServing(gw);
  });
});

describe('bound elsewhere: configured names', () => {
  test('--host 0.0.0.0 --allowed-hosts NAME answers to NAME and loopback, prints 127.0.0.1, refuses others', async () => {
    const wide = await startGateway(['--host', '0.0.0.0', '--allowed-hosts', 'verity.test'], {
      VERITY_CONFIG_DIR: join(dir, 'wide'),
    });
    try {
      const p = new URL(wide.base).port;
      assert.equal(new URL(wide.base).hostname, '127.0.0.1', 'the printed URL is reachable and accepted');
      for (const host of [`verity.test:${p}`, 'verity.test', `127.0.0.1:${p}`])
        assert.equal((await raw(wide, '/', { headers: { host } })).status, 200, host);
      for (const host of [`0.0.0.0:${p}`, `evil.example:${p}`, `sub.verity.test:${p}`])
        assert.equal((await raw(wide, '/', { headers: { host } })).status, 403, host);
      const s = await connectAs(wide, wide.token, ['operator.read'], [], {
        host: `verity.test:${p}`,
        origin: `http://verity.test:${p}`,
      });
      assert.equal(s.reply.ok, true);
      s.ws.close();
      await assert.rejects(
        openSocket(wide, { host: `verity.test:${p}`, origin: 'http://evil.example' }),
        (e: any) => e.status === 403,
      );
      await stillServing(wide);
    } finally {
      await wide.close();
    }
  });
});

describe('headers of the Control UI', () => {
  test("CSP default-src 'self' with frame-ancestors 'none', nosniff, on the page and its assets", async () => {
    const page = await raw(gw, '/');
    assert.equal(page.status, 200);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /connect-src 'self'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    const asset = /src="\.?(\/assets\/[^"]+\.js)"/.exec(page.body)?.[1];
    assert.ok(asset, page.body);
    const js = await raw(gw, asset);
    assert.equal(js.status, 200);
    assert.equal(js.headers['x-content-type-options'], 'nosniff');
    assert.match(String(js.headers['content-security-policy']), /default-src 'self'/);
  });
});

describe('the Control UI in a real browser', () => {
  let chrome: TestBrowser;
  before(async () => {
    chrome = await sharedChromium();
  });
  after(async () => {
    await chrome?.close();
  });

  test("opened with the agent credential (the issue's attack chain), the Control UI is refused: no terminal, no sessions", async () => {
    const context = await chrome.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${gw.base}/?token=${gw.agentToken}`);
      await page.waitForSelector('[data-connection="unauthorized"]', { timeout: 20_000 });
      assert.match(await page.$eval('[role="alert"]', (e) => e.textContent ?? ''), /agent credential/);
      assert.equal(await page.$('[data-agent-link]'), null, 'no agent link was minted');
    } finally {
      await context.close();
    }
    await stillServing(gw);
  });

  test('a #gateway= fragment does not move it: it connects to its own origin only, and no CSP violation is reported', async () => {
    // The attacker's gateway: records whoever connects and what they send first.
    const seen: string[] = [];
    const http = createServer();
    const wss = new WebSocketServer({ server: http });
    wss.on('connection', (ws) => {
      seen.push('connected');
      ws.on('message', (d) => seen.push(String(d)));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const evilPort = (http.address() as AddressInfo).port;
    const context = await chrome.newContext();
    const page = await context.newPage();
    const violations: string[] = [];
    await page.exposeFunction('__cspViolation', (v: string) => {
      violations.push(v);
    });
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (e) =>
        (window as any).__cspViolation(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    try {
      await page.goto(
        `${gw.base}/?token=${gw.token}#gateway=${encodeURIComponent(`ws://127.0.0.1:${evilPort}/gateway`)}`,
      );
      await page.waitForSelector('[data-connection="connected"]', { timeout: 20_000 });
      await page.waitForSelector('[data-agent-link]', { timeout: 20_000 });
      assert.equal(new URL(page.url()).search, '', 'the token is dropped from the address bar');
      // Exercise what the UI renders: an agent's action (its thumbnail), the session pane, the terminal and
      // the browser panel with live screencast frames.
      const agent = await gw.connect();
      try {
        await agent.call('start_session', { session: 'csp' });
        await agent.call('page', { action: 'navigate', url: 'data:text/html,<button>Press</button>', session: 'csp' });
        await agent.call('press_key', { key: 'Tab', session: 'csp' });
        const row = await page.waitForSelector('[data-session-key$="/csp"] button.link', { timeout: 20_000 });
        await row!.click();
        await page.waitForSelector('[data-action-log] [data-tool]', { timeout: 20_000 });
        await page.click('[data-toggle="terminal"]');
        await page.waitForSelector('[data-panel="terminal"][data-open="true"]');
        await page.click('[data-toggle="browser"]');
        await page.waitForSelector('[data-panel="browser"][data-open="true"]');
        await waitFor(
          () =>
            page.evaluate(() =>
              [...document.querySelectorAll('[data-panel="browser"] img.screen')].some(
                (i) => (i as HTMLImageElement).src.startsWith('data:image') && (i as HTMLImageElement).naturalWidth > 0,
              ),
            ),
          'a screencast frame shown',
          100,
          200,
        );
      } finally {
        await agent.disconnect();
      }
      assert.deepEqual(seen, [], 'nothing reached the gateway named in the fragment');
      assert.deepEqual(violations, [], 'no CSP violation');
    } finally {
      await context.close();
      await new Promise((r) => {
        wss.close();
        http.close(r);
      });
    }
  });
});

describe('extension pairing', () => {
  const pair = (origin: string, body: unknown) =>
    raw(gw, '/pair', { method: 'POST', headers: { 'content-type': 'text/plain', origin }, body: JSON.stringify(body) });
  const pairings = () =>
    (existsSync(join(dir, 'pairings.json'))
      ? JSON.parse(readFileSync(join(dir, 'pairings.json'), 'utf8'))
      : []) as Array<{ id: string; origin: string; secretSha256: string }>;

  test("/pair refuses any other extension id (with the operator credential) and any credential but the operator's", async () => {
    const other = await pair('chrome-extension://abcdefghijklmnopabcdefghijklmnop', { token: gw.token });
    assert.equal(other.status, 403);
    assert.match(JSON.parse(other.body).error, new RegExp(EXTENSION_ID));
    assert.equal(
      other.headers['access-control-allow-origin'],
      undefined,
      'the other extension cannot even read the refusal',
    );
    assert.equal((await pair('http://evil.example', { token: gw.token })).status, 403);
    assert.equal((await pair(EXT_ORIGIN, { token: gw.agentToken })).status, 401, 'the agent credential pairs nothing');
    assert.deepEqual(pairings(), []);
    // A foreign extension origin is refused before the upgrade too.
    await assert.rejects(
      openSocket(gw, { origin: 'chrome-extension://abcdefghijklmnopabcdefghijklmnop' }),
      (e: any) => e.status === 403,
    );
  });

  test('a pairing returns a relay secret (stored only hashed) that alone opens the tab relay; revoking it closes and refuses the relay', async () => {
    const made = await pair(EXT_ORIGIN, { token: gw.token });
    assert.equal(made.status, 200, made.body);
    const { relay_secret: secret, pairing_id: id } = JSON.parse(made.body);
    assert.ok(typeof secret === 'string' && secret.length >= 16);
    assert.deepEqual(
      pairings().map((p) => p.id),
      [id],
    );
    assert.ok(!readFileSync(join(dir, 'pairings.json'), 'utf8').includes(secret), 'the secret is not kept in clear');

    // The relay secret opens the relay, with the scopes a relay holds (never admin or approvals).
    const relay = await connectAs(gw, secret, ALL_SCOPES, ['tab-relay'], { origin: EXT_ORIGIN });
    assert.equal(relay.reply.ok, true, JSON.stringify(relay.reply));
    assert.deepEqual(relay.reply.payload.scopes, ['operator.read', 'operator.write']);
    // ...and nothing else: without the tab-relay cap it is refused.
    const asUi = await connectAs(gw, secret, ['operator.read']);
    assert.equal(asUi.reply.ok, false);
    await asUi.closed;

    const operator = await connectAs(gw, gw.token, ALL_SCOPES);
    const listed = await operator.request('pairings.list');
    assert.deepEqual(
      listed.payload.pairings.map((p: any) => [p.id, p.origin, p.connected]),
      [[id, EXT_ORIGIN, true]],
    );
    const reader = await connectAs(gw, gw.token, ['operator.read', 'operator.write']);
    assert.equal(
      (await reader.request('pairings.revoke', { id })).error.details.missingScope,
      'operator.admin',
      'revoking needs operator.admin',
    );
    reader.ws.close();

    assert.equal((await operator.request('pairings.revoke', { id })).ok, true);
    assert.equal((await relay.closed).code, 4003);
    assert.deepEqual(pairings(), []);
    const again = await connectAs(gw, secret, ['operator.read', 'operator.write'], ['tab-relay']);
    assert.equal(again.reply.ok, false);
    assert.equal(again.reply.error.code, 'UNAUTHORIZED');
    // The last pairing gone, the extension's origin is off the allow-list.
    await assert.rejects(openSocket(gw, { origin: EXT_ORIGIN }), (e: any) => e.status === 403);
    assert.equal((await operator.request('pairings.revoke', { id })).error.code, 'NOT_FOUND');
    operator.ws.close();
    assert.ok(alive(gw.pid));
  });

  test('pairings persist across a restart; pairing again replaces the old one instead of piling up', async () => {
    const first = JSON.parse((await pair(EXT_ORIGIN, { token: gw.token })).body);
    const second = JSON.parse((await pair(EXT_ORIGIN, { token: gw.token, replaces: first.pairing_id })).body);
    assert.deepEqual(
      pairings().map((p) => p.id),
      [second.pairing_id],
    );
    await gw.close();
    gw = await startGateway([], { VERITY_CONFIG_DIR: dir });
    const relay = await connectAs(gw, second.relay_secret, ['operator.read', 'operator.write'], ['tab-relay'], {
      origin: EXT_ORIGIN,
    });
    assert.equal(relay.reply.ok, true, JSON.stringify(relay.reply));
    const stale = await connectAs(gw, first.relay_secret, ['operator.read', 'operator.write'], ['tab-relay']);
    assert.equal(stale.reply.ok, false, "the replaced pairing's secret is dead");
    relay.ws.close();
    await stillServing(gw);
  });

  test('a pairing unused for --pairing-max-idle-days is removed at start and its relay refused; a used one lists when it was last used', async () => {
    await gw.close();
    // Two pairings on disk, as a gateway run days ago left them: one idle 3 days, one used yesterday.
    const DAY = 24 * 60 * 60_000;
    const secrets = { stale: 'stale-relay-secret-0123456789', fresh: 'fresh-relay-secret-0123456789' };
    const stored = (id: keyof typeof secrets, daysAgo: number) => ({
      id,
      origin: EXT_ORIGIN,
      createdAt: new Date(Date.now() - 10 * DAY).toISOString(),
      lastUsedAt: new Date(Date.now() - daysAgo * DAY).toISOString(),
      secretSha256: createHash('sha256').update(secrets[id]).digest('hex'),
    });
    writeFileSync(join(dir, 'pairings.json'), JSON.stringify([stored('stale', 3), stored('fresh', 1)]), {
      mode: 0o600,
    });
    gw = await startGateway(['--pairing-max-idle-days', '2'], { VERITY_CONFIG_DIR: dir });
    assert.match(
      gw.stderr() + gw.stdout(),
      /removed the extension pairing stale: unused since .*pairing-max-idle-days/,
    );
    assert.deepEqual(
      pairings().map((p) => p.id),
      ['fresh'],
      'the expired pairing is gone from pairings.json',
    );

    // The attack: the expired pairing's secret (copied off this machine, or an extension long gone).
    const expired = await connectAs(gw, secrets.stale, ['operator.read', 'operator.write'], ['tab-relay'], {
      origin: EXT_ORIGIN,
    });
    assert.equal(expired.reply.ok, false, JSON.stringify(expired.reply));
    assert.equal(expired.reply.error.code, 'UNAUTHORIZED');
    assert.match(expired.reply.error.message, /no pairing.*pairing-max-idle-days.*pair the extension again/);
    assert.equal((await expired.closed).code, 4001);
    assert.deepEqual(
      expired.frames.filter((f) => f.type !== 'res'),
      [],
      'no event reached it',
    );

    // The pairing still in use connects, and its idle time starts again (shown in the Control UI's list).
    const before = Date.now();
    const relay = await connectAs(gw, secrets.fresh, ['operator.read', 'operator.write'], ['tab-relay'], {
      origin: EXT_ORIGIN,
    });
    assert.equal(relay.reply.ok, true, JSON.stringify(relay.reply));
    const operator = await connectAs(gw, gw.token, ALL_SCOPES);
    const listed = (await operator.request('pairings.list')).payload;
    METHOD_SCHEMAS['pairings.list'].result.parse(listed); // the row as the protocol declares it
    const [row] = listed.pairings;
    assert.equal(row.id, 'fresh');
    assert.equal(row.connected, true);
    assert.ok(
      Date.parse(row.lastUsedAt) >= before - 1000,
      `last used at the connect, not a day ago: ${row.lastUsedAt}`,
    );
    // Disconnected, it counts as used until then; the Control UI's "Paired extensions" shows that time.
    relay.ws.close();
    const closed = await waitFor(async () => {
      const [r] = (await operator.request('pairings.list')).payload.pairings;
      return r.connected ? null : r;
    }, 'the relay gone');
    assert.ok(Date.parse(closed.lastUsedAt) >= Date.parse(row.lastUsedAt));
    operator.ws.close();
    const chrome = await sharedChromium();
    try {
      const page = await chrome.context.newPage();
      await page.goto(`${gw.base}/?token=${gw.token}`);
      const shown = await page.waitForSelector('[data-pairings] [data-pairing="fresh"] time', { timeout: 20_000 });
      assert.equal(await shown!.evaluate((e) => e.getAttribute('datetime')), closed.lastUsedAt);
      assert.match(await shown!.evaluate((e) => e.parentElement!.textContent ?? ''), /last used/);
    } finally {
      await chrome.close();
    }
    await stillServing(gw);
  });
});
