// A Chromium the test owns (Verity attaches to it with --browser-url), plus a second, independent CDP
// connection the test uses to read the page's own state (the editor's or framework's model).
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_FLAGS, findChromium } from '../../server/cdp/browser.js';

export interface TestBrowser {
  browser: Browser;
  browserUrl: string;
  pid: number;
  page(urlPart: string): Promise<Page>;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'verity-test-profile-'));
  const browser = await puppeteer.launch({
    executablePath: findChromium(process.env.VERITY_CHROMIUM),
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
    async page(urlPart) {
      for (let i = 0; i < 50; i++) {
        const found = (await browser.pages()).find((p) => p.url().includes(urlPart));
        if (found) return found;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no tab whose URL contains ${urlPart}`);
    },
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
