// The brake, driven from the Control UI in a real Chromium page against a real `verity start`, with the
// real MCP SDK client as the agent: Stop refuses the next call with session_stopped and cancels what waits
// (an approval, a wait_for); Pause holds a call (with progress notifications) and Resume lets it run; End
// ends the session as end_session does; an agent cannot hide the sidebar while an approval waits; the
// approval card names the element by role and name and counts down.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { operatorSocket, refusalOf, startGateway, waitFor, wrap, type Gateway } from '../helpers/gateway.js';

let gw: Gateway;
let chrome: TestBrowser;
let ui: Page;
const dir = mkdtempSync(join(tmpdir(), 'verity-brake-'));

before(async () => {
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['click'] }));
  gw = await startGateway(['--policy', join(dir, 'policy.json')], { VERITY_CONFIG_DIR: dir });
  chrome = await sharedChromium();
  ui = await chrome.context.newPage();
  await ui.setViewport({ width: 1400, height: 860 });
  await ui.goto(`${gw.base}/?token=${gw.token}`);
  await ui.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });
  await ui.waitForSelector('[data-agent-link]', { timeout: 15_000 });
});
after(async () => {
  await chrome?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An agent over HTTP, bound to the Control UI (so it is offered `screen`). */
async function agent() {
  const link = await ui.$eval('[data-agent-link]', (el) => (el as HTMLElement).dataset.linkToken!);
  const client = new Client({ name: 'braked-agent', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${gw.agentToken}`, 'X-Verity-Link': link } },
  });
  await client.connect(transport);
  return {
    client,
    call: wrap(client),
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

const row = (label: string) => `ul.sessions li[data-session-key$="/${label}"]`;
const FORM = 'data:text/html,<title>claim</title><button onclick="this.textContent=\'Sent\'">Submit claim</button>';

describe('the brake from the Control UI', () => {
  test('Stop cancels a waiting approval and refuses the next call with session_stopped; the card named the element; the sidebar could not be hidden', async () => {
    const a = await agent();
    try {
      assert.equal((await a.call('page', { action: 'navigate', url: FORM, session: 'stopme' })).isError, false);
      const snap = await a.call('get_window_state', { format: 'full', include_screenshot: false, session: 'stopme' });
      const token = snap.structured.elements.find((e: any) => e.label === 'Submit claim').element_token;
      const pending = a.call('click', { element_token: token, session: 'stopme' });

      const card = await ui.waitForSelector('[data-approval] [data-approval-labels]', { timeout: 15_000 });
      const label = await card!.evaluate((el) => el.textContent ?? '');
      assert.match(label, /button "Submit claim"/, 'the card names the element by role and name');
      const seconds = Number(
        await ui.$eval('[data-approval-countdown]', (el) => (el as HTMLElement).dataset.approvalCountdown),
      );
      assert.ok(seconds > 0 && seconds <= 120, `a countdown to the time-out: ${seconds}`);
      const [approveStyle, denyStyle] = await ui.$$eval(
        '[data-approval] button.approve, [data-approval] button.deny',
        (els) => els.map((el) => getComputedStyle(el).backgroundColor + '|' + getComputedStyle(el).borderColor),
      );
      assert.notEqual(approveStyle, denyStyle, 'Approve and Deny look different');

      // The agent tries to hide its own pending approval.
      const hide = await a.call('screen', { action: 'sidebar_hide', session: 'stopme' });
      assert.equal(refusalOf(hide).code, 'not_permitted');
      assert.match(hide.text, /approval/);
      assert.equal(await ui.$eval('[data-sidebar]', (el) => el.getAttribute('data-visible')), 'true');

      await ui.click(`${row('stopme')} [data-brake="stop"]`);
      const stopped = refusalOf(await pending);
      assert.equal(stopped.code, 'session_stopped', JSON.stringify(stopped));
      await ui.waitForFunction(() => !document.querySelector('[data-approval]'), { timeout: 10_000 });
      const next = refusalOf(await a.call('get_window_state', { session: 'stopme' }));
      assert.equal(next.code, 'session_stopped');
      // Another label of the same agent is held too: a stop cannot be stepped around.
      assert.equal(refusalOf(await a.call('page', { action: 'get_text', session: 'another' })).code, 'session_stopped');
      await ui.waitForSelector(`${row('stopme')} [data-brake-state="stopped"]`, { timeout: 10_000 });
    } finally {
      await a.close();
    }
  });

  test('Pause holds a call (with progress notifications) and Resume lets it run', async () => {
    const a = await agent();
    try {
      assert.equal((await a.call('page', { action: 'navigate', url: FORM, session: 'pauseme' })).isError, false);
      await ui.waitForSelector(`${row('pauseme')} [data-brake="pause"]`, { timeout: 10_000 });
      await ui.click(`${row('pauseme')} [data-brake="pause"]`);
      await ui.waitForSelector(`${row('pauseme')} [data-brake-state="paused"]`, { timeout: 10_000 });

      const heard: string[] = [];
      let answered = false;
      const held = a.client
        .callTool({ name: 'page', arguments: { action: 'get_text', session: 'pauseme' } }, undefined, {
          onprogress: (p) => heard.push(String(p.message ?? '')),
          timeout: 60_000,
        })
        .then((r) => {
          answered = true;
          return r;
        });
      await waitFor(
        () => heard.some((m) => /paused by an operator/.test(m)),
        'a progress notification saying the call is paused',
      );
      await ui.waitForFunction(
        (sel) => /1 waiting/.test(document.querySelector(sel)?.textContent ?? ''),
        { timeout: 10_000 },
        row('pauseme'),
      );
      assert.equal(answered, false, 'the call is held while paused');

      await ui.click(`${row('pauseme')} [data-brake="resume"]`);
      const result = await held;
      assert.equal(!!result.isError, false, JSON.stringify(result.content));
      assert.match(JSON.stringify(result.structuredContent), /Submit claim/);
    } finally {
      await a.close();
    }
  });

  test('the keyboard: Alt+Shift+S stops a running wait_for within the call, Alt+Shift+P resumes, Alt+Shift+E ends the session', async () => {
    const a = await agent();
    try {
      assert.equal((await a.call('page', { action: 'navigate', url: FORM, session: 'endme' })).isError, false);
      // The pane of the session is focused from its row, then the shortcuts act on it.
      await ui.waitForSelector(`${row('endme')} button.link`, { timeout: 10_000 });
      await ui.click(`${row('endme')} button.link`);
      await ui.waitForSelector('[data-pane-session$="/endme"][data-focused]', { timeout: 10_000 });

      const waiting = a.call('page', {
        action: 'wait_for',
        text: 'never on this page',
        timeout_ms: 60_000,
        session: 'endme',
      });
      const chord = async (code: 'KeyS' | 'KeyP' | 'KeyE') => {
        await ui.keyboard.down('Alt');
        await ui.keyboard.down('Shift');
        await ui.keyboard.press(code);
        await ui.keyboard.up('Shift');
        await ui.keyboard.up('Alt');
      };
      await chord('KeyS');
      const stopped = refusalOf(await waiting);
      assert.equal(stopped.code, 'session_stopped', 'the running wait gave up at the stop, long before its 60 s');
      await ui.waitForSelector(`${row('endme')} [data-brake-state="stopped"]`, { timeout: 10_000 });
      await chord('KeyP');
      await ui.waitForSelector(`${row('endme')} [data-brake-state="running"]`, { timeout: 10_000 });
      assert.equal(
        (await a.call('page', { action: 'get_text', session: 'endme' })).isError,
        false,
        'resumed: calls run again',
      );

      await chord('KeyE');
      // The ended session leaves the live list: its row goes, or stays marked closed (the console keeps closed rows).
      await ui.waitForFunction(
        (sel) => {
          const el = document.querySelector(sel) as HTMLElement | null;
          return !el || el.dataset.state === 'closed';
        },
        { timeout: 10_000 },
        row('endme'),
      );
      assert.equal(refusalOf(await a.call('page', { action: 'get_text', session: 'endme' })).code, 'session_ended');

      // Each brake step is in the audit trail, with who did it.
      const op = await operatorSocket(gw, ['operator.read']);
      try {
        const page = await op.request('audit.query', { kind: 'brake', limit: 50 });
        const verdicts = page.payload.entries
          .filter((e: any) => e.sessionKey.endsWith('/endme'))
          .map((e: any) => e.verdict)
          .reverse();
        assert.deepEqual(verdicts, ['stopped', 'resumed', 'ended']);
        assert.ok(
          page.payload.entries.every((e: any) => /verity-control-ui/.test(e.by)),
          'by whom',
        );
      } finally {
        op.ws.close();
      }
    } finally {
      await a.close();
    }
  });
});
