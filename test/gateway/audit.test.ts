// The audit trail across a restart of `verity start`: every kind of call (actions, observations,
// invalid_arguments, policy refusals), approvals denied by a named operator, and the operator's own input
// are in the log after the gateway restarts; the Control UI's log view (real Chromium) filters them, pages
// back, shows before/after images side by side with expected vs observed, and exports JSONL and a zip.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { operatorSocket, refusalOf, startGateway, waitFor, type Gateway } from '../helpers/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-audit-gw-'));
let gw: Gateway | undefined;
let chrome: TestBrowser | undefined;
const env = { VERITY_CONFIG_DIR: dir };
const args = () => ['--policy', join(dir, 'policy.json')];

before(() => writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['press_key'] })));
after(async () => {
  await chrome?.close();
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

const FORM =
  'data:text/html,<title>claim</title><input aria-label="Amount"><button onclick="this.textContent=\'Sent\'">Submit claim</button>';

test("yesterday's calls are in the log after a restart: filtered, paged and exported from the Control UI", async () => {
  gw = await startGateway(args(), env);
  let sessionKey = '';
  {
    const agent = await gw.connect();
    const op = await operatorSocket(gw, ['operator.read', 'operator.write', 'operator.approvals']);
    try {
      assert.equal(
        (await agent.call('start_session', { session: 'claims', recording_dir: 'claims-run' })).isError,
        false,
      );
      assert.equal((await agent.call('page', { action: 'navigate', url: FORM, session: 'claims' })).isError, false);
      const snap = await agent.call('get_window_state', {
        format: 'full',
        include_screenshot: false,
        session: 'claims',
      });
      const token = (label: string) => snap.structured.elements.find((e: any) => e.label === label).element_token;
      const clicked = await agent.call('click', { element_token: token('Submit claim'), session: 'claims' });
      assert.equal(clicked.structured.effect, 'confirmed', clicked.text);
      assert.equal(
        (await agent.call('type_text', { element_token: token('Amount'), text: '42.50', session: 'claims' })).isError,
        false,
      );
      assert.equal(
        refusalOf(await agent.call('click', { element_token: 17, session: 'claims' })).code,
        'invalid_arguments',
      );
      assert.equal(
        refusalOf(await agent.call('page', { action: 'navigate', url: 'file:///etc/passwd', session: 'claims' })).code,
        'not_permitted',
      );
      const held = agent.call('press_key', { key: 'Tab', session: 'claims' });
      const requested = await waitFor(
        () => op.events.find((e) => e.event === 'approval.requested'),
        'the approval request',
      );
      assert.equal((await op.request('approvals.resolve', { id: requested.payload.id, approve: false })).ok, true);
      assert.match(refusalOf(await held).message, /denied/);
      // The operator's own click in the browser panel, on the session's tab.
      const tabs = await agent.call('page', { action: 'list_tabs', session: 'claims' });
      const tabId = tabs.structured.tabs[0].tab_id;
      assert.equal((await op.request('browser.input', { tab_id: tabId, type: 'click', x: 5, y: 5 })).ok, true);
      sessionKey = (await op.request('sessions.list')).payload.sessions.find(
        (s: any) => s.session === 'claims',
      ).sessionKey;
      await waitFor(
        async () =>
          (await op.request('audit.query', { sessionKey, kind: 'operator_input' })).payload.entries.length === 1,
        'the input in the trail',
      );
    } finally {
      op.ws.close();
      await agent.disconnect();
    }
  }
  assert.equal(await gw.stop(), 0, 'the gateway exits cleanly');
  const restartedAt = Date.now();

  gw = await startGateway(args(), env);
  const op = await operatorSocket(gw, ['operator.read']);
  try {
    const before = (await op.request('audit.query', { sessionKey, to: restartedAt, limit: 500 })).payload.entries;
    const seen = before.map((e: any) => `${e.kind}:${e.tool}:${e.verdict}`);
    for (const expected of [
      'call:start_session:ok',
      'call:get_window_state:ok',
      'call:click:confirmed',
      'call:type_text:confirmed',
      'call:click:refused',
      'call:page:refused',
      'approval:press_key:requested',
      'approval:press_key:denied',
      'call:press_key:refused',
      'operator_input:browser.input:input',
    ]) {
      assert.ok(seen.includes(expected), `${expected} survived the restart: ${seen.join(', ')}`);
    }
    const invalid = before.find((e: any) => e.refusal?.code === 'invalid_arguments');
    assert.match(invalid.refusal.message, /element_token/);
    assert.match(before.find((e: any) => e.verdict === 'denied').by, /test-operator/, 'denied by whom');
    const click = before.find((e: any) => e.tool === 'click' && e.verdict === 'confirmed');
    assert.match(click.summary, /button "Submit claim"/, 'the log line names the element, not its token');
    assert.equal(
      (await op.request('audit.query', { sessionKey, from: restartedAt })).payload.entries.length,
      0,
      'nothing new since the restart',
    );
    // Paging back: two at a time reaches every entry once.
    const ids: number[] = [];
    let cursor: number | undefined;
    for (let i = 0; i < 50; i++) {
      const page = (await op.request('audit.query', { sessionKey, limit: 2, ...(cursor ? { before: cursor } : {}) }))
        .payload;
      ids.push(...page.entries.map((e: any) => e.id));
      if (page.next_before === null) break;
      cursor = page.next_before;
    }
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
    assert.equal(new Set(ids).size, before.length);

    chrome = await sharedChromium();
    const ui = await chrome.context.newPage();
    await ui.setViewport({ width: 1440, height: 900 });
    await ui.goto(`${gw.base}/?token=${gw.token}`);
    await ui.waitForSelector('[data-connection="connected"]', { timeout: 15_000 });
    await ui.click('[data-toggle="log"]');
    await ui.waitForSelector(`[data-audit-entry][data-session-key="${sessionKey}"]`, { timeout: 15_000 });

    await ui.select('[data-audit-filter="session"]', sessionKey);
    await ui.select('[data-audit-filter="verdict"]', 'refused');
    await ui.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('[data-audit-entry]')] as HTMLElement[];
        return rows.length > 0 && rows.every((r) => r.dataset.verdict === 'refused');
      },
      { timeout: 10_000 },
    );
    assert.ok(
      await ui.$$eval('[data-audit-entry]', (rows) => rows.some((r) => /invalid_arguments/.test(r.textContent ?? ''))),
      'invalid_arguments is in the log',
    );
    await ui.select('[data-audit-filter="verdict"]', '');
    // The text filter shows exactly the entries whose stored line holds the text (the gateway's answer).
    const matching = (
      await op.request('audit.query', { sessionKey, text: 'Submit claim', limit: 500 })
    ).payload.entries.map((e: any) => String(e.id));
    assert.ok(
      matching.length > 1 && matching.length < before.length,
      `the text narrows the list: ${matching.length} of ${before.length}`,
    );
    await ui.type('[data-audit-filter="text"]', 'Submit claim');
    await ui.waitForFunction(
      (want) => {
        const ids = ([...document.querySelectorAll('[data-audit-entry]')] as HTMLElement[]).map(
          (r) => r.dataset.auditEntry,
        );
        return JSON.stringify(ids) === want;
      },
      { timeout: 10_000 },
      JSON.stringify(matching),
    );

    // The failure view: the recorded click opens with its before/after images side by side.
    await ui.click('[data-audit-entry][data-tool="click"][data-verdict="confirmed"] .audit-line');
    await ui.waitForSelector('[data-audit-detail] [data-audit-image="before"]', { timeout: 10_000 });
    // Each image is an <img>, or (cropped around the target) a frame holding one.
    const images = await ui.$$eval('[data-audit-detail] [data-audit-image]', (els) =>
      els.map((el) => ({
        which: (el as HTMLElement).dataset.auditImage,
        top: el.getBoundingClientRect().top,
        width: ((el.tagName === 'IMG' ? el : el.querySelector('img')) as HTMLImageElement).naturalWidth,
      })),
    );
    assert.deepEqual(
      images.map((i) => i.which),
      ['before', 'after'],
    );
    assert.ok(
      images.every((i) => i.width > 0),
      'both images decoded',
    );
    assert.equal(Math.round(images[0].top), Math.round(images[1].top), 'side by side');
    assert.ok(
      await ui.$('[data-audit-entry][data-tool="click"][data-verdict="confirmed"] [data-evidence]'),
      'the evidence is shown',
    );

    // Export: the download links the UI makes, fetched as the browser would.
    await ui.evaluate(() => {
      (window as any).__downloads = [];
      HTMLAnchorElement.prototype.click = function (this: HTMLAnchorElement) {
        (window as any).__downloads.push(this.href);
      };
    });
    await ui.click('[data-audit-export="jsonl"]');
    await ui.click('[data-audit-export="zip"]');
    const [jsonlUrl, zipUrl] = await waitFor(
      () => ui.evaluate(() => ((window as any).__downloads.length === 2 ? (window as any).__downloads : null)),
      'two export links',
    );
    const download = await fetch(jsonlUrl);
    // Idle keep-alive sockets live a minute, not Node's 5 s that races clients reusing one (gateway/server.ts).
    assert.equal(download.headers.get('keep-alive'), 'timeout=65');
    const jsonl = await download.text();
    const lines = jsonl
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines[0].event, 'start');
    assert.equal(lines.at(-1).event, 'end');
    const action = lines.find((l) => l.event === 'action' && l.tool === 'click' && l.verdict === 'confirmed');
    assert.equal(
      action.result.effect,
      'confirmed',
      'the recording format: {event, step, tool, args, result, isError, screenshots, at}',
    );
    assert.ok(action.step >= 1 && typeof action.at === 'string' && 'args' in action && 'isError' in action);
    assert.equal((await fetch(jsonlUrl)).status, 404, 'a download link works once');
    const zipFile = join(dir, 'export.zip');
    writeFileSync(zipFile, Buffer.from(await (await fetch(zipUrl)).arrayBuffer()));
    assert.match(execFileSync('unzip', ['-t', zipFile]).toString(), /No errors detected/);
    const listing = execFileSync('unzip', ['-Z1', zipFile]).toString();
    assert.match(listing, /^trajectory\.jsonl$/m);
    assert.match(listing, /^images\/\d+-before\.png$/m);
    assert.match(listing, /^images\/\d+-after\.png$/m);
  } finally {
    op.ws.close();
  }
});
