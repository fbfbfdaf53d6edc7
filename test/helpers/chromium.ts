// A Chromium the test owns (Verity attaches to it with --browser-url), plus a second, independent CDP
// connection the test uses to read the page's own state (the editor's or framework's model).
import puppeteer, { type Browser, type BrowserContext, type Page, type Protocol } from 'puppeteer-core';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_FLAGS, findChromium } from '../../server/cdp/browser/browser.js';
import { bounded } from '../../server/contract/bounded.js';
import { CdpConnection } from '../../bench/cdp.js';

export interface TestBrowser {
  browser: Browser;
  browserUrl: string;
  pid: number;
  /** Set when the test has a context of the run's shared Chromium (`sharedChromium`), not a browser of its own. */
  contextId?: string;
  /** The flags that attach a `verity` to this browser: --browser-url, and --browser-context when shared. */
  attach: string[];
  /** The file's own context when shared; the browser's default context when the browser is the file's own. */
  context: BrowserContext;
  /** A fresh browser context (its own storage and saved layout), closed with this browser at the latest. */
  newContext(): Promise<BrowserContext>;
  page(urlPart: string): Promise<Page>;
  /** The browser's own list of its page targets (this context's only, when shared), asked afresh. */
  pageTargets(): Promise<Protocol.Target.TargetInfo[]>;
  close(): Promise<void>;
}

/**
 * The run's one Chromium (scripts/run-tests.mjs launches it and names it in SHARED_CHROMIUM_URL), reached
 * through a browser context of this file's own: its pages, cookies, storage and cache are this file's alone,
 * and closing it closes only the context. A file run without the runner launches a Chromium of its own.
 * A Verity under test attaches to that context alone (`attach`: --browser-context, or browserSuite's
 * in-process core); a test that needs the whole browser (kills it, counts its processes) keeps `launchChromium`.
 */
export async function sharedChromium(): Promise<TestBrowser> {
  const browserUrl = process.env.SHARED_CHROMIUM_URL;
  const pid = Number(process.env.SHARED_CHROMIUM_PID);
  if (!browserUrl || !pid) return launchChromium();
  const browser = await puppeteer.connect({ browserURL: browserUrl, defaultViewport: null }).catch((e: Error) => {
    throw new Error(`the run's shared Chromium (pid ${pid}, ${browserUrl}) does not answer: ${e.message}`);
  });
  const context = await browser.createBrowserContext();
  const contextId = context.id;
  if (!contextId) throw new Error("the shared Chromium's new browser context has no id");
  // Every context this file made, closed with it: the shared browser outlives the file.
  const made = [context];
  return {
    browser,
    browserUrl,
    pid,
    contextId,
    attach: ['--browser-url', browserUrl, '--browser-context', contextId],
    context,
    async newContext() {
      const another = await browser.createBrowserContext();
      made.push(another);
      return another;
    },
    page: (urlPart) => pageOf(() => context.pages(), urlPart),
    pageTargets: async () => (await targetsOf(browserUrl)).filter((t) => t.browserContextId === contextId),
    async close() {
      await Promise.all(made.map((c) => c.close().catch(() => {})));
      await browser.disconnect().catch(() => {});
    },
  };
}

export async function launchChromium(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'verity-test-profile-'));
  const browser = await puppeteer.launch({
    executablePath: findChromium(process.env.VERITY_CHROMIUM, undefined, process.env),
    headless: true,
    defaultViewport: null,
    // The test drives it over the pipe, so Chromium exits with this process however it ends (a runner's
    // timeout or a kill included); the port is for the Verity under test (--browser-url).
    pipe: true,
    args: [...CHROMIUM_FLAGS, '--remote-debugging-port=0'],
    userDataDir: profile,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  const pid = browser.process()!.pid!;
  const port = await devToolsPort(profile);
  return {
    browser,
    pid,
    browserUrl: `http://127.0.0.1:${port}`,
    attach: ['--browser-url', `http://127.0.0.1:${port}`],
    context: browser.defaultBrowserContext(),
    newContext: () => browser.createBrowserContext(),
    page: (urlPart) => pageOf(() => browser.pages(), urlPart),
    pageTargets: () => targetsOf(`http://127.0.0.1:${port}`),
    async close() {
      await browser.close().catch(() => {});
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* exited */
      }
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Target.getTargets' pages, on a DevTools connection of its own (bench/cdp.ts), closed at once: not a
 * connection's cached view, and not `browser.target()`, which on a browser with several DevTools clients may be
 * another client's.
 */
async function targetsOf(browserUrl: string): Promise<Protocol.Target.TargetInfo[]> {
  const { webSocketDebuggerUrl } = (await (await fetch(`${browserUrl}/json/version`)).json()) as {
    webSocketDebuggerUrl: string;
  };
  const cdp = await CdpConnection.connect(webSocketDebuggerUrl);
  try {
    const reply = cdp.send<Protocol.Target.GetTargetsResponse>('Target.getTargets');
    const { targetInfos } = await bounded(reply, 10_000, 'Target.getTargets');
    return targetInfos.filter((t) => t.type === 'page');
  } finally {
    await cdp.close();
  }
}

/** The first page whose URL contains urlPart, waited for at most 5 s. */
async function pageOf(pages: () => Promise<Page[]>, urlPart: string): Promise<Page> {
  for (let i = 0; i < 50; i++) {
    const found = (await pages()).find((p) => p.url().includes(urlPart));
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no tab whose URL contains ${urlPart} within 5 s`);
}

/** The port Chromium chose for --remote-debugging-port=0, from the file it writes in its profile (at most 10 s). */
async function devToolsPort(profile: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    try {
      const port = readFileSync(join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0];
      if (port) return port;
    } catch {
      /* not written yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`Chromium wrote no DevToolsActivePort in ${profile} within 10 s`);
}

/** The page's own model (`window.__model()` in the fixture), parsed when it is JSON. */
export async function model(page: Page): Promise<any> {
  const raw = await page.evaluate('window.__model()');
  try {
    return JSON.parse(raw as string);
  } catch {
    return raw;
  }
}
