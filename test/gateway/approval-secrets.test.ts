// Secrets stay secret on the approval card too (issue #22 item 8): a held type_text or set_value bound for
// a password field, or a field marked autocomplete="one-time-code" / "cc-number", shows its text masked in
// the real Control UI's card (and its approvals.list and audit entry), directly or as a run_actions step;
// text for an ordinary field is shown whole. Approving it still types the full text (the verdict compares it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { operatorSocket, startGateway, type Connection, type Gateway } from '../helpers/gateway.js';

const FORM =
  'data:text/html,<title>pay</title>' +
  '<input aria-label="Password" type="password">' +
  '<input aria-label="Code" autocomplete="one-time-code">' +
  '<input aria-label="Card" autocomplete="cc-number">' +
  '<input aria-label="Name">';

let gw: Gateway;
let chrome: TestBrowser;
let page: Page;
let agent: Connection;
const dir = mkdtempSync(join(tmpdir(), 'verity-approval-secrets-'));

before(async () => {
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['type_text', 'set_value'] }));
  gw = await startGateway(['--policy', join(dir, 'policy.json')], { VERITY_CONFIG_DIR: dir });
  chrome = await sharedChromium();
  page = await chrome.context.newPage();
  await page.goto(`${gw.base}/?token=${gw.token}`);
  await page.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });
  agent = await gw.connect();
  const r = await agent.call('page', { action: 'navigate', url: FORM });
  assert.equal(r.isError, false, r.text);
});
after(async () => {
  await agent?.disconnect();
  await chrome?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The tokens of the labelled fields, from one snapshot (a later one makes earlier tokens stale). */
async function tokensOf(...labels: string[]): Promise<string[]> {
  const snap = await agent.call('get_window_state', { format: 'full', include_screenshot: false });
  return labels.map((label) => {
    const el = snap.structured.elements.find((e: any) => e.label === label);
    assert.ok(el, `${label} is listed: ${snap.text.slice(0, 300)}`);
    assert.equal(el.secret, undefined, 'why a field is secret stays in the server');
    return el.element_token;
  });
}

/** Waits for the one card on screen, returns its argument text, approves it and returns the call's result. */
async function approveCard(pending: Promise<any>): Promise<{ card: string; result: any }> {
  const args = await page.waitForSelector('[data-approval] [data-approval-args]', { timeout: 15_000 });
  const card = await args!.evaluate((e) => e.textContent ?? '');
  await page.click('[data-approval] button.approve');
  const result = await pending;
  await page.waitForFunction(() => !document.querySelector('[data-approval]'), { timeout: 15_000 });
  return { card, result };
}

test('text for a password field is masked on the card, in approvals.list and in the audit entry', async () => {
  const [token] = await tokensOf('Password');
  const approver = await operatorSocket(gw, ['operator.approvals', 'operator.read']);
  try {
    const pending = agent.call('type_text', { element_token: token, text: 'hunter2' });
    await page.waitForSelector('[data-approval] [data-approval-args]', { timeout: 15_000 });
    const listed = await approver.request('approvals.list');
    const { card, result } = await approveCard(pending);
    assert.doesNotMatch(card, /hunter2/, card);
    assert.match(card, /•{7}/, card);
    assert.doesNotMatch(JSON.stringify(listed.payload), /hunter2/);
    assert.equal(result.structured.effect, 'confirmed', result.text);
    const audit = await approver.request('audit.query', { limit: 50 });
    assert.equal(audit.ok, true, JSON.stringify(audit.error));
    assert.doesNotMatch(JSON.stringify(audit.payload), /hunter2/, 'no audit entry holds the secret');
  } finally {
    approver.ws.close();
  }
});

test('one-time code and card number fields too, set_value and as run_actions steps; an ordinary field is shown whole', async () => {
  const [code, card, name] = await tokensOf('Code', 'Card', 'Name');

  const otp = await approveCard(agent.call('set_value', { element_token: code, value: '424242' }));
  assert.doesNotMatch(otp.card, /424242/, otp.card);
  assert.equal(otp.result.structured.effect, 'confirmed', otp.result.text);

  // A batch's steps each wait for approval (the step is the held tool): the card shows the step's arguments.
  const batch = agent.call('run_actions', {
    steps: [
      { tool: 'type_text', args: { element_token: card, text: '4111111111111111' } },
      { tool: 'type_text', args: { element_token: name, text: 'Ada Lovelace' } },
    ],
  });
  const args = await page.waitForSelector('[data-approval] [data-approval-args]', { timeout: 15_000 });
  const first = await args!.evaluate((e) => e.textContent ?? '');
  await page.click('[data-approval] button.approve');
  // The next step's card, once the first one has gone.
  await page.waitForFunction(
    (before) => {
      const text = document.querySelector('[data-approval] [data-approval-args]')?.textContent;
      return typeof text === 'string' && text !== before;
    },
    { timeout: 15_000 },
    first,
  );
  const second = await page.$eval('[data-approval] [data-approval-args]', (e) => e.textContent ?? '');
  await page.click('[data-approval] button.approve');
  const done = await batch;
  assert.doesNotMatch(first, /4111/, first);
  assert.match(first, /•{16}/, first);
  assert.match(second, /Ada Lovelace/, 'an ordinary field is shown whole');
  assert.equal(done.isError, false, done.text);
});
