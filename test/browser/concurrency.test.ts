// Concurrent actions on one tab from one MCP client, from two clients at once on their own tabs (over
// the gateway's HTTP transport), and from two clients (two processes) on one shared tab: each call's
// delivery and read-back are its own (server/routing/queue.ts in a process, server/cdp/tab/tab-lock.ts across
// processes), so every verdict matches what the page itself recorded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedChromium, model, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { startVerity, type ToolResult, type Verity } from '../helpers/mcp.js';
import { startGateway, type Connection, type Gateway } from '../helpers/gateway.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Call = (name: string, args?: Record<string, unknown>) => Promise<ToolResult>;

let fx: FixtureServer;
let chrome: TestBrowser;
before(async () => {
  fx = await serveFixtures();
  chrome = await sharedChromium();
});
after(async () => {
  await chrome?.close();
  await fx?.close();
});

async function tokens(call: Call, tabId?: string): Promise<Record<string, string>> {
  const r = await call('get_window_state', {
    include_screenshot: false,
    format: 'full',
    ...(tabId ? { target: { kind: 'tab', tab_id: tabId } } : {}),
  });
  assert.equal(r.isError, false, r.text);
  return Object.fromEntries(
    (r.structured.elements as Array<{ label: string; element_token: string }>).map((e) => [e.label, e.element_token]),
  );
}

async function openFixture(call: Call, lane = 'a'): Promise<{ tabId: string; page: any }> {
  const url = fx.url(`concurrency.html?lane=${lane}`);
  const r = await call('page', { action: 'navigate', url });
  assert.equal(r.isError, false, r.text);
  const tabs = await call('page', { action: 'list_tabs' });
  const tab = (tabs.structured.tabs as Array<{ tab_id: string; url: string }>).find((t) => t.url === url)!;
  const page = await chrome.page(url);
  return { tabId: tab.tab_id, page };
}

/** A client and the tab it drives; the scenarios fire their calls in every lane at the same time. */
interface Lane {
  call: Call;
  opened: { tabId: string; page: any };
}

/** The three scenarios, each checked against each page's own record. */
function scenarios(lanes: () => Lane[]) {
  test('concurrent clicks on one button: the page counted exactly the confirmed ones', async () => {
    await Promise.all(
      lanes().map(async ({ call, opened: { page, tabId } }) => {
        const t = await tokens(call, tabId);
        const before = (await model(page)).clicks.count;
        const results = await Promise.all(Array.from({ length: 6 }, () => call('click', { element_token: t.Count })));
        for (const r of results) assert.equal(r.structured.effect, 'confirmed', r.text);
        assert.equal((await model(page)).clicks.count - before, results.length);
      }),
    );
  });

  test('concurrent clicks on three buttons: each confirmed, each counted once', async () => {
    await Promise.all(
      lanes().map(async ({ call, opened: { page, tabId } }) => {
        const t = await tokens(call, tabId);
        const before = (await model(page)).clicks;
        const names = ['One', 'Two', 'Three'];
        const results = await Promise.all(names.map((n) => call('click', { element_token: t[n] })));
        results.forEach((r, i) => assert.equal(r.structured.effect, 'confirmed', `${names[i]}: ${r.text}`));
        const now = (await model(page)).clicks;
        for (const id of ['one', 'two', 'three']) assert.equal(now[id] - before[id], 1, id);
      }),
    );
  });

  test('six concurrent type_text into six fields by token: each text in its own field', async () => {
    await Promise.all(
      lanes().map(async ({ call, opened: { page, tabId } }, lane) => {
        const t = await tokens(call, tabId);
        const start = (await model(page)).fields as string[];
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            call('type_text', { element_token: t[`Field ${i}`], text: `v${lane}${i}` }),
          ),
        );
        results.forEach((r, i) => assert.equal(r.structured.effect, 'confirmed', `field ${i}: ${r.text}`));
        const now = (await model(page)).fields as string[];
        now.forEach((v, i) => assert.equal(v, start[i] + `v${lane}${i}`, `field ${i}`));
      }),
    );
  });
}

