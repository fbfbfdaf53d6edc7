// A core attached to one browser context of a browser it did not start (--browser-context: how
// the in-process browser files share the run's one Chromium): it sees and opens that context's tabs only,
// its download guard holds there too (Browser.setDownloadBehavior set for that context: a context DevTools
// made otherwise denies every download), and on close it leaves the context and the browser as they were.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type BrowserContext } from 'puppeteer-core';
import { browserSession } from '../../server/cdp/browser/browser.js';
import { launchChromium, type TestBrowser } from '../helpers/chromium.js';
import { serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { sleep, wrap } from '../helpers/gateway.js';
import { snapshot } from '../helpers/mcp.js';
import { coreOver } from '../helpers/suite.js';

let fx: FixtureServer;
let chrome: TestBrowser;
let context: BrowserContext;
const downloads = mkdtempSync(join(tmpdir(), 'verity-context-downloads-'));
const savedDownloadDir = process.env.VERITY_DOWNLOAD_DIR;

before(async () => {
  fx = await serveFixtures();
  chrome = await launchChromium();
  context = await chrome.browser.createBrowserContext();
  process.env.VERITY_DOWNLOAD_DIR = downloads;
});
after(async () => {
  await chrome?.close();
  await fx?.close();
  if (savedDownloadDir === undefined) delete process.env.VERITY_DOWNLOAD_DIR;
  else process.env.VERITY_DOWNLOAD_DIR = savedDownloadDir;
  rmSync(downloads, { recursive: true, force: true });
});

/** A core as `verity mcp --browser-url <this file's Chromium> --browser-context <id>` builds it. */
const heldTo = (contextId: string) => coreOver(['--browser-url', chrome.browserUrl, '--browser-context', contextId]);

describe('a core held to one browser context', () => {
  test("lists and opens that context's tabs only; closing it leaves the context open", async () => {
    const outside = await chrome.browser.newPage(); // the default context's: another owner's tab
    await outside.goto(fx.url('plain.html'));
    const verity = await heldTo(context.id!);
    try {
      const call = wrap((await verity.connect()).client);
      const nav = await call('page', { action: 'navigate', url: fx.url('clicks.html') });
      assert.equal(nav.isError, false, nav.text);
      assert.ok(
        (await context.pages()).some((p) => p.url().includes('clicks.html')),
        'opened in its context',
      );
      const tabs = await call('page', { action: 'list_tabs' });
      const urls = JSON.stringify(tabs.structured);
      assert.match(urls, /clicks\.html/);
      assert.doesNotMatch(urls, /plain\.html/, 'a tab of another context is not listed');
    } finally {
      await verity.close();
      await outside.close();
    }
    assert.ok(
      chrome.browser.browserContexts().some((c) => c.id === context.id),
      'the context outlives the core',
    );
    assert.ok(
      (await context.pages()).some((p) => p.url().includes('clicks.html')),
      'and so do its tabs',
    );
  });

  test("that context's downloads are guarded: one no action caused is cancelled and reported, a click's are saved", async () => {
    const verity = await heldTo(context.id!);
    try {
      const agent = await verity.connect();
      const call = wrap(agent.client);
      const nav = await call('page', { action: 'navigate', url: fx.url('downloads.html?auto') });
      assert.equal(nav.isError, false, nav.text);
      await sleep(2_500); // the page's own downloads start 200 ms after load
      const snap = await snapshot({ call }, { format: 'full' });
      const r = await call('click', { element_token: snap.token('Do nothing else') });
      assert.equal(r.structured.effect, 'confirmed', r.text);
      const refused = (r.structured.side_effects ?? []).filter((e: any) => e.kind === 'download');
      assert.ok(refused.length >= 1, `the context's downloads were not seen: ${r.text}`);
      for (const e of refused) assert.equal(e.code, 'download_without_action', r.text);
      assert.deepEqual(existsSync(downloads) ? readdirSync(downloads) : [], []);
      // And those a click caused are saved: a context DevTools made denies every download unless its own
      // behaviour is set (one set for the default context alone left these cancelled).
      const saved = await call('click', { element_token: snap.token('Download four') });
      assert.equal(saved.structured.effect, 'confirmed', saved.text);
      const kept = (saved.structured.side_effects ?? []).filter((e: any) => e.kind === 'download');
      assert.deepEqual(
        kept.map((e: any) => e.state),
        ['completed', 'completed', 'completed', 'completed'],
        saved.text,
      );
      assert.deepEqual(readdirSync(downloads).sort(), ['part-1.bin', 'part-2.bin', 'part-3.bin', 'part-4.bin']);
    } finally {
      await verity.close();
    }
  });

  test('a context the browser does not have is refused, naming it', async () => {
    const verity = await heldTo('0123456789ABCDEF0123456789ABCDEF');
    try {
      const call = wrap((await verity.connect()).client);
      const r = await call('page', { action: 'list_tabs' });
      assert.equal(r.isError, true, r.text);
      assert.match(r.text, /no browser context 0123456789ABCDEF0123456789ABCDEF/);
    } finally {
      await verity.close();
    }
  });
});

describe('a browser with several DevTools clients', () => {
  // Each client adds a browser target, and a client lists the earlier clients' first: `browser.target()` is
  // one of theirs. Right after they disconnect it may still be listed and no longer attachable (3 rounds in
  // 8 measured): in such a round browserSession must pass it over.
  test('browserSession reaches the browser while the first browser target listed is a gone one', async () => {
    // Whether `late` still lists the earlier clients' targets when asked is a race with their targetDestroyed
    // events, so rounds go on until one is seen (most often the first), bounded by time, not a count.
    let staleSeen = 0;
    let rounds = 0;
    for (const until = Date.now() + 20_000; staleSeen === 0 && Date.now() < until; rounds++) {
      const earlier = await Promise.all([1, 2].map(() => puppeteer.connect({ browserURL: chrome.browserUrl })));
      const late = await puppeteer.connect({ browserURL: chrome.browserUrl });
      try {
        await Promise.all(earlier.map((b) => b.disconnect()));
        // The first browser target listed is gone (its attach fails): browserSession must still reach the browser.
        const gone = await late
          .target()
          .createCDPSession()
          .then(
            (s) => s.detach().then(() => false),
            () => true,
          );
        if (!gone) continue;
        staleSeen++;
        const session = await browserSession(late);
        const version = await session.send('Browser.getVersion');
        assert.match(version.product, /Chrome/);
        await session.detach();
      } finally {
        await late.disconnect();
      }
    }
    assert.ok(staleSeen > 0, `in ${rounds} rounds (20 s) the first browser target listed was never a gone one`);
  });
});
