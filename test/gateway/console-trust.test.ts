// A console an operator can trust (issue #26 items 4-6), in real Chromium against a real `verity start`
// with real MCP SDK clients: the operator's keys in the browser panel wait for an agent's verified
// type_text in flight (whose verdict stays exact and says so); the panel names whose tab it shows and
// never slips to another agent's tab when the focused session ends; agents listed as they connect, one
// session filling the main area, a mark for a failed last action, the stopped state shown alike in the
// sidebar and the pane, the pane header on one row at 1280x720, arguments as sent and evidence as
// labelled fields, and a log line that opens its own audit entry with the images cropped around the target.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'puppeteer-core';
import type { TestBrowser } from '../helpers/chromium.js';
import { bindAgent, type BoundAgent, type Console, openControlUi, startConsole } from '../helpers/control-ui.js';
import { type Gateway, waitFor } from '../helpers/gateway.js';

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

/**
 * A field whose first input blocks the page for 2.5 s (a busy loop in its input handler): the agent's
 * type_text is in flight (delivered, not yet read back) for that long, long enough on a loaded machine for
 * the operator's keys to arrive in the middle of it.
 */
const SLOW_FIELD =
  'data:text/html,<title>slow</title><input id="f" aria-label="Notes" autofocus>' +
  '<script>let first=true;f.addEventListener("input",()=>{if(!first)return;first=false;const t=Date.now();while(Date.now()-t<2500){}})</script>';
/** A field that shouts back what it is given: typing "shout" reads back "SHOUT" (a mismatch). */
const SHOUTING_FIELD =
  'data:text/html,<title>shout</title><p>A form</p><label>Name <input id="n" oninput="this.value=this.value.toUpperCase()"></label>';

async function tokenOf(agent: BoundAgent, session: string, label: string): Promise<string> {
  const snap = await agent.call('get_window_state', { format: 'full', include_screenshot: false, session });
  const el = (snap.structured.elements as Array<{ label: string; element_token: string }>).find(
    (e) => e.label === label,
  );
  assert.ok(el, `no element "${label}": ${snap.text.slice(0, 400)}`);
  return el.element_token;
}

const text = (page: Page, selector: string) => page.$eval(selector, (e) => (e.textContent ?? '').trim());

