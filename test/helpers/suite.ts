// The usual setup of a browser-route test file: fixtures served, a Chromium, and Verity attached to it.
// `browserSuite` builds the core in this process (the options parsed and loaded as `verity mcp` does it, the
// real MCP SDK client over the SDK's in-memory transport) over a browser context of its own in the run's
// shared Chromium (chromium.ts `sharedChromium`): no server process and no browser to start per file.
// `browserSuiteOverStdio` spawns `verity mcp` instead (attached to such a context, or to a Chromium of the
// file's own), for the files that test the process and its stdio transport end to end. Everything is torn
// down in `close` (processes by PID).
import type { Page } from 'puppeteer-core';
import { parseCommandLine } from '../../server/cli/parse.js';
import { serverOptions } from '../../server/cli/serve.js';
import { model, sharedChromium, type TestBrowser } from './chromium.js';
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
 * Verity's core in this process as `verity mcp --headless --browser-url <the shared Chromium> --browser-context
 * <the file's own> [extraArgs]` builds it.
 */
export function browserSuite(extraArgs: string[] = []): Promise<Suite> {
  return suiteWith(sharedChromium, async (chrome) => {
    const verity = await coreOver([...chrome.attach, ...extraArgs]);
    const agent = await verity.connect();
    return { client: agent.client, call: wrap(agent.client), close: () => verity.close() };
  });
}

/** The core as `verity mcp --headless [args]` builds it (options parsed and loaded the same way), in this process. */
export async function coreOver(args: string[]): Promise<InMemoryVerity> {
  const parsed = parseCommandLine(['mcp', '--headless', ...args], process.env);
  if (parsed.kind !== 'run') throw new Error(`coreOver: ${args.join(' ')} asks for help or the version`);
  return inMemoryVerity(await serverOptions(parsed.config, process.env));
}

/**
 * `verity mcp --headless <attached to the test's Chromium> [extraArgs]` as a process, over stdio: a context of
 * the shared Chromium, or a Chromium of the file's own (`launchChromium`) for a file that kills or freezes it.
 */
export function browserSuiteOverStdio(
  extraArgs: string[] = [],
  chromium: () => Promise<TestBrowser> = sharedChromium,
): Promise<Suite<Verity>> {
  return suiteWith(chromium, (chrome) => startVerity([...chrome.attach, ...extraArgs]));
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
