// The usual setup of a browser-route test file: fixtures served, a test-owned Chromium, and `verity mcp`
// attached to it. Everything is torn down by PID in `close`.
import type { Page } from 'puppeteer-core';
import { launchChromium, model, type TestBrowser } from './chromium.js';
import { serveFixtures, type FixtureServer } from './fixtures.js';
import { snapshot, startVerity, type Verity } from './mcp.js';

export interface Suite {
  fx: FixtureServer;
  chrome: TestBrowser;
  v: Verity;
  open(path: string): Promise<Page>;
  model(page: Page): Promise<any>;
  snapshot: typeof snapshot;
  close(): Promise<void>;
}

export async function browserSuite(extraArgs: string[] = []): Promise<Suite> {
  const fx = await serveFixtures();
  const chrome = await launchChromium();
  const v = await startVerity(['--browser-url', chrome.browserUrl, ...extraArgs]);
  return {
    fx,
    chrome,
    v,
    model,
    snapshot,
    async open(path) {
      const url = path.startsWith('http') ? path : fx.url(path);
      const r = await v.call('page', { action: 'navigate', url });
      if (r.isError) throw new Error(`navigate refused: ${r.text}`);
      const page = await chrome.page(url.split('?')[0]);
      await page.waitForFunction('window.__ready !== false && document.readyState === "complete"', { timeout: 10_000 });
      return page;
    },
    async close() {
      await v.close();
      await chrome.close();
      await fx.close();
    },
  };
}
