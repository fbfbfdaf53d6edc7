// The Control UI's own accessibility (issue #17 item 7), checked with axe-core (WCAG 2.0/2.1/2.2 A and AA)
// in real Chromium against a real `verity start` on its main views: the sidebar with an MCP session, a
// pane with its action log, an approval waiting, the terminal and browser panels, the audit log drawer,
// the brake (paused and stopped sessions, each button named by its session), the audit entry's images
// cropped around the target and as whole pages, the browser panel naming whose tab it shows, and the offline banner. Any serious or critical violation fails, listed in the message.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { startGateway, type Connection, type Gateway } from '../helpers/gateway.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22a', 'wcag22aa'];

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary: string }>;
}

/** Runs axe on the whole page and fails on serious or critical violations, naming each node. */
async function assertAccessible(page: Page, view: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE_SOURCE });
  const violations = (await page.evaluate(
    (tags) =>
      (window as any).axe.run(document, { runOnly: { type: 'tag', values: tags } }).then((r: any) =>
        r.violations.map((v: any) => ({
          id: v.id,
          impact: v.impact,
          help: v.help,
          nodes: v.nodes.map((n: any) => ({ target: n.target, failureSummary: n.failureSummary })),
        })),
      ),
    WCAG_TAGS,
  )) as Violation[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const report = bad
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}\n` +
        v.nodes.map((n) => `  ${n.target.join(' ')}: ${n.failureSummary.replace(/\n\s*/g, ' ')}`).join('\n'),
    )
    .join('\n');
  const minor = violations.filter((v) => !bad.includes(v)).map((v) => `${v.id} (${v.impact}, ${v.nodes.length})`);
  if (minor.length) console.log(`# ${view}: minor/moderate axe findings (not failing): ${minor.join(', ')}`);
  assert.equal(bad.length, 0, `${view}: axe found serious/critical violations:\n${report}`);
}

const FORM = 'data:text/html,<title>claim</title><button onclick="this.textContent=\'Sent\'">Submit claim</button>';

let gw: Gateway;
let chrome: TestBrowser;
let page: Page;
let agent: Connection;
const dir = mkdtempSync(join(tmpdir(), 'verity-a11y-'));