describe('one client (stdio)', () => {
  let v: Verity;
  let opened: { tabId: string; page: any };
  before(async () => {
    v = await startVerity(chrome.attach);
    opened = await openFixture(v.call);
  });
  after(async () => {
    await v?.close();
  });
  scenarios(() => [{ call: v.call, opened }]);
});

// Two clients never share a tab (sessions apart: another connection's tab does not exist for it), so the
// two-client case is both clients firing at their own tabs at the same time, through one gateway and one
// browser: no call's caret, delivery or verdict may leak into the other client's tab.
describe('two clients over HTTP, each on its own tab, at the same time', () => {
  let gw: Gateway;
  let a: Connection, b: Connection;
  let openedA: { tabId: string; page: any }, openedB: { tabId: string; page: any };
  const dir = mkdtempSync(join(tmpdir(), 'verity-concurrency-'));
  before(async () => {
    gw = await startGateway(chrome.attach, { VERITY_CONFIG_DIR: join(dir, 'cfg') });
    [a, b] = [await gw.connect(), await gw.connect()];
    openedA = await openFixture(a.call, 'a');
    openedB = await openFixture(b.call, 'b');
  });
  after(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  test("B cannot address A's tab", async () => {
    const r = await b.call('get_window_state', { target: { kind: 'tab', tab_id: openedA.tabId } });
    assert.equal(r.isError, true, r.text);
    assert.equal(r.structured.refusal.code, 'target_not_found', r.text);
  });
  scenarios(() => [
    { call: a.call, opened: openedA },
    { call: b.call, opened: openedB },
  ]);
});

// Two MCP clients on ONE tab: two `verity mcp` processes attached to the same browser (two agents pointed
// at one Chrome), both driving a tab the operator opened, which neither owns. Each process serializes its
// own calls; across processes the page agent's lock (one action at a time per frame, in the page)
// keeps one client's focus change or click from landing inside the other's delivery and read-back.
describe('two clients (two processes) on one shared tab', () => {
  let a: Verity, b: Verity;
  let page: any;
  let tabId: string;
  before(async () => {
    const url = fx.url('concurrency.html?lane=shared');
    page = await chrome.context.newPage();
    await page.goto(url);
    [a, b] = await Promise.all([startVerity(chrome.attach), startVerity(chrome.attach)]);
    const tabs = await a.call('page', { action: 'list_tabs' });
    tabId = (tabs.structured.tabs as Array<{ tab_id: string; url: string }>).find((t) => t.url === url)!.tab_id;
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await page?.close().catch(() => {});
  });

  test('concurrent clicks on one button from both: the page counted exactly the confirmed ones', async () => {
    const [ta, tb] = [await tokens(a.call, tabId), await tokens(b.call, tabId)];
    const before = (await model(page)).clicks.count;
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => a.call('click', { element_token: ta.Count })),
      ...Array.from({ length: 4 }, () => b.call('click', { element_token: tb.Count })),
    ]);
    const confirmed = results.filter((r) => r.structured.effect === 'confirmed').length;
    for (const r of results) assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await model(page)).clicks.count - before, confirmed);
  });

  test('concurrent type_text from both into their own fields: each text in its own field, as each verdict says', async () => {
    const [ta, tb] = [await tokens(a.call, tabId), await tokens(b.call, tabId)];
    const start = (await model(page)).fields as string[];
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? b : a).call('type_text', { element_token: (i % 2 ? tb : ta)[`Field ${i}`], text: `w${i}` }),
      ),
    );
    const now = (await model(page)).fields as string[];
    results.forEach((r, i) => {
      assert.equal(r.structured.effect, 'confirmed', `field ${i}: ${r.text}`);
      assert.equal(now[i], start[i] + `w${i}`, `field ${i}`);
    });
  });
});
