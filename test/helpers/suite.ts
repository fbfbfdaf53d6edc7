// The usual setup of a browser-route test file: fixtures served, a Chromium, and Verity attached to it.
// `browserSuite` builds the core in this process (the options parsed and loaded as `verity mcp` does it, the
// real MCP SDK client over the SDK's in-memory transport) over a browser context of its own in the run's
// shared Chromium (chromium.ts `sharedChromium`): no server process and no browser to start per file.
// `browserSuiteOverStdio` spawns `verity mcp` over a Chromium of the file's own instead, for the files that
// test the process and its stdio transport end to end. Everything is torn down in `close` (processes by PID).
import type { Page } from 'puppeteer-core';
import { parseCommandLine } from '../../server/cli.js';
import { serverOptions } from '../../server/cli/serve.js';
import { launchChromium, model, sharedChromium, type TestBrowser } from './chromium.js';
import { serveFixtures, type FixtureServer } from './fixtures.js';
import { wrap } from './gateway.js';
import { inMemoryVerity, type InMemoryVerity } from './in-memory.js';
import { snapshot, startVerity, type Verity } from './mcp.js';

/** What a test file talks to: an MCP client, and `call` that reads a tool's result as the tests do. */
export type Agent = Pick<Verity, 'client' | 'call' | 'close'>;

export interface Suite<V extends Agent = Agent> {
  fx: FixtureServer;
  chrome: TestBrowser;
  v: V;
  open(path: string): Promise<Page>;
  model(page: Page): Promise<any>;
  snapshot: typeof snapshot;
  close(): Promise<void>;
}

/**
 * Verity's core in this process with `verity mcp --headless --browser-url <the test's Chromium> [extraArgs]`,
 * held to the file's own browser context of the shared Chromium (BrowserOptions.browserContextId).
 */
export function browserSuite(extraArgs: string[] = []): Promise<Suite> {
  return suiteWith(sharedChromium, async (chrome) => {
    const verity = await coreOver(chrome.browserUrl, chrome.contextId, extraArgs);
    const agent = await verity.connect();
    return { client: agent.client, call: wrap(agent.client), close: () => verity.close() };
  });
}

/**
 * The core as `verity mcp --headless --browser-url <browserUrl> [extraArgs]` builds it (options parsed and
 * loaded the same way), in this process, held to one browser context of that browser when given one.
 */
export async function coreOver(
  browserUrl: string,
  browserContextId: string | undefined,
  extraArgs: string[] = [],
): Promise<InMemoryVerity> {
  const parsed = parseCommandLine(['mcp', '--headless', '--browser-url', browserUrl, ...extraArgs]);
  if (parsed.kind !== 'run') throw new Error(`coreOver: ${extraArgs.join(' ')} asks for help or the version`);
  return inMemoryVerity({ ...(await serverOptions(parsed.config)), browserContextId });
}

/** `verity mcp --headless --browser-url <the test's Chromium> [extraArgs]` as a process, over stdio. */
export function browserSuiteOverStdio(extraArgs: string[] = []): Promise<Suite<Verity>> {
  return suiteWith(launchChromium, (chrome) => startVerity(['--browser-url', chrome.browserUrl, ...extraArgs]));
}

async function suiteWith<V extends Agent>(
  chromium: () => Promise<TestBrowser>,
  start: (chrome: TestBrowser) => Promise<V>,
): Promise<Suite<V>> {
  const fx = await serveFixtures();
  const chrome = await chromium();
  const v = await start(chrome);
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