before(async () => {
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['click'] }));
  gw = await startGateway(['--policy', join(dir, 'policy.json')], { VERITY_CONFIG_DIR: dir, SHELL: '/bin/sh' });
  chrome = await sharedChromium();
  page = await chrome.context.newPage();
  await page.setBypassCSP(true); // axe is injected as an inline script
  await page.setViewport({ width: 1400, height: 860 });
  await page.goto(`${gw.base}/?token=${gw.token}`);
  await page.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });
  agent = await gw.connect();
});
after(async () => {
  await agent?.disconnect();
  await chrome?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('axe-core on the Control UI', () => {
  let key = '';

  test('the sidebar with a connected agent session', async () => {
    // Recorded, so the audit log's detail has before/after images to check too.
    await agent.call('start_session', { session: 'audited', recording_dir: 'audited' });
    const r = await agent.call('page', { action: 'navigate', url: FORM, session: 'audited' });
    assert.equal(r.isError, false, r.text);
    key = await page
      .waitForSelector('[data-session-key$="/audited"]', { timeout: 10_000 })
      .then((el) => el!.evaluate((e) => (e as HTMLElement).dataset.sessionKey!));
    await assertAccessible(page, 'sidebar');
  });

  test('a pane with its action log', async () => {
    await page.click(`[data-session-key="${key}"] button.link`);
    await page.waitForSelector(`[data-pane-session="${key}"] [data-action-log] [data-tool="page"]`, {
      timeout: 10_000,
    });
    await assertAccessible(page, 'pane');
  });

  test('an approval waiting', async () => {
    const snap = await agent.call('get_window_state', {
      format: 'full',
      include_screenshot: false,
      session: 'audited',
    });
    const token = snap.structured.elements.find((e: any) => e.label === 'Submit claim').element_token;
    const pending = agent.call('click', { element_token: token, session: 'audited' });
    await page.waitForSelector('[data-approval] button.approve', { timeout: 15_000 });
    try {
      await assertAccessible(page, 'approval waiting');
    } finally {
      await page.click('[data-approval] button.approve');
      const clicked = await pending;
      assert.equal(clicked.structured?.effect, 'confirmed', clicked.text);
    }
  });

  test('the terminal and browser panels open', async () => {
    await page.click('header.bar button[data-toggle="terminal"]');
    await page.click('header.bar button[data-toggle="browser"]');
    await page.waitForSelector('[data-panel="terminal"][data-open="true"] .xterm', { timeout: 10_000 });
    await page.waitForSelector('[data-panel="browser"][data-open="true"]', { timeout: 10_000 });
    await page.waitForFunction(
      () => /pid \d+/.test(document.querySelector('[data-terminal-status]')?.textContent ?? ''),
      { timeout: 30_000 },
    );
    await page.waitForSelector('[data-panel="browser"] [data-browser-owner]', { timeout: 15_000 });
    await assertAccessible(page, 'terminal and browser panels');
    // Taken control: the screen host becomes the place keys go to.
    await page.waitForSelector('[data-panel="browser"] [data-take-control]:not([disabled])', { timeout: 15_000 });
    await page.click('[data-panel="browser"] [data-take-control]');
    await page.waitForSelector('[data-panel="browser"] [data-take-control][aria-pressed="true"]', { timeout: 5000 });
    await assertAccessible(page, 'browser panel in control');
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-panel="browser"] [data-take-control][aria-pressed="false"]', { timeout: 5000 });
  });

  test('the audit log drawer with an entry open', async () => {
    await page.click('header.bar button[data-toggle="log"]');
    await page.waitForSelector(`[data-audit-entry][data-session-key="${key}"]`, { timeout: 15_000 });
    await page.click(`[data-audit-entry][data-session-key="${key}"][data-tool="click"] .audit-line`);
    await page.waitForSelector('[data-audit-detail]', { timeout: 10_000 });
    // Recorded with a token: the images come cropped around the target, the whole pages one click away.
    await page.waitForSelector('[data-audit-detail] [data-audit-image][data-view="crop"]', { timeout: 10_000 });
    await assertAccessible(page, 'audit log (images around the target)');
    await page.click('[data-audit-detail] [data-whole-page]');
    await page.waitForSelector('[data-audit-detail] [data-audit-image][data-view="page"]', { timeout: 5000 });
    await assertAccessible(page, 'audit log (whole pages)');
    await page.click('header.bar button[data-toggle="log"]');
  });

  test('a paused session, at 900x700 (one pane, panels as drawers)', async () => {
    await page.setViewport({ width: 900, height: 700 });
    await page.waitForSelector('[data-panel="terminal"][data-dock="drawer"]', { timeout: 5000 });
    await page.click(`[data-session-key="${key}"] [data-brake="pause"]`);
    await page.waitForSelector(`[data-session-key="${key}"] [data-brake-state="paused"]`, { timeout: 10_000 });
    try {
      await assertAccessible(page, 'narrow, paused');
    } finally {
      await page.click(`[data-session-key="${key}"] [data-brake="resume"]`);
      await page.setViewport({ width: 1400, height: 860 });
    }
  });

  test('the brake: every button names its session; a stopped session', async () => {
    await agent.call('start_session', { session: 'second' });
    const second = await page
      .waitForSelector('[data-session-key$="/second"] verity-brake button', { timeout: 10_000 })
      .then(() => page.$eval('[data-session-key$="/second"]', (e) => (e as HTMLElement).dataset.sessionKey!));
    // The names as Chrome computes them (its accessibility tree), for every brake button on the page.
    const cdp = await page.createCDPSession();
    const { nodes } = await cdp.send('Accessibility.getFullAXTree');
    await cdp.detach();
    const names = nodes
      .filter((n) => n.role?.value === 'button' && /^(Pause|Resume|Stop|End)\b/.test(String(n.name?.value)))
      .map((n) => String(n.name?.value));
    const title = (k: string) => page.$eval(`[data-session-key="${k}"] button.link`, (b) => b.textContent!.trim());
    for (const k of [key, second])
      for (const verb of ['Pause', 'Stop', 'End'])
        assert.ok(
          names.includes(`${verb} session ${await title(k)}`),
          `${verb} names ${await title(k)}: ${names.join(' | ')}`,
        );
    // Within the sidebar each button is told apart by its name alone.
    const sidebarNames = await page.$$eval('[data-sidebar] verity-brake button', (bs) =>
      bs.map((b) => b.getAttribute('aria-label')),
    );
    assert.equal(new Set(sidebarNames).size, sidebarNames.length, sidebarNames.join(' | '));

    await page.click(`[data-session-key="${second}"] [data-brake="stop"]`);
    await page.waitForSelector(`[data-session-key="${second}"] [data-brake-state="stopped"]`, { timeout: 10_000 });
    await assertAccessible(page, 'a stopped session');
  });

  test('the offline banner while the gateway is down', async () => {
    await agent.disconnect();
    await gw.stop();
    await page.waitForSelector('[data-offline-banner]', { timeout: 15_000 });
    await assertAccessible(page, 'offline banner');
  });
});
