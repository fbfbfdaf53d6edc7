// The native route on a real Wayland compositor: sway's headless backend with no DISPLAY, then a mixed
// session (XWayland beside Wayland-native windows). Every case asserts what the app itself reports (its own
// JSON state, test/native/truth.py) and the effect Verity reported; window placement is checked against
// sway's own IPC, asked here independently.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { PNG } from 'pngjs';
import { startVerity, type Verity } from '../helpers/mcp.js';
import {
  missingToolkit,
  missingWaylandTools,
  startApp,
  startWaylandDesktop,
  until,
  type Desktop,
  type GtkApp,
} from './desktop.js';
import { dragCases, modifierClickCases, wheelCases, windowState } from './pointer-cases.js';
import { formCases } from './form-cases.js';
import { noTreeCases } from './no-tree-cases.js';

const missing = missingWaylandTools();
const WAYLAND_ID_BASE = 0x4000_0000; // ids of Verity's own, above any X11 id

interface Win {
  window_id: number;
  pid: number | null;
  title: string;
  bounds: { x: number; y: number; w: number; h: number };
}

/** Sway's own view of a client's window: its content area on the screen, and whether XWayland shows it. */
function swayWindow(d: Desktop, pid: number): { bounds: Win['bounds']; shell: string; focused: boolean } | null {
  const r = spawnSync('/usr/bin/swaymsg', ['-t', 'get_tree', '-r'], {
    env: { ...process.env, ...d.env },
    encoding: 'utf8',
  });
  let found: ReturnType<typeof swayWindow> = null;
  const walk = (n: any) => {
    if (n.pid === pid)
      found = {
        bounds: {
          x: n.rect.x + n.window_rect.x,
          y: n.rect.y + n.window_rect.y,
          w: n.window_rect.width,
          h: n.window_rect.height,
        },
        shell: n.shell,
        focused: n.focused,
      };
    for (const c of [...(n.nodes ?? []), ...(n.floating_nodes ?? [])]) walk(c);
  };
  walk(JSON.parse(r.stdout));
  return found;
}

/**
 * The app's window as list_windows gives it, asked until it is there: an app reports its state once its
 * window is shown, but registers with the accessibility bus on its own time (a GTK 4 window was missing
 * from the first listing once, under load).
 */
async function windowOf(v: Verity, pid: number): Promise<Win> {
  return until(
    async () => {
      const listed = await v.call('list_windows');
      assert.equal(listed.isError, false, listed.text);
      const w = (listed.structured.windows as Win[]).find((x) => x.pid === pid);
      if (!w) throw new Error(`listed only: ${listed.text || 'no window'}`); // said if the wait times out
      return w;
    },
    `a window of pid ${pid} in list_windows`,
    10_000,
    200,
  );
}

const snap = (v: Verity, w: Win, extra: Record<string, unknown> = {}) =>
  windowState(v, { kind: 'window', pid: w.pid, window_id: w.window_id }, extra);

