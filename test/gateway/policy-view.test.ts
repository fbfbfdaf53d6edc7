// The Control UI shows the active policy (issue #22 item 3): gateway method policy.get (typed in
// protocol.ts) against a real `verity start --policy FILE`, and the sidebar's Policy view in a real
// Chromium page, entries shown as text (a pattern that looks like markup stays text).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { METHOD_SCHEMAS } from '../../server/gateway/protocol.js';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { openControlUi } from '../helpers/control-ui.js';
import { operatorSocket, startGateway, type Gateway } from '../helpers/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-policy-view-'));
const markup = '<img src=x onerror="window.__pwned=1">';
const rules = {
  allowed_apps: ['gedit', '*Policy Allowed', markup],
  blocked_apps: ['xterm'],
  allowed_origins: ['https://*.example.com'],
  require_approval: ['drag'],
};
let gw: Gateway;
let chrome: TestBrowser;

before(async () => {
  const file = join(dir, 'policy.json');
  writeFileSync(file, JSON.stringify(rules));
  gw = await startGateway(['--policy', file], { SHELL: '/bin/sh', VERITY_CONFIG_DIR: join(dir, 'config') });
  chrome = await sharedChromium();
});
after(async () => {
  await chrome?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('policy.get answers an operator.read connection with the policy in force, in its typed shape', async () => {
  const op = await operatorSocket(gw, ['operator.read']);
  try {
    const res = await op.request('policy.get');
    assert.equal(res.ok, true, JSON.stringify(res));
    const summary = METHOD_SCHEMAS['policy.get'].result.parse(res.payload);
    assert.deepEqual(summary.allowed_apps, rules.allowed_apps);
    assert.deepEqual(summary.blocked_apps, ['xterm']);
    assert.deepEqual(summary.allowed_origins, ['https://*.example.com']);
    assert.deepEqual(summary.require_approval, ['drag']);
    assert.match(summary.source, /policy\.json$/);
    assert.ok(summary.always_refused.some((r) => /terminal/.test(r)));
  } finally {
    op.ws.close();
  }
});

test('the sidebar shows the policy: its file, the app and origin lists, what is always refused', async () => {
  const page = await openControlUi(chrome, gw);
  try {
    await page.waitForSelector('[data-policy]', { timeout: 15_000 });
    await page.click('[data-policy] summary');
    const shown = await page.$$eval('[data-policy-field]', (els) =>
      Object.fromEntries(els.map((el) => [(el as HTMLElement).dataset.policyField, (el as HTMLElement).innerText])),
    );
    assert.match(shown.allowed_apps, /gedit/);
    assert.match(shown.allowed_apps, /\*Policy Allowed/);
    assert.ok(shown.allowed_apps.includes(markup), `the markup-like entry is shown as text: ${shown.allowed_apps}`);
    assert.match(shown.blocked_apps, /xterm/);
    assert.match(shown.allowed_origins, /https:\/\/\*\.example\.com/);
    assert.match(shown.require_approval, /drag/);
    assert.match(shown.always_refused, /terminal emulators/);
    assert.match(await page.$eval('[data-policy] summary', (el) => (el as HTMLElement).innerText), /policy\.json/);
    assert.equal(await page.$('[data-policy] img'), null, 'no element made from the entry');
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  } finally {
    await page.browserContext().close();
  }
});
