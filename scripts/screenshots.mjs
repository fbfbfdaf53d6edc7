#!/usr/bin/env node
// The Control UI guide's console screenshot (docs/console.png, 1440x900, shown in docs/control-ui.md): a real
// `verity start` with a policy that holds clicks for approval, two agents (real MCP SDK clients) each with a
// session and actions, one click waiting for approval, and a failed (mismatched) type_text open in the audit log with its
// expected vs observed and before/after images. Build first (`node scripts/ensure.mjs --test`): this uses
// the compiled test helpers. Usage: node scripts/screenshots.mjs [out.png]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { launchChromium } from '../dist/test/helpers/chromium.js';
import { ROOT } from '../dist/test/helpers/fixtures.js';
import { startGateway, wrap } from '../dist/test/helpers/gateway.js';

const out = process.argv[2] ?? join(ROOT, 'docs', 'console.png');
const dir = mkdtempSync(join(tmpdir(), 'verity-screenshots-'));
const CLAIM =
  'data:text/html,<title>Expense claim</title><h1>Expense claim</h1><label>Amount <input aria-label="Amount"></label> <button onclick="this.textContent=\'Sent\'">Submit claim</button>';
// The page rewrites what is typed (upper case): type_text reads it back and reports a mismatch.
const LOOKUP =
  'data:text/html,<title>Supplier lookup</title><h1>Supplier lookup</h1><input aria-label="Supplier" oninput="this.value=this.value.toUpperCase()">';

async function agent(gw, name) {
  const client = new Client({ name, version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${gw.agentToken}` } },
  });
  await client.connect(transport);
  return {
    call: wrap(client),
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

const tokenOf = (snap, label) => snap.structured.elements.find((e) => e.label === label).element_token;

let gw;
let chrome;
const agents = [];
try {
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['click'] }));
  gw = await startGateway(['--policy', join(dir, 'policy.json')], { VERITY_CONFIG_DIR: dir, SHELL: '/bin/sh' });
  chrome = await launchChromium();
  const page = await chrome.browser.newPage();
  await page.setViewport({ width: 1440, height: 900 });
  await page.goto(`${gw.base}/?token=${gw.token}`);
  await page.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });

  const claims = await agent(gw, 'claims-agent');
  const research = await agent(gw, 'research-agent');
  agents.push(claims, research);

  await claims.call('start_session', { session: 'expense-claim', recording_dir: 'expense-claim' });
  await claims.call('page', { action: 'navigate', url: CLAIM, session: 'expense-claim' });
  const claimSnap = await claims.call('get_window_state', {
    format: 'full',
    include_screenshot: false,
    session: 'expense-claim',
  });
  await claims.call('type_text', {
    element_token: tokenOf(claimSnap, 'Amount'),
    text: '42.50',
    session: 'expense-claim',
  });

  await research.call('start_session', { session: 'supplier-lookup', recording_dir: 'supplier-lookup' });
  await research.call('page', { action: 'navigate', url: LOOKUP, session: 'supplier-lookup' });
  const lookupSnap = await research.call('get_window_state', {
    format: 'full',
    include_screenshot: false,
    session: 'supplier-lookup',
  });
  const typed = await research.call('type_text', {
    element_token: tokenOf(lookupSnap, 'Supplier'),
    text: 'Acme Ltd',
    session: 'supplier-lookup',
  });
  console.log(`the failed action: type_text -> ${typed.structured?.effect ?? typed.text}`);

  // One pane per agent, one above the other (the audit log drawer covers the right of the window).
  const rowOf = async (label) =>
    page
      .waitForSelector(`[data-session-key$="/${label}"]`, { timeout: 10_000 })
      .then((el) => el.evaluate((e) => e.dataset.sessionKey));
  const claimKey = await rowOf('expense-claim');
  const lookupKey = await rowOf('supplier-lookup');
  await page.click(`[data-session-key="${claimKey}"] button.link`);
  await page.waitForSelector(`[data-pane-session="${claimKey}"]`);
  await page.click(`[data-session-key="${lookupKey}"] .row-actions button:nth-child(2)`); // split down
  await page.waitForSelector(`[data-pane-session="${lookupKey}"]`);

  // The click waits for the operator (never resolved here: the gateway ends with the script).
  claims.call('click', { element_token: tokenOf(claimSnap, 'Submit claim'), session: 'expense-claim' }).catch(() => {});
  await page.waitForSelector('[data-approval] button.approve', { timeout: 15_000 });

  // The failed action's details in the audit log.
  await page.click('header.bar button[data-toggle="log"]');
  const failed = `[data-audit-entry][data-session-key="${lookupKey}"][data-tool="type_text"]`;
  await page.waitForSelector(failed, { timeout: 15_000 });
  await page.click(`${failed} .audit-line`);
  await page.waitForSelector('[data-audit-detail] [data-audit-image="after"]', { timeout: 10_000 });
  await page.waitForFunction(
    () => [...document.querySelectorAll('[data-audit-detail] img')].every((i) => i.complete && i.naturalWidth > 0),
    { timeout: 10_000 },
  );
  await new Promise((r) => setTimeout(r, 500)); // thumbnails and fonts paint
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  for (const a of agents) await a.close();
  await chrome?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
}
