// The operator's console (issue #17 items 4-6) in real Chromium against a real `verity start`: no browser
// launched by opening the panel, input only while in control (no keyboard trap), panels that never cover
// each other or the pane buttons, ✕ closing the pane it is on, a hidden terminal keeping its shell, and
// the agent link surviving a reload.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'puppeteer-core';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { bindAgent as bindConsoleAgent, openControlUi } from '../helpers/control-ui.js';
import { startGateway, type Gateway } from '../helpers/gateway.js';

let gw: Gateway;
let chrome: TestBrowser;
before(async () => {
  gw = await startGateway([], { SHELL: '/bin/sh' });
  chrome = await sharedChromium();
});
after(async () => {
  await chrome?.close();
  await gw?.close();
});

const openUi = (width = 1400, height = 860) => openControlUi(chrome, gw, { width, height });
const bindAgent = (page: Page) => bindConsoleAgent(gw, page, 'console-agent');

const boxOf = (page: Page, selector: string) =>
  page.$eval(selector, (el) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  });
const overlap = (a: { x: number; y: number; w: number; h: number }, b: typeof a) =>
  a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

describe('the console', () => {
  test('opening the browser panel launches no browser: it says "no browser yet"', async () => {
    const page = await openUi();
    try {
      await page.click('header.bar button[data-toggle="browser"]');
      await page.waitForSelector('[data-panel="browser"] [data-no-browser]', { timeout: 10_000 });
      assert.equal(
        await page.$eval('[data-panel="browser"] img.screen', (img) => (img as HTMLElement).hidden),
        true,
        'no white box',
      );
    } finally {
      await page.close();
    }
  });

  test('the agent link survives a reload; ✕ closes the pane it is on; two right panels do not overlap', async () => {
    const page = await openUi();
    const agent = await bindAgent(page);
    try {
      await agent.call('start_session', { session: 'one' });
      await agent.call('start_session', { session: 'two' });
      assert.deepEqual((await agent.call('screen', { action: 'navigate', session: 'one' })).structured, { ok: true });
      await page.waitForSelector('[data-pane-session$="/one"]', { timeout: 5000 });
      await page.reload();
      await page.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });
      // After the reload, the same agent still arranges this page (no UNAVAILABLE).
      const split = await agent.call('screen', {
        action: 'split_right',
        sessionKey: await page
          .$eval('[data-pane-session$="/one"]', (e) => (e as HTMLElement).dataset.paneSession!)
          .then((k) => k.replace(/\/one$/, '/two')),
        session: 'one',
      });
      assert.deepEqual(split.structured, { ok: true }, split.text);
      await page.waitForSelector('[data-pane-session$="/two"][data-focused]', { timeout: 5000 });
      // The agent of "one" splits down while "two" is focused: a new pane, only it focused.
      await agent.call('screen', { action: 'split_down', session: 'one' });
      await page.waitForFunction(() => document.querySelectorAll('[data-pane]').length === 3, { timeout: 5000 });
      assert.equal(await page.$$eval('[data-pane][data-focused]', (els) => els.length), 1);
      const ids = await page.$$eval('[data-pane-session$="/one"]', (els) =>
        els.map((e) => (e as HTMLElement).dataset.pane!),
      );
      assert.equal(ids.length, 2);
      await page.click(`[data-pane="${ids[1]}"] [data-close-pane]`);
      await page.waitForFunction((gone) => !document.querySelector(`[data-pane="${gone}"]`), { timeout: 5000 }, ids[1]);
      assert.ok(await page.$(`[data-pane="${ids[0]}"]`), '✕ closed the pane it is on, not the other one');

      await agent.call('screen', { action: 'terminal_show', dock: 'right', session: 'one' });
      await agent.call('screen', { action: 'browser_show', dock: 'right', session: 'one' });
      await page.waitForSelector('[data-panel="browser"][data-open="true"]');
      await page.waitForSelector('[data-panel="terminal"][data-open="true"]');
      assert.equal(
        overlap(await boxOf(page, '[data-panel="terminal"]'), await boxOf(page, '[data-panel="browser"]')),
        false,
      );
      const before = (await boxOf(page, '[data-panel="browser"]')).w;
      await page.focus('[data-resizer="right"]');
      await page.keyboard.press('ArrowLeft');
      await page.waitForFunction(
        (w) => document.querySelector('[data-panel="browser"]')!.getBoundingClientRect().width > w,
        { timeout: 5000 },
        before,
      );
    } finally {
      await agent.close();
      await page.close();
    }
  });

  test('at 900x700 the panels are drawers under the one pane and cover none of its buttons', async () => {
    const page = await openUi(900, 700);
    const agent = await bindAgent(page);
    try {
      await agent.call('start_session', { session: 'narrow' });
      await agent.call('screen', { action: 'navigate', session: 'narrow' });
      await agent.call('screen', { action: 'browser_show', dock: 'right', session: 'narrow' });
      await agent.call('screen', { action: 'terminal_show', dock: 'right', session: 'narrow' });
      await page.waitForSelector('[data-panel="terminal"][data-open="true"][data-dock="drawer"]', { timeout: 5000 });
      for (const button of await page.$$('[data-pane][data-focused] header button')) {
        const b = await button.boundingBox();
        for (const panel of ['terminal', 'browser'])
          assert.equal(
            overlap({ x: b!.x, y: b!.y, w: b!.width, h: b!.height }, await boxOf(page, `[data-panel="${panel}"]`)),
            false,
            `${panel} covers a pane button`,
          );
      }
    } finally {
      await agent.close();
      await page.close();
    }
  });

  test('a hidden terminal keeps its shell; Tab is not swallowed by the browser panel unless in control', async () => {
    const page = await openUi();
    try {
      await page.click('header.bar button[data-toggle="terminal"]');
      const pid = await page
        .waitForFunction(
          () => /pid (\d+)/.exec(document.querySelector('[data-terminal-status]')?.textContent ?? '')?.[1],
          { timeout: 30_000 },
        )
        .then((h) => h.jsonValue());
      await page.click('header.bar button[data-toggle="terminal"]');
      await page.waitForFunction(
        () => /detached/.test(document.querySelector('[data-terminal-status]')?.textContent ?? ''),
        { timeout: 5000 },
      );
      await page.click('header.bar button[data-toggle="terminal"]');
      const again = await page
        .waitForFunction(
          () => /pid (\d+) · attached/.exec(document.querySelector('[data-terminal-status]')?.textContent ?? '')?.[1],
          { timeout: 30_000 },
        )
        .then((h) => h.jsonValue());
      assert.equal(again, pid, 'the same shell came back');

      await page.click('header.bar button[data-toggle="browser"]');
      await page.focus('[data-panel="browser"] [data-browser-url]').catch(() => {});
      await page.focus('[data-panel="browser"] [data-take-control]').catch(() => {});
      const start = await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 80));
      await page.keyboard.press('Tab');
      const next = await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 80));
      assert.notEqual(next, start, 'Tab moved focus on through the UI');
    } finally {
      await page.close();
    }
  });
});
