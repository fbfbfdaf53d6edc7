// The native route meets Chromium under the test's own Xvfb + openbox + session D-Bus + AT-SPI bus: a
// HEADFUL Chromium that Verity launches and drives (its window routes to CDP; its web content reached
// natively is never confirmed and escalates to the page), and a second Chromium the test starts itself,
// not driven and without a renderer accessibility tree (actions there escalate to pixel or foreground).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { CHROMIUM_FLAGS, findChromium } from '../../server/cdp/browser/browser.js';
import { missingTools, startDesktop, until as untilOnDesktop, type Desktop } from './desktop.js';

const missing =
  missingTools() ??
  (() => {
    try {
      findChromium(process.env.VERITY_CHROMIUM, undefined, process.env);
      return null;
    } catch {
      return 'no Chromium';
    }
  })();

const PAGE = `<!doctype html><html><head><title>Verity Web Form</title></head><body>
<input id="field" aria-label="Web field" oninput="document.getElementById('echo').textContent = 'echo:' + this.value">
<button id="btn" onclick="document.getElementById('count').textContent = 'clicks:' + (++window.clicks)">Web button</button>
<p id="echo">echo:</p><p id="count">clicks:0</p><script>window.clicks = 0;</script></body></html>`;

type El = {
  element_token: string;
  role: string;
  label: string;
  value?: string;
  in_web_content: boolean;
  frame: { x: number; y: number; w: number; h: number };
};

