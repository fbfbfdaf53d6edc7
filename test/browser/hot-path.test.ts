// The hot path of an action (#25 item 1): a call resolves its element token once and finds its tab once,
// however many parts need them (the read-ahead, the audit trail's labels, the router, the queue's lock,
// the driver, the side-effect watch); the tab found travels in the resolved target. Counted on the core
// in this process (SnapshotRegistry.resolvedCount, BrowserHost.foundCount), driven by the real MCP SDK
// client over a real Chromium. The re-read for an action's `changes` is one page call for a click and none of
// its own for a type_text (its read-back does it). delivery_mode travels on the target only, and the CDP route honours it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { inMemoryVerity, type InMemoryAgent, type InMemoryVerity } from '../helpers/in-memory.js';
import type { Tab } from '../../server/cdp/tab/tab.js';

let fx: FixtureServer;
let chrome: TestBrowser;
let v: InMemoryVerity;
let agent: InMemoryAgent;

before(async () => {
  fx = await serveFixtures();
  chrome = await sharedChromium();
  v = await inMemoryVerity({ browserUrl: chrome.browserUrl, browserContextId: chrome.contextId });
  agent = await v.connect();
});
after(async () => {
  await v?.close();
  await chrome?.close();
  await fx?.close();
});

/** A fresh plain.html in the agent's tab, and the token of the element labelled `label`. */
async function tokenOf(label: string): Promise<string> {
  const nav = await agent.call('page', { action: 'navigate', url: fx.url('plain.html') });
  assert.equal(nav.isError, false, nav.text);
  const state = await agent.call('get_window_state', { format: 'full', include_screenshot: false });
  assert.equal(state.isError, false, state.text);
  const elements = state.structured.elements as Array<{ label: string; element_token: string }>;
  const hit = elements.find((e) => e.label === label);
  assert.ok(hit, `no element labelled ${label}: ${state.text.slice(0, 400)}`);
  return hit.element_token;
}

function countWhile<T>(run: () => Promise<T>): Promise<{ result: T; tokens: number; tabs: number }> {
  const { snapshots } = v.core.router;
  const tokens0 = snapshots.resolvedCount;
  const tabs0 = v.core.browser.foundCount;
  return run().then((result) => ({
    result,
    tokens: snapshots.resolvedCount - tokens0,
    tabs: v.core.browser.foundCount - tabs0,
  }));
}

/** What `run` sent on the tab's own CDP session: methods, and page evaluates by the start of their expression. */
async function sentWhile<T>(tab: Tab, run: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const sent: string[] = [];
  const send = tab.session.send.bind(tab.session);
  (tab.session as any).send = (method: string, params?: any) => {
    sent.push(method === 'Runtime.evaluate' ? `evaluate ${String(params?.expression).slice(0, 80)}` : method);
    return (send as any)(method, params);
  };
  try {
    return { result: await run(), sent };
  } finally {
    delete (tab.session as any).send;
  }
}

test('a tab type_text by token resolves its token once and finds its tab once', async () => {
  const token = await tokenOf('Text');
  const { result, tokens, tabs } = await countWhile(() =>
    agent.call('type_text', { element_token: token, text: 'The quick brown fox.' }),
  );
  assert.equal(result.structured.effect, 'confirmed', result.text);
  assert.equal(tokens, 1, 'the token is resolved once in the whole call');
  assert.equal(tabs, 1, 'the tab is looked up by id once in the whole call');
});

test('a tab click by token resolves its token once and finds its tab once', async () => {
  const token = await tokenOf('Checkbox');
  const { result, tokens, tabs } = await countWhile(() => agent.call('click', { element_token: token }));
  assert.equal(result.structured.effect, 'confirmed', result.text);
  assert.equal(tokens, 1, 'the token is resolved once in the whole call');
  assert.equal(tabs, 1, 'the tab is looked up by id once in the whole call');
});

test('a click on an observed tab reads back what it changed in one page call (no frame tree, no shadow piercing)', async () => {
  const token = await tokenOf('Checkbox');
  const tab = await v.core.browser.findTab(v.core.router.snapshots.resolve(token).key);
  const { result, sent } = await sentWhile(tab, () => agent.call('click', { element_token: token }));
  assert.equal(result.structured.effect, 'confirmed', result.text);
  assert.equal(result.structured.changes_complete, true, result.text);
  assert.ok(!sent.includes('Page.getFrameTree'), `the frame tree was listed: ${sent.join(' | ')}`);
  assert.ok(!sent.some((m) => m.includes('closedRootCandidates')), `closed roots were pierced: ${sent.join(' | ')}`);
  assert.equal(sent.filter((m) => m.includes('reobserve')).length, 1, `one re-read: ${sent.join(' | ')}`);
});

