// The native route beyond GTK 3: the same form in GTK 4 and Qt 5, under Xvfb + openbox + AT-SPI. Every
// case asserts what the app itself holds (its own JSON state) against the effect Verity reported: no
// false confirmation, no `no_effect` on text that landed, every widget listed with a token and a frame
// where the screenshot shows it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { DBusConnection } from '../../server/native/linux/transport/dbus.js';
import {
  appBusName,
  missingTools,
  missingToolkit,
  startApp,
  startDesktop,
  type Desktop,
  type GtkApp,
  type Toolkit,
  until,
} from './desktop.js';
import { formCases } from './form-cases.js';
import { noTreeCases } from './no-tree-cases.js';

let d: Desktop;
let v: Verity;
const apps = new Map<Toolkit, GtkApp>();
const toolkits: Toolkit[] = ['gtk4', 'qt'];

before(async () => {
  if (missingTools()) return;
  d = await startDesktop();
  // Qt first: started right after the GTK 4 app, Qt's AT-SPI bridge at times never registered (3 runs in 6
  // here, with the window shown and no app on the bus); started first, it did every time.
  for (const t of [...toolkits].reverse()) if (!missingToolkit(t)) apps.set(t, await startApp(d, `Verity ${t}`, [], t));
  v = await startVerity([], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

type El = {
  element_token: string;
  element_index: number;
  role: string;
  label: string;
  value?: string;
  frame: { x: number; y: number; w: number; h: number };
};

for (const toolkit of toolkits) {
  describe(`native route on ${toolkit}`, { skip: missingToolkit(toolkit) ?? false }, () =>
    formCases('x11', toolkit === 'qt' ? 'qt5' : 'gtk4', () => {
      const app = apps.get(toolkit)!;
      return { v, app, target: { kind: 'window', pid: app.pid, window_id: app.windowId() } };
    }),
  );
}

describe('native route on qt: what Qt says differently', { skip: missingToolkit('qt') ?? false }, () => {
  const app = () => apps.get('qt')!;
  const win = () => ({ kind: 'window', pid: app().pid, window_id: app().windowId() });

  test("the desktop's buses are its own: nothing activates a second AT-SPI bus, and Qt registered on this one", async () => {
    // Qt asks the session bus for the AT-SPI bus's address. A stock session bus also activated a second
    // launcher whose bus was the machine-wide ~/.cache/at-spi/bus, so Qt's bridge at times registered on
    // another desktop's bus (desktop.ts, sessionBusConfig).
    const session = await DBusConnection.open(d.env.DBUS_SESSION_BUS_ADDRESS!);
    const a11y = await DBusConnection.open(d.env.AT_SPI_BUS_ADDRESS!);
    try {
      const [activatable] = (await session.call({
        destination: 'org.freedesktop.DBus',
        path: '/org/freedesktop/DBus',
        interface: 'org.freedesktop.DBus',
        member: 'ListActivatableNames',
      })) as [string[]];
      assert.ok(!activatable.includes('org.a11y.Bus'), activatable.join(', '));
      assert.match(d.env.AT_SPI_BUS_ADDRESS!, /^unix:path=\/.*verity-desktop-[^/]+\/a11y-runtime\//);
      assert.ok(await appBusName(a11y, app().pid), 'the Qt app is not on the AT-SPI bus');
    } finally {
      session.close();
      a11y.close();
    }
  });

  test('a spin box (EditableText without the editable state) takes typed text; a point in a text edit types into it [matrix x11 qt5 type_text confirmed]', async () => {
    const r0 = await v.call('get_window_state', { format: 'full', target: win(), include_screenshot: false });
    const els = r0.structured.elements as El[];
    const spin = els.find((e) => e.role === 'spin button')!;
    const was = app().state().count!;
    const typed = await v.call('type_text', { element_token: spin.element_token, text: '7' });
    assert.notEqual(typed.structured.refusal?.code, 'element_readonly', typed.text);
    await app().waitFor((st) => st.count === Number(`${was}7`), `count = ${was}7`);
    assert.equal(typed.structured.effect, 'confirmed', typed.text);

    const notes = els.find((e) => e.label === 'Notes')!;
    const before = app().state().notes;
    const r = await v.call('type_text', {
      target: win(),
      x: notes.frame.x + notes.frame.w / 2,
      y: notes.frame.y + notes.frame.h / 2,
      text: ' über',
    });
    await app().waitFor((st) => st.notes.length > before.length, 'the notes to grow');
    assert.ok(app().state().notes.includes(' über'), JSON.stringify(app().state().notes));
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });

  test('a field holding a NUL (which D-Bus cannot carry) is never confirmed from its cut read-back', async () => {
    // What Qt's padding used to leave behind: the app holds more than AT-SPI reads back. Only the app's
    // CharacterCount says so, and the verdict must follow it, never the clean-looking text.
    const padded = await startApp(d, 'Verity qt nul', ['--entry-with-nul'], 'qt');
    try {
      assert.equal(padded.state().entry, 'Ada\u0000x');
      const target = { kind: 'window', pid: padded.pid, window_id: padded.windowId() };
      let els: El[] = [];
      for (let i = 0; i < 20 && !els.some((e) => e.label === 'Name'); i++) {
        if (i) await new Promise((res) => setTimeout(res, 250));
        const r = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
        assert.equal(r.isError, false, r.text);
        els = r.structured.elements as El[];
      }
      const name = els.find((e) => e.label === 'Name' && e.role === 'text');
      assert.ok(name, els.map((e) => `${e.role}:${e.label}`).join(', '));
      const r = await v.call('type_text', { element_token: name.element_token, text: 'Z' });
      const held = (await padded.waitFor((st) => st.entry.length > 5, 'the entry to take the text')).entry;
      assert.ok(held.includes('\u0000'), JSON.stringify(held));
      assert.notEqual(
        r.structured.effect,
        'confirmed',
        `a false confirmation: the app holds ${JSON.stringify(held)}\n${r.text}`,
      );
      assert.ok(['mismatch', 'unverifiable', 'partial'].includes(r.structured.effect), r.text);
      assert.ok(
        r.structured.evidence.some((e: { detail?: string }) => /cannot carry \(NULs\)/.test(e.detail ?? '')),
        r.text,
      );
    } finally {
      await padded.kill();
    }
  });
});

describe('native route on tk: a toolkit with no accessibility tree', { skip: missingToolkit('tk') ?? false }, () =>
  noTreeCases('x11', 'tk', () => ({ d, v })),
);

describe(
  'native route on Swing without its ATK bridge: the same family',
  {
    skip: missingToolkit('swing') ?? false,
  },
  () => noTreeCases('x11', 'swing', () => ({ d, v })),
);

describe('native route on gtk4: popovers, drop-down lists and dialogs', {
  skip: missingToolkit('gtk4') ?? false,
}, () => {
  const app = () => apps.get('gtk4')!;
  const win = () => ({ kind: 'window', pid: app().pid, window_id: app().windowId() });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  async function elements(target: Record<string, unknown> = win()): Promise<El[]> {
    const r = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
    assert.equal(r.isError, false, r.text);
    return r.structured.elements as El[];
  }
  /** The elements once `pred` holds of them (GTK 4 builds a popover's tree as it maps it). */
  async function elementsWhen(pred: (els: El[]) => boolean, what: string, target?: Record<string, unknown>) {
    let els = await elements(target);
    for (let i = 0; i < 20 && !pred(els); i++) {
      await sleep(250);
      els = await elements(target);
    }
    assert.ok(pred(els), `${what}: ${els.map((e) => `${e.role}:${e.label}`).join(', ')}`);
    return els;
  }
  const one = (els: El[], label: string, role?: string) => {
    const e = els.find((x) => x.label === label && (!role || x.role === role));
    assert.ok(e, `no ${role ?? ''} "${label}" in ${els.map((x) => `${x.role}:${x.label}`).join(', ')}`);
    return e;
  };
  const centre = (e: El) => ({ x: Math.round(e.frame.x + e.frame.w / 2), y: Math.round(e.frame.y + e.frame.h / 2) });
  type Surface = { kind: string; element_index: number | null; label: string; frame: El['frame'] };
  /** The window's surfaces drawn apart from it, as get_window_state lists them in its target. */
  async function surfaces(): Promise<{ listed: Surface[]; els: El[] }> {
    const r = await v.call('get_window_state', { format: 'full', target: win(), include_screenshot: false });
    assert.equal(r.isError, false, r.text);
    return { listed: (r.structured.target.surfaces ?? []) as Surface[], els: r.structured.elements as El[] };
  }
  const inside = (inner: El['frame'], outer: El['frame']) =>
    inner.x >= outer.x &&
    inner.y >= outer.y &&
    inner.x + inner.w <= outer.x + outer.w &&
    inner.y + inner.h <= outer.y + outer.h;
  // A popover closes when its window loses focus: the window is given focus first, as a user's would have.
  before(async () => {
    if (!app()) return;
    d.x('xdotool', ['windowactivate', '--sync', String(app().windowId())]);
    await app().waitFor((st) => st.active, 'the window to be active');
  });

  test('a popover menu is listed while open, and only then, with frames where it is drawn', async () => {
    await elementsWhen((x) => x.some((e) => e.label === 'Actions'), 'the menu button');
    const closed = await surfaces(); // the newest snapshot: its tokens are the current ones
    assert.deepEqual(closed.listed, [], 'no popover is open');
    let els = closed.els;
    assert.ok(!els.some((e) => e.label === 'Open recent'), 'a closed menu is listed');
    await v.call('click', { element_token: one(els, 'Actions', 'push button').element_token });
    await app().waitFor((st) => !!st.menu_open, 'the menu to open');
    els = await elementsWhen((x) => x.some((e) => e.label === 'Open recent'), 'the open menu');
    one(els, 'Open recent', 'menu item');
    one(els, 'Bold', 'menu item');
    // The open menu is a surface of its own, where its items are drawn, naming its element.
    const open = await surfaces();
    assert.equal(open.listed.length, 1, JSON.stringify(open.listed));
    const [menu] = open.listed;
    assert.equal(menu.kind, 'popover');
    const drawn = one(open.els, 'Open recent', 'menu item').frame;
    assert.ok(inside(drawn, menu.frame), `${JSON.stringify(drawn)} in ${JSON.stringify(menu.frame)}`);
    if (menu.element_index !== null) {
      const own = open.els.find((e) => e.element_index === menu.element_index);
      assert.ok(own && inside(own.frame, menu.frame), JSON.stringify(own));
    }
    // A click by pixels at the item's frame proves the frame: it lands on that item only where it is drawn.
    const r = await v.call('click', { target: win(), ...centre(one(open.els, 'Open recent', 'menu item')) });
    assert.equal(r.isError, false, r.text);
    await app().waitFor((st) => st.opened === 1 && !st.menu_open, 'the menu item to be activated');
    await elementsWhen((x) => !x.some((e) => e.label === 'Open recent'), 'the closed menu gone');
    const gone = await surfaces();
    assert.deepEqual(gone.listed, [], 'a closed menu is no surface');
    els = gone.els;
    // A menu's check item by its token: the app holds it.
    await v.call('click', { element_token: one(els, 'Actions', 'push button').element_token });
    await app().waitFor((st) => !!st.menu_open, 'the menu to open again');
    els = await elementsWhen((x) => x.some((e) => e.label === 'Bold'), 'the open menu');
    const bold = await v.call('click', { element_token: one(els, 'Bold', 'menu item').element_token });
    await app().waitFor((st) => !!st.bold, 'Bold to be on');
    assert.ok(['confirmed', 'unverifiable'].includes(bold.structured.effect), bold.text);
  });

  test('a check box in a popover: clicked where it is drawn, confirmed by its state; gone once closed [matrix x11 gtk4 click confirmed]', async () => {
    const els = await elements();
    await v.call('click', { element_token: one(els, 'Options', 'push button').element_token });
    await app().waitFor((st) => !!st.popover_open, 'the popover to open');
    await elementsWhen((x) => x.some((e) => e.label === 'Wrap lines'), 'the open popover');
    const open = await surfaces();
    const wrap = one(open.els, 'Wrap lines', 'check box');
    assert.equal(open.listed.length, 1, JSON.stringify(open.listed));
    assert.ok(
      inside(wrap.frame, open.listed[0].frame),
      `${JSON.stringify(wrap.frame)} in ${JSON.stringify(open.listed)}`,
    );
    const r = await v.call('click', { target: win(), ...centre(wrap) });
    await app().waitFor((st) => !!st.wrap, 'the check box in the popover to be checked');
    const byToken = await v.call('click', {
      element_token: one(await elements(), 'Wrap lines', 'check box').element_token,
    });
    await app().waitFor((st) => !st.wrap, 'the check box to be unchecked');
    assert.equal(byToken.structured.effect, 'confirmed', byToken.text);
    assert.ok(['confirmed', 'unverifiable'].includes(r.structured.effect), r.text);
    await v.call('press_key', { target: win(), key: 'Escape', delivery_mode: 'foreground' });
    await app().waitFor((st) => !st.popover_open, 'the popover to close');
    await elementsWhen((x) => !x.some((e) => e.label === 'Wrap lines'), 'the closed popover gone');
  });

  test('a text field in a popover: typed into by its token while open and by focus, confirmed by what the app holds [matrix x11 gtk4 type_text confirmed]', async () => {
    const els = await elements();
    await v.call('click', { element_token: one(els, 'Options', 'push button').element_token });
    await app().waitFor((st) => !!st.popover_open, 'the popover to open');
    await elementsWhen((x) => x.some((e) => e.label === 'Find'), 'the open popover with its field');
    const { listed, els: open } = await surfaces(); // the newest snapshot: its tokens are the current ones
    const find = one(open, 'Find', 'text');
    assert.equal(listed.length, 1, JSON.stringify(listed));
    assert.ok(inside(find.frame, listed[0].frame), `${JSON.stringify(find.frame)} in ${JSON.stringify(listed)}`);
    const was = app().state().find;
    assert.equal(was, '', 'the field starts empty');
    const byToken = await v.call('type_text', { element_token: find.element_token, text: 'Grüße ✓' });
    await app().waitFor((st) => st.find === 'Grüße ✓', `the field in the popover holding the text (${byToken.text})`);
    assert.equal(byToken.structured.effect, 'confirmed', byToken.text);
    assert.equal(app().state().popover_open, true, 'the popover is still open');
    // By focus: Tab from the check box (the popover gives it the focus as it opens) to the field.
    await v.call('press_key', { target: win(), key: 'Tab', delivery_mode: 'foreground' });
    await app().waitFor((st) => st.focus === 'Text', 'the field in the popover to take the focus');
    const byFocus = await v.call('type_text', { target: win(), text: ' 世界' });
    await app().waitFor((st) => st.find === 'Grüße ✓ 世界', 'the focused field holding the text');
    assert.equal(byFocus.structured.effect, 'confirmed', byFocus.text);
    await v.call('press_key', { target: win(), key: 'Escape', delivery_mode: 'foreground' });
    await app().waitFor((st) => !st.popover_open, 'the popover to close');
    await elementsWhen((x) => !x.some((e) => e.label === 'Find'), 'the closed popover gone');
  });

  test('an open drop-down list: its items listed where drawn; a click on one chooses it, confirmed by what the drop-down shows', async () => {
    for (const how of ['pixels', 'token'] as const) {
      let els = await elements();
      const combo = els.find((e) => e.role === 'combo box')!;
      const was = app().state().combo;
      const want = was === 'Green' ? 'Blue' : 'Green';
      await v.call('click', { element_token: combo.element_token });
      els = await elementsWhen((x) => x.some((e) => e.label === want), 'the open list');
      const option = one(els, want, 'label');
      const r = await v.call(
        'click',
        how === 'token' ? { element_token: option.element_token } : { target: win(), ...centre(option) },
      );
      await app().waitFor((st) => st.combo === want, `the drop-down to show ${want} (${how})`);
      if (how === 'token') assert.equal(r.structured.effect, 'confirmed', r.text);
      else assert.ok(['confirmed', 'unverifiable'].includes(r.structured.effect), r.text);
      assert.equal(one(await elements(), 'Colour', 'combo box').value, want);
    }
  });

  test("a file chooser dialog: its own window, and get_window_state is the dialog's tree", async () => {
    const els = await elements();
    await v.call('click', { element_token: one(els, 'Choose file', 'push button').element_token });
    await app().waitFor((st) => !!st.dialog_open, 'the dialog to open');
    type Listed = { window_id: number; pid: number; title: string };
    const dialog = await until(async () => {
      const listed = await v.call('list_windows', {});
      return (listed.structured.windows as Listed[]).find((w) => w.title === 'Choose a file' && w.pid === app().pid);
    }, 'the dialog in list_windows');
    const target = { kind: 'window', pid: dialog.pid, window_id: dialog.window_id };
    const inside = await elementsWhen((x) => x.some((e) => e.label === 'Home'), 'the dialog tree', target);
    assert.ok(!inside.some((e) => e.label === 'Subscribe'), "the dialog's snapshot holds the main window's tree");
    await v.call('press_key', { target, key: 'Escape', delivery_mode: 'foreground' });
    await app().waitFor((st) => !st.dialog_open, 'the dialog to close');
  });
});
