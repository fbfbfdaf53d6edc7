// The native route on a real GTK app under Xvfb + openbox + AT-SPI: every case asserts what the app itself
// reports (its own JSON state) and the effect Verity reported.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { appBusName, missingTools, startApp, startDesktop, until, type Desktop, type GtkApp } from './desktop.js';
import { XConnection } from '../../server/native/linux/transport/xproto.js';
import { DBusConnection } from '../../server/native/linux/transport/dbus.js';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { decodeOutline, webNormOf } from '../../server/tools/outline.js';
import { PNG } from 'pngjs';
import { dragCases, modifierClickCases, wheelCases, windowState } from './pointer-cases.js';
import { KEYMAP_LEASE_CEILING_MS } from '../../server/native/linux/transport/input.js';

const missing = missingTools();
let d: Desktop;
let v: Verity;
let app: GtkApp;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  app = await startApp(d, 'Verity Form');
  v = await startVerity([], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

const win = () => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });

const snap = (extra: Record<string, unknown> = {}) => windowState(v, win(), extra);

describe('native route: inspection', { skip: missing ?? false }, () => {
  test('list_apps and list_windows show the app with its pid, title and bounds [matrix x11 gtk3 list_apps confirmed] [matrix x11 gtk3 list_windows confirmed]', async () => {
    const apps = await v.call('list_apps');
    assert.equal(apps.isError, false, apps.text);
    assert.ok(
      apps.structured.apps.some((a: any) => a.pid === app.pid && a.accessibility),
      apps.text,
    );
    const windows = await v.call('list_windows');
    const w = windows.structured.windows.find((x: any) => x.window_id === app.windowId());
    assert.ok(w, windows.text);
    assert.equal(w.pid, app.pid);
    assert.equal(w.title, 'Verity Form');
    assert.ok(w.bounds.w >= 300 && w.bounds.h >= 200, JSON.stringify(w.bounds));
    // Verity reads windows over its own X connection: the same facts xwininfo reads on its own.
    const info = d.x('xwininfo', ['-id', String(app.windowId())]);
    const num = (label: string) => Number(new RegExp(`${label}:\\s*(-?\\d+)`).exec(info)?.[1]);
    assert.deepEqual(w.bounds, {
      x: num('Absolute upper-left X'),
      y: num('Absolute upper-left Y'),
      w: num('Width'),
      h: num('Height'),
    });
  });

  test('a window title in UTF-8 is read exactly, and a closed window is gone from list_windows', async () => {
    const title = 'Fenêtre 窓 ✓ 🙂';
    const other = await startApp(d, title);
    const listed = await v.call('list_windows');
    const w = listed.structured.windows.find((x: any) => x.window_id === other.windowId());
    assert.ok(w, listed.text);
    assert.equal(w.title, title);
    assert.equal(w.pid, other.pid);
    const id = other.windowId();
    await other.kill();
    const after = await v.call('list_windows');
    assert.ok(!after.structured.windows.some((x: any) => x.window_id === id), after.text);
    const gone = await v.call('get_window_state', {
      format: 'full',
      target: { kind: 'window', pid: other.pid, window_id: id },
      include_screenshot: false,
    });
    assert.equal(gone.structured.refusal?.code, 'target_not_found', gone.text);
  });

  test('get_window_state: the AT-SPI tree with tokens, values, frames inside the screenshot, and the PNG [matrix x11 gtk3 get_window_state confirmed]', async () => {
    const r = await v.call('get_window_state', { format: 'full', target: win() });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.images, 1);
    const s = r.structured;
    assert.equal(s.target.window_id, app.windowId());
    const byLabel = (l: string) => s.elements.find((e: any) => e.label === l);
    assert.equal(byLabel('Name').role, 'text');
    assert.equal(byLabel('Subscribe').role, 'check box');
    assert.equal(byLabel('Subscribe').value, String(app.state().checked));
    assert.equal(byLabel('Press me').role, 'push button');
    assert.equal(byLabel('Colour').value, app.state().combo);
    for (const e of s.elements.filter((x: any) => x.role !== 'frame')) {
      assert.equal(e.in_web_content, false);
      assert.ok(
        e.frame.x >= 0 &&
          e.frame.y >= 0 &&
          e.frame.x + e.frame.w <= s.screenshot_width &&
          e.frame.y + e.frame.h <= s.screenshot_height,
        `${e.label} ${JSON.stringify(e.frame)} inside ${s.screenshot_width}x${s.screenshot_height}`,
      );
    }
    // The screenshot shows the red swatch where its frame says (channels in order, frames in its pixels).
    const raw = (await v.client.callTool({
      name: 'get_window_state',
      arguments: { target: win(), format: 'full' },
    })) as { content: Array<{ type: string; data?: string }>; structuredContent: any };
    const png = PNG.sync.read(Buffer.from(raw.content.find((c) => c.type === 'image')!.data!, 'base64'));
    assert.deepEqual(
      [png.width, png.height],
      [raw.structuredContent.screenshot_width, raw.structuredContent.screenshot_height],
    );
    const swatch = raw.structuredContent.elements.find((e: any) => e.label === 'Swatch').frame;
    const at = 4 * (Math.round(swatch.y + swatch.h / 2) * png.width + Math.round(swatch.x + swatch.w / 2));
    const [red, green, blue] = [png.data[at], png.data[at + 1], png.data[at + 2]];
    assert.ok(
      red > 180 && green < 90 && blue < 90,
      `the swatch's centre is rgb(${red}, ${green}, ${blue}), not #e01b24`,
    );
    // The flat legacy form names the same window.
    const flat = await v.call('get_window_state', {
      format: 'full',
      pid: app.pid,
      window_id: app.windowId(),
      include_screenshot: false,
      query: 'subscribe',
    });
    assert.equal(flat.isError, false, flat.text);
    assert.deepEqual(
      flat.structured.elements.map((e: any) => e.label),
      ['Subscribe'],
    );
    // The older snapshot's tokens are stale now.
    const stale = await v.call('click', { element_token: byLabel('Press me').element_token });
    assert.equal(stale.structured.refusal.code, 'stale_element_token');
  });
});

