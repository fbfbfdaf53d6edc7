// The permission policy (--policy FILE): origins a tab must be on, tools held for an operator's approval,
// the same checks inside run_actions steps, and a malformed file refused at startup naming the field.
// The pages are checked through the test's own CDP connection; every process is ended by its PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { sharedChromium, model, type TestBrowser } from '../helpers/chromium.js';
import { ROOT, serveFixtures, type FixtureServer } from '../helpers/fixtures.js';
import { snapshot, startVerity, type Verity } from '../helpers/mcp.js';
import { refusalOf } from '../helpers/gateway.js';

const tmp = mkdtempSync(join(tmpdir(), 'verity-policy-'));
function policyFile(name: string, body: unknown): string {
  const file = join(tmp, name);
  writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
  return file;
}

let fx: FixtureServer;
let chrome: TestBrowser;
before(async () => {
  fx = await serveFixtures();
  chrome = await sharedChromium();
});
after(async () => {
  await chrome?.close();
  await fx?.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function ready(page: Page): Promise<Page> {
  await page.waitForFunction('window.__ready === true && document.readyState === "complete"', { timeout: 10_000 });
  return page;
}

/** A tab the test opens itself (not through Verity), and its tab_id as Verity lists it. */
async function openDirectly(v: Verity, url: string): Promise<{ page: Page; tabId: string }> {
  const page = await chrome.context.newPage();
  await page.goto(url);
  await ready(page);
  const tabs = await v.call('page', { action: 'list_tabs' });
  const tab = tabs.structured.tabs.find((t: any) => t.url === url);
  assert.ok(tab, `Verity lists ${url}: ${tabs.text}`);
  return { page, tabId: tab.tab_id };
}

/** The centre of #btn in CSS pixels (screenshot pixels at scale 1). */
async function buttonPoint(page: Page) {
  return page.evaluate(() => {
    const r = document.getElementById('btn')!.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
  });
}

describe('allowed_origins', () => {
  let v: Verity;
  let allowed: { page: Page; tabId: string };
  let denied: { page: Page; tabId: string };
  before(async () => {
    // The fixtures are served on 127.0.0.1 and 127.0.0.2: only the second origin is allowed.
    const file = policyFile('origins.json', { allowed_origins: [`http://127.0.0.2:*`] });
    v = await startVerity([...chrome.attach, '--policy', file], {
      VERITY_CONFIG_DIR: join(tmp, 'cfg'),
    });
    allowed = await openDirectly(v, fx.crossUrl('plain.html?allowed'));
    denied = await openDirectly(v, fx.url('plain.html?denied'));
  });
  after(async () => {
    await v?.close();
    await allowed?.page.close().catch(() => {});
    await denied?.page.close().catch(() => {});
  });

  test('an action on an allowed tab works (the control)', async () => {
    const snap = await snapshot(v, { target: { kind: 'tab', tab_id: allowed.tabId } });
    const r = await v.call('click', { element_token: snap.token('Increment') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await model(allowed.page)).clicks, 1);
  });

  test('an action on a tab whose origin is not allowed is refused not_permitted, and the page is untouched', async () => {
    const target = { kind: 'tab', tab_id: denied.tabId };
    const point = await buttonPoint(denied.page);
    for (const [tool, args] of [
      ['click', { target, ...point }],
      ['double_click', { target, ...point }],
      ['type_text', { target, text: 'nope' }],
      ['press_key', { target, key: 'Enter' }],
      ['scroll', { target, direction: 'down' }],
    ] as const) {
      const r = await v.call(tool, args);
      const refusal = refusalOf(r);
      assert.equal(refusal.code, 'not_permitted', `${tool}: ${r.text}`);
      assert.match(refusal.message, /127\.0\.0\.1/, 'the message names the origin');
    }
    const m = await model(denied.page);
    assert.deepEqual([m.clicks, m.text, m.scrollY], [0, '', 0]);
  });

  test('the same inside run_actions: the step fails not_permitted, later steps do not run', async () => {
    const snap = await snapshot(v, { target: { kind: 'tab', tab_id: allowed.tabId } });
    const before = (await model(allowed.page)).clicks;
    const point = await buttonPoint(denied.page);
    const r = await v.call('run_actions', {
      steps: [
        { tool: 'click', args: { element_token: snap.token('Increment') } },
        { tool: 'click', args: { target: { kind: 'tab', tab_id: denied.tabId }, ...point } },
        { tool: 'click', args: { element_token: snap.token('Increment') } },
      ],
    });
    assert.equal(r.isError, true, r.text);
    assert.deepEqual(
      r.structured.steps.map((st: any) => st.status),
      ['ok', 'failed', 'not_run'],
    );
    assert.equal(r.structured.steps[1].result.refusal.code, 'not_permitted');
    assert.equal((await model(denied.page)).clicks, 0);
    assert.equal((await model(allowed.page)).clicks, before + 1);
  });

  test('navigating to, or opening, a URL on a disallowed origin is refused; the tab stays where it was', async () => {
    const nav = await v.call('page', { action: 'navigate', tab_id: allowed.tabId, url: fx.url('plain.html?sneaky') });
    assert.equal(refusalOf(nav).code, 'not_permitted', nav.text);
    assert.equal(allowed.page.url(), fx.crossUrl('plain.html?allowed'));
    const pagesBefore = (await chrome.context.pages()).length;
    const opened = await v.call('page', { action: 'new_tab', url: fx.url('plain.html?sneaky') });
    assert.equal(refusalOf(opened).code, 'not_permitted', opened.text);
    assert.equal((await chrome.context.pages()).length, pagesBefore, 'no tab was opened');
    assert.ok(!(await chrome.context.pages()).some((p) => p.url().includes('sneaky')));
    const ok = await v.call('page', {
      action: 'navigate',
      tab_id: allowed.tabId,
      url: fx.crossUrl('plain.html?allowed-again'),
    });
    assert.equal(ok.isError, false, ok.text);
  });
});

describe('require_approval', () => {
  let v: Verity;
  let page: Page;
  before(async () => {
    const file = policyFile('approval.json', { require_approval: ['type_text'] });
    v = await startVerity([...chrome.attach, '--policy', file], {
      VERITY_CONFIG_DIR: join(tmp, 'cfg'),
    });
    const r = await v.call('page', { action: 'new_tab', url: fx.url('plain.html?approval') });
    assert.equal(r.isError, false, r.text);
    page = await ready(await chrome.page('plain.html?approval'));
  });
  after(async () => {
    await v?.close();
    await page?.close().catch(() => {});
  });

  test("type_text is refused not_permitted, saying it needs an operator's approval; click is not held", async () => {
    const snap = await snapshot(v);
    const r = await v.call('type_text', { element_token: snap.token('Text'), text: 'held' });
    const refusal = refusalOf(r);
    assert.equal(refusal.code, 'not_permitted', r.text);
    assert.match(refusal.message, /approv/i);
    assert.match(refusal.message, /operator/i);
    assert.equal((await model(page)).text, '');
    const click = await v.call('click', { element_token: snap.token('Increment') });
    assert.equal(click.structured.effect, 'confirmed', click.text);
    assert.equal((await model(page)).clicks, 1);
  });

  test('inside run_actions the held step is refused the same way and nothing after it runs', async () => {
    const snap = await snapshot(v);
    const r = await v.call('run_actions', {
      steps: [
        { tool: 'type_text', args: { element_token: snap.token('Text'), text: 'held' } },
        { tool: 'click', args: { element_token: snap.token('Increment') } },
      ],
    });
    assert.equal(r.isError, true, r.text);
    const [held, next] = r.structured.steps;
    const refusal = held.result.status === 'refused' ? held.result.refusal : r.structured.refusal;
    assert.equal(held.status, 'failed', r.text);
    assert.equal(refusal.code, 'not_permitted');
    assert.match(refusal.message, /approv/i);
    assert.equal(next.status, 'not_run');
    const m = await model(page);
    assert.deepEqual([m.text, m.clicks], ['', 1]);
  });
});

describe('a malformed policy file', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['origins-not-a-list', { allowed_origins: 'http://127.0.0.1:*' }, /allowed_origins/],
    ['approval-not-strings', { require_approval: [5] }, /require_approval/],
    ['empty-origin', { allowed_origins: [''] }, /allowed_origins/],
    ['misspelt-field', { allowed_origin: ['http://127.0.0.1:*'] }, /allowed_origin\b/],
    ['not-json', '{"allowed_origins": [', /not-json\.json/],
    ['misspelt-tool', { require_approval: ['type_txt'] }, /unknown tool "type_txt"/],
  ];
  for (const [name, body, names] of cases) {
    test(`verity mcp --policy ${name}.json exits non-zero naming the problem`, () => {
      const file = policyFile(`${name}.json`, body);
      const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'verity.js'), 'mcp', '--headless', '--policy', file], {
        input: '',
        encoding: 'utf8',
        timeout: 30_000,
        killSignal: 'SIGKILL',
        env: { ...process.env, VERITY_CONFIG_DIR: join(tmp, 'cfg') },
      });
      assert.notEqual(r.status, null, `it exits by itself (signal ${r.signal})`);
      assert.notEqual(r.status, 0, r.stderr);
      assert.match(r.stderr, names, r.stderr);
      assert.match(r.stderr, /polic/i, r.stderr);
    });
  }

  test('a policy file that does not exist is refused too', () => {
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'bin', 'verity.js'), 'mcp', '--policy', join(tmp, 'missing.json')],
      { input: '', encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' },
    );
    assert.ok(r.status !== null && r.status !== 0, r.stderr);
    assert.match(r.stderr, /missing\.json/);
  });
});