describe('native route on Wayland (sway headless, no DISPLAY)', { skip: missing ?? false }, () => {
  let d: Desktop;
  let v: Verity;
  let app: GtkApp;
  let w: Win;
  before(async () => {
    d = await startWaylandDesktop();
    app = await startApp(d, 'Wayland Form');
    v = await startVerity([], d.env);
    w = await windowOf(v, app.pid);
  });
  after(async () => {
    await v?.close();
    await d?.close();
  });

  test('list_apps and list_windows come from AT-SPI: the app, its window with an id of our own, placed where sway says [matrix sway gtk3 list_apps confirmed] [matrix sway gtk3 list_windows confirmed]', async () => {
    assert.equal(d.env.DISPLAY, '', 'no X display in this session');
    const apps = await v.call('list_apps');
    assert.equal(apps.isError, false, apps.text);
    assert.ok(
      apps.structured.apps.some((a: any) => a.pid === app.pid && a.accessibility),
      apps.text,
    );
    assert.ok(w.window_id >= WAYLAND_ID_BASE, `a Wayland window id of Verity's own: ${w.window_id}`);
    assert.equal(w.title, 'Wayland Form');
    const sway = swayWindow(d, app.pid);
    assert.ok(sway, 'sway shows the window');
    assert.equal(sway.shell, 'xdg_shell', 'a Wayland-native window');
    assert.deepEqual(w.bounds, sway.bounds);
    // Stable for the window's life: the same id on the next listing.
    assert.equal((await windowOf(v, app.pid)).window_id, w.window_id);
  });

  test('get_window_state lists the form, complete, with frames inside the window; a screenshot comes through grim [matrix sway gtk3 get_window_state confirmed]', async () => {
    const s = await snap(v, w, { include_screenshot: true });
    assert.equal(s.r.structured.elements_complete, true);
    for (const label of ['Name', 'Notes', 'Subscribe', 'Press me', 'Term']) s.find(label);
    const name = s.find('Name').frame;
    assert.ok(
      name.x >= 0 && name.y >= 0 && name.x + name.w <= w.bounds.w && name.y + name.h <= w.bounds.h,
      JSON.stringify(name),
    );
    assert.equal(s.r.images, 1, 'one screenshot');
    const image = (await v.client.callTool({
      name: 'get_window_state',
      arguments: { target: { kind: 'window', pid: w.pid, window_id: w.window_id }, include_screenshot: true },
    })) as { content: Array<{ type: string; data?: string }> };
    const png = PNG.sync.read(Buffer.from(image.content.find((c) => c.type === 'image')!.data!, 'base64'));
    assert.deepEqual([png.width, png.height], [w.bounds.w, w.bounds.h]);
    const colours = new Set<number>();
    for (let i = 0; i < png.data.length; i += 4 * 97) colours.add(png.data.readUInt32BE(i));
    assert.ok(colours.size > 2, `the window's pixels, not a blank image (${colours.size} colours)`);
  });

  test('set_value and type_text by token go through AT-SPI and are confirmed against the app [matrix sway gtk3 set_value confirmed] [matrix sway gtk3 type_text confirmed]', async () => {
    const s = await snap(v, w);
    const set = await v.call('set_value', { element_token: s.token('Name'), value: 'Grüße ✓' });
    assert.equal(set.structured.effect, 'confirmed', set.text);
    await app.waitFor((st) => st.entry === 'Grüße ✓', 'the entry holding the value');
    const typed = await v.call('type_text', { element_token: s.token('Notes'), text: 'one\ntwo 世界' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    await app.waitFor((st) => st.notes === 'one\ntwo 世界', 'the notes holding the text');
  });

  test('click by element: the toolkit action, confirmed; the app counts the click and the check box toggles [matrix sway gtk3 click confirmed]', async () => {
    const s = await snap(v, w);
    const before = app.state();
    const b = await v.call('click', { element_token: s.token('Press me') });
    assert.equal(b.structured.effect, 'confirmed', b.text);
    await app.waitFor((st) => st.clicks === before.clicks + 1, 'one more click');
    const c = await v.call('click', { element_token: s.token('Subscribe') });
    assert.equal(c.structured.effect, 'confirmed', c.text);
    await app.waitFor((st) => st.checked === !before.checked, 'the check box toggled');
  });

  test('keystrokes by focus go through the virtual keyboard (wtype) and are confirmed by AT-SPI read-back [matrix sway gtk3 type_text confirmed]', async () => {
    const s = await snap(v, w);
    const before = app.state().term;
    // Term has Text but no EditableText: only keystrokes reach it.
    const r = await v.call('type_text', { element_token: s.token('Term'), text: 'ls é→🙂', delay_ms: 0 });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.route, 'synthetic_events');
    await app.waitFor((st) => st.term === `${before}ls é→🙂`, 'the terminal holding the keys');
    // With focus left there, a window target types into the focused element.
    const byFocus = await v.call('type_text', {
      target: { kind: 'window', pid: w.pid, window_id: w.window_id },
      text: 'ok',
    });
    assert.equal(byFocus.structured.effect, 'confirmed', byFocus.text);
    await app.waitFor((st) => st.term === `${before}ls é→🙂ok`, 'the terminal holding the focused keys');
    const key = await v.call('press_key', {
      target: { kind: 'window', pid: w.pid, window_id: w.window_id },
      key: 'BackSpace',
    });
    assert.equal(key.isError, false, key.text);
    assert.match(JSON.stringify(key.structured.evidence), /wtype/);
    await app.waitFor((st) => st.term === `${before}ls é→🙂o`, 'the backspace to land');
  });

  test('press_key BackSpace to the focused field through the virtual keyboard: the app erases one character, unverifiable (a key press has no read-back in general) [matrix sway gtk3 press_key unverifiable]', async () => {
    const typed = await v.call('type_text', {
      element_token: (await snap(v, w)).token('Term'),
      text: 'xy',
      delay_ms: 0,
    });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    const before = app.state().term;
    const key = await v.call('press_key', {
      target: { kind: 'window', pid: w.pid, window_id: w.window_id },
      key: 'BackSpace',
    });
    await app.waitFor((st) => st.term === before.slice(0, -1), 'the backspace to erase one character');
    assert.equal(key.structured.effect, 'unverifiable', key.text);
  });

  test('a pixel click lands where sway placed the window (virtual pointer), honestly unverifiable [matrix sway gtk3 click unverifiable]', async () => {
    const s = await snap(v, w);
    const button = s.find('Press me').frame;
    const before = app.state().clicks;
    const r = await v.call('click', {
      target: { kind: 'window', pid: w.pid, window_id: w.window_id },
      x: button.x + button.w / 2,
      y: button.y + button.h / 2,
    });
    assert.equal(r.isError, false, r.text);
    assert.notEqual(r.structured.effect, 'confirmed', 'a pixel click on a button proves nothing AT-SPI can read');
    await app.waitFor((st) => st.clicks === before + 1, 'the pixel click to reach the button', 5000);
  });

  const pointerCase = () => ({ v, app, target: () => ({ kind: 'window', pid: w.pid, window_id: w.window_id }) });
  test('drag through the virtual pointer: a slider by its value, a field by its selection, a button unverifiable [matrix sway gtk3 drag confirmed] [matrix sway gtk3 drag unverifiable]', () =>
    dragCases(pointerCase()));
  test('the wheel through virtual-pointer axis events: the notes scroll, confirmed; over the button no_effect [matrix sway gtk3 scroll confirmed] [matrix sway gtk3 scroll no_effect]', () =>
    wheelCases(pointerCase()));
  test('a modifier click: wtype holds ctrl and shift around the virtual pointer click, and lets them go [matrix sway gtk3 click unverifiable]', () =>
    modifierClickCases(pointerCase()));

  test('a modifier click on a window without keyboard focus is refused (modifiers go to the focus only), nothing clicked [matrix sway gtk3 click refused]', async () => {
    // Sway's focus follows the mouse by default, so the click's own motion would focus the window (and the
    // modifiers would reach it): off here, as on a compositor that focuses by click.
    d.x('swaymsg', ['focus_follows_mouse', 'no']);
    const other = await startApp(d, 'Focus Thief'); // a new window takes the focus
    try {
      await windowOf(v, other.pid);
      await until(() => swayWindow(d, other.pid)?.focused, 'sway to give the new window the focus');
      const here = await windowOf(v, app.pid); // tiled beside it now: placed again
      const s = await snap(v, here);
      const button = s.find('Press me').frame;
      const clicks = app.state().clicks;
      const r = await v.call('click', {
        target: { kind: 'window', pid: here.pid, window_id: here.window_id },
        x: button.x + button.w / 2,
        y: button.y + button.h / 2,
        modifier: ['ctrl'],
      });
      assert.equal(r.isError, true, r.text);
      assert.equal(r.structured.refusal.code, 'focus_failed', r.text);
      assert.match(r.text, /modifiers.*focused.*foreground/);
      await new Promise((done) => setTimeout(done, 300));
      assert.equal(app.state().clicks, clicks, 'nothing was clicked');
    } finally {
      await other.kill();
      d.x('swaymsg', ['focus_follows_mouse', 'yes']);
    }
  });

  test('a window sway does not show: read by its tree, never clicked at a point, and the desktop says it is incomplete', async () => {
    const hidden = await startApp(d, 'Hidden Form');
    const hw = await windowOf(v, hidden.pid);
    // AT-SPI may list the window before sway has it as a node to move (the move then matched nothing, once).
    await until(() => swayWindow(d, hidden.pid), 'sway to show the hidden-to-be window');
    const moved = spawnSync('/usr/bin/swaymsg', [`[pid=${hidden.pid}]`, 'move', 'to', 'workspace', '2'], {
      env: { ...process.env, ...d.env },
      encoding: 'utf8',
    });
    assert.equal(moved.status, 0, `${moved.stdout} ${moved.stderr}`);
    try {
      const desktop = await v.call('get_window_state', {
        format: 'full',
        target: { kind: 'desktop', display_id: 'primary' },
      });
      assert.equal(desktop.isError, false, desktop.text);
      assert.equal(desktop.structured.elements_complete, false, 'its elements are left out, and it says so');
      assert.match(desktop.structured.incomplete, /Hidden Form/);
      const s = await snap(v, hw, { include_screenshot: true });
      assert.equal(s.r.images, 0, 'no screenshot of a region that is not this window');
      assert.match(String(s.r.structured.target.screenshot), /does not say where/);
      const set = await v.call('set_value', { element_token: s.token('Name'), value: 'unseen' });
      assert.equal(set.structured.effect, 'confirmed', set.text);
      await hidden.waitFor((st) => st.entry === 'unseen', 'the hidden window holding the value');
      const button = s.find('Press me').frame;
      const px = await v.call('click', {
        target: { kind: 'window', pid: hw.pid, window_id: hw.window_id },
        x: button.x + 5,
        y: button.y + 5,
      });
      assert.equal(px.isError, true, px.text);
      assert.match(px.text, /cannot be placed.*element_token/);
      assert.equal(hidden.state().clicks, 0);
    } finally {
      await hidden.kill();
    }
  });

  test('a closed Wayland window is gone from list_windows, and a target on it is refused naming it', async () => {
    const other = await startApp(d, 'Short Lived');
    const ow = await windowOf(v, other.pid);
    assert.ok(ow.window_id >= WAYLAND_ID_BASE && ow.window_id !== w.window_id);
    await other.kill();
    const listed = await v.call('list_windows');
    assert.ok(!listed.structured.windows.some((x: Win) => x.window_id === ow.window_id), listed.text);
    const r = await v.call('get_window_state', { target: { kind: 'window', pid: ow.pid, window_id: ow.window_id } });
    assert.equal(r.isError, true);
    assert.equal(r.structured.refusal.code, 'target_not_found', r.text);
    assert.match(r.text, /Wayland window/);
  });
});

describe('native route on GTK 4 under Wayland', { skip: missing ?? missingToolkit('gtk4') ?? false }, () => {
  let d: Desktop;
  let v: Verity;
  let app: GtkApp;
  before(async () => {
    d = await startWaylandDesktop();
    app = await startApp(d, 'Wayland GTK4', [], 'gtk4');
    v = await startVerity([], d.env);
  });
  after(async () => {
    await v?.close();
    await d?.close();
  });

  test('listed, read, set and clicked by element, confirmed against the app [matrix sway gtk4 set_value confirmed] [matrix sway gtk4 click confirmed]', async () => {
    const w = await windowOf(v, app.pid);
    assert.ok(w.window_id >= WAYLAND_ID_BASE);
    const s = await snap(v, w);
    assert.equal(s.r.structured.elements_complete, true);
    const set = await v.call('set_value', { element_token: s.token('Name'), value: 'Wayland 4 ✓' });
    assert.equal(set.structured.effect, 'confirmed', set.text);
    await app.waitFor((st) => st.entry === 'Wayland 4 ✓', 'the GTK 4 entry holding the value');
    const before = app.state().clicks;
    const b = await v.call('click', { element_token: s.token('Press me') });
    assert.equal(b.structured.effect, 'confirmed', b.text);
    await app.waitFor((st) => st.clicks === before + 1, 'the GTK 4 click');
  });

  // The same form cases as GTK 4 and Qt pass on X11 (form-cases.ts), here a Wayland client.
  describe('the form cases shared with X11', () => {
    let w: Win;
    before(async () => {
      w = await windowOf(v, app.pid);
      // The cases start from an empty entry, as the app starts (the case above filled it).
      const cleared = await v.call('set_value', { element_token: (await snap(v, w)).token('Name'), value: '' });
      assert.equal(cleared.structured.effect, 'confirmed', cleared.text);
      await app.waitFor((st) => st.entry === '', 'the emptied entry');
    });
    formCases('sway', 'gtk4', () => ({ v, app, target: { kind: 'window', pid: w.pid, window_id: w.window_id } }));
  });

  // A GTK 4 popover is an xdg_popup: only the compositor places it, and sway's IPC lists no popups. Its
  // elements are listed anyway (AT-SPI has them), their frames relative to the popover, the snapshot says
  // it is incomplete, a point in the window is refused, and a click on an item goes by keys, proven by the
  // app's own state.
  describe('GTK 4 popovers under Wayland: listed while open, unplaced, acted on by element', () => {
    type Surface = {
      kind: string;
      element_index: number | null;
      label: string;
      frame: unknown;
      element_frames?: string;
    };
    let w: Win;
    const target = () => ({ kind: 'window', pid: w.pid, window_id: w.window_id });
    /** The window's snapshot once `pred` holds of it (GTK 4 builds a popover's tree as it maps it). */
    async function snapWhen(pred: (s: Awaited<ReturnType<typeof snap>>) => boolean, what: string) {
      let s = await snap(v, w);
      for (let i = 0; i < 20 && !pred(s); i++) {
        await new Promise((r) => setTimeout(r, 250));
        s = await snap(v, w);
      }
      assert.ok(pred(s), `${what}: ${s.elements.map((e) => `${e.role}:${e.label}`).join(', ')}`);
      return s;
    }
    const has = (label: string) => (s: Awaited<ReturnType<typeof snap>>) => s.elements.some((e) => e.label === label);
    const hasNo = (label: string) => (s: Awaited<ReturnType<typeof snap>>) => !has(label)(s);
    /** The one open popover, unplaced: no frame, its elements' frames inside its own (which starts at 0,0). */
    function unplaced(s: Awaited<ReturnType<typeof snap>>, item: string) {
      const surfaces = (s.r.structured.target.surfaces ?? []) as Surface[];
      assert.equal(surfaces.length, 1, JSON.stringify(surfaces));
      const [popover] = surfaces;
      assert.equal(popover.kind, 'popover');
      assert.equal(popover.frame, null, 'sway does not say where the popover is drawn');
      assert.equal(popover.element_frames, 'relative_to_surface');
      assert.equal(s.r.structured.elements_complete, false, 'a snapshot with an unplaced popover is not complete');
      assert.match(
        s.r.structured.incomplete,
        new RegExp(`popover "${popover.label}" is drawn where the compositor does not say`),
      );
      assert.ok(popover.element_index !== null, 'the popover is listed itself');
      const own = (s.r.structured.elements as Array<{ element_index: number; frame: Win['bounds'] }>).find(
        (e) => e.element_index === popover.element_index,
      )!;
      assert.deepEqual([own.frame.x, own.frame.y], [0, 0], JSON.stringify(own.frame));
      const f = s.find(item).frame;
      assert.ok(
        f.x >= 0 && f.y >= 0 && f.x + f.w <= own.frame.w && f.y + f.h <= own.frame.h,
        JSON.stringify({ f, own }),
      );
    }
    /** Closed again: no surface, complete. */
    async function closed(label: string) {
      const s = await snapWhen(hasNo(label), `the closed popover gone`);
      assert.equal(s.r.structured.target.surfaces, undefined);
      assert.equal(s.r.structured.elements_complete, true, s.r.structured.incomplete);
    }
    before(async () => {
      w = await windowOf(v, app.pid);
    });

    test('a popover with a check box: listed while open, unplaced and said so; a point is refused; the check box toggled by keys, confirmed by its state [matrix sway gtk4 click confirmed] [matrix sway gtk4 click refused]', async () => {
      assert.equal(app.state().popover_open, false);
      const first = await snap(v, w);
      assert.ok(hasNo('Wrap lines')(first), 'a closed popover is listed');
      assert.equal(first.r.structured.target.surfaces, undefined);
      const opened = await v.call('click', { element_token: first.token('Options') });
      assert.equal(opened.isError, false, opened.text);
      await app.waitFor((st) => !!st.popover_open, 'the popover to open');
      const s = await snapWhen(has('Wrap lines'), 'the open popover');
      unplaced(s, 'Wrap lines');
      // A point in the window could land on the popover or beside it: refused, nothing sent.
      const press = s.find('Press me').frame;
      const before = app.state();
      const px = await v.call('click', { target: target(), x: press.x + press.w / 2, y: press.y + press.h / 2 });
      assert.equal(px.isError, true, px.text);
      assert.equal(px.structured.refusal.code, 'unavailable', px.text);
      assert.match(px.text, /open popover.*does not say.*element_token.*Escape/);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(app.state().clicks, before.clicks, 'nothing was clicked');
      assert.equal(app.state().popover_open, true, 'the popover is still open');
      // By element: keys to the focused check box, proven by its state and by the app.
      for (const want of [true, false]) {
        const now = await snapWhen(has('Wrap lines'), 'the open popover');
        const r = await v.call('click', { element_token: now.token('Wrap lines') });
        assert.equal(r.structured.effect, 'confirmed', r.text);
        assert.equal(r.structured.route, 'synthetic_events', r.text);
        assert.match(JSON.stringify(r.structured.evidence), /wtype.*no pointer event/);
        await app.waitFor((st) => st.wrap === want, `the check box in the popover ${want ? 'checked' : 'unchecked'}`);
      }
      const esc = await v.call('press_key', { target: target(), key: 'Escape' });
      assert.equal(esc.isError, false, esc.text);
      await app.waitFor((st) => !st.popover_open, 'the popover to close');
      await closed('Wrap lines');
    });

    test('a text field in a popover: typed into by its token while open (unplaced) and by focus, confirmed by what the app holds [matrix sway gtk4 type_text confirmed]', async () => {
      const first = await snap(v, w);
      const opened = await v.call('click', { element_token: first.token('Options') });
      assert.equal(opened.isError, false, opened.text);
      await app.waitFor((st) => !!st.popover_open, 'the popover to open');
      const s = await snapWhen(has('Find'), 'the open popover with its field');
      unplaced(s, 'Find');
      assert.equal(app.state().find, '', 'the field starts empty');
      // AT-SPI insertion needs no point: the field takes it where the popover is drawn.
      const byToken = await v.call('type_text', { element_token: s.token('Find'), text: 'Grüße ✓' });
      await app.waitFor((st) => st.find === 'Grüße ✓', `the field in the popover holding the text (${byToken.text})`);
      assert.equal(byToken.structured.effect, 'confirmed', byToken.text);
      assert.equal(app.state().popover_open, true, 'the popover is still open');
      // By focus: Tab from the check box (the popover gives it the focus as it opens) to the field.
      const tab = await v.call('press_key', { target: target(), key: 'Tab' });
      assert.equal(tab.isError, false, tab.text);
      await app.waitFor((st) => st.focus === 'Text', 'the field in the popover to take the focus');
      const byFocus = await v.call('type_text', { target: target(), text: ' 世界' });
      await app.waitFor((st) => st.find === 'Grüße ✓ 世界', `the focused field holding the text (${byFocus.text})`);
      assert.equal(byFocus.structured.effect, 'confirmed', byFocus.text);
      const esc = await v.call('press_key', { target: target(), key: 'Escape' });
      assert.equal(esc.isError, false, esc.text);
      await app.waitFor((st) => !st.popover_open, 'the popover to close');
      await closed('Find');
    });

    test('an open drop-down list: its items listed, unplaced; one chosen by element goes by keys, confirmed by what the drop-down shows [matrix sway gtk4 click confirmed]', async () => {
      for (let round = 0; round < 2; round++) {
        const s0 = await snap(v, w);
        const combo = s0.elements.find((e) => e.role === 'combo box')!;
        const want = combo.value === 'Green' ? 'Blue' : 'Green'; // each round another item than the one shown
        const open = await v.call('click', { element_token: combo.element_token });
        assert.equal(open.isError, false, open.text);
        const s = await snapWhen(has(want), 'the open list');
        unplaced(s, want);
        const r = await v.call('click', { element_token: s.token(want) });
        assert.equal(r.structured.effect, 'confirmed', r.text);
        assert.equal(r.structured.route, 'synthetic_events', r.text);
        await app.waitFor((st) => st.combo === want, `the drop-down to hold ${want}`);
        const after = await snapWhen(
          (x) => x.elements.some((e) => e.role === 'combo box' && e.value === want),
          'the value shown',
        );
        assert.equal(after.r.structured.target.surfaces, undefined, 'the list closed with the choice');
      }
    });

    test('a popover menu: its items listed while open, unplaced; an item activated by its AT-SPI action, the app counts it [matrix sway gtk4 click confirmed]', async () => {
      const s0 = await snap(v, w);
      assert.ok(hasNo('Open recent')(s0), 'a closed menu is listed');
      await v.call('click', { element_token: s0.token('Actions') });
      await app.waitFor((st) => !!st.menu_open, 'the menu to open');
      const s = await snapWhen(has('Open recent'), 'the open menu');
      unplaced(s, 'Open recent');
      const opened = app.state().opened!;
      const r = await v.call('click', { element_token: s.token('Open recent') });
      assert.equal(r.structured.effect, 'confirmed', r.text);
      await app.waitFor((st) => st.opened === opened + 1 && !st.menu_open, 'the menu item activated');
      await closed('Open recent');
    });
  });
});

// Qt 5 as a Wayland client (its wayland platform plugin, Debian's qtwayland5): the same form cases.
const QT_WAYLAND_PLUGIN = '/usr/lib/x86_64-linux-gnu/qt5/plugins/platforms/libqwayland-generic.so';
const qtWaylandMissing =
  missingToolkit('qt') ??
  (existsSync(QT_WAYLAND_PLUGIN) ? null : "Qt's Wayland platform plugin (qtwayland5) is missing");
describe('native route on Qt 5 under Wayland', { skip: missing ?? qtWaylandMissing ?? false }, () => {
  let d: Desktop;
  let v: Verity;
  let app: GtkApp;
  let w: Win;
  before(async () => {
    d = await startWaylandDesktop();
    app = await startApp(d, 'Wayland Qt', [], 'qt');
    v = await startVerity([], d.env);
    w = await windowOf(v, app.pid);
  });
  after(async () => {
    await v?.close();
    await d?.close();
  });

  test("a Wayland window of its own: an id of Verity's, placed by sway", () => {
    assert.ok(w.window_id >= WAYLAND_ID_BASE, JSON.stringify(w));
  });

  formCases('sway', 'qt5', () => ({ v, app, target: { kind: 'window', pid: w.pid, window_id: w.window_id } }));
});

describe('mixed session: XWayland beside Wayland-native windows', { skip: missing ?? false }, () => {
  let d: Desktop;
  let v: Verity;
  let native: GtkApp;
  let x11: GtkApp;
  before(async () => {
    d = await startWaylandDesktop({ xwayland: true });
    native = await startApp(d, 'Native Form', [], 'gtk3', 'wayland');
    x11 = await startApp(d, 'X11 Form', [], 'gtk3', 'x11');
    v = await startVerity([], d.env);
  });
  after(async () => {
    await v?.close();
    await d?.close();
  });

  test('both kinds are listed, each with its own kind of id, placed where sway says', async () => {
    assert.match(d.env.DISPLAY, /^:\d+$/, 'XWayland runs');
    const nw = await windowOf(v, native.pid);
    const xw = await windowOf(v, x11.pid);
    assert.ok(nw.window_id >= WAYLAND_ID_BASE, `Wayland window: ${nw.window_id}`);
    assert.equal(xw.window_id, x11.windowId(), 'the XWayland window by its X11 id');
    assert.equal(swayWindow(d, native.pid)?.shell, 'xdg_shell');
    assert.equal(swayWindow(d, x11.pid)?.shell, 'xwayland');
    assert.deepEqual(nw.bounds, swayWindow(d, native.pid)!.bounds);
    assert.deepEqual(xw.bounds, swayWindow(d, x11.pid)!.bounds);
  });

  test('each is reached: set_value and click by element on both, confirmed against each app [matrix sway gtk3 set_value confirmed] [matrix sway gtk3 click confirmed] [matrix xwayland gtk3 set_value confirmed] [matrix xwayland gtk3 click confirmed]', async () => {
    for (const [app, value] of [
      [native, 'on Wayland'],
      [x11, 'on XWayland'],
    ] as const) {
      const s = await snap(v, await windowOf(v, app.pid));
      const set = await v.call('set_value', { element_token: s.token('Name'), value });
      assert.equal(set.structured.effect, 'confirmed', set.text);
      await app.waitFor((st) => st.entry === value, `"${app.title}" holding its value`);
      const before = app.state().clicks;
      const b = await v.call('click', { element_token: s.token('Press me') });
      assert.equal(b.structured.effect, 'confirmed', b.text);
      await app.waitFor((st) => st.clicks === before + 1, `"${app.title}" counting the click`);
    }
  });

  test('the desktop snapshot holds both windows, and says complete only because it is', async () => {
    const r = await v.call('get_window_state', { format: 'full', target: { kind: 'desktop', display_id: 'primary' } });
    assert.equal(r.isError, false, r.text);
    const frames = r.structured.elements.filter((e: any) => e.role === 'frame').map((e: any) => e.label);
    assert.ok(frames.includes('Native Form') && frames.includes('X11 Form'), JSON.stringify(frames));
    assert.equal(r.structured.elements_complete, true, r.text);
    const ids = r.structured.target.windows.map((x: any) => x.window_id);
    assert.ok(ids.includes(x11.windowId()) && ids.some((id: number) => id >= WAYLAND_ID_BASE), JSON.stringify(ids));
  });

  test('keys for the Wayland window go through the compositor, never XTest: the X11 app receives none [matrix sway gtk3 type_text confirmed]', async () => {
    const nw = await windowOf(v, native.pid);
    const s = await snap(v, nw);
    const x11Before = x11.state().term;
    const before = native.state().term;
    const r = await v.call('type_text', { element_token: s.token('Term'), text: 'wl', delivery_mode: 'foreground' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    await native.waitFor((st) => st.term === `${before}wl`, 'the Wayland terminal holding the keys');
    const key = await v.call('press_key', {
      target: { kind: 'window', pid: nw.pid, window_id: nw.window_id },
      key: 'BackSpace',
      delivery_mode: 'foreground',
    });
    assert.match(JSON.stringify(key.structured.evidence), /wtype/, key.text);
    assert.doesNotMatch(JSON.stringify(key.structured.evidence), /XTest/, key.text);
    await native.waitFor((st) => st.term === `${before}w`, 'the backspace on the Wayland terminal');
    assert.equal(x11.state().term, x11Before, 'nothing reached the X11 app');
  });

  // Each window's own route: Verity's virtual pointer for the Wayland one, XTest for the XWayland one. XTest
  // reaches X11 clients only (XWayland hands it to them, never to the compositor), so an XTest event meant
  // for the Wayland window would move XWayland's pointer there and click nothing: XWayland's own pointer
  // position says whether any came.
  test('pixels in each window by its own route: a check box confirmed by its state, a button counted by the app, and a screenshot of each [matrix sway gtk3 click confirmed] [matrix sway gtk3 click unverifiable] [matrix xwayland gtk3 click confirmed] [matrix xwayland gtk3 click unverifiable]', async () => {
    const xPointer = () => {
      const at = d.x('xdotool', ['getmouselocation', '--shell']);
      return [Number(/^X=(\d+)/m.exec(at)?.[1]), Number(/^Y=(\d+)/m.exec(at)?.[1])];
    };
    for (const [app, pointer, other] of [
      [native, 'virtual pointer', 'XTest'],
      [x11, 'XTest', 'virtual pointer'],
    ] as const) {
      const w = await windowOf(v, app.pid);
      const target = { kind: 'window', pid: w.pid, window_id: w.window_id };
      const bystander = app === native ? x11 : native;
      const still = bystander.state();
      const xBefore = xPointer();
      // The screenshot: this window's pixels, its size, the red swatch where its frame says.
      const raw = (await v.client.callTool({
        name: 'get_window_state',
        arguments: { target, format: 'full' },
      })) as { content: Array<{ type: string; data?: string }>; structuredContent: any };
      const image = raw.content.find((c) => c.type === 'image');
      assert.ok(image?.data, `a screenshot of "${app.title}": ${JSON.stringify(raw.structuredContent.target)}`);
      const png = PNG.sync.read(Buffer.from(image.data, 'base64'));
      assert.deepEqual([png.width, png.height], [w.bounds.w, w.bounds.h], `"${app.title}": its size`);
      const colours = new Set<number>();
      for (let i = 0; i < png.data.length; i += 4 * 97) colours.add(png.data.readUInt32BE(i));
      assert.ok(colours.size > 2, `"${app.title}": its pixels, not a blank image (${colours.size} colours)`);
      const els = raw.structuredContent.elements as Array<{ label: string; frame: Win['bounds'] }>;
      const frameOf = (label: string) => {
        const e = els.find((x) => x.label === label);
        assert.ok(e, `no "${label}" in "${app.title}": ${els.map((x) => x.label).join(', ')}`);
        return e.frame;
      };
      const swatch = frameOf('Swatch');
      const at = 4 * (Math.round(swatch.y + swatch.h / 2) * png.width + Math.round(swatch.x + swatch.w / 2));
      const [red, green, blue] = [png.data[at], png.data[at + 1], png.data[at + 2]];
      assert.ok(
        red > 180 && green < 90 && blue < 90,
        `"${app.title}": the swatch's centre is rgb(${red}, ${green}, ${blue}), not #e01b24`,
      );

      // A check box clicked at a point: confirmed by its checked state, and the app holds it.
      const check = frameOf('Subscribe');
      const was = app.state().checked;
      const c = await v.call('click', { target, x: check.x + check.w / 2, y: check.y + check.h / 2 });
      assert.equal(c.structured.effect, 'confirmed', c.text);
      assert.equal(c.structured.route, 'pixel', c.text);
      const sent = JSON.stringify(c.structured.evidence);
      assert.match(sent, new RegExp(`${pointer} left x1`), c.text);
      assert.doesNotMatch(sent, new RegExp(other), c.text);
      await app.waitFor((st) => st.checked === !was, `"${app.title}": the check box toggled by the pixel click`);
      // A button at a point: nothing to read back (unverifiable), and the app counts the click.
      const button = frameOf('Press me');
      const clicks = app.state().clicks;
      const point = { x: Math.round(button.x + button.w / 2), y: Math.round(button.y + button.h / 2) };
      const b = await v.call('click', { target, ...point });
      assert.equal(b.isError, false, b.text);
      assert.equal(b.structured.effect, 'unverifiable', b.text);
      assert.match(JSON.stringify(b.structured.evidence), new RegExp(`${pointer} left x1`), b.text);
      await app.waitFor((st) => st.clicks === clicks + 1, `"${app.title}": the button counting the pixel click`, 5000);

      // Nothing reached the other window, and no XTest event was sent for the Wayland one.
      await new Promise((r) => setTimeout(r, 200));
      const now = bystander.state();
      assert.deepEqual([now.checked, now.clicks], [still.checked, still.clicks], `"${bystander.title}" got none`);
      const onScreen = [w.bounds.x + point.x, w.bounds.y + point.y];
      if (app === native) {
        assert.deepEqual(xPointer(), xBefore, "XWayland's pointer did not move: no XTest was sent");
        assert.notDeepEqual(xPointer(), onScreen, "XWayland's pointer is not at the Wayland window's point");
      } else assert.deepEqual(xPointer(), onScreen, "XTest moved XWayland's pointer to the button's point");
    }
  });

  // Tk has no Wayland backend: on a Wayland desktop it runs on XWayland, reached by X11 as on an X session.
  describe('Tk on XWayland', { skip: missingToolkit('tk') ?? false }, () =>
    noTreeCases('xwayland', 'tk', () => ({ d, v })),
  );
  describe('Swing on XWayland', { skip: missingToolkit('swing') ?? false }, () =>
    noTreeCases('xwayland', 'swing', () => ({ d, v })),
  );
});