let d: Desktop;
let v: Verity;
let http: Server;
let url = '';
let drivenPid = 0;
let other: ChildProcess | null = null;
let otherProfile = '';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
async function stop(pid: number | undefined): Promise<void> {
  if (!pid || !alive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
  if (alive(pid))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
}

/** The desktop's bounded poll, at a gentler pace and a longer bound for a browser's accessibility tree. */
const until = <T>(probe: () => Promise<T | null | undefined>, what: string, ms = 20_000) =>
  untilOnDesktop(probe, what, ms, 250);

/** The page's own state, read back over CDP by the page tool (not through accessibility). */
async function pageText(): Promise<string> {
  const r = await v.call('page', { action: 'get_text' });
  assert.equal(r.isError, false, r.text);
  return JSON.stringify(r.structured);
}

before(async () => {
  if (missing) return;
  d = await startDesktop();
  http = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(http.address() as { port: number }).port}/form.html`;
  v = await startVerity(['--headful'], d.env);
  const nav = await v.call('page', { action: 'navigate', url });
  assert.equal(nav.isError, false, nav.text);
  const apps = await v.call('list_apps');
  drivenPid = apps.structured.apps.find((a: any) => a.driven_over_cdp)?.pid;
  assert.ok(drivenPid, apps.text);
});
after(async () => {
  // Browsers first (the test's own, then Verity with the one it launched), then the buses and Xvfb.
  await stop(other?.pid);
  await v?.close();
  await stop(drivenPid);
  await new Promise((r) => (http ? http.close(r) : r(undefined)));
  await d?.close();
  if (otherProfile) rmSync(otherProfile, { recursive: true, force: true });
});

/** The driven Chromium's X11 window, as list_windows shows it (with its tabs). */
async function drivenWindow(): Promise<{
  window_id: number;
  pid: number;
  title: string;
  tabs: Array<{ tab_id: string; url: string; title: string }>;
}> {
  return until(async () => {
    const r = await v.call('list_windows');
    return r.structured.windows.find((w: any) => w.pid === drivenPid && w.tabs.some((t: any) => t.url === url));
  }, "the driven Chromium window with the page's tab in list_windows");
}

/** A desktop snapshot's elements: the native route's view of every window. */
async function desktopElements(): Promise<El[]> {
  const r = await v.call('get_window_state', {
    format: 'full',
    target: { kind: 'desktop' },
    include_screenshot: false,
    max_elements: 5000,
  });
  assert.equal(r.isError, false, r.text);
  return r.structured.elements;
}

/** Polls the desktop snapshot until the page's field shows up as web content (with a bound). */
async function webField(label = 'Web field'): Promise<{ elements: El[]; field: El }> {
  return until(async () => {
    const elements = await desktopElements();
    const field = elements.find((e) => e.label === label && e.in_web_content);
    return field ? { elements, field } : null;
  }, `"${label}" as web content in the desktop snapshot`);
}

describe('native route: the Chromium Verity drives', { skip: missing ?? false }, () => {
  test('list_windows shows its window with its pid and its tabs', async () => {
    const w = await drivenWindow();
    assert.equal(w.pid, drivenPid);
    assert.ok(w.window_id > 0);
    const tab = w.tabs.find((t) => t.url === url);
    assert.ok(tab, JSON.stringify(w));
    assert.equal(tab.title, 'Verity Web Form');
    assert.ok(w.title.startsWith('Verity Web Form'), w.title);
  });

  test('a window target routes to the CDP route of its visible tab; type_text there is confirmed in the DOM', async () => {
    const w = await drivenWindow();
    const target = { kind: 'window', pid: w.pid, window_id: w.window_id };
    const r = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.target.kind, 'tab', r.text);
    assert.equal(r.structured.target.tab_id, w.tabs.find((t) => t.url === url)!.tab_id, r.text);
    const field = (r.structured.elements as El[]).find((e) => e.label === 'Web field');
    assert.ok(field, r.text);
    const typed = await v.call('type_text', { element_token: field.element_token, text: 'cdp ✓' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    assert.equal(typed.structured.route, 'dom', typed.text);
    assert.match(await pageText(), /echo:cdp ✓/);
    // The window target itself (no token) types into the tab's focused field, also read back from the DOM.
    const more = await v.call('type_text', { target, text: '+w' });
    assert.equal(more.structured.effect, 'confirmed', more.text);
    assert.equal(more.structured.route, 'dom', more.text);
    assert.match(await pageText(), /echo:cdp ✓\+w/);
    // The px form on the window target: the CDP route's click, proven by the page's own counter.
    const button = (r.structured.elements as El[]).find((e) => e.label === 'Web button')!;
    const clicked = await v.call('click', {
      target,
      x: button.frame.x + button.frame.w / 2,
      y: button.frame.y + button.frame.h / 2,
    });
    assert.equal(clicked.structured.effect, 'confirmed', clicked.text);
    assert.equal(clicked.structured.route, 'dom', clicked.text);
    assert.match(await pageText(), /clicks:1/);
  });

  test('its web content reached through the native route is never confirmed: escalation to the page', async () => {
    const { elements, field } = await webField();
    // The browser's own UI is native: nothing outside the page is marked as web content.
    const listed = elements.map((e) => `${e.role}:${e.label}:${e.in_web_content}`).join(', ');
    for (const label of ['Address and search bar', 'Reload', 'Back']) {
      const native = elements.filter((e) => e.label === label);
      assert.ok(
        native.length > 0 && native.every((e) => !e.in_web_content),
        `"${label}" listed as native UI in ${listed}`,
      );
    }
    assert.equal(field.role, 'entry', listed);
    // Keystrokes in the background need the window to have focus already: give it focus, so both modes act.
    d.x('xdotool', ['windowactivate', '--sync', String((await drivenWindow()).window_id)]);
    for (const args of [{ text: 'native' }, { text: 'native', delivery_mode: 'foreground' }]) {
      const typed = await v.call('type_text', { element_token: field.element_token, ...args });
      assert.notEqual(typed.structured.effect, 'confirmed', typed.text);
      assert.equal(typed.structured.effect, 'unverifiable', typed.text);
      assert.equal(typed.structured.escalation?.target, 'page', typed.text);
      assert.ok(
        typed.structured.evidence.some((e: any) => e.kind === 'web_content'),
        typed.text,
      );
    }
    const { elements: now } = await webField();
    const button = now.find((e) => e.label === 'Web button' && e.in_web_content);
    assert.ok(button, "the page's button is listed as web content");
    const clicked = await v.call('click', { element_token: button.element_token });
    assert.equal(clicked.structured.effect, 'unverifiable', clicked.text);
    assert.equal(clicked.structured.escalation?.target, 'page', clicked.text);
    // The address bar is the browser's own: a native action there is judged on its own read-back.
    const bar = now.find((e) => e.label === 'Address and search bar')!;
    const typedBar = await v.call('type_text', {
      element_token: bar.element_token,
      text: 'zz',
      delivery_mode: 'foreground',
    });
    assert.notEqual(typedBar.structured.escalation?.target, 'page', typedBar.text);
    assert.ok(!typedBar.structured.evidence.some((e: any) => e.kind === 'web_content'), typedBar.text);
    const readBack = typedBar.structured.evidence.find((e: any) => e.kind === 'text' || e.kind === 'field_value');
    assert.ok(
      readBack && String(readBack.observed).endsWith('zz'),
      `the address bar's own text was read back: ${typedBar.text}`,
    );
    assert.ok(typedBar.structured.effect === 'confirmed' || readBack.observed !== readBack.expected, typedBar.text);
    await v.call('press_key', { element_token: bar.element_token, key: 'Escape', delivery_mode: 'foreground' });
  });
});

