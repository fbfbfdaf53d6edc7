// A day at the operator's console (issue #17 item 6) in real Chromium against a real `verity start`:
// sessions named by their client and label (never "implicit" or a raw key), the recording mark as soon
// as recording starts, a closed client shown as closed, an honest banner and a greyed view while the
// gateway is down, and the pane's history back once it returns.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestBrowser } from '../helpers/chromium.js';
import { bindAgent, type Console, openControlUi, startConsole } from '../helpers/control-ui.js';
import { startGateway, type Gateway } from '../helpers/gateway.js';

let gw: Gateway;
let chrome: TestBrowser;
let suite: Console;
before(async () => {
  suite = await startConsole();
  ({ gw, chrome } = suite);
});
after(async () => {
  await suite?.close();
});

const openUi = (width = 1400, height = 860, deviceScaleFactor = 1, gateway = gw) =>
  openControlUi(chrome, gateway, { width, height, deviceScaleFactor });

const sizedPage = (name: string) => `data:text/html,<title>${name}</title><p>Page ${name}</p>`;

describe('a day without surprises', () => {
  test('sessions named "client · label", the recording mark at once, a closed client shown closed', async () => {
    const page = await openUi();
    const agent = await bindAgent(gw, page, 'claims-bot');
    try {
      await agent.call('start_session', { session: 'expense-claim' });
      const row = '[data-session-key$="/expense-claim"]';
      await page.waitForSelector(row, { timeout: 10_000 });
      assert.equal(
        await page.$eval(`${row} button.link`, (b) => b.textContent!.trim()),
        'claims-bot 1 · expense-claim',
      );
      // The implicit session: named by its client, never "implicit" or a raw key.
      await agent.call('page', { action: 'list_tabs' });
      await page.waitForSelector('[data-session-key$="/implicit"]', { timeout: 10_000 });
      assert.equal(
        await page.$eval('[data-session-key$="/implicit"] button.link', (b) => b.textContent!.trim()),
        'claims-bot 1 (default session)',
      );
      const sidebar = await page.$eval('[data-sidebar] ul.sessions', (u) => u.textContent!);
      assert.doesNotMatch(sidebar, /implicit|http-[0-9a-f]/, 'no raw labels or keys in the sidebar');

      // Recording shows the moment it starts: no further action comes.
      await agent.call('start_session', { session: 'recorded', recording_dir: 'console-rec' });
      await page.waitForSelector('[data-session-key$="/recorded"] [data-recording]', { timeout: 5000 });

      await agent.call('screen', { action: 'navigate', session: 'expense-claim' });
      await page.waitForSelector('[data-pane-session$="/expense-claim"]', { timeout: 5000 });
      await agent.close();
      await page.waitForSelector(`${row}[data-state="closed"]`, { timeout: 10_000 });
      assert.equal(await page.$eval(`${row} [data-session-state]`, (e) => e.textContent), 'closed');
      assert.equal(
        await page.$eval('[data-pane-session$="/expense-claim"] [data-pane-state]', (e) => e.textContent),
        'closed',
      );
      assert.equal(await page.$(`${row} verity-brake`), null, 'no brake on a closed session');
    } finally {
      await agent.close();
      await page.close();
    }
  });

  test('while the gateway is down: an honest banner and a greyed view; after it returns, the history is back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-console-restart-'));
    const env = { VERITY_CONFIG_DIR: dir, SHELL: '/bin/sh' };
    let first: Gateway | undefined = await startGateway([], env);
    let second: Gateway | undefined;
    const page = await openUi(1400, 860, 1, first);
    try {
      const agent = await first.connect();
      await agent.call('start_session', { session: 'day' });
      assert.equal(
        (await agent.call('page', { action: 'navigate', url: sizedPage('day'), session: 'day' })).isError,
        false,
      );
      const key = await page
        .waitForSelector('[data-session-key$="/day"]', { timeout: 10_000 })
        .then((el) => el!.evaluate((e) => (e as HTMLElement).dataset.sessionKey!));
      await page.click(`[data-session-key="${key}"] button.link`);
      const line = `[data-pane-session="${key}"] [data-action-log] [data-tool="page"]`;
      await page.waitForSelector(line, { timeout: 10_000 });

      assert.equal(await first.stop(), 0);
      first = undefined;
      await page.waitForSelector('[data-offline-banner]', { timeout: 15_000 });
      assert.match(await page.$eval('[data-offline-banner]', (b) => b.textContent!), /not reachable since .*not live/);
      assert.ok(await page.$('.body.offline[inert]'), 'greyed and out of reach while down');
      assert.ok(await page.$(`[data-session-key="${key}"]`), 'the sessions stay listed (no "No MCP sessions yet")');
      assert.doesNotMatch(await page.$eval('[data-sidebar]', (s) => s.textContent!), /No MCP sessions yet/);
      assert.ok(await page.$(line), 'the pane keeps its log');

      // The same address again (the Control UI reconnects by itself).
      second = await startGateway(['--port', new URL(page.url()).port], env);
      await page.waitForSelector('[data-connection="connected"]', { timeout: 30_000 });
      await page.waitForFunction(() => !document.querySelector('[data-offline-banner]'), { timeout: 5000 });
      assert.equal(await page.$('.body.offline'), null, 'no longer greyed');
      assert.ok(await page.$(line), "the pane's history is back");
      await page.waitForSelector(`[data-session-key="${key}"][data-state="closed"]`, { timeout: 5000 });
      // And the durable trail has it, from the restarted gateway.
      await page.click('header.bar button[data-toggle="log"]');
      await page.waitForSelector(`[data-audit-entry][data-session-key="${key}"][data-tool="page"]`, {
        timeout: 10_000,
      });
    } finally {
      await page.close();
      await first?.close();
      await second?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the pane's log", () => {
  test('a click on a line opens that entry in the audit log: its before/after images and expected vs observed', async () => {
    const page = await openUi();
    const agent = await bindAgent(gw, page, 'claims-bot');
    const FORM = 'data:text/html,<title>claim</title><button onclick="this.textContent=\'Sent\'">Submit claim</button>';
    try {
      await agent.call('start_session', { session: 'opened', recording_dir: 'opened-run' });
      await agent.call('page', { action: 'navigate', url: FORM, session: 'opened' });
      const snap = await agent.call('get_window_state', {
        format: 'full',
        include_screenshot: false,
        session: 'opened',
      });
      const token = snap.structured.elements.find((e: any) => e.label === 'Submit claim').element_token;
      assert.equal(
        (await agent.call('click', { element_token: token, session: 'opened' })).structured.effect,
        'confirmed',
      );
      // A later line, so the one opened is not simply the newest.
      await agent.call('page', { action: 'navigate', url: sizedPage('later'), session: 'opened' });
      await agent.call('screen', { action: 'navigate', session: 'opened' });
      const line = '[data-pane][data-focused] [data-action-log] [data-tool="click"]';
      await page.waitForSelector(`${line}[data-audit-id]:not([data-audit-id=""])`, { timeout: 10_000 });
      await page.waitForSelector(
        '[data-pane][data-focused] [data-action-log] [data-tool="page"] + [data-tool="click"]',
        {
          timeout: 10_000,
        },
      );
      const auditId = await page.$eval(line, (li) => (li as HTMLElement).dataset.auditId!);
      await page.click(`${line} [data-action-details]`);

      const opened = `[data-audit-entry="${auditId}"]`;
      await page.waitForSelector(`${opened} [data-audit-detail] [data-audit-image="after"]`, { timeout: 15_000 });
      assert.equal(await page.$eval(opened, (e) => (e as HTMLElement).dataset.tool), 'click');
      assert.equal(await page.$eval(opened, (e) => (e as HTMLElement).dataset.verdict), 'confirmed');
      assert.ok(await page.$(`${opened} [data-audit-detail] [data-audit-image="before"]`), 'the before image too');
      assert.match(
        await page.$eval(`${opened} [data-evidence]`, (e) => e.textContent!),
        /expected[\s\S]*observed/,
        'expected vs observed',
      );
      assert.deepEqual(
        await page.$$eval('[data-audit-entry] .audit-line[aria-expanded="true"]', (ls) =>
          ls.map((l) => (l.closest('[data-audit-entry]') as HTMLElement).dataset.auditEntry),
        ),
        [auditId],
        'only the clicked entry is open',
      );
      assert.equal(
        await page.evaluate(() =>
          document.activeElement?.closest('[data-audit-entry]')?.getAttribute('data-audit-entry'),
        ),
        auditId,
        'the keyboard is on the opened entry',
      );
    } finally {
      await agent.close();
      await page.close();
    }
  });
});
