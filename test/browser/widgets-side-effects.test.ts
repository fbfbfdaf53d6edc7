// What else an action caused, in its result: a tab or popup opened (its tab_id and URL, drivable at once),
// a download (its name and size; saved in the allowed folder, which the agent is not told), and a beforeunload dialog met by
// page navigate (reported at once, not after a navigation timeout).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { snapshot, startVerity, type Verity } from '../helpers/mcp.js';

let fx: FixtureServer;
let chrome: TestBrowser;
let v: Verity;
const tmp = mkdtempSync(join(tmpdir(), 'verity-side-effects-'));
const downloads = join(tmp, 'downloads');
before(async () => {
  fx = await serveFixtures();
  chrome = await sharedChromium();
  v = await startVerity(chrome.attach, {
    VERITY_CONFIG_DIR: join(tmp, 'cfg'),
    VERITY_DOWNLOAD_DIR: downloads,
  });
});
after(async () => {
  await v?.close();
  await chrome?.close();
  await fx?.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function open() {
  const r = await v.call('page', { action: 'navigate', url: fx.url('side-effects.html') });
  assert.equal(r.isError, false, r.text);
  return snapshot(v, { format: 'full' });
}

describe('side effects of actions', () => {
  test('a target=_blank link: the new tab is reported with its tab_id and URL, and can be driven', async () => {
    const snap = await open();
    const r = await v.call('click', { element_token: snap.token('Open in a new tab') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const opened = (r.structured.side_effects ?? []).filter((e: any) => e.kind === 'tab_opened');
    assert.equal(opened.length, 1, r.text);
    const tabs = (await v.call('page', { action: 'list_tabs' })).structured.tabs as Array<{
      tab_id: string;
      url: string;
    }>;
    const tab = tabs.find((t) => t.tab_id === opened[0].tab_id);
    assert.ok(tab, `the reported tab_id is a listed tab: ${JSON.stringify(tabs)}`);
    assert.match(tab.url, /plain\.html\?from=blank/);
    assert.match(r.text, new RegExp(`Opened tab ${opened[0].tab_id}`));
    const text = await v.call('page', { action: 'get_text', tab_id: opened[0].tab_id });
    assert.equal(text.isError, false, text.text);
    await v.call('page', { action: 'close_tab', tab_id: opened[0].tab_id });
  });

  test('a window.open popup is reported with its tab_id', async () => {
    const snap = await open();
    const r = await v.call('click', { element_token: snap.token('Open a popup') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const opened = (r.structured.side_effects ?? []).filter((e: any) => e.kind === 'tab_opened');
    assert.equal(opened.length, 1, r.text);
    const tabs = (await v.call('page', { action: 'list_tabs' })).structured.tabs as Array<{
      tab_id: string;
      url: string;
    }>;
    assert.ok(
      tabs.some((t) => t.tab_id === opened[0].tab_id),
      JSON.stringify(tabs),
    );
    await v.call('page', { action: 'close_tab', tab_id: opened[0].tab_id });
  });

  test('a click that opens nothing reports no side effects', async () => {
    const snap = await open();
    const r = await v.call('click', { element_token: snap.token('Do nothing else') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.side_effects, undefined);
  });

  test('a download link: the file is reported with its name and size (no host path), saved in the allowed folder', async () => {
    const snap = await open();
    const r = await v.call('click', { element_token: snap.token('Download the report') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const dl = (r.structured.side_effects ?? []).find((e: any) => e.kind === 'download');
    assert.ok(dl, r.text);
    assert.equal(dl.file, 'report.txt');
    assert.equal(dl.state, 'completed', r.text);
    assert.equal(dl.path, undefined, 'the agent is not told where the host keeps it');
    assert.ok(!r.text.includes(downloads), r.text);
    const saved = join(downloads, 'report.txt');
    assert.ok(existsSync(saved), saved);
    assert.equal(dl.size_bytes, readFileSync(saved).length, r.text);
    assert.match(readFileSync(saved, 'utf8'), /<html/i, 'the saved file is the linked document');
  });

  test('page navigate away from a page whose beforeunload asks: the dialog is reported at once', async () => {
    const snap = await open();
    // A beforeunload prompt needs a user gesture on the page: the click gives it one.
    const g = await v.call('click', { element_token: snap.token('Ask before leaving') });
    assert.equal(g.structured.effect, 'confirmed', g.text);
    const r = await v.call('page', { action: 'navigate', url: fx.url('plain.html') });
    assert.equal(r.isError, true, r.text);
    assert.equal(r.structured.refusal.code, 'dialog_open', r.text);
    assert.equal(r.structured.refusal.dialog.type, 'beforeunload');
    assert.match(r.text, /handle_dialog/);
    const answered = await v.call('page', { action: 'handle_dialog', accept: true });
    assert.equal(answered.isError, false, answered.text);
  });
});