describe('native route: typing and values', { skip: missing ?? false }, () => {
  test('type_text: Unicode goes in exactly through AT-SPI insertion and is confirmed; a second call appends [matrix x11 gtk3 type_text confirmed]', async () => {
    const s = await snap();
    const text = 'héllo 👋🏽 世界 مرحبا';
    const r = await v.call('type_text', { element_token: s.token('Name'), text });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.route, 'accessibility');
    assert.ok(
      r.structured.evidence.some((e: any) => e.observed === text),
      r.text,
    );
    await app.waitFor((st) => st.entry === text, 'the entry holding the text');
    const again = await v.call('type_text', { element_token: (await snap()).token('Name'), text: '!' });
    assert.equal(again.structured.effect, 'confirmed', again.text);
    assert.equal((await app.waitFor((st) => st.entry === text + '!', 'the appended text')).entry, text + '!');
  });

  test('type_text: a multi-line text view keeps newlines; a single-line entry refuses one before typing [matrix x11 gtk3 type_text confirmed] [matrix x11 gtk3 type_text refused]', async () => {
    const s = await snap();
    const r = await v.call('type_text', { element_token: s.token('Notes'), text: 'one\ntwo\n\nfour' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    await app.waitFor((st) => st.notes === 'one\ntwo\n\nfour', 'the notes');
    const before = app.state().entry;
    const refused = await v.call('type_text', { element_token: (await snap()).token('Name'), text: 'a\nb' });
    assert.equal(refused.structured.refusal.code, 'text_not_deliverable', refused.text);
    assert.equal(app.state().entry, before);
  });

  test('set_value: combo box selection, check box state and text replacement, each read back [matrix x11 gtk3 set_value confirmed] [matrix x11 gtk3 set_value refused]', async () => {
    let s = await snap();
    const combo = await v.call('set_value', { element_token: s.token('Colour'), value: 'Blue' });
    assert.equal(combo.structured.effect, 'confirmed', combo.text);
    await app.waitFor((st) => st.combo === 'Blue', 'combo = Blue');
    const none = await v.call('set_value', { element_token: s.token('Colour'), value: 'Purple' });
    assert.equal(none.structured.refusal.code, 'no_such_option', none.text);
    const check = await v.call('set_value', {
      element_token: s.token('Subscribe'),
      value: String(!app.state().checked),
    });
    assert.equal(check.structured.effect, 'confirmed', check.text);
    s = await snap();
    const wanted = app.state().checked;
    await app.waitFor((st) => st.checked === wanted, 'the check box state');
    const replaced = await v.call('set_value', { element_token: s.token('Name'), value: 'replaced ✓' });
    assert.equal(replaced.structured.effect, 'confirmed', replaced.text);
    await app.waitFor((st) => st.entry === 'replaced ✓', 'the replaced entry');
  });
});

describe('native route: clicks', { skip: missing ?? false }, () => {
  test('click uses the AT-SPI action and proves it: the check box toggles, the button is pressed once [matrix x11 gtk3 click confirmed]', async () => {
    const s = await snap();
    const was = app.state().checked;
    const r = await v.call('click', { element_token: s.token('Subscribe') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.route, 'accessibility');
    assert.ok(
      r.structured.evidence.some((e: any) => e.kind === 'checked_state' && e.observed === `checked=${!was}`),
      r.text,
    );
    await app.waitFor((st) => st.checked === !was, 'the toggled check box');
    const clicks = app.state().clicks;
    const b = await v.call('click', { element_token: s.token('Press me') });
    assert.equal(b.structured.effect, 'confirmed', b.text);
    await app.waitFor((st) => st.clicks === clicks + 1, 'one more click');
  });

  test('the px form: a pixel click on the check box is proven by its state; on the button it stays unverifiable [matrix x11 gtk3 click confirmed] [matrix x11 gtk3 click unverifiable]', async () => {
    const s = await snap();
    const box = s.find('Subscribe').frame;
    const was = app.state().checked;
    const r = await v.call('click', {
      target: win(),
      x: box.x + 10,
      y: box.y + box.h / 2,
      delivery_mode: 'foreground',
    });
    assert.equal(r.structured.route, 'pixel', r.text);
    assert.equal(r.structured.effect, 'confirmed', r.text);
    await app.waitFor((st) => st.checked === !was, 'the check box toggled by a pixel click');
    const button = s.find('Press me').frame;
    const clicks = app.state().clicks;
    const b = await v.call('click', {
      target: win(),
      x: button.x + button.w / 2,
      y: button.y + button.h / 2,
      delivery_mode: 'foreground',
    });
    assert.equal(b.structured.effect, 'unverifiable', b.text);
    assert.equal(b.structured.escalation.target, 'verify');
    await app.waitFor((st) => st.clicks === clicks + 1, 'the pixel click on the button');
  });
});

describe('native route: drag, wheel and modifier clicks (XTest)', { skip: missing ?? false }, () => {
  const c = () => ({ v, app, target: win });
  test('dragging a slider is proven by its value; dragging across a field by its selection; elsewhere unverifiable [matrix x11 gtk3 drag confirmed] [matrix x11 gtk3 drag unverifiable]', () =>
    dragCases(c()));
  test('the wheel over the notes moves their scroll bar, confirmed; over the button nothing moves: no_effect [matrix x11 gtk3 scroll confirmed] [matrix x11 gtk3 scroll no_effect]', () =>
    wheelCases(c()));
  test('a click with ctrl and shift arrives with both held, and the next without [matrix x11 gtk3 click unverifiable]', () =>
    modifierClickCases(c()));
});

describe('native route: keystrokes and the synthesis budget', { skip: missing ?? false }, () => {
  test('no EditableText: XTest keystrokes, read back through Text and confirmed (px form focuses the field) [matrix x11 gtk3 type_text confirmed]', async () => {
    const s = await snap();
    const term = s.find('Term').frame;
    const before = app.state().term;
    const r = await v.call('type_text', {
      target: win(),
      x: term.x + 20,
      y: term.y + term.h / 2,
      text: 'ls -la',
      delivery_mode: 'foreground',
      delay_ms: 0,
    });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.route, 'synthetic_events');
    await app.waitFor((st) => st.term === before + 'ls -la', 'the terminal text');
  });

  test('press_key BackSpace to the focused field: the app erases one character, unverifiable (a key press has no read-back in general) [matrix x11 gtk3 press_key unverifiable]', async () => {
    const term = (await snap()).find('Term').frame;
    const typed = await v.call('type_text', {
      target: win(),
      x: term.x + 20,
      y: term.y + term.h / 2,
      text: 'ab',
      delivery_mode: 'foreground',
      delay_ms: 0,
    });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    const before = app.state().term;
    const r = await v.call('press_key', { target: win(), key: 'BackSpace', delivery_mode: 'foreground' });
    await app.waitFor((st) => st.term === before.slice(0, -1), 'the backspace to erase one character');
    assert.equal(r.structured.effect, 'unverifiable', r.text);
  });

  test('a keystroke route longer than the budget is refused before the first character, with max_chunk_chars [matrix x11 gtk3 type_text refused]', async () => {
    const s = await snap();
    const before = app.state().term;
    const r = await v.call('type_text', {
      element_token: s.token('Term'),
      text: 'x'.repeat(5000),
      delay_ms: 30,
      delivery_mode: 'foreground',
    });
    assert.equal(r.isError, true);
    assert.equal(r.structured.refusal.code, 'type_text_synthesis_budget_exceeded', r.text);
    const max = r.structured.refusal.max_chunk_chars;
    assert.ok(Number.isInteger(max) && max > 0 && max < 5000, r.text);
    const faster = await v.call('type_text', {
      element_token: s.token('Term'),
      text: 'x'.repeat(5000),
      delay_ms: 0,
      delivery_mode: 'foreground',
    });
    assert.equal(faster.structured.refusal?.code, 'type_text_synthesis_budget_exceeded', faster.text);
    assert.ok(faster.structured.refusal.max_chunk_chars > max, 'a smaller delay_ms allows a larger chunk');
    assert.equal(app.state().term, before, 'nothing was typed');
  });

  test('non-ASCII text on a keystroke route goes in exactly through borrowed keycodes; a control character is refused first', async () => {
    const s = await snap();
    const before = app.state().term;
    const keymap = async () => {
      const x = await XConnection.open(d.env.DISPLAY!);
      try {
        return Array.from((await x.keyboardMapping()).keysyms);
      } finally {
        x.close();
      }
    };
    const mapBefore = await keymap();
    const text = 'Ok é ß → 世界 🙂 ÉÀ';
    const r = await v.call('type_text', {
      element_token: s.token('Term'),
      text,
      delivery_mode: 'foreground',
      delay_ms: 0,
    });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.route, 'synthetic_events');
    assert.equal(
      (await app.waitFor((st) => st.term === before + text, 'the terminal holding the text')).term,
      before + text,
    );
    // The borrowed keycodes are leased (a busy app may read its keys late, see no-tree-cases.ts), then
    // given back once no keys have gone in on them for a while scaled by the machine's load (at most the
    // lease's ceiling) and the app answered a ping: the keyboard map is as it was.
    assert.ok(
      !isDeepStrictEqual(await keymap(), mapBefore),
      'the borrowed keycodes are still mapped right after the call',
    );
    await until(
      async () => isDeepStrictEqual(await keymap(), mapBefore),
      'the keyboard map as it was before the borrowed keycodes',
      KEYMAP_LEASE_CEILING_MS + 5_000,
      250,
    );
    const refused = await v.call('type_text', {
      element_token: s.token('Term'),
      text: 'a\u0007b',
      delivery_mode: 'foreground',
    });
    assert.equal(refused.structured.refusal.code, 'text_not_deliverable', refused.text);
    assert.match(refused.structured.refusal.message, /U\+0007/);
    assert.equal(app.state().term, before + text, 'nothing more was typed');
  });
});

