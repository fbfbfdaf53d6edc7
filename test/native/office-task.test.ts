// Issue 44's "done when", as an agent would do it through Verity alone, with no pixel guess: launch
// LibreOffice Calc (launch_app, --allow-launch naming its desktop file), type a value into a cell, copy it
// (ctrl+c, then clipboard_read), paste it into a field of a web form in a tab (ctrl+v there), bring the Calc
// window to the front, resize it, and close it (kill_app). Each step is checked against the app's own state:
// LibreOffice's model over UNO (office.py on the pipe launch_app's arguments opened), the page (it posts its
// field's value to this test's server), the window manager (xprop, xwininfo) and the kernel (/proc).
// Under Xvfb + openbox + AT-SPI, with the headful Chromium Verity drives.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { startVerity, type ToolResult, type Verity } from '../helpers/mcp.js';
import { findChromium } from '../../server/cdp/browser/browser.js';
import { alive, missingTools, startDesktop, stop, until, type Desktop } from './desktop.js';
import { missingOffice, officeProfile, unoTruth } from './libreoffice.js';

const missing =
  missingTools() ??
  missingOffice() ??
  (existsSync('/usr/share/applications/libreoffice-calc.desktop') ? null : 'libreoffice-calc.desktop is missing') ??
  (() => {
    try {
      findChromium(process.env.VERITY_CHROMIUM, undefined, process.env);
      return null;
    } catch {
      return 'no Chromium';
    }
  })();

const VALUE = 'Invoice 4217';
const PAGE = `<!doctype html><html><head><title>Verity Paste Form</title></head><body>
<label>Amount <input id="amount"></label>
<script>document.getElementById('amount').addEventListener('input', (e) =>
  fetch('/typed', { method: 'POST', body: e.target.value }));</script></body></html>`;