describe('a console an operator can trust', () => {
  test("the operator's keys wait for the agent's type_text in flight; its verdict stays exact and says so", async () => {
    const page = await openControlUi(chrome, gw);
    const agent = await bindAgent(gw, page, 'typist');
    try {
      await agent.call('start_session', { session: 'typing' });
      const nav = await agent.call('page', { action: 'navigate', url: SLOW_FIELD, session: 'typing' });
      assert.equal(nav.isError, false, nav.text);
      await agent.call('screen', { action: 'navigate', session: 'typing' });
      await agent.call('screen', { action: 'browser_show', dock: 'right', session: 'typing' });
      await page.waitForSelector('[data-panel="browser"] [data-take-control]:not([disabled])', { timeout: 20_000 });
      await page.click('[data-panel="browser"] [data-take-control]');
      await page.waitForSelector('[data-panel="browser"] [data-take-control][aria-pressed="true"]', { timeout: 5000 });
      const token = await tokenOf(agent, 'typing', 'Notes');
      // Long enough to be worth a delay, short enough that results carry it whole (longer ones are elided).
      const long = 'The quick brown fox jumps over the lazy dog. '.repeat(4).trim();
      const typed = agent.call('type_text', { element_token: token, text: long, session: 'typing' });
      // The field blocks its page for 2.5 s once the text arrives; 600 ms in, the action is in flight.
      await new Promise((r) => setTimeout(r, 600));
      await page.keyboard.type('XY');
      const r = await typed;
      assert.equal(r.structured?.effect, 'confirmed', r.text);
      const evidence = r.structured.evidence as Array<{ kind: string; expected?: unknown; observed?: unknown }>;
      const exact = evidence.find((e) => e.expected === long);
      assert.ok(exact, `evidence about the agent's text: ${JSON.stringify(evidence)}`);
      assert.equal(exact.observed, long, "the read-back is the agent's text alone");
      const held = evidence.find((e) => e.kind === 'operator_input');
      assert.ok(held, `the verdict says operator input waited for it: ${JSON.stringify(evidence)}`);
      // The operator's keys land after the action, at the caret: the field ends with them. Each key waits its
      // own turn in the tab's line, so the second may still be on its way when the agent's call returns:
      // asked until both are there (bounded), and the failure says what the field held.
      let value: string | undefined;
      await waitFor(async () => {
        const s = await agent.call('get_window_state', {
          format: 'full',
          include_screenshot: false,
          session: 'typing',
        });
        value = (s.structured.elements as Array<{ label: string; value?: string }>).find(
          (e) => e.label === 'Notes',
        )?.value;
        return value === `${long}XY`;
      }, "the operator's XY after the agent's text").catch(() => {
        assert.equal(value, `${long}XY`);
      });
    } finally {
      await agent.close();
      await page.close();
    }
  });

  test("the browser panel names whose tab it shows, and shows no other agent's tab when the focused session ends", async () => {
    const page = await openControlUi(chrome, gw);
    const alice = await bindAgent(gw, page, 'alice');
    const bob = await bindAgent(gw, page, 'bob');
    try {
      await alice.call('start_session', { session: 'a' });
      await bob.call('start_session', { session: 'b' });
      await bob.call('page', { action: 'new_tab', url: 'data:text/html,<title>bob tab</title>bob', session: 'b' });
      await alice.call('page', {
        action: 'new_tab',
        url: 'data:text/html,<title>alice tab</title>alice',
        session: 'a',
      });
      await alice.call('screen', { action: 'navigate', session: 'a' });
      await alice.call('screen', { action: 'browser_show', dock: 'right', session: 'a' });
      const owner = await page.waitForSelector('[data-panel="browser"] [data-browser-owner$="/a"]', {
        timeout: 20_000,
      });
      assert.match(await owner!.evaluate((e) => e.textContent ?? ''), /The tab of\s+alice 1 · a/);
      await alice.close();
      // The focused pane's session ended: the panel says so and shows nothing else (bob's tab is bob's).
      await page.waitForFunction(
        () =>
          /has ended/.test(document.querySelector('[data-panel="browser"] [data-browser-status]')?.textContent ?? ''),
        { timeout: 15_000 },
      );
      assert.equal(await page.$('[data-panel="browser"] [data-browser-owner]'), null);
      assert.equal(await page.$eval('[data-panel="browser"] img.screen', (i) => (i as HTMLImageElement).hidden), true);
      // Watching bob's session shows bob's tab, named as his.
      await page.click('[data-session-key$="/b"] button.link');
      await page.waitForSelector('[data-panel="browser"] [data-browser-owner$="/b"][data-elsewhere="false"]', {
        timeout: 20_000,
      });
    } finally {
      await alice.close();
      await bob.close();
      await page.close();
    }
  });

  test('the small things: listed on connect, one session shown, marks, the stopped state, one-row header, readable evidence', async () => {
    const page = await openControlUi(chrome, gw, { width: 1280, height: 720 });
    const agent = await bindAgent(gw, page, 'shouter');
    try {
      // Listed as it connects, before any call; the main area says so instead of "Pick a session".
      const row = await page.waitForSelector('[data-sidebar] li[data-session-key$="/implicit"]', { timeout: 10_000 });
      assert.equal(await row!.$eval('[data-session-state]', (e) => e.textContent), 'connected');
      await page.waitForSelector('[data-empty-main="connected"]', { timeout: 5000 });
      assert.doesNotMatch(await text(page, 'main.work'), /Pick a session/);

      // Its first call: the one session fills the main area by itself.
      await agent.call('start_session', { session: 'form', recording_dir: 'trust-form' });
      await agent.call('page', { action: 'navigate', url: SHOUTING_FIELD, session: 'form' });
      await page.waitForSelector('[data-pane-session$="/form"]', { timeout: 10_000 });
      assert.equal(
        await page.$('[data-sidebar] li[data-session-key$="/implicit"]'),
        null,
        'the connected row became the session',
      );
      assert.equal(await page.$('[data-sidebar] li[data-state="closed"]'), null, 'nothing reads as closed');

      // A mismatch: marked in the sidebar; the pane shows the arguments as sent and the evidence as fields.
      const token = await tokenOf(agent, 'form', 'Name');
      const r = await agent.call('type_text', { element_token: token, text: 'shout', session: 'form' });
      assert.equal(r.structured?.effect, 'mismatch', r.text);
      await page.waitForSelector('[data-session-key$="/form"] [data-last-action="mismatch"]', { timeout: 10_000 });
      const entry = '[data-pane-session$="/form"] [data-tool="type_text"]';
      await page.waitForSelector(entry, { timeout: 10_000 });
      const args = await text(page, `${entry} [data-approval-args]`);
      assert.doesNotMatch(args, /delivery_mode|delay_ms/, `only what the agent sent: ${args}`);
      assert.match(args, /text=shout/);
      assert.equal(await text(page, `${entry} [data-expected]`), 'shout', 'text shown as itself, not as JSON');
      assert.equal(await text(page, `${entry} [data-observed]`), 'SHOUT');

      // The log line opens its own entry: that entry open, its images cropped around the field, outlined.
      await page.click(`${entry} [data-action-details]`);
      await page.waitForSelector('[data-audit-entry][data-tool="type_text"] .audit-line[aria-expanded="true"]', {
        timeout: 10_000,
      });
      const opened = await page.$$eval('.audit-line[aria-expanded="true"]', (ls) =>
        ls.map((l) => l.closest('[data-audit-entry]')!.getAttribute('data-tool')),
      );
      assert.deepEqual(opened, ['type_text']);
      await page.waitForSelector(
        '[data-audit-detail] [data-audit-image="after"][data-view="crop"] [data-target-outline]',
        {
          timeout: 10_000,
        },
      );
      const box = (selector: string) =>
        page.$eval(selector, (e) => {
          const r = e.getBoundingClientRect();
          return { width: r.width, height: r.height };
        });
      const crop = await box('[data-audit-detail] [data-audit-image="after"]');
      assert.ok(crop.width <= 700, `cropped around the field, not the whole page: ${crop.width} px wide`);
      const outline = await box('[data-target-outline]');
      assert.ok(outline.width > 20 && outline.height > 10, `the field outlined: ${JSON.stringify(outline)}`);
      // The whole page is one click away.
      await page.click('[data-audit-detail] [data-whole-page]');
      await page.waitForSelector('[data-audit-detail] [data-audit-image="after"][data-view="page"]', { timeout: 5000 });
      assert.match(await text(page, '[data-audit-detail]'), /Arguments as sent/);
      await page.click('header.bar button[data-toggle="log"]');

      // Stopped: the sidebar and the pane say "stopped", never "active" beside "■ stopped".
      await page.click('[data-session-key$="/form"] [data-brake="stop"]');
      await page.waitForSelector('[data-session-key$="/form"] [data-brake-state="stopped"]', { timeout: 10_000 });
      await page.waitForFunction(
        () => document.querySelector('[data-session-key$="/form"] [data-session-state]')?.textContent === 'stopped',
        { timeout: 10_000 },
      );
      assert.match(await text(page, '[data-pane-session$="/form"] [data-pane-state]'), /^stopped/);

      // At 1280x720 with both panels open, the pane header is one row.
      await page.click('header.bar button[data-toggle="terminal"]');
      await page.click('header.bar button[data-toggle="browser"]');
      await page.waitForSelector('[data-panel="browser"][data-open="true"]', { timeout: 10_000 });
      const rows = await page.$eval('[data-pane-session$="/form"] > header', (h) => {
        const tops = [...h.children]
          .filter((c) => (c as HTMLElement).offsetWidth > 0)
          .map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2));
        return { tops, height: h.getBoundingClientRect().height };
      });
      assert.ok(
        Math.max(...rows.tops) - Math.min(...rows.tops) <= 4 && rows.height < 48,
        `one row: ${JSON.stringify(rows)}`,
      );
    } finally {
      await agent.close();
      await page.close();
    }
  });
});
