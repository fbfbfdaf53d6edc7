// allowed_apps / blocked_apps and the terminal default on the native route (issue #22 item 3), against
// real apps under Xvfb + openbox + AT-SPI: two copies of the GTK test app (one allowed by its command
// line, one not) and a real xterm. A refused app is absent from every listing and refused as a window
// that does not exist; a desktop or pixel action whose point lands on it is refused not_permitted; every
// case asserts the refused app's own state did not change.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { startVerity, type ToolResult, type Verity } from '../helpers/mcp.js';
import { APP_PY, missingTools, startApp, startDesktop, until, type Desktop, type GtkApp } from './desktop.js';

const missing =
  missingTools() ?? (spawnSync('sh', ['-c', 'command -v xterm']).status === 0 ? null : 'xterm is missing');
const tmp = mkdtempSync(join(tmpdir(), 'verity-native-policy-'));
let d: Desktop;
let v: Verity;
let allowed: GtkApp;
let refused: GtkApp;
let xterm: { pid: number; id: number; child: ChildProcess };

/** A policy file in the test's folder. */
function policyFile(name: string, rules: Record<string, unknown>): string {
  const file = join(tmp, name);
  writeFileSync(file, JSON.stringify(rules));
  return file;
}

type Bounds = { x: number; y: number; w: number; h: number };
function boundsOf(id: number): Bounds {
  const info = d.x('xwininfo', ['-id', String(id)]);
  const num = (label: string) => Number(new RegExp(`${label}:\\s*(-?\\d+)`).exec(info)?.[1]);
  return { x: num('Absolute upper-left X'), y: num('Absolute upper-left Y'), w: num('Width'), h: num('Height') };
}
const centre = (b: Bounds) => ({ x: Math.round(b.x + b.w / 2), y: Math.round(b.y + b.h / 2) });

function refusal(r: ToolResult, code: string): string {
  assert.equal(r.isError, true, r.text);
  assert.equal(r.structured?.refusal?.code, code, r.text);
  return r.structured.refusal.message as string;
}