describe('native route: how it reaches the app', { skip: missing ?? false }, () => {
  /** The app's own AT-SPI socket (Application.GetApplicationBusAddress), asked over a connection of the test's. */
  async function appSocketPath(): Promise<string> {
    const bus = await DBusConnection.open(d.env.AT_SPI_BUS_ADDRESS);
    try {
      const name = (await appBusName(bus, app.pid)) ?? assert.fail('the app is not on the AT-SPI bus');
      const [address] = (await bus.call({
        destination: name,
        path: '/org/a11y/atspi/accessible/root',
        interface: 'org.a11y.atspi.Application',
        member: 'GetApplicationBusAddress',
      })) as [string];
      return /unix:path=([^,;]+)/.exec(address)?.[1] ?? assert.fail(`the app offers no socket path: ${address}`);
    } finally {
      bus.close();
    }
  }
  /** Connections the app accepted on that socket (connected unix sockets bound to its path). */
  const accepted = (path: string) =>
    readFileSync('/proc/net/unix', 'utf8')
      .split('\n')
      .filter((l) => l.endsWith(` ${path}`) && l.trim().split(/\s+/)[5] === '03').length;

  test("over the app's own socket, as libatspi does; with VERITY_ATSPI_DIRECT=0 over the bus, confirmed the same", async () => {
    await snap();
    const path = await appSocketPath();
    assert.ok(accepted(path) >= 1, `Verity is connected to ${path}`);
    const viaBus = await startVerity([], { ...d.env, VERITY_ATSPI_DIRECT: '0' });
    try {
      const before = accepted(path);
      const r = await viaBus.call('get_window_state', { format: 'full', target: win(), include_screenshot: false });
      assert.equal(r.isError, false, r.text);
      const token = r.structured.elements.find((e: any) => e.label === 'Name').element_token;
      const was = app.state().entry;
      const typed = await viaBus.call('type_text', { element_token: token, text: ' bus' });
      assert.equal(typed.structured.effect, 'confirmed', typed.text);
      await app.waitFor((st) => st.entry === was + ' bus', 'the text typed over the bus');
      assert.equal(accepted(path), before, "no connection to the app's socket was made");
    } finally {
      await viaBus.close();
    }
  });
});

