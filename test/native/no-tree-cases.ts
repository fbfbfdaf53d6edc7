// The cases of a toolkit with no AT-SPI tree (pixels and keys, unverifiable and saying why): Tk (no bridge)
// and Java Swing without its ATK bridge, the same family. Shared by the X11 desktop (toolkits.test.ts) and
// the mixed Wayland one (wayland.test.ts: both run on XWayland there, as they do on GNOME and KDE).
// Registered inside the caller's describe; `desktop` gives its desktop and Verity.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { PNG } from 'pngjs';
import type { Verity } from '../helpers/mcp.js';
import { startApp, type Desktop, type GtkApp } from './desktop.js';

/** A new pid namespace for one process (its only child runs the app), or why there can be none here. */
const PID_NAMESPACE = [
  '/usr/bin/unshare',
  ...(process.getuid?.() === 0 ? [] : ['--user', '--map-root-user']),
  '--pid',
  '--fork',
  '--kill-child',
];
function noPidNamespace(): string | false {
  const r = spawnSync(PID_NAMESPACE[0]!, [...PID_NAMESPACE.slice(1), '/bin/true'], { encoding: 'utf8' });
  return r.status === 0 ? false : `no pid namespace here: ${(r.stderr || r.error?.message || '').trim()}`;
}

/** Each app of the family: what its entry is called when focused, and how its window gives its pid. */
const FAMILY = {
  tk: { entry: 'Entry', pid: 'from the X client: Tk sets no _NET_WM_PID' },
  swing: { entry: 'JTextField', pid: 'from the X client; its _NET_WM_PID says the same' },
} as const;

/**
 * Registers the cases for a Tk or Swing app on the caller's desktop: `env` is where they run as the counted
 * matrix names it (docs/action-matrix.md; `xwayland` on a Wayland desktop), carried by each case's title.
 */