describe('native route: a Chromium Verity does not drive, without a renderer tree', { skip: missing ?? false }, () => {
  test('actions on its window are unverifiable, never confirmed, with advice that fits the delivery mode', async () => {
    otherProfile = mkdtempSync(join(tmpdir(), 'verity-other-profile-'));
    const flags = CHROMIUM_FLAGS.filter((f) => f !== '--force-renderer-accessibility');
    other = d.spawn(findChromium(process.env.VERITY_CHROMIUM, undefined, process.env), [
      ...flags,
      `--user-data-dir=${otherProfile}`,
      '--new-window',
      `${url}?other`,
    ]);
    const win = await until(
      async () => {
        const r = await v.call('list_windows');
        return r.structured.windows.find((w: any) => w.pid === other!.pid && /Verity Web Form/.test(w.title ?? ''));
      },
      "the other Chromium's window",
      30_000,
    ); // a Chromium starting on a loaded machine takes a while
    assert.equal(win.driven_over_cdp, false, JSON.stringify(win));
    assert.deepEqual(win.tabs, []);
    const target = { kind: 'window', pid: win.pid, window_id: win.window_id };
    // A Chromium that just started may not answer AT-SPI yet (its first Cache.GetItems): poll with a bound.
    const snap = await until(
      async () => {
        const r = await v.call('get_window_state', {
          format: 'full',
          target,
          include_screenshot: false,
          max_elements: 5000,
        });
        return r.isError ? null : r;
      },
      "a native snapshot of the other Chromium's window",
      30_000,
    );
    assert.equal(snap.structured.target.kind, 'window', snap.text);
    const elements = snap.structured.elements as El[];
    assert.ok(
      !elements.some((e) => e.label === 'Web field' && !e.in_web_content),
      'the page field is never listed as native',
    );
    // Without a renderer tree the snapshot says so: its page is not listed, and nothing there is confirmed.
    if (!elements.some((e) => e.in_web_content))
      assert.match(String(snap.structured.target.web_content), /no renderer accessibility tree/, snap.text);
    const middle = { x: Math.round(win.bounds.w / 2), y: Math.round(win.bounds.h / 2) };
    const actions: Array<[string, Record<string, unknown>]> = [
      ['click', { target, ...middle }],
      ['click', { target, ...middle, delivery_mode: 'foreground' }],
      ['type_text', { target, ...middle, text: 'px', delivery_mode: 'foreground', delay_ms: 0 }],
      ['scroll', { target, ...middle, direction: 'down', delivery_mode: 'foreground' }],
      ['press_key', { target, key: 'Tab', delivery_mode: 'foreground' }],
      ...elements
        .filter((e) => e.in_web_content && e.label === 'Web field')
        .map((e): [string, Record<string, unknown>] => [
          'type_text',
          { element_token: e.element_token, text: 'tok', delivery_mode: 'foreground' },
        ]),
    ];
    for (const [tool, args] of actions) {
      // A Chromium asked into its page for the first time can stall its AT-SPI answers past the call's bound,
      // and the AT-SPI connection has been seen to drop then: both are retryable refusals. Retry, bounded.
      let r = await v.call(tool, args);
      for (let i = 0; i < 3 && r.structured.refusal?.retryable; i++) r = await v.call(tool, args);
      const what = `${tool} ${JSON.stringify(args)}: ${r.text}`;
      assert.notEqual(r.structured.effect, 'confirmed', what);
      assert.equal(r.structured.effect, 'unverifiable', what);
      // Already in the foreground, the remaining advice is to look (verify); it never points at a driven page.
      const expected = args.delivery_mode === 'foreground' ? ['verify'] : ['pixel', 'foreground'];
      assert.ok(expected.includes(r.structured.escalation?.target), what);
    }
  });
});