describe('native route: reads started as a call arrives', { skip: missing ?? false }, () => {
  /** Replaces the Name entry's text from outside Verity: over the test's own AT-SPI connection. */
  async function setNameFromOutside(text: string): Promise<void> {
    const bus = await DBusConnection.open(d.env.AT_SPI_BUS_ADDRESS);
    try {
      const name = (await appBusName(bus, app.pid)) ?? assert.fail('the app is not on the AT-SPI bus');
      const [items] = (await bus.call({
        destination: name,
        path: '/org/a11y/atspi/cache',
        interface: 'org.a11y.atspi.Cache',
        member: 'GetItems',
      })) as [any[]];
      const row = items.find((r) => r[6] === 'Name' && r[7] === 61) ?? assert.fail("no Name entry in the app's cache");
      await bus.call({
        destination: row[0][0],
        path: row[0][1],
        interface: 'org.a11y.atspi.EditableText',
        member: 'SetTextContents',
        signature: 's',
        body: [text],
      });
    } finally {
      bus.close();
    }
    await app.waitFor((st) => st.entry === text, 'the entry set from outside');
  }

  test('serve only that call: after a refused type_text, a batch typing into the same field reads it afresh', async () => {
    const token = (await snap()).token('Name');
    await setNameFromOutside('old text');
    // Refused by its arguments, after its field's reads were started (the token is valid).
    const refused = await v.call('type_text', { element_token: token, text: '' });
    assert.equal(refused.structured.refusal.code, 'invalid_arguments', refused.text);
    await setNameFromOutside('fresh');
    // A batch's steps start no reads of their own as the call arrives: had the refused call's reads been
    // kept, this step would take them, judge against "old text" and report a mismatch.
    const r = await v.call('run_actions', {
      steps: [{ tool: 'type_text', args: { element_token: token, text: '!' } }],
    });
    const step = r.structured.steps[0];
    assert.equal(step.result.effect, 'confirmed', r.text);
    const held = app.state().entry;
    assert.equal(held.length, 'fresh!'.length, held);
    assert.ok(held.includes('fresh') && held.includes('!'), held);
    assert.equal(step.result.evidence[0].observed, held);
  });
});

