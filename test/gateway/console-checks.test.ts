// The task's checks in the Control UI (issue 45 item 4), in real Chromium against a real `verity start` with a
// real MCP SDK client: each verify_state is in its session's pane with its predicates and outcome, the
// session whose last check was satisfied is marked done in the sidebar (and one whose last check was not,
// so), and the audit trail has the call with the check's outcome as its verdict.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bindAgent, type Console, openControlUi, startConsole } from '../helpers/control-ui.js';
import type { Gateway } from '../helpers/gateway.js';
import type { TestBrowser } from '../helpers/chromium.js';

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

const SHOP = 'data:text/html,<title>shop</title><h1>Thanks</h1><p>Order placed</p>';

describe("the task's checks in the Control UI", () => {
  test('a satisfied check: in the pane with its predicates, the session marked done; an unsatisfied one after it', async () => {
    const page = await openControlUi(chrome, gw);
    const agent = await bindAgent(gw, page, 'checker');
    try {
      await agent.call('start_session', { session: 'task' });
      const nav = await agent.call('page', { action: 'navigate', url: SHOP, session: 'task' });
      assert.equal(nav.isError, false, nav.text);
      const ok = await agent.call('verify_state', {
        expect: [{ text_present: 'Order placed' }, { title_equals: 'shop' }],
        session: 'task',
      });
      assert.equal(ok.structured.status, 'satisfied', ok.text);
      await page.waitForSelector('[data-sidebar] [data-session-key$="/task"] [data-last-check="satisfied"]', {
        timeout: 10_000,
      });
      const entry = await page.waitForSelector(
        '[data-action-log] li[data-tool="verify_state"] [data-check="satisfied"]',
        {
          timeout: 10_000,
        },
      );
      const shown = await entry!.$$eval('li[data-holds]', (lis) =>
        lis.map((li) => ({ holds: li.getAttribute('data-holds'), text: li.textContent ?? '' })),
      );
      assert.equal(shown.length, 2, JSON.stringify(shown));
      assert.ok(
        shown.every((p) => p.holds === 'true'),
        JSON.stringify(shown),
      );
      assert.match(shown[0].text, /text_present.*Order placed/);
      assert.match(shown[1].text, /title_equals.*shop/);

      const no = await agent.call('verify_state', {
        expect: [{ text_present: 'Order placed' }, { text_present: 'Refund issued' }],
        timeout_ms: 300,
        session: 'task',
      });
      assert.equal(no.structured.status, 'unsatisfied', no.text);
      await page.waitForSelector('[data-sidebar] [data-session-key$="/task"] [data-last-check="unsatisfied"]', {
        timeout: 10_000,
      });
      assert.equal(await page.$('[data-sidebar] [data-session-key$="/task"] [data-last-check="satisfied"]'), null);
      const bad = await page.waitForSelector(
        '[data-action-log] li[data-tool="verify_state"] [data-check="unsatisfied"]',
        {
          timeout: 10_000,
        },
      );
      assert.deepEqual(await bad!.$$eval('li[data-holds]', (lis) => lis.map((li) => li.getAttribute('data-holds'))), [
        'true',
        'false',
      ]);

      // The audit trail: the call, its predicates (its arguments) and its outcome as the verdict.
      await page.click(
        '[data-action-log] li[data-tool="verify_state"][data-effect="unsatisfied"] [data-action-details]',
      );
      await page.waitForSelector('[data-audit-entry][data-tool="verify_state"][data-verdict="unsatisfied"]', {
        timeout: 10_000,
      });
      await page.waitForSelector('[data-audit-entry][data-tool="verify_state"][data-verdict="satisfied"]', {
        timeout: 10_000,
      });
    } finally {
      await agent.close();
      await page.close();
    }
  });
});
