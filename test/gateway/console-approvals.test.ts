// Approvals worth answering and every actor named (issue #26 items 1-3), in a real Control UI page against
// a real `verity start` with a real policy file that holds clicks, and real MCP SDK clients bound to it:
// a call that cannot run is refused before any card; the card names the page (origin, title), the element
// (role, name) and only what the agent sent, legibly; a denial reaches the session's pane with who
// decided; a client that resets its timeout on progress outwaits its own timeout; a client that gives up
// (its request cancelled, its connection closed) has its call withdrawn and its card says so; and the
// audit trail names every agent for good, its ended sessions included, filterable by agent.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { bindAgent, openControlUi, type BoundAgent } from '../helpers/control-ui.js';
import { operatorSocket, sleep, startGateway, waitFor, type Gateway, type OperatorSocket } from '../helpers/gateway.js';

const CLAIMS = 'data:text/html,<title>Claims</title><button>Submit claim</button><p>ok</p>';

let gw: Gateway;
let chrome: TestBrowser;
let page: Page;
let operator: OperatorSocket;
const dir = mkdtempSync(join(tmpdir(), 'verity-console-approvals-'));
const agents: BoundAgent[] = [];

before(async () => {
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['click'] }));
  // 40 s: longer than every wait below, so no card times out under a loaded machine.
  gw = await startGateway(['--policy', join(dir, 'policy.json'), '--approval-timeout-s', '40'], {
    SHELL: '/bin/sh',
    VERITY_CONFIG_DIR: dir,
  });
  chrome = await sharedChromium();
  page = await openControlUi(chrome, gw);
  operator = await operatorSocket(gw, ['operator.read']);
});
after(async () => {
  for (const a of agents) await a.close().catch(() => {});
  operator?.ws.close();
  await chrome?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function agent(name: string): Promise<BoundAgent> {
  const a = await bindAgent(gw, page, name);
  agents.push(a);
  const r = await a.call('page', { action: 'navigate', url: CLAIMS });
  assert.equal(r.isError, false, r.text);
  return a;
}

async function buttonToken(a: BoundAgent): Promise<string> {
  const snap = await a.call('get_window_state', { format: 'full', include_screenshot: false });
  const button = snap.structured.elements.find((e: any) => e.label === 'Submit claim');
  assert.ok(button, snap.text.slice(0, 300));
  return button.element_token;
}

const card = (id = '') => `[data-approval${id ? `="${id}"` : ''}]`;
const cardWaiting = () => page.waitForSelector(`${card()}[data-withdrawn="false"] button.approve`, { timeout: 15_000 });

describe('approvals worth answering', () => {
  test('a click with the malformed token "nope" is refused invalid_element_token at once, never held', async () => {
    const a = await agent('claims-bot');
    const r = await a.call('click', { element_token: 'nope' });
    assert.equal(r.structured.refusal.code, 'invalid_element_token', r.text);
    assert.equal(await page.$(card()), null, 'no card was shown');
    const held = await operator.request('audit.query', { kind: 'approval' });
    assert.deepEqual(held.payload.entries, [], 'nothing was held for an operator');
  });

  test('the card names the page and the element, shows only what was sent, whole and legible; a denial reaches the pane with who decided', async () => {
    const a = agents[0];
    const token = await buttonToken(a);
    await a.call('screen', { action: 'navigate' }); // the session's pane, where the denial must show
    const pending = a.call('click', { element_token: token });
    await cardWaiting();
    // --approval-timeout-s 40: the card counts down from it (the default would be 55).
    const left = Number(
      await page.$eval(`${card()} [data-approval-countdown]`, (e) => (e as HTMLElement).dataset.approvalCountdown),
    );
    assert.ok(left > 10 && left <= 40, `counts down from 40 s: ${left}`);
    assert.match(await page.$eval(`${card()} [data-approval-target="tab"]`, (e) => e.textContent!), /data: · "Claims"/);
    assert.match(
      await page.$eval(`${card()} [data-approval-labels]`, (e) => e.textContent!),
      /on button "Submit claim"/,
    );
    // What the agent sent, not the schema's defaults ("modifier": [], "delivery_mode", "button").
    const args = JSON.parse(await page.$eval(`${card()} [data-approval-args]`, (e) => e.textContent!));
    assert.deepEqual(args, { element_token: token });
    // Narrowed until the line must wrap: the token moves down whole, never split across lines.
    const lines = await page.$eval(
      `${card()} [data-approval-args]`,
      (pre, t) => {
        (pre as HTMLElement).style.width = '15ch';
        const text = [...pre.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.includes(t))!;
        const at = text.textContent!.indexOf(t);
        const range = document.createRange();
        range.setStart(text, at);
        range.setEnd(text, at + t.length);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      },
      token,
    );
    assert.equal(lines, 1, 'the token sits on one line');

    await page.click(`${card()} button.deny`);
    const r = await pending;
    assert.equal(r.structured.refusal.code, 'not_permitted');
    const denial = await waitFor(
      async () => (await operator.request('audit.query', { kind: 'approval', verdict: 'denied' })).payload.entries[0],
      'the denial in the audit trail',
    );
    assert.ok(denial.by, JSON.stringify(denial));
    // Item 1: the denied call in the session's pane, as what it is, with who decided. The pane also lists
    // this agent's earlier click on "nope" (refused invalid_element_token): the denial is the not_permitted line.
    const refusals = '[data-pane-session$="/implicit"] li.action[data-tool="click"] .refusal';
    const line = await page
      .waitForFunction(
        (sel) =>
          [...document.querySelectorAll(sel)].map((e) => e.textContent!).find((t) => t.startsWith('not_permitted')),
        { timeout: 15_000 },
        refusals,
      )
      .catch(async (e: Error) => {
        const seen = await page.$$eval(refusals, (els) => els.map((el) => el.textContent));
        throw new Error(`${e.message}: no not_permitted line in the pane; it lists ${JSON.stringify(seen)}`);
      });
    const shown = (await line.jsonValue())!;
    assert.match(shown, /^not_permitted: an operator .* denied click/);
    assert.ok(shown.includes(denial.by), `${shown} names ${denial.by}`);
  });

  test('an SDK client with resetTimeoutOnProgress outwaits its own 3 s timeout: approved after 8 s, the click runs', async () => {
    const a = await agent('patient-bot');
    const token = await buttonToken(a);
    const progress: unknown[] = [];
    const pending = a.client.callTool({ name: 'click', arguments: { element_token: token } }, undefined, {
      timeout: 3000,
      resetTimeoutOnProgress: true,
      onprogress: (p) => progress.push(p),
    });
    let settled = false;
    void pending
      .finally(() => {
        settled = true;
      })
      .catch(() => {});
    await cardWaiting();
    await sleep(8000); // well past the client's 3 s: only the progress notifications keep it waiting
    assert.equal(settled, false, 'the client is still waiting');
    assert.ok(progress.length >= 4, `progress kept coming while it waited (${progress.length})`);
    await page.click(`${card()} button.approve`);
    const result = await pending;
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    assert.equal((result.structuredContent as any).effect, 'confirmed');
    await page.waitForFunction(() => !document.querySelector('[data-approval]'), { timeout: 15_000 });
  });

  test('a client that gives up has its call withdrawn: the card says so, the queue and the trail too', async () => {
    const a = await agent('impatient-bot');
    const token = await buttonToken(a);
    // No resetTimeoutOnProgress: the SDK gives up after its timeout and sends notifications/cancelled.
    const gaveUp = a.client
      .callTool({ name: 'click', arguments: { element_token: token } }, undefined, { timeout: 3000 })
      .then(
        () => null,
        (e: Error) => e,
      );
    await cardWaiting();
    const error = await gaveUp;
    assert.match(String(error), /timed out/i);
    const note = await page.waitForSelector(`${card()}[data-withdrawn="true"] [data-approval-withdrawn]`, {
      timeout: 15_000,
    });
    assert.match(await note!.evaluate((e) => e.textContent!), /Withdrawn: the client cancelled the request/);
    assert.equal(await page.$(`${card()}[data-withdrawn="true"] button.approve`), null, 'nothing left to approve');
    const approver = await operatorSocket(gw, ['operator.approvals']);
    try {
      assert.deepEqual((await approver.request('approvals.list')).payload.approvals, []);
      // Its connection closing withdraws a call too.
      const b = await agent('leaving-bot');
      const held = b.call('click', { element_token: await buttonToken(b) }).catch(() => null);
      await waitFor(
        async () => (await approver.request('approvals.list')).payload.approvals.length === 1,
        'the second call held',
      );
      await b.close();
      await held;
      await waitFor(
        async () => (await approver.request('approvals.list')).payload.approvals.length === 0,
        "the closed client's call withdrawn",
      );
    } finally {
      approver.ws.close();
    }
    const withdrawn = (await operator.request('audit.query', { kind: 'approval', verdict: 'withdrawn' })).payload
      .entries;
    assert.equal(withdrawn.length, 2, JSON.stringify(withdrawn));
    assert.match(withdrawn[0].summary, /connection closed/);
    assert.match(withdrawn[1].summary, /cancelled the request/);
    await page.waitForFunction(() => document.querySelectorAll('[data-approval][data-withdrawn="true"]').length === 2, {
      timeout: 15_000,
    });
    // Each Dismiss re-renders the queue: one at a time.
    while (await page.$(`${card()} button.dismiss`)) await page.click(`${card()} button.dismiss`);
    await page.waitForFunction(() => !document.querySelector('[data-approval]'), { timeout: 15_000 });
  });
});

describe('every actor named, for good', () => {
  test("each entry names the agent's client, credential id, connection and session; ended sessions keep their names; the agent filter spans its sessions", async () => {
    const a = agents[0]; // claims-bot: its default session, and now a labelled one
    await a.call('start_session', { session: 'second' });
    await a.call('page', { action: 'list_tabs', session: 'second' });
    const mine = (await operator.request('audit.query', { client: 'claims-bot', limit: 200 })).payload.entries;
    assert.ok(mine.length >= 5, JSON.stringify(mine.map((e: any) => e.tool)));
    for (const e of mine) {
      assert.equal(e.actor.client, 'claims-bot');
      assert.equal(e.actor.client_version, '1');
      assert.match(e.actor.credential, /^agent\+link:[0-9a-f]{12}$/);
      assert.match(e.actor.connection, /^http-/);
      assert.equal(e.actor.transport, 'http');
    }
    assert.deepEqual([...new Set(mine.map((e: any) => e.actor.session))].sort(), ['implicit', 'second']);
    // The link token is a secret: the trail holds its hash only.
    const link = await page.$eval('[data-agent-link]', (el) => (el as HTMLElement).dataset.linkToken!);
    const files = readdirSync(join(dir, 'audit')).map((f) => readFileSync(join(dir, 'audit', f), 'utf8'));
    assert.ok(files.join('').length > 0 && !files.some((f) => f.includes(link)), 'no link token in the trail');
    for (const b of agents.splice(0)) await b.close().catch(() => {});
    await waitFor(
      async () => (await operator.request('sessions.list')).payload.sessions.length === 0,
      'every session ended',
    );

    // A Control UI that never saw these sessions (a reload, a new day): every one is named from the trail.
    const fresh = await openControlUi(chrome, gw);
    try {
      await fresh.click('[data-toggle="log"]');
      await fresh.waitForSelector('[data-audit-filter="client"] option[value="claims-bot"]', { timeout: 15_000 });
      const options = await fresh.$$eval('[data-audit-filter="session"] option', (os) =>
        os.map((o) => o.textContent!.trim()).filter((t) => t !== 'all'),
      );
      assert.equal(new Set(options).size, options.length, `distinct: ${options.join(' | ')}`);
      assert.ok(!options.some((o) => /^a session that ended/.test(o)), options.join(' | '));
      assert.ok(
        options.some((o) => /^claims-bot 1 · second \(ended, /.test(o)),
        options.join(' | '),
      );
      assert.ok(
        options.some((o) => /^impatient-bot 1 \(default session\) \(ended, /.test(o)),
        options.join(' | '),
      );
      await fresh.select('[data-audit-filter="client"]', 'claims-bot');
      await fresh.waitForFunction(
        () => {
          const shown = [...document.querySelectorAll('[data-audit-entry] [data-audit-actor]')];
          return shown.length > 0 && shown.every((e) => (e as HTMLElement).dataset.auditActor === 'claims-bot');
        },
        { timeout: 15_000 },
      );
      const sessions = await fresh.$$eval('[data-audit-entry]', (es) => [
        ...new Set(es.map((e) => (e as HTMLElement).dataset.sessionKey!.split('/')[1])),
      ]);
      assert.deepEqual(sessions.sort(), ['implicit', 'second'], 'one agent, both its sessions');
    } finally {
      await fresh.browserContext().close();
    }
  });
});