export function noTreeCases(
  env: 'x11' | 'xwayland',
  toolkit: keyof typeof FAMILY,
  desktop: () => { d: Desktop; v: Verity },
): void {
  const { entry, pid } = FAMILY[toolkit];
  const row = (action: string, outcome: string) => `[matrix ${env} ${toolkit} ${action} ${outcome}]`;
  let d: Desktop;
  let v: Verity;
  let app: GtkApp;
  before(async () => {
    ({ d, v } = desktop());
    // On a Wayland desktop both are X11 clients: XWayland's.
    app = await startApp(d, `Verity ${toolkit}`, [], toolkit, 'x11');
  });
  after(async () => {
    await app?.kill();
  });
  const evidenceText = (r: { structured: { evidence?: Array<{ detail?: string }> } }) =>
    (r.structured.evidence ?? []).map((e) => e.detail ?? '').join(' | ');

  test(`list_windows gives its pid (${pid}), and the window form takes it`, async () => {
    const netWmPid = d.x('xprop', ['-id', String(app.windowId()), '_NET_WM_PID']);
    if (toolkit === 'tk') assert.match(netWmPid, /not found/);
    else assert.match(netWmPid, new RegExp(`= ${app.pid}$`));
    const r = await v.call('list_windows', {});
    const w = (r.structured.windows as Array<{ window_id: number; pid: number | null }>).find(
      (x) => x.window_id === app.windowId(),
    );
    assert.equal(w?.pid, app.pid, r.text);
    const s = await v.call('get_window_state', {
      target: { kind: 'window', pid: app.pid, window_id: app.windowId() },
      include_screenshot: false,
    });
    assert.equal(s.isError, false, s.text);
    assert.match(s.text, /exposes no AT-SPI tree/);
  });

  // Tk's app reports where it draws its button and a swatch, and can set _NET_WM_PID itself (--net-wm-pid).
  if (toolkit === 'tk') {
    test("a screenshot of the window: the X server's size of it, and the swatch where the app says it is drawn", async () => {
      const { swatch } = await app.waitFor((st) => !!st.swatch, 'the swatch to be drawn');
      const [sx, sy, sw, sh] = swatch!;
      const info = d.x('xwininfo', ['-id', String(app.windowId())]);
      const size = [Number(/Width: (\d+)/.exec(info)?.[1]), Number(/Height: (\d+)/.exec(info)?.[1])];
      const listed = await v.call('list_windows', {});
      const w = (listed.structured.windows as Array<{ window_id: number; bounds: { w: number; h: number } }>).find(
        (x) => x.window_id === app.windowId(),
      );
      assert.ok(w, listed.text);
      assert.deepEqual([w.bounds.w, w.bounds.h], size, `list_windows' size is the X server's (${info})`);
      const raw = (await v.client.callTool({
        name: 'get_window_state',
        arguments: { target: { kind: 'window', pid: app.pid, window_id: app.windowId() }, include_screenshot: true },
      })) as { content: Array<{ type: string; data?: string; text?: string }> };
      const image = raw.content.find((c) => c.type === 'image');
      assert.ok(image?.data, `a screenshot: ${raw.content.map((c) => c.text ?? c.type).join(' | ')}`);
      const png = PNG.sync.read(Buffer.from(image.data, 'base64'));
      assert.deepEqual([png.width, png.height], size, "the screenshot is the window's size");
      const colours = new Set<number>();
      for (let i = 0; i < png.data.length; i += 4 * 97) colours.add(png.data.readUInt32BE(i));
      assert.ok(colours.size > 2, `the window's pixels, not a blank image (${colours.size} colours)`);
      const at = 4 * (Math.round(sy + sh / 2) * png.width + Math.round(sx + sw / 2));
      const [red, green, blue] = [png.data[at], png.data[at + 1], png.data[at + 2]];
      assert.ok(
        red > 180 && green < 90 && blue < 90,
        `the swatch's centre (${sx + sw / 2}, ${sy + sh / 2}) is rgb(${red}, ${green}, ${blue}), not #e01b24`,
      );
    });

    test(`a click by pixels on the button where the app says it is drawn: the app counts it, unverifiable ${row('click', 'unverifiable')}`, async () => {
      const { button } = await app.waitFor((st) => !!st.button, 'the button to be drawn');
      const [bx, by, bw, bh] = button!;
      const clicks = app.state().clicks;
      const r = await v.call('click', {
        target: { kind: 'window', pid: app.pid, window_id: app.windowId() },
        x: bx + bw / 2,
        y: by + bh / 2,
      });
      assert.equal(r.isError, false, r.text);
      await app.waitFor((st) => st.clicks === clicks + 1, 'the app to count the pixel click');
      assert.equal(r.structured.effect, 'unverifiable', r.text);
      assert.equal(r.structured.route, 'pixel', r.text);
    });

    test('a Tk window that sets _NET_WM_PID itself: listed with that pid, which the X server says too', async () => {
      const own = await startApp(d, 'Verity tk pid', ['--net-wm-pid'], 'tk', 'x11');
      try {
        await own.waitFor((st) => st.net_wm_pid === own.pid, 'the app to set _NET_WM_PID to its pid');
        const id = own.windowId();
        assert.match(d.x('xprop', ['-id', String(id), '_NET_WM_PID']), new RegExp(`= ${own.pid}$`));
        const r = await v.call('list_windows', {});
        const w = (r.structured.windows as Array<{ window_id: number; pid: number | null }>).find(
          (x) => x.window_id === id,
        );
        assert.equal(w?.pid, own.pid, r.text);
      } finally {
        await own.kill();
      }
    });

    // An app in a pid namespace (Flatpak's, a container's) sets _NET_WM_PID to its pid there, which outside
    // names another process (here 1, the namespace's init: this host's init). The X server knows the
    // client's pid from its socket, as the kernel says it on this side.
    test("in a pid namespace, where _NET_WM_PID names another process, the window's pid is the X server's", {
      skip: noPidNamespace(),
    }, async () => {
      const boxed = await startApp(d, 'Verity tk ns', ['--net-wm-pid'], 'tk', 'x11', PID_NAMESPACE);
      try {
        const { net_wm_pid: inside } = await boxed.waitFor((st) => !!st.net_wm_pid, 'the app to set _NET_WM_PID');
        assert.notEqual(inside, boxed.pid, 'its pid inside the namespace is not its pid here');
        const id = boxed.windowId();
        assert.match(d.x('xprop', ['-id', String(id), '_NET_WM_PID']), new RegExp(`= ${inside}$`));
        const r = await v.call('list_windows', {});
        const w = (r.structured.windows as Array<{ window_id: number; pid: number | null }>).find(
          (x) => x.window_id === id,
        );
        assert.equal(w?.pid, boxed.pid, `the app's pid on this side, not _NET_WM_PID's ${inside}: ${r.text}`);
        const wrong = await v.call('get_window_state', {
          target: { kind: 'window', pid: inside, window_id: id },
          include_screenshot: false,
        });
        assert.equal(wrong.structured.refusal?.code, 'target_not_found', wrong.text);
        const right = await v.call('get_window_state', {
          target: { kind: 'window', pid: boxed.pid, window_id: id },
          include_screenshot: false,
        });
        assert.equal(right.isError, false, right.text);
      } finally {
        await boxed.kill();
      }
    });
  }

  test(`type_text by pixels: checked before the click, then clicked and typed, unverifiable and saying why ${row('type_text', 'refused')} ${row('type_text', 'unverifiable')}`, async () => {
    const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
    const was = app.state().entry;
    // Too long for one call's keystroke budget: refused before anything is sent, so the entry (not
    // focused since the app started) is not clicked into.
    assert.notEqual(app.state().focus, entry);
    const big = await v.call('type_text', { target, x: 200, y: 20, text: 'x'.repeat(1000) });
    assert.equal(big.structured.refusal?.code, 'type_text_synthesis_budget_exceeded', big.text);
    await new Promise((r) => setTimeout(r, 200));
    assert.notEqual(app.state().focus, entry, 'a refused call clicked the entry anyway');
    const r = await v.call('type_text', { target, x: 200, y: 20, text: `${toolkit} é` });
    const held = await app.waitFor((st) => st.entry === `${was}${toolkit} é`, 'the typed text');
    assert.equal(held.focus, entry);
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.equal(r.structured.route, 'synthetic_events');
    assert.equal(r.structured.escalation?.target, 'verify', r.text);
    assert.match(evidenceText(r), /exposes no AT-SPI tree.*cannot be read back/, r.text);
  });

  test(`type_text to the window (focus in the entry, no pid given): delivered, unverifiable ${row('type_text', 'unverifiable')} ${row('press_key', 'unverifiable')}`, async () => {
    const was = app.state().entry;
    assert.equal(app.state().focus, entry);
    const r = await v.call('type_text', { target: { kind: 'window', window_id: app.windowId() }, text: ' 世界' });
    await app.waitFor((st) => st.entry === `${was} 世界`, 'the typed text');
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.match(evidenceText(r), /cannot be read back/, r.text);
    const k = await v.call('press_key', { target: { kind: 'window', window_id: app.windowId() }, key: 'BackSpace' });
    await app.waitFor((st) => st.entry === `${was} 世`, 'the key press');
    assert.equal(k.structured.effect, 'unverifiable', k.text);
  });

  // An X client translates a key with the keyboard map as it stands when it reads the event, so a busy app
  // that reads its keys late must still find the borrowed keycodes mapped (under load, Swing once kept only
  // ' 世' of ' 世界' when they were given back 50 ms after the call).
  test(`an app busy while keys go in on borrowed keycodes (stopped, then let go) still gets every character ${row('type_text', 'unverifiable')}`, async () => {
    const was = app.state().entry;
    const target = { kind: 'window', window_id: app.windowId() };
    process.kill(app.pid, 'SIGSTOP');
    let r: Awaited<ReturnType<Verity['call']>>;
    try {
      r = await v.call('type_text', { target, text: ' ñ∆' });
      await new Promise((resolve) => setTimeout(resolve, 500)); // well past the call's own end
    } finally {
      process.kill(app.pid, 'SIGCONT');
    }
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    await app.waitFor((st) => st.entry === `${was} ñ∆`, 'the characters typed while the app was stopped');
  });
}
