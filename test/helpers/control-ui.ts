// Shared by the Control UI's browser tests: a UI page of its own (a fresh browser context, so its own
// saved layout) against a gateway, and an MCP agent bound to that page through the link it shows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sharedChromium, type TestBrowser } from './chromium.js';
import { startGateway, wrap, type Gateway } from './gateway.js';

export interface Console {
  gw: Gateway;
  chrome: TestBrowser;
  close(): Promise<void>;
}

/**
 * A real `verity start` (shells are /bin/sh; recordings and the audit trail in a config dir of its own, not
 * the user's) and a context of the run's shared Chromium for the Control UI's pages.
 */
export async function startConsole(): Promise<Console> {
  const configDir = mkdtempSync(join(tmpdir(), 'verity-console-'));
  const gw = await startGateway([], { SHELL: '/bin/sh', VERITY_CONFIG_DIR: configDir });
  const chrome = await sharedChromium().catch(async (e) => {
    await gw.close();
    throw e;
  });
  return {
    gw,
    chrome,
    async close() {
      await chrome.close();
      await gw.close();
      rmSync(configDir, { recursive: true, force: true });
    },
  };
}

export async function openControlUi(
  chrome: TestBrowser,
  gw: Gateway,
  viewport: { width: number; height: number; deviceScaleFactor?: number } = { width: 1400, height: 860 },
): Promise<Page> {
  const context = await chrome.newContext();
  const page = await context.newPage();
  await page.setViewport(viewport);
  await page.goto(`${gw.base}/?token=${gw.token}`);
  await page.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });
  await page.waitForSelector('[data-agent-link]', { timeout: 15_000 });
  return page;
}

export interface BoundAgent {
  call: ReturnType<typeof wrap>;
  /** The SDK client itself, for a call with request options of its own (a timeout, onprogress). */
  client: Client;
  close(): Promise<void>;
}

/** An MCP client (clientInfo `name` version 1) bound to the Control UI page through its link. */
export async function bindAgent(gw: Gateway, page: Page, name: string): Promise<BoundAgent> {
  const headers = {
    Authorization: `Bearer ${gw.agentToken}`,
    'X-Verity-Link': await page.$eval('[data-agent-link]', (el) => (el as HTMLElement).dataset.linkToken!),
  };
  const client = new Client({ name, version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return {
    call: wrap(client),
    client,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** What a waiting approval card shows: the target line, the call in words, its arguments (and whether shown). */
export interface SeenCard {
  target: string;
  line: string | null;
  args: unknown;
  argsShown: boolean;
}

/**
 * The one waiting card of `tool`: what it shows, then approved and waited on until it is decided. The
 * button is clicked as the DOM's own click, not at a point: once, under the CPU hog, an approval clicked at
 * its button's place timed out unanswered, the likely cause being the card moving (a session row above it
 * changing) between puppeteer's reading of that place and its press. What is under test is the card and the
 * decision, not hit-testing; a decision lost after a click that did reach the button still fails here.
 */
export async function approveCard(page: Page, tool: string): Promise<SeenCard> {
  const card = `[data-approval][data-withdrawn="false"]`;
  const button = `${card} button.approve[aria-label="Approve ${tool}"]`;
  await page.waitForSelector(button, { timeout: 20_000 }).catch((e: Error) => {
    throw new Error(`${e.message}: no card for ${tool} was shown`);
  });
  const seen = await page.$eval(card, (el) => ({
    target: el.querySelector('[data-approval-target]')?.textContent ?? '',
    line: el.querySelector('[data-approval-summary]')?.textContent ?? null,
    args: el.querySelector('[data-approval-args]')?.textContent ?? '',
    argsShown: (el.querySelector('[data-approval-args]') as HTMLElement | null)?.checkVisibility() ?? false,
  }));
  await page.$eval(button, (b) => (b as HTMLButtonElement).click());
  await page
    .waitForFunction((sel) => !document.querySelector(sel), { timeout: 15_000 }, button)
    .catch(async (e: Error) => {
      const error = await page.$eval('body', (b) => b.querySelector('.error')?.textContent ?? 'none shown');
      throw new Error(`${e.message}: the approved ${tool} card stayed (the page's error: ${error})`);
    });
  return { ...seen, args: JSON.parse(seen.args) };
}