let d: Desktop;
let v: Verity;
let http: Server;
let url = '';
/** What the page's field holds, as the page itself posted it. */
let typed: string | null = null;
let profile: { userInstallation: string; remove(): void } | null = null;
let uno: Awaited<ReturnType<typeof unoTruth>> | null = null;
let drivenPid = 0;
/** What launch_app started, and the window it said is Calc's. */
let pid = 0;
let calc: { kind: 'window'; pid: number; window_id: number; title: string };
let docTitle = '';
const pipe = `veritytask${process.pid}x${Date.now()}`;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  profile = officeProfile(d);
  http = createServer((req, res) => {
    if (req.method === 'POST') {
      let body = '';
      req.on('data', (c) => {
        body += String(c);
      });
      req.on('end', () => {
        typed = body;
        res.writeHead(204).end();
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(http.address() as { port: number }).port}/form.html`;
  v = await startVerity(
    ['--headful', '--caps', 'apps,windows,clipboard', '--allow-launch', 'libreoffice-calc', '--allow-clipboard-read'],
    { ...d.env, SAL_USE_VCLPLUGIN: 'gtk3' },
  );
  const nav = await v.call('page', { action: 'navigate', url });
  assert.equal(nav.isError, false, nav.text);
  drivenPid = (await v.call('list_apps')).structured.apps.find((a: any) => a.driven_over_cdp)?.pid ?? 0;
});
after(async () => {
  await uno?.stop();
  await v?.close();
  await stop(drivenPid);
  // LibreOffice, if a step failed before kill_app ended it: its process group (launch_app gave it its own).
  if (pid)
    for (const target of [-pid, pid, calc?.pid ?? 0])
      try {
        if (target) process.kill(target, 'SIGKILL');
      } catch {
        /* gone */
      }
  await new Promise((r) => (http ? http.close(r) : r(undefined)));
  await d?.close();
  profile?.remove();
});

/** A call that may wait long (LibreOffice's cold start), with the progress it reports. */
async function callLong(name: string, args: Record<string, unknown>, progress: string[]): Promise<ToolResult> {
  const result = await v.client.callTool({ name, arguments: args }, undefined, {
    timeout: 150_000,
    resetTimeoutOnProgress: true,
    onprogress: (p) => {
      if (p.message) progress.push(p.message);
    },
  });
  const content = result.content as Array<{ type: string; text?: string }>;
  return {
    isError: !!result.isError,
    structured: result.structuredContent,
    text: content.map((c) => c.text ?? '').join('\n'),
    images: 0,
  };
}

const xprop = (args: string[]) => d.x('xprop', args);
const activeWindow = () => Number.parseInt(xprop(['-root', '_NET_ACTIVE_WINDOW']).split('#')[1] ?? '0', 16);
const clientList = () =>
  (xprop(['-root', '_NET_CLIENT_LIST']).split('#')[1] ?? '')
    .split(',')
    .map((s) => Number.parseInt(s.trim(), 16))
    .filter((n) => n > 0);
/** Whether a process has ended: gone, or a zombie (this machine's init may not reap what it inherits). */
function ended(p: number): boolean {
  try {
    const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}
const target = () => ({ kind: 'window', pid: calc.pid, window_id: calc.window_id });

describe("issue 44's office task: Calc to a web form and back, through Verity alone", {
  skip: missing ?? false,
}, () => {
  test('launch_app libreoffice-calc: confirmed once its window is listed, the window of the process it forked [matrix x11 libreoffice launch_app confirmed]', async () => {
    const progress: string[] = [];
    const r = await callLong(
      'launch_app',
      {
        app: 'libreoffice-calc',
        args: [
          '--norestore',
          '--nologo',
          '--nolockcheck',
          profile!.userInstallation,
          `--accept=pipe,name=${pipe};urp;`,
        ],
        timeout_ms: 120_000,
      },
      progress,
    );
    assert.equal(r.structured.effect, 'confirmed', r.text);
    pid = r.structured.pid;
    calc = r.structured.window;
    assert.match(calc.title, / - LibreOffice Calc$/, r.text);
    // The window manager's own state: listed, and owned (_NET_WM_PID) by soffice.bin, below the pid started.
    assert.ok(clientList().includes(calc.window_id), "openbox's _NET_CLIENT_LIST");
    assert.equal(Number(/= (\d+)/.exec(xprop(['-id', String(calc.window_id), '_NET_WM_PID']))?.[1]), calc.pid);
    assert.equal(readFileSync(`/proc/${calc.pid}/comm`, 'utf8').trim(), 'soffice.bin');
    assert.notEqual(calc.pid, pid, 'oosplash forks soffice.bin: the window is a child process');
    assert.ok(progress.some((m) => /waiting for a window of pid/.test(m)) || r.structured.timings_ms.verify < 1000);
    // LibreOffice's model: its own document, by the title its window shows.
    docTitle = calc.title.replace(/ - LibreOffice Calc$/, '');
    uno = await unoTruth(d, pipe);
    await uno.ask({ op: 'adopt', title: docTitle });
  });

  test('type_text into cell A1: confirmed, and the model holds it', async () => {
    const a1 = await until(
      async () => {
        const s = await v.call('get_window_state', {
          target: target(),
          format: 'full',
          include_screenshot: false,
          max_elements: 5000,
        });
        return s.structured?.elements?.find((e: any) => e.label === 'A1');
      },
      "cell A1 in Calc's accessibility tree",
      60_000,
      500,
    );
    const r = await v.call('type_text', { element_token: a1.element_token, text: VALUE });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await uno!.ask({ op: 'cell', title: docTitle, cell: 'A1' })).text, VALUE);
  });

  test('copy it: ctrl+c on A1 confirmed by the clipboard read back, and clipboard_read gives what the model and xclip hold [matrix x11 libreoffice press_key confirmed]', async (t) => {
    // A click on A1 selects it (type_text committed with Enter, which moved the cell cursor down) and gives the
    // grid the keyboard; the keys go in the foreground (the window raised and focused for them).
    const s1 = await v.call('get_window_state', {
      target: target(),
      format: 'full',
      include_screenshot: false,
      max_elements: 5000,
    });
    const a1 = s1.structured.elements.find((e: any) => e.label === 'A1');
    assert.ok(a1, s1.text);
    const up = await v.call('click', { element_token: a1.element_token, delivery_mode: 'foreground' });
    assert.ok(!up.structured.refusal, up.text);
    const copy = await v.call('press_key', {
      target: target(),
      key: 'c',
      modifiers: ['ctrl'],
      delivery_mode: 'foreground',
    });
    assert.ok(!copy.structured.refusal, copy.text);
    const cell = (await uno!.ask({ op: 'cell', title: docTitle, cell: 'A1' })).text;
    let last = '';
    const read = await until(
      async () => {
        const r = await v.call('clipboard_read', {});
        last = r.text;
        return r.structured?.text?.trim() === cell ? r : null;
      },
      `the clipboard to hold "${cell}"`,
      10_000,
      200,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; it read: ${last}\nclick A1: ${up.text}\nctrl+c: ${copy.text}`);
    });
    const xclip = spawnSync('xclip', ['-o', '-selection', 'clipboard'], {
      env: { ...process.env, ...d.env },
      encoding: 'utf8',
    }).stdout;
    assert.equal(xclip.trim(), cell, 'xclip reads the same');
    assert.ok(read.structured.types.length > 0, read.text);
    assert.equal(copy.structured.effect, 'confirmed', copy.text);
    t.diagnostic(`click on A1: ${up.structured.effect}`);
  });

  test("paste it into the web form's field: ctrl+v there is confirmed and the page holds the value", async () => {
    const tabs = await v.call('page', { action: 'list_tabs' });
    const tab = tabs.structured.tabs.find((t: any) => t.url === url);
    assert.ok(tab, tabs.text);
    const s = await v.call('get_window_state', {
      target: { kind: 'tab', tab_id: tab.tab_id },
      format: 'full',
      include_screenshot: false,
    });
    const field = s.structured.elements.find((e: any) => e.label === 'Amount');
    assert.ok(field, s.text);
    const r = await v.call('press_key', { element_token: field.element_token, key: 'v', modifiers: ['ctrl'] });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    await until(
      () => typed === VALUE || null,
      `the page to post "${VALUE}" (it posted ${JSON.stringify(typed)})`,
      10_000,
    );
  });

  test('bring_to_front the Calc window: confirmed, openbox and LibreOffice agree it is active [matrix x11 libreoffice bring_to_front confirmed]', async () => {
    const tabs = await v.call('page', { action: 'list_tabs' });
    const tab = tabs.structured.tabs.find((t: any) => t.url === url);
    // The browser's window first, so that Calc is behind it.
    const browser = await v.call('bring_to_front', { target: { kind: 'tab', tab_id: tab.tab_id } });
    assert.ok(!browser.structured.refusal, browser.text);
    await until(() => activeWindow() !== calc.window_id, 'another window active', 5000);
    const r = await v.call('bring_to_front', { target: target() });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(activeWindow(), calc.window_id, '_NET_ACTIVE_WINDOW per xprop');
    await until(
      async () => (await uno!.ask({ op: 'frame', title: docTitle })).active,
      "LibreOffice's frame to say it is active",
      5000,
      100,
    );
  });

  test('set_window_frame: confirmed at the frame asked, as xwininfo and LibreOffice read it [matrix x11 libreoffice set_window_frame confirmed]', async () => {
    const geometry = () => {
      const info = d.x('xwininfo', ['-id', String(calc.window_id)]);
      const n = (label: string) => Number(new RegExp(`${label}:\\s+(-?\\d+)`).exec(info)?.[1]);
      return [n('Absolute upper-left X'), n('Absolute upper-left Y'), n('Width'), n('Height')];
    };
    // LibreOffice's container window is the X window less its menu bar (GTK 3 puts the menu bar inside the
    // toplevel): measured before, so that its size after is checked as LibreOffice itself reports it.
    const [, , w0, h0] = geometry();
    const before = await uno!.ask({ op: 'frame', title: docTitle });
    const r = await v.call('set_window_frame', { target: target(), x: 60, y: 40, width: 900, height: 600 });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.deepEqual(geometry(), [60, 40, 900, 600], 'xwininfo');
    const frame = await until(
      async () => {
        const f = await uno!.ask({ op: 'frame', title: docTitle });
        return f.width === 900 - (w0! - before.width) && f.height === 600 - (h0! - before.height) ? f : null;
      },
      `LibreOffice's own window to be 900x600 less its menu bar (${w0! - before.width}x${h0! - before.height})`,
      5000,
      100,
    );
    assert.ok(frame);
  });

  test('kill_app: confirmed once LibreOffice is gone, its window with it [matrix x11 libreoffice kill_app confirmed]', async (t) => {
    const r = await v.call('kill_app', { pid });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(alive(pid), false, `the pid launched is gone\n${r.text}`);
    assert.equal(ended(calc.pid), true, `soffice.bin ended\n${r.text}`);
    assert.ok(!clientList().includes(calc.window_id), "gone from openbox's _NET_CLIENT_LIST");
    t.diagnostic(`kill_app ended it by ${r.structured.method}`);
  });
});