describe('native route: a window without focus', { skip: missing ?? false }, () => {
  test('background insertion lands in the unfocused window and leaves focus where it was; keystrokes need foreground [matrix x11 gtk3 type_text confirmed] [matrix x11 gtk3 type_text refused]', async () => {
    const other = await startApp(d, 'Other Window');
    const otherId = other.windowId();
    d.x('xdotool', ['windowactivate', '--sync', String(otherId)]);
    await other.waitFor((st) => st.active, 'the other window to take focus', 5000);
    assert.equal(Number(d.x('xdotool', ['getactivewindow'])), otherId);
    const s = await snap();
    const before = app.state().entry;
    const r = await v.call('type_text', { element_token: s.token('Name'), text: ' bg' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.delivery.mode, 'background');
    await app.waitFor((st) => st.entry.endsWith(' bg') && st.entry.length === before.length + 3, 'the background text');
    assert.equal(Number(d.x('xdotool', ['getactivewindow'])), otherId, 'focus did not move');
    assert.equal(other.state().entry, '', 'nothing went to the focused window');

    const refused = await v.call('type_text', { element_token: s.token('Term'), text: 'k' });
    assert.equal(refused.structured.refusal.code, 'focus_failed', refused.text);
    const termBefore = app.state().term;
    const fg = await v.call('type_text', {
      element_token: s.token('Term'),
      text: 'fg',
      delivery_mode: 'foreground',
      delay_ms: 0,
    });
    assert.equal(fg.structured.effect, 'confirmed', fg.text);
    assert.equal(fg.structured.delivery.mode, 'foreground');
    await app.waitFor((st) => st.term === termBefore + 'fg', 'the foreground keystrokes');
    await other.waitFor((st) => st.active, 'focus given back to the other window', 5000);
    assert.equal(Number(d.x('xdotool', ['getactivewindow'])), otherId, 'focus was restored');
    await other.kill();
  });

  test('a window that closed is target_not_found', async () => {
    const doomed = await startApp(d, 'Doomed Window');
    const r = await v.call('get_window_state', {
      format: 'full',
      target: { kind: 'window', pid: doomed.pid, window_id: doomed.windowId() },
      include_screenshot: false,
    });
    assert.equal(r.isError, false, r.text);
    const token = r.structured.elements.find((e: any) => e.label === 'Name').element_token;
    await doomed.kill();
    const typed = await v.call('type_text', { element_token: token, text: 'too late' });
    assert.equal(typed.structured.refusal.code, 'target_not_found', typed.text);
    const snapGone = await v.call('get_window_state', {
      format: 'full',
      target: { kind: 'window', pid: doomed.pid, window_id: doomed.windowId() },
    });
    assert.equal(snapGone.structured.refusal.code, 'target_not_found', snapGone.text);
  });
});

describe('native route: get_window_state format "compact"', { skip: missing ?? false }, () => {
  test("decodes to the full form's elements (roles with spaces, parents, in_web_content false by default), and token_prefix + index clicks through AT-SPI [matrix x11 gtk3 get_window_state confirmed] [matrix x11 gtk3 click confirmed]", async () => {
    await v.client.listTools(); // so the SDK client validates structuredContent against the outputSchema
    const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
    const full = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
    assert.equal(full.isError, false, full.text);
    const compact = await v.call('get_window_state', { target, include_screenshot: false, format: 'compact' });
    assert.equal(compact.isError, false, compact.text);
    const st = compact.structured;
    assert.equal(webNormOf(st.target.kind), false);
    const elements = decodeOutline(st.outline, st.roles, false);
    assert.deepEqual(
      elements,
      full.structured.elements.map(({ element_token: _t, ...e }: any) => e),
    );
    assert.ok(Object.values(st.roles).includes('push button'), JSON.stringify(st.roles));
    assert.ok(elements.some((e) => e.parent_index !== null));

    const was = app.state().checked;
    const subscribe = elements.find((e) => e.label === 'Subscribe')!;
    const r = await v.call('click', { element_token: st.token_prefix + subscribe.element_index });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.route, 'accessibility');
    await app.waitFor((s) => s.checked === !was, 'the toggled check box');
  });
});
