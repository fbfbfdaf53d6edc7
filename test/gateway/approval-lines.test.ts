// The computer-use tools read well where operators decide and watch (issue 44 item 9): in a real Control UI
// page against a real `verity start` whose policy holds set_window_frame, zoom and verify_state, each held
// call's card leads with what the call does in words (`data-approval-summary`: "x 30, y 40, 900×700 on tab
// …", a region, the predicates in brief), keeps the arguments exactly as they will run below it (open,
// `data-approval-args`), and approving it runs the call: the browser window's bounds read back, the zoomed
// image, the predicates satisfied. The session's action log shows the same line.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { approveCard, bindAgent, openControlUi, type BoundAgent } from '../helpers/control-ui.js';
import { startGateway, type Gateway } from '../helpers/gateway.js';

const CLAIMS = 'data:text/html,<title>Claims</title><button>Submit claim</button><p>ok</p>';

let gw: Gateway;
let chrome: TestBrowser;
let page: Page;
let agent: BoundAgent;
const dir = mkdtempSync(join(tmpdir(), 'verity-approval-lines-'));

before(async () => {
  writeFileSync(
    join(dir, 'policy.json'),
    JSON.stringify({ require_approval: ['set_window_frame', 'zoom', 'verify_state'] }),
  );
  // 40 s: longer than every wait below, so no card times out under a loaded machine.
  gw = await startGateway(
    ['--policy', join(dir, 'policy.json'), '--caps', 'windows,zoom', '--approval-timeout-s', '40'],
    { SHELL: '/bin/sh', VERITY_CONFIG_DIR: dir },
  );
  chrome = await sharedChromium();
  page = await openControlUi(chrome, gw);
  agent = await bindAgent(gw, page, 'lines-bot');
  const r = await agent.call('page', { action: 'navigate', url: CLAIMS });
  assert.equal(r.isError, false, r.text);
});
after(async () => {
  await agent?.close().catch(() => {});
  await chrome?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The session pane's log line of its latest `tool` call. */
async function logLine(tool: string): Promise<string> {
  const sel = `[data-pane-session$="/implicit"] li.action[data-tool="${tool}"] [data-approval-args]`;
  const line = await page.waitForSelector(sel, { timeout: 15_000 }).catch((e: Error) => {
    throw new Error(`${e.message}: the pane logged no ${tool}`);
  });
  return line!.evaluate((e) => e.textContent ?? '');
}

async function currentTab(): Promise<string> {
  const listed = await agent.call('page', { action: 'list_tabs' });
  return listed.structured.current_tab_id as string;
}

test('set_window_frame on a tab: the card reads "x 30, y 40, 900×700 on tab …", approved it is confirmed', async () => {
  const tabId = await currentTab();
  const sent = { target: { kind: 'tab', tab_id: tabId }, x: 30, y: 40, width: 900, height: 700 };
  const pending = agent.call('set_window_frame', sent);
  const card = await approveCard(page, 'set_window_frame');
  assert.equal(card.line, `x 30, y 40, 900×700 on tab ${tabId}`);
  assert.deepEqual(card.args, sent, 'the arguments below the line are exactly what runs');
  assert.ok(card.argsShown, 'the arguments are shown, not folded away');
  const r = await pending;
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.match(await logLine('set_window_frame'), /^x 30, y 40, 900×700 on tab /);
});

test('zoom: the card reads its region and scale, approved it returns the image', async () => {
  const sent = { region: { x: 0, y: 0, width: 120, height: 60 }, scale: 2 };
  const pending = agent.call('zoom', sent);
  const card = await approveCard(page, 'zoom');
  assert.equal(card.line, '0,0 120×60 at scale 2');
  assert.deepEqual(card.args, sent);
  const r = await pending;
  assert.equal(r.isError, false, r.text);
  assert.equal(r.images, 1, `one image came back: ${r.text}`);
});

test('verify_state: the card reads its predicates in brief, approved they are satisfied, and the log says the same', async () => {
  const sent = {
    expect: [{ element: { role: 'button', name: 'Submit claim' }, exists: true }, { text_present: 'ok' }],
  };
  const pending = agent.call('verify_state', sent);
  const card = await approveCard(page, 'verify_state');
  assert.equal(card.line, 'button "Submit claim" exists; text present "ok"');
  assert.deepEqual(card.args, sent);
  const r = await pending;
  assert.equal(r.structured.status, 'satisfied', r.text);
  assert.equal(await logLine('verify_state'), 'button "Submit claim" exists; text present "ok"');
});
