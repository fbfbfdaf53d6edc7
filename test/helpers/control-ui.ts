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
