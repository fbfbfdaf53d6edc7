// The window tools on sway (issue 44 item 2, --caps windows), through its IPC, each verdict checked against
// sway's own tree (swaymsg -t get_tree on its own connection): bring_to_front focuses, set_window_frame makes
// the window floating where asked, minimized is refused naming sway (it has no such state), closed is
// confirmed once sway's tree no longer holds the window.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingWaylandTools, startApp, startWaylandDesktop, until, type Desktop, type GtkApp } from './desktop.js';

const missing = missingWaylandTools();

interface SwayView {
  bounds: { x: number; y: number; w: number; h: number };
  focused: boolean;
  floating: boolean;
}

function swayWindow(d: Desktop, pid: number): SwayView | null {
  const r = spawnSync('/usr/bin/swaymsg', ['-t', 'get_tree', '-r'], {
    env: { ...process.env, ...d.env },
    encoding: 'utf8',
  });
  let found: SwayView | null = null;
  const walk = (n: any, floating: boolean) => {
    if (n.pid === pid)
      found = {
        bounds: {
          x: n.rect.x + n.window_rect.x,
          y: n.rect.y + n.window_rect.y,
          w: n.window_rect.width,
          h: n.window_rect.height,
        },
        focused: n.focused,
        floating,
      };
    for (const c of n.nodes ?? []) walk(c, floating);
    for (const c of n.floating_nodes ?? []) walk(c, true);
  };
  walk(JSON.parse(r.stdout), false);
  return found;
}

describe('window tools on sway (its IPC)', { skip: missing ?? false }, () => {
  let d: Desktop;
  let v: Verity;
  let a: GtkApp;
  let b: GtkApp;
  const ids = new Map<number, number>();
  before(async () => {
    d = await startWaylandDesktop();
    a = await startApp(d, 'Sway Windows A');
    b = await startApp(d, 'Sway Windows B');
    v = await startVerity(['--caps', 'windows'], d.env);
    await until(
      async () => {
        const listed = await v.call('list_windows');
        for (const w of listed.structured?.windows ?? []) if (w.pid) ids.set(w.pid, w.window_id);
        return ids.has(a.pid) && ids.has(b.pid);
      },
      'both windows in list_windows',
      15_000,
      200,
    );
  });
  after(async () => {
    await v?.close();
    await d?.close();
  });
  const targetOf = (app: GtkApp) => ({ kind: 'window', pid: app.pid, window_id: ids.get(app.pid)! });

  test('bring_to_front: confirmed, and sway says the window is focused [matrix sway any bring_to_front confirmed]', async () => {
    await until(() => swayWindow(d, b.pid)?.focused, 'B, started last, focused', 10_000);
    const r = await v.call('bring_to_front', { target: targetOf(a) });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(swayWindow(d, a.pid)?.focused, true, "sway's tree");
  });

  test("set_window_frame: confirmed, and sway's tree has the window floating where asked [matrix sway any set_window_frame confirmed]", async () => {
    const r = await v.call('set_window_frame', { target: targetOf(a), x: 100, y: 80, width: 600, height: 480 });
    const seen = swayWindow(d, a.pid)!;
    assert.equal(seen.floating, true, JSON.stringify(seen));
    const asked = { x: 100, y: 80, w: 600, h: 480 };
    assert.deepEqual(seen.bounds, asked, "sway's tree: the window itself where asked (its border and title around it)");
    assert.equal(r.structured.effect, 'confirmed', `${r.text}\nsway: ${JSON.stringify(seen)}`);
    assert.deepEqual(r.structured.observed.frame, seen.bounds, 'the result says what sway reads');
  });

  test('set_window_state minimized: refused, naming sway [matrix sway any set_window_state refused]', async () => {
    const r = await v.call('set_window_state', { target: targetOf(a), state: 'minimized' });
    assert.equal(r.structured.refusal?.code, 'unavailable', r.text);
    assert.match(r.text, /sway has no minimized state/);
  });

  test("where the compositor offers no protocol (a session that says GNOME): refused naming it, nothing sent, sway's focus as it was", async () => {
    // The same Wayland desktop as a GNOME session's variables describe it (no SWAYSOCK): Verity's routes are
    // chosen from them, so it must not reach for sway's IPC, and says which compositor lacks the protocol.
    const { SWAYSOCK: _sock, ...rest } = d.env as Record<string, string>;
    const gnome = await startVerity(['--caps', 'windows'], { ...rest, XDG_CURRENT_DESKTOP: 'GNOME' });
    try {
      const focused = swayWindow(d, a.pid)?.focused;
      for (const [tool, args] of [
        ['bring_to_front', {}],
        ['set_window_frame', { x: 10, y: 10, width: 300, height: 200 }],
        ['set_window_state', { state: 'maximized' }],
      ] as const) {
        const r = await gnome.call(tool, { target: targetOf(b), ...args });
        assert.equal(r.isError, true, r.text);
        assert.match(r.text, /gnome/i, `${tool} names the compositor: ${r.text}`);
        assert.match(r.text, /nothing was sent/, r.text);
      }
      assert.equal(swayWindow(d, a.pid)?.focused, focused, "sway's focus as it was");
      assert.equal(swayWindow(d, b.pid)?.floating, false, 'B left tiled');
    } finally {
      await gnome.close();
    }
  });

  test("set_window_state closed: confirmed once sway's tree no longer holds it [matrix sway any set_window_state confirmed]", async () => {
    const r = await v.call('set_window_state', { target: targetOf(b), state: 'closed' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(swayWindow(d, b.pid), null, "sway's tree");
  });
});