before(async () => {
  if (missing) return;
  d = await startDesktop();
  allowed = await startApp(d, 'Policy Allowed');
  refused = await startApp(d, 'Policy Refused');
  const child = d.spawn('xterm', ['-T', 'Shell Window', '-geometry', '40x8']);
  const id = await until(() => {
    try {
      return Number(d.x('xdotool', ['search', '--onlyvisible', '--name', '^Shell Window$']).split('\n')[0]);
    } catch {
      return 0;
    }
  }, 'the xterm window');
  xterm = { pid: child.pid!, id, child };
  // Apart from each other, so that a point names one window.
  d.x('xdotool', ['windowmove', '--sync', String(allowed.windowId()), '0', '0']);
  d.x('xdotool', ['windowmove', '--sync', String(refused.windowId()), '640', '0']);
  d.x('xdotool', ['windowmove', '--sync', String(xterm.id), '0', '560']);
  v = await startVerity(['--policy', policyFile('allowed.json', { allowed_apps: ['*Policy Allowed'] })], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const windowOf = (app: GtkApp) => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });

describe('native route: allowed_apps', { skip: missing ?? false }, () => {
  test('list_apps and list_windows show the allowed app only (no refused app, no terminal)', async () => {
    const windows = await v.call('list_windows');
    assert.equal(windows.isError, false, windows.text);
    const ids = windows.structured.windows.map((w: any) => w.window_id);
    assert.ok(ids.includes(allowed.windowId()), windows.text);
    assert.ok(!ids.includes(refused.windowId()), windows.text);
    assert.ok(!ids.includes(xterm.id), windows.text);
    assert.doesNotMatch(windows.text, /Policy Refused|Shell Window/);
    const apps = await v.call('list_apps');
    assert.equal(apps.isError, false, apps.text);
    const pids = apps.structured.apps.map((a: any) => a.pid);
    assert.ok(pids.includes(allowed.pid), apps.text);
    assert.ok(!pids.includes(refused.pid), apps.text);
  });

  test('get_window_state and actions on a refused window are refused as a window that does not exist', async () => {
    const gone = 0x3fffff1; // a window id no X client has here
    const absent = refusal(
      await v.call('get_window_state', { target: { kind: 'window', pid: refused.pid, window_id: gone } }),
      'target_not_found',
    );
    const r = await v.call('get_window_state', { target: windowOf(refused) });
    const message = refusal(r, 'target_not_found');
    assert.equal(message.replace(String(refused.windowId()), 'N'), absent.replace(String(gone), 'N'));
    assert.doesNotMatch(r.text, /Policy Refused|policy/i, 'nothing says the window is there');
    // By window id alone (the router looks it up in the list): the same "no window" as for a gone one.
    const byId = refusal(await v.call('get_window_state', { window_id: refused.windowId() }), 'target_not_found');
    const byGoneId = refusal(await v.call('get_window_state', { window_id: gone }), 'target_not_found');
    assert.equal(byId.replace(String(refused.windowId()), 'N'), byGoneId.replace(String(gone), 'N'));
    for (const [tool, args] of [
      ['type_text', { target: windowOf(refused), text: 'leak', delivery_mode: 'foreground' }],
      ['click', { target: windowOf(refused), x: 40, y: 40 }],
      ['press_key', { target: windowOf(refused), key: 'Return', delivery_mode: 'foreground' }],
      ['get_window_state', { target: { kind: 'window', pid: xterm.pid, window_id: xterm.id } }],
    ] as const)
      refusal(await v.call(tool, args), 'target_not_found');
    assert.equal(refused.state().entry, '');
    assert.equal(refused.state().clicks, 0);
  });

  test('the allowed app is driven as before: snapshot, type_text by token confirmed', async () => {
    const s = await v.call('get_window_state', {
      target: windowOf(allowed),
      format: 'full',
      include_screenshot: false,
    });
    assert.equal(s.isError, false, s.text);
    const entry = s.structured.elements.find((e: any) => e.role === 'entry' || e.role === 'text');
    assert.ok(entry, s.text);
    const typed = await v.call('type_text', { element_token: entry.element_token, text: 'ok' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    await allowed.waitFor((st) => st.entry === 'ok', 'the typed text');
  });

  test('the desktop snapshot leaves out refused apps (elements, window list, screenshot) and says so', async () => {
    const r = await v.call('get_window_state', {
      target: { kind: 'desktop' },
      format: 'full',
      include_screenshot: true,
    });
    assert.equal(r.isError, false, r.text);
    const windows = r.structured.target.windows.map((w: any) => w.window_id);
    assert.ok(windows.includes(allowed.windowId()));
    assert.ok(
      !windows.includes(refused.windowId()) && !windows.includes(xterm.id),
      JSON.stringify(r.structured.target),
    );
    assert.doesNotMatch(JSON.stringify(r.structured), /Policy Refused|Shell Window/);
    assert.match(r.structured.target.policy, /not listed here/);
    assert.ok(
      r.structured.elements.some((e: any) => e.label === 'Policy Allowed'),
      'the allowed frame is listed',
    );
    // The refused window's pixels are blacked out; the allowed one's are not.
    const shot = (await v.client.callTool({
      name: 'get_window_state',
      arguments: { target: { kind: 'desktop' }, include_screenshot: true, max_elements: 0 },
    })) as { content: Array<{ type: string; data?: string }> };
    const image = shot.content.find((c) => c.type === 'image');
    assert.ok(image?.data, 'a screenshot');
    const png = PNG.sync.read(Buffer.from(image.data, 'base64'));
    const pixel = (p: { x: number; y: number }) => {
      const i = (p.y * png.width + p.x) * 4;
      return [png.data[i], png.data[i + 1], png.data[i + 2]];
    };
    for (const id of [refused.windowId(), xterm.id]) {
      const b = boundsOf(id);
      for (const p of [centre(b), { x: b.x + 2, y: b.y + 2 }, { x: b.x + b.w - 3, y: b.y + b.h - 3 }])
        assert.deepEqual(pixel(p), [0, 0, 0], `window ${id} at ${JSON.stringify(p)}`);
    }
    const a = pixel(centre(boundsOf(allowed.windowId())));
    assert.ok(
      a.some((c) => c > 0),
      `the allowed window is drawn: ${a}`,
    );
  });

  test('a desktop point on a refused app or the terminal is refused not_permitted, nothing clicked', async () => {
    const before = refused.state().clicks;
    const start = centre(boundsOf(allowed.windowId()));
    for (const id of [refused.windowId(), xterm.id]) {
      const p = centre(boundsOf(id));
      const message = refusal(await v.call('click', { target: { kind: 'desktop' }, ...p }), 'not_permitted');
      assert.match(message, /lands on a window agents may not drive/);
      assert.doesNotMatch(message, /Policy Refused|Shell Window/, 'the window is not named');
      refusal(await v.call('type_text', { target: { kind: 'desktop' }, ...p, text: 'x' }), 'not_permitted');
      refusal(await v.call('hover', { target: { kind: 'desktop' }, ...p }), 'not_permitted');
      refusal(
        await v.call('drag', { target: { kind: 'desktop' }, from_x: start.x, from_y: start.y, to_x: p.x, to_y: p.y }),
        'not_permitted',
      );
    }
    assert.equal(refused.state().clicks, before);
    assert.equal(refused.state().entry, '');
  });

  test('desktop keys while a refused window has focus are refused not_permitted', async () => {
    d.x('xdotool', ['windowactivate', '--sync', String(refused.windowId())]);
    await refused.waitFor((s) => s.active, 'the refused window to be active');
    const message = refusal(await v.call('type_text', { target: { kind: 'desktop' }, text: 'leak' }), 'not_permitted');
    assert.match(message, /focused window/);
    refusal(await v.call('press_key', { target: { kind: 'desktop' }, key: 'Return' }), 'not_permitted');
    assert.equal(refused.state().entry, '');
  });

  test('a pixel on the allowed window where a refused window covers it is refused, not named', async () => {
    const a = boundsOf(allowed.windowId());
    d.x('xdotool', ['windowmove', '--sync', String(refused.windowId()), String(a.x + 100), String(a.y + 100)]);
    d.x('xdotool', ['windowactivate', '--sync', String(refused.windowId())]);
    try {
      const r = await v.call('click', { target: windowOf(allowed), x: 150, y: 150 });
      const message = refusal(r, 'not_permitted');
      assert.doesNotMatch(message, /Policy Refused/);
      assert.equal(refused.state().clicks, 0);
      // The allowed window's own screenshot does not show the refused one where it lies on top.
      const shot = (await v.client.callTool({
        name: 'get_window_state',
        arguments: { target: windowOf(allowed), include_screenshot: true, max_elements: 0 },
      })) as { content: Array<{ type: string; data?: string }> };
      const png = PNG.sync.read(Buffer.from(shot.content.find((c) => c.type === 'image')!.data!, 'base64'));
      const at = (x: number, y: number) => [...png.data.subarray((y * png.width + x) * 4, (y * png.width + x) * 4 + 3)];
      assert.deepEqual(at(150, 150), [0, 0, 0], 'the covering refused window is blacked out');
      assert.ok(
        at(20, 20).some((c) => c > 0),
        'the rest of the allowed window is drawn',
      );
    } finally {
      d.x('xdotool', ['windowmove', '--sync', String(refused.windowId()), '640', '0']);
    }
  });

  test('run_actions: a step on a refused window fails as absent; the allowed step before it ran', async () => {
    const r = await v.call('run_actions', {
      steps: [
        { tool: 'type_text', args: { target: windowOf(allowed), text: '!', delivery_mode: 'foreground' } },
        { tool: 'type_text', args: { target: windowOf(refused), text: 'leak', delivery_mode: 'foreground' } },
        { tool: 'click', args: { target: { kind: 'desktop' }, ...centre(boundsOf(refused.windowId())) } },
      ],
    });
    const steps = r.structured.steps;
    assert.equal(steps[0].status, 'ok', JSON.stringify(steps[0]));
    assert.equal(steps[1].status, 'failed', JSON.stringify(steps[1]));
    assert.equal(steps[1].result.refusal.code, 'target_not_found');
    assert.notEqual(steps[2]?.status, 'ok', JSON.stringify(steps[2]));
    assert.equal(refused.state().entry, '');
    assert.equal(refused.state().clicks, 0);
  });
});

describe('native route: the terminal default and blocked_apps', { skip: missing ?? false }, () => {
  test('with no policy file a terminal is left out and refused; the GTK apps are listed', async () => {
    const plain = await startVerity(['--policy', policyFile('empty.json', {})], d.env);
    try {
      const ids = (await plain.call('list_windows')).structured.windows.map((w: any) => w.window_id);
      assert.ok(ids.includes(allowed.windowId()) && ids.includes(refused.windowId()), JSON.stringify(ids));
      assert.ok(!ids.includes(xterm.id), 'the terminal is not listed');
      refusal(
        await plain.call('get_window_state', { target: { kind: 'window', pid: xterm.pid, window_id: xterm.id } }),
        'target_not_found',
      );
      const message = refusal(
        await plain.call('click', { target: { kind: 'desktop' }, ...centre(boundsOf(xterm.id)) }),
        'not_permitted',
      );
      assert.match(message, /terminal emulator/);
    } finally {
      await plain.close();
    }
  });

  test('a browser window showing the Control UI is never listed, even when allowed_apps names the browser', async () => {
    // A browser as the policy knows one (its process name), showing a page titled as the Control UI is.
    const link = join(tmp, 'chromium-lookalike');
    symlinkSync('/usr/bin/python3', link);
    d.spawn(link, [APP_PY, 'Verity Control - Chromium']);
    const id = await until(() => {
      try {
        return Number(
          d.x('xdotool', ['search', '--onlyvisible', '--name', '^Verity Control - Chromium$']).split('\n')[0],
        );
      } catch {
        return 0;
      }
    }, 'the Control UI lookalike window');
    const file = policyFile('browser.json', { allowed_apps: ['*Policy*', 'chromium-lookalike'] });
    const named = await startVerity(['--policy', file], d.env);
    try {
      const ids = (await named.call('list_windows')).structured.windows.map((w: any) => w.window_id);
      assert.ok(ids.includes(allowed.windowId()), JSON.stringify(ids));
      assert.ok(!ids.includes(id), 'the Control UI window is not listed');
      const message = refusal(
        await named.call('click', { target: { kind: 'desktop' }, ...centre(boundsOf(id)) }),
        'not_permitted',
      );
      assert.match(message, /Control UI/);
    } finally {
      await named.close();
    }
  });

  test('allowed_apps naming xterm lets it be listed and observed; blocked_apps takes an app away', async () => {
    const file = policyFile('terminal.json', {
      allowed_apps: ['*Policy*', 'xterm'],
      blocked_apps: ['*Policy Refused'],
    });
    const named = await startVerity(['--policy', file], d.env);
    try {
      const ids = (await named.call('list_windows')).structured.windows.map((w: any) => w.window_id);
      assert.ok(ids.includes(xterm.id), 'xterm is listed once named');
      assert.ok(ids.includes(allowed.windowId()), JSON.stringify(ids));
      assert.ok(!ids.includes(refused.windowId()), 'blocked_apps wins over a matching allowed_apps entry');
      const s = await named.call('get_window_state', {
        target: { kind: 'window', pid: xterm.pid, window_id: xterm.id },
        include_screenshot: false,
      });
      assert.equal(s.isError, false, s.text);
    } finally {
      await named.close();
    }
  });
});