test('a type_text on an observed tab re-reads what it changed in the page call of its read-back', async () => {
  const token = await tokenOf('Text');
  const tab = await v.core.browser.findTab(v.core.router.snapshots.resolve(token).key);
  // What the typing changes beside the field: a line of text and a button the page enables on input.
  await tab.page.evaluate(() => {
    const field = document.getElementById('text')!;
    const status = document.createElement('p');
    const send = document.createElement('button');
    send.textContent = 'Send';
    send.disabled = true;
    document.body.append(status, send);
    field.addEventListener('input', () => {
      status.textContent = `Typed ${(field as HTMLInputElement).value.length} characters`;
      send.disabled = false;
    });
  });
  // Observed again: the held observation has the status and the button as they were before the typing.
  const state = await agent.call('get_window_state', { format: 'full', include_screenshot: false });
  const elements = state.structured.elements as Array<{ label: string; element_token: string }>;
  const field = elements.find((e) => e.label === 'Text')!.element_token;
  const { result, sent } = await sentWhile(tab, () => agent.call('type_text', { element_token: field, text: 'hello' }));
  assert.equal(result.structured.effect, 'confirmed', result.text);
  assert.equal(result.structured.changes_complete, true, result.text);
  assert.deepEqual(result.structured.changes?.text_added, ['Typed 5 characters'], result.text);
  const enabled = result.structured.changes?.changed?.find((c: { name: string }) => c.name === 'Send');
  assert.equal(enabled?.enabled, true, result.text);
  assert.equal(sent.filter((m) => m.includes('readBack')).length, 1, `one read-back: ${sent.join(' | ')}`);
  assert.ok(!sent.some((m) => m.includes('reobserve')), `a re-read of its own: ${sent.join(' | ')}`);
  const truth = await tab.page.evaluate(() => (document.getElementById('text') as HTMLInputElement).value);
  assert.equal(truth, 'hello');
});

test('a type_text whose typing makes the page stop standing alone re-reads every frame, not asking alone first', async () => {
  const token = await tokenOf('Text');
  const tab = await v.core.browser.findTab(v.core.router.snapshots.resolve(token).key);
  // The typing adds a custom element the observation never looked into: the read-back's re-read says `full`.
  await tab.page.evaluate(() => {
    const field = document.getElementById('text')!;
    field.addEventListener('input', () => {
      const note = document.createElement('x-note');
      note.textContent = 'Draft saved';
      document.body.append(note);
    });
  });
  const state = await agent.call('get_window_state', { format: 'full', include_screenshot: false });
  const elements = state.structured.elements as Array<{ label: string; element_token: string }>;
  const field = elements.find((e) => e.label === 'Text')!.element_token;
  const { result, sent } = await sentWhile(tab, () => agent.call('type_text', { element_token: field, text: 'hi' }));
  assert.equal(result.structured.effect, 'confirmed', result.text);
  assert.deepEqual(result.structured.changes?.text_added, ['Draft saved'], result.text);
  const rereads = sent.filter((m) => m.includes('reobserve'));
  assert.ok(rereads.length >= 1, `every frame re-read: ${sent.join(' | ')}`);
  assert.ok(!rereads.some((m) => m.includes(',true)')), `asked alone again: ${sent.join(' | ')}`);
});

test('a token resolved as the call arrived, made stale before it is routed, is refused stale', async () => {
  const token = await tokenOf('Text');
  const early = v.core.router.snapshots.resolve(token);
  // A newer snapshot of the tab while the call waited (an approval, the queue): the early resolution is not used.
  await agent.call('get_window_state', { include_screenshot: false });
  await assert.rejects(
    v.core.router.resolve(
      { element_token: token },
      { connectionId: agent.connectionId, tokens: new Map([[token, early]]) },
    ),
    (e: any) => e.code === 'stale_element_token',
  );
});

test('delivery_mode foreground on a tab is honoured: the tab is brought to the front and the result says so', async () => {
  const token = await tokenOf('Text');
  const r = await agent.call('type_text', { element_token: token, text: 'front', delivery_mode: 'foreground' });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal(r.structured.delivery.mode, 'foreground', r.text);
  const background = await agent.call('type_text', { element_token: token, text: 'back' });
  assert.equal(background.structured.delivery.mode, 'background', background.text);
});
