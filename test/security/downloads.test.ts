// Issue #22 item 6, replayed with a real Chromium: a page cannot fill the disk with downloads. A download
// no agent action caused is cancelled and reported refused (download_without_action) in the tab's next
// result; downloads an action caused are kept within the session's quota (count and bytes) and the rest
// refused with download_quota_exceeded; the agent is told file names and sizes, never a host path; the
// download folder holds at most the quota. Issue 42 item 6: a `page navigate` whose own response is the
// file has that download as its own (kept within the quota); a page it leads to that starts downloads by
// script as it loads has them refused, in the next result and in the audit trail (against `verity start`).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { operatorSocket, sleep, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';
import { snapshot, startVerity, type Verity } from '../helpers/mcp.js';

let fx: FixtureServer;
let chrome: TestBrowser;
let v: Verity;
const tmp = mkdtempSync(join(tmpdir(), 'verity-sec-downloads-'));
const downloads = join(tmp, 'downloads');
const MB = 1024 * 1024;
before(async () => {
  fx = await serveFixtures();
  chrome = await sharedChromium();
  v = await startVerity(chrome.attach, {
    VERITY_CONFIG_DIR: join(tmp, 'cfg'),
    VERITY_DOWNLOAD_DIR: downloads,
    VERITY_DOWNLOAD_MAX_FILES: '3',
    VERITY_DOWNLOAD_MAX_MB: '1',
  });
});
after(async () => {
  await v?.close();
  await chrome?.close();
  await fx?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The files the download folder holds now, and their bytes (Chromium's unfinished files included). */
function folder(): { files: string[]; bytes: number } {
  if (!existsSync(downloads)) return { files: [], bytes: 0 };
  const files = readdirSync(downloads);
  return { files, bytes: files.reduce((sum, f) => sum + statSync(join(downloads, f)).size, 0) };
}

function noHostPath(r: { structured: unknown; text: string }): void {
  const all = JSON.stringify(r.structured) + r.text;
  assert.ok(!all.includes(downloads) && !all.includes(tmp), `a host path reached the agent: ${r.text}`);
}

/** The downloads a result tells (side_effects of kind download). */
const downloadsOf = (r: { structured: any }): any[] =>
  (r.structured?.side_effects ?? []).filter((e: any) => e.kind === 'download');

/** Waits (bounded) until the folder holds exactly `files`: Chromium removes a cancelled download's partial file a moment later. */
async function folderSettlesTo(files: string[], where: string = downloads): Promise<void> {
  const list = () => (existsSync(where) ? readdirSync(where).sort() : []);
  for (let i = 0; i < 50 && list().join() !== [...files].sort().join(); i++) await sleep(100);
  assert.deepEqual(list(), [...files].sort(), `the download folder ${where}`);
}

describe('downloads are bounded', () => {
  test('a page that downloads on its own: cancelled, nothing saved, told as refused in the next result', async () => {
    const nav = await v.call('page', { action: 'navigate', url: fx.url('downloads.html?auto') });
    assert.equal(nav.isError, false, nav.text);
    await sleep(2_500); // the page's own downloads start 200 ms after load; Chromium writes them at once
    assert.deepEqual(folder().files, [], 'nothing the page downloaded on its own was kept');
    const snap = await snapshot(v, { format: 'full' });
    const r = await v.call('click', { element_token: snap.token('Do nothing else') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const refused = (r.structured.side_effects ?? []).filter((e: any) => e.kind === 'download');
    assert.ok(refused.length >= 1, r.text);
    for (const e of refused) {
      assert.equal(e.state, 'refused', r.text);
      assert.equal(e.code, 'download_without_action', r.text);
    }
    assert.match(r.text, /download_without_action/);
    noHostPath(r);
    await sleep(1_500);
    assert.deepEqual(folder().files, []);
  });

  test("downloads a click caused: kept up to the session's quota, the rest refused by name; no host path", async () => {
    const nav = await v.call('page', { action: 'navigate', url: fx.url('downloads.html') });
    assert.equal(nav.isError, false, nav.text);
    const snap = await snapshot(v, { format: 'full' });
    const r = await v.call('click', { element_token: snap.token('Download four') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    noHostPath(r);
    const dls = (r.structured.side_effects ?? []).filter((e: any) => e.kind === 'download');
    // A download the page starts after the click's result was built is told in the tab's next result (each of
    // the four is its own saveAs): ask by a hover until all four are told (bounded), as the led-away test does.
    for (let i = 0; i < 20 && dls.length < 4; i++) {
      await sleep(250);
      const again = await snapshot(v, { format: 'full' });
      const next = await v.call('hover', { element_token: again.token('Download four') });
      dls.push(...(next.structured.side_effects ?? []).filter((e: any) => e.kind === 'download'));
      noHostPath(next);
    }
    assert.equal(dls.length, 4, r.text);
    const kept = dls.filter((e: any) => e.state === 'completed');
    const refused = dls.filter((e: any) => e.state === 'refused');
    assert.ok(kept.length >= 1 && kept.length <= 2, `1 MB holds at most two 400 KB files: ${r.text}`);
    for (const e of kept) {
      assert.match(e.file, /^part-\d\.bin$/);
      assert.equal(e.size_bytes, 400 * 1024, r.text);
      assert.equal(e.path, undefined);
    }
    assert.ok(refused.length >= 2, r.text);
    for (const e of refused) {
      assert.equal(e.code, 'download_quota_exceeded', r.text);
      assert.match(e.detail, /--download-max-mb|--download-max-files/);
    }
    await sleep(1_500);
    const disk = folder();
    assert.ok(disk.bytes <= 1 * MB, `the folder holds ${disk.bytes} bytes: ${disk.files.join(', ')}`);
    assert.equal(disk.files.length, kept.length, disk.files.join(', '));
  });

  test('the session at its quota: a further download is refused at once, the folder unchanged', async () => {
    const before = folder();
    const snap = await snapshot(v, { format: 'full' });
    const r = await v.call('click', { element_token: snap.token('Download four') });
    const dls = (r.structured.side_effects ?? []).filter((e: any) => e.kind === 'download');
    assert.ok(dls.length >= 1, r.text);
    for (const e of dls) {
      assert.equal(e.state, 'refused', r.text);
      assert.equal(e.code, 'download_quota_exceeded', r.text);
    }
    noHostPath(r);
    await sleep(1_500);
    // Chromium removes a cancelled download's partial file (named by its guid) a moment after the cancel: the
    // files kept are what must not change.
    const kept = (files: string[]) => files.filter((f) => !/^[0-9a-f]{8}-[0-9a-f-]{27}$/.test(f)).sort();
    assert.deepEqual(kept(folder().files), kept(before.files));
  });

  test('a click on a link to a page that downloads four files as it loads: a navigation is not a gesture, nothing saved', async () => {
    // Issue 42 item 6: the page's own script starts the downloads 100 ms after it loads; the click's action
    // led there, but the downloads are the new document's, not the click's (it ended on the old one).
    assert.equal((await v.call('start_session', { session: 'led-away' })).isError, false);
    const nav = await v.call('page', { action: 'new_tab', url: fx.url('downloads.html'), session: 'led-away' });
    assert.equal(nav.isError, false, nav.text);
    const tab = { kind: 'tab', tab_id: nav.structured.tab_id };
    const before = folder().files;
    const snap = await snapshot(v, { format: 'full', target: tab, session: 'led-away' });
    const away = await v.call('click', {
      element_token: snap.token('Open the page that downloads'),
      session: 'led-away',
    });
    assert.equal(away.isError, false, away.text);
    // The downloads are told refused in this result or the tab's next ones: ask until all four are (bounded).
    const refused = (away.structured.side_effects ?? []).filter((e: any) => e.kind === 'download');
    for (let i = 0; i < 20 && refused.length < 4; i++) {
      await sleep(250);
      const again = await snapshot(v, { format: 'full', target: tab, session: 'led-away' });
      const r = await v.call('click', { element_token: again.token('Do nothing else'), session: 'led-away' });
      refused.push(...(r.structured.side_effects ?? []).filter((e: any) => e.kind === 'download'));
      noHostPath(r);
    }
    assert.deepEqual(
      refused.map((e: any) => `${e.file} ${e.state} ${e.code}`).sort(),
      [1, 2, 3, 4].map((n) => `part-${n}.bin refused download_without_action`),
    );
    // Chromium removes a cancelled download's partial file (named by its guid) a moment after the cancel.
    const settled = () => folder().files.sort().join() === [...before].sort().join();
    for (let i = 0; i < 50 && !settled(); i++) await sleep(100);
    assert.deepEqual(folder().files.sort(), before.sort(), 'nothing the new page downloaded was kept');
  });

  test('a download a click starts a moment later is kept and told in the next result; one much later is refused', async () => {
    // Another session: a quota of its own.
    assert.equal((await v.call('start_session', { session: 'later' })).isError, false);
    const nav = await v.call('page', { action: 'new_tab', url: fx.url('downloads.html'), session: 'later' });
    assert.equal(nav.isError, false, nav.text);
    const tab = { kind: 'tab', tab_id: nav.structured.tab_id };
    const snap = await snapshot(v, { format: 'full', target: tab, session: 'later' });
    const soon = await v.call('click', { element_token: snap.token('Download in a moment'), session: 'later' });
    assert.equal(soon.structured.effect, 'confirmed', soon.text);
    await sleep(2_000);
    assert.ok(folder().files.includes('part-8.bin'), folder().files.join(', '));
    const told = await v.call('click', { element_token: snap.token('Do nothing else'), session: 'later' });
    const late = (told.structured.side_effects ?? []).find((e: any) => e.kind === 'download');
    assert.ok(late, told.text);
    assert.equal(late.file, 'part-8.bin', told.text);
    assert.equal(late.state, 'completed', told.text);
    assert.equal(late.size_bytes, 400 * 1024, told.text);
    noHostPath(told);

    const much = await v.call('click', { element_token: snap.token('Download much later'), session: 'later' });
    assert.equal(much.structured.effect, 'confirmed', much.text);
    await sleep(5_500);
    assert.ok(!folder().files.some((f) => f.startsWith('part-9')), folder().files.join(', '));
    const next = await v.call('click', { element_token: snap.token('Do nothing else'), session: 'later' });
    const refused = (next.structured.side_effects ?? []).find((e: any) => e.kind === 'download');
    assert.ok(refused, next.text);
    assert.equal(refused.file, 'part-9.bin');
    assert.equal(refused.code, 'download_without_action', next.text);
  });

  test("page navigate to a URL whose own response is a file: the navigation's download, kept within the session's quota and told in its result", async () => {
    assert.equal((await v.call('start_session', { session: 'nav-file' })).isError, false);
    const opened = await v.call('page', { action: 'new_tab', url: fx.url('downloads.html'), session: 'nav-file' });
    assert.equal(opened.isError, false, opened.text);
    const tab_id = opened.structured.tab_id;
    const before = folder().files;
    const nav = await v.call('page', {
      action: 'navigate',
      tab_id,
      url: fx.url('attachment?name=report.bin&kb=300'),
      session: 'nav-file',
    });
    assert.equal(nav.isError, false, nav.text);
    noHostPath(nav);
    assert.deepEqual(
      downloadsOf(nav).map((e) => `${e.file} ${e.state} ${e.size_bytes}`),
      [`report.bin completed ${300 * 1024}`],
      nav.text,
    );
    // The response was a file: the tab stays on the page it showed.
    assert.equal(nav.structured.url, fx.url('downloads.html'), nav.text);
    await folderSettlesTo([...before, 'report.bin']);
    assert.equal(statSync(join(downloads, 'report.bin')).size, 300 * 1024);

    // 300 KiB kept and 900 more would pass the session's 1 MB: the navigation's file is refused by its quota.
    const over = await v.call('page', {
      action: 'navigate',
      tab_id,
      url: fx.url('attachment?name=big.bin&kb=900'),
      session: 'nav-file',
    });
    assert.equal(over.isError, false, over.text);
    noHostPath(over);
    const refused = downloadsOf(over);
    assert.deepEqual(
      refused.map((e) => `${e.file} ${e.state} ${e.code}`),
      ['big.bin refused download_quota_exceeded'],
      over.text,
    );
    assert.match(refused[0].detail, /--download-max-mb/);
    await folderSettlesTo([...before, 'report.bin']);
  });

  test('page navigate to a page that downloads four files by script as it loads: nothing saved, each refused download_without_action in the next results', async () => {
    assert.equal((await v.call('start_session', { session: 'nav-away' })).isError, false);
    const opened = await v.call('page', { action: 'new_tab', url: fx.url('downloads.html'), session: 'nav-away' });
    assert.equal(opened.isError, false, opened.text);
    const tab = { kind: 'tab', tab_id: opened.structured.tab_id };
    const before = folder().files;
    const nav = await v.call('page', {
      action: 'navigate',
      tab_id: tab.tab_id,
      url: fx.url('downloads.html?auto=4&delay=100'),
      session: 'nav-away',
    });
    assert.equal(nav.isError, false, nav.text);
    // The navigation ended on the new page's load; the downloads its script starts are no result's own.
    const told = downloadsOf(nav);
    assert.ok(
      told.every((e) => e.state === 'refused'),
      nav.text,
    );
    for (let i = 0; i < 20 && told.length < 4; i++) {
      await sleep(250);
      const snap = await snapshot(v, { format: 'full', target: tab, session: 'nav-away' });
      const r = await v.call('click', { element_token: snap.token('Do nothing else'), session: 'nav-away' });
      told.push(...downloadsOf(r));
      noHostPath(r);
    }
    assert.deepEqual(
      told.map((e) => `${e.file} ${e.state} ${e.code}`).sort(),
      [1, 2, 3, 4].map((n) => `part-${n}.bin refused download_without_action`),
    );
    await folderSettlesTo(before);
  });
});

describe('downloads in the audit trail (verity start)', () => {
  const dir = join(tmp, 'gateway');
  const saved = join(dir, 'downloads');
  let gw: Gateway;
  before(async () => {
    gw = await startGateway([], { VERITY_CONFIG_DIR: dir, VERITY_DOWNLOAD_DIR: saved });
  });
  after(async () => {
    await gw?.close();
  });

  test("page navigate to the four-file page: the refusals are in the agent's next result and in the audit trail, and a navigation's own file is kept", async () => {
    const agent = await gw.connect();
    const op = await operatorSocket(gw, ['operator.read']);
    try {
      assert.equal((await agent.call('start_session', { session: 'audit-downloads' })).isError, false);
      const nav = await agent.call('page', { action: 'navigate', url: fx.url('downloads.html?auto=4&delay=100') });
      assert.equal(nav.isError, false, nav.text);
      // The tab's next results (another navigate each, bounded) tell the four refusals.
      const told = downloadsOf(nav);
      for (let i = 0; i < 20 && told.length < 4; i++) {
        await sleep(250);
        const again = await agent.call('page', { action: 'navigate', url: fx.url('downloads.html') });
        assert.equal(again.isError, false, again.text);
        told.push(...downloadsOf(again));
      }
      const expected = [1, 2, 3, 4].map((n) => `part-${n}.bin refused download_without_action`);
      assert.deepEqual(told.map((e) => `${e.file} ${e.state} ${e.code}`).sort(), expected);

      const file = await agent.call('page', { action: 'navigate', url: fx.url('attachment?name=kept.bin&kb=64') });
      assert.equal(file.isError, false, file.text);
      assert.deepEqual(
        downloadsOf(file).map((e) => `${e.file} ${e.state}`),
        ['kept.bin completed'],
        file.text,
      );
      await folderSettlesTo(['kept.bin'], saved);

      // The trail keeps each call's result: the refusals and the kept file are there, under the page tool.
      const inTrail = async () => {
        const page = await op.request('audit.query', { tool: 'page', limit: 500 });
        assert.equal(page.ok, true, JSON.stringify(page.error));
        return page.payload.entries.flatMap((entry: any) => downloadsOf({ structured: entry.result }));
      };
      await waitFor(async () => (await inTrail()).length >= 5, 'the downloads in the audit trail', 50, 200);
      const trail = (await inTrail()).map((e: any) => `${e.file} ${e.state}${e.code ? ` ${e.code}` : ''}`).sort();
      assert.deepEqual(trail, ['kept.bin completed', ...expected], JSON.stringify(trail));
    } finally {
      op.ws.close();
      await agent.disconnect();
    }
  });
});
