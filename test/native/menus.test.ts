// invoke_menu on X11 (issue 44 item 5, --caps menus), on the test app of each toolkit (GTK 3, GTK 4, Qt 5) run
// with --menus: a menu bar (Format > Bold, a check item; Strike, disabled; Size > Large; Count, a plain item
// with no visible effect; Help > About, which opens a dialog) and a context menu on the button (Pinned, a
// check item). GTK 4's menu bar items offer no AT-SPI action, so Verity opens them with a click at their frame
// (the items of the popover that opens offer theirs); Qt lists its context menu nowhere, so Verity finds it by
// the showing event Qt sends. Each app reports its own state (bold, pinned, the dialog open, the size): that is the truth;
// Verity's verdict is checked against it, never the other way round.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingToolkit, startApp, startDesktop, type AppState, type Desktop, type GtkApp } from './desktop.js';

type Toolkit = 'gtk3' | 'gtk4' | 'qt';
/** The matrix's name of each toolkit (RULES: gtk3, gtk4, qt5). */
const ROW: Record<Toolkit, string> = { gtk3: 'gtk3', gtk4: 'gtk4', qt: 'qt5' };
/** What each app calls its Bold check item's state, and its About window's. */
const bold = (tk: Toolkit, s: AppState) => !!(tk === 'gtk4' ? (s as any).menu_bold : s.bold);
const about = (tk: Toolkit, s: AppState) => !!(tk === 'gtk4' ? (s as any).about_open : s.dialog_open);
// Qt first: its AT-SPI bridge registers reliably only when started before the GTK apps (toolkits.test.ts).
const toolkits: Toolkit[] = ['qt', 'gtk3', 'gtk4'];
const missing = missingToolkit('gtk3');

let d: Desktop;
let v: Verity;
const apps = new Map<Toolkit, GtkApp>();

before(async () => {
  if (missing) return;
  d = await startDesktop();
  for (const tk of toolkits) if (!missingToolkit(tk)) apps.set(tk, await startApp(d, `Menus ${tk}`, ['--menus'], tk));
  v = await startVerity(['--caps', 'menus'], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

const win = (app: GtkApp) => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });

/** Menu bars worked by name. */
const withBar: Toolkit[] = ['qt', 'gtk3', 'gtk4'];
/**
 * GTK 4's menu bar is opened by a click where it is drawn, and another app's window may cover it there:
 * foreground raises the window first (the other toolkits' menus are worked by AT-SPI actions alone).
 */
const modeFor = (tk: Toolkit) => (tk === 'gtk4' ? { delivery_mode: 'foreground' } : {});

for (const tk of withBar) {
  describe(`invoke_menu on X11, ${tk}`, { skip: missing ?? missingToolkit(tk) ?? false }, () => {
    const app = () => apps.get(tk)!;
    const row = ROW[tk];

    test(`Format > Bold (a check item): confirmed, and the app holds Bold on [matrix x11 ${row} invoke_menu confirmed]`, async () => {
      assert.equal(bold(tk, app().state()), false);
      const r = await v.call('invoke_menu', { ...modeFor(tk), target: win(app()), path: ['Format', 'Bold'] });
      await app().waitFor((s) => bold(tk, s), `Bold on (${r.text})`);
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.ok(
        r.structured.evidence.some((e: any) => e.kind === 'checked_state'),
        r.text,
      );
      if (tk === 'gtk4') assert.match(r.text, /"Format" \(by a XTest click at its centre/, r.text);
    });

    test(`Help > About: confirmed by the dialog, which the app says is open [matrix x11 ${row} invoke_menu confirmed]`, async () => {
      const r = await v.call('invoke_menu', { ...modeFor(tk), target: win(app()), path: ['Help', 'About'] });
      await app().waitFor((s) => about(tk, s), `the About dialog open (${r.text})`);
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.ok(
        r.structured.evidence.some((e: any) => e.kind === 'window_shown'),
        r.text,
      );
    });

    test(`Format > Size > Large (a plain item, three levels): activated once, unverifiable [matrix x11 ${row} invoke_menu unverifiable]`, async () => {
      const count = (app().state() as any).menu_count;
      const r = await v.call('invoke_menu', { ...modeFor(tk), target: win(app()), path: ['Format', 'Count'] });
      await app().waitFor((s) => (s as any).menu_count === count + 1, `Count activated (${r.text})`);
      assert.equal(r.structured.effect, 'unverifiable', r.text);
      const large = await v.call('invoke_menu', {
        ...modeFor(tk),
        target: win(app()),
        path: ['Format', 'Size', 'Large'],
      });
      await app().waitFor((s) => (s as any).size === 'large', `Size > Large activated (${large.text})`);
      assert.ok(['unverifiable', 'confirmed'].includes(large.structured.effect), large.text);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((app().state() as any).menu_count, count + 1, 'Count was activated exactly once');
    });

    test(`a missing item: refused, naming the items of its level, menus closed [matrix x11 ${row} invoke_menu refused]`, async () => {
      const was = app().state();
      const r = await v.call('invoke_menu', { ...modeFor(tk), target: win(app()), path: ['Format', 'Underline'] });
      assert.equal(r.structured.refusal?.code, 'target_not_found', r.text);
      assert.match(r.text, /no item "Underline"/);
      for (const name of ['Bold', 'Strike \\(disabled\\)', 'Size', 'Count']) assert.match(r.text, new RegExp(name));
      assert.match(r.text, /were closed: "Format"/);
      const missingTop = await v.call('invoke_menu', { ...modeFor(tk), target: win(app()), path: ['Edit', 'Bold'] });
      assert.equal(missingTop.structured.refusal?.code, 'target_not_found', missingTop.text);
      assert.match(missingTop.text, /Format, Help/);
      // The menu closed: the next call opens it afresh and works.
      const again = await v.call('invoke_menu', { ...modeFor(tk), target: win(app()), path: ['Format', 'Bold'] });
      await app().waitFor((s) => bold(tk, s) !== bold(tk, was), `Bold toggled back (${again.text})`);
      assert.equal(again.structured.effect, 'confirmed', again.text);
    });

    test(`a disabled item: refused element_disabled, nothing activated [matrix x11 ${row} invoke_menu refused]`, async () => {
      const was = JSON.stringify(app().state());
      const r = await v.call('invoke_menu', { ...modeFor(tk), target: win(app()), path: ['Format', 'Strike'] });
      assert.equal(r.structured.refusal?.code, 'element_disabled', r.text);
      assert.match(r.text, /"Strike" in the menu bar > Format is disabled/);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(JSON.stringify(app().state()), was, 'the app reports no change');
    });
  });
}

/** Closes the About dialog the Help > About test opened (Escape, to that dialog), so it covers nothing. */
async function closeAbout(app: GtkApp, tk: Toolkit): Promise<void> {
  if (!about(tk, app.state())) return;
  const id = Number(d.x('xdotool', ['search', '--name', `^About ${app.title}$`]).split('\n')[0]);
  const r = await v.call('press_key', {
    target: { kind: 'window', pid: app.pid, window_id: id },
    key: 'Escape',
    delivery_mode: 'foreground',
  });
  await app.waitFor((s) => !about(tk, s), `the About dialog closed (${r.text})`);
}

async function buttonToken(app: GtkApp): Promise<string> {
  const snap = await v.call('get_window_state', {
    target: win(app),
    format: 'full',
    include_screenshot: false,
    query: 'Press me',
  });
  const button = snap.structured.elements.find((e: any) => e.label === 'Press me' && e.role === 'push button');
  assert.ok(button, snap.text);
  return button.element_token;
}

for (const tk of ['gtk3', 'gtk4', 'qt'] as const) {
  describe(`invoke_menu on X11, ${tk}: a context menu`, { skip: missing ?? missingToolkit(tk) ?? false }, () => {
    test(`by the button's element_token (a right click opens it): Pinned confirmed [matrix x11 ${ROW[tk]} invoke_menu confirmed]`, async () => {
      const app = apps.get(tk)!;
      await closeAbout(app, tk);
      assert.equal((app.state() as any).pinned, false);
      // Foreground: the right click goes where the button is drawn, and another app's window may cover it.
      const r = await v.call('invoke_menu', {
        element_token: await buttonToken(app),
        path: ['Pinned'],
        delivery_mode: 'foreground',
      });
      await app.waitFor((s) => !!(s as any).pinned, `Pinned on (${r.text})`);
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.ok(
        r.structured.evidence.some((e: any) => e.kind === 'checked_state'),
        r.text,
      );
      // Activated once, and no menu left open: the app's own state holds still.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((app.state() as any).pinned, true, 'Pinned stayed on (activated once)');
    });

    test(`a missing item in the context menu: refused, naming its items, the menu closed [matrix x11 ${ROW[tk]} invoke_menu refused]`, async () => {
      const app = apps.get(tk)!;
      const was = JSON.stringify(app.state());
      const r = await v.call('invoke_menu', {
        element_token: await buttonToken(app),
        path: ['Unpinned'],
        delivery_mode: 'foreground',
      });
      assert.equal(r.structured.refusal?.code, 'target_not_found', r.text);
      assert.match(r.text, /no item "Unpinned" in the context menu of "Press me"/);
      assert.match(r.text, /Its items: Pinned/);
      assert.match(r.text, /were closed/);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(JSON.stringify(app.state()), was, 'the app reports no change');
    });
  });
}

describe('invoke_menu on X11, qt: a context menu Qt builds anew each time', {
  skip: missing ?? missingToolkit('qt') ?? false,
}, () => {
  test("the check box's ActionsContextMenu: Mark activated the first time (unverifiable), then no_effect naming why (Qt 5 leaves its items no object) [matrix x11 qt5 invoke_menu unverifiable] [matrix x11 qt5 invoke_menu no_effect]", async () => {
    const app = apps.get('qt')!;
    const token = async () => {
      const snap = await v.call('get_window_state', {
        target: win(app),
        format: 'full',
        include_screenshot: false,
        query: 'Subscribe',
      });
      const box = snap.structured.elements.find((e: any) => e.label === 'Subscribe' && e.role === 'check box');
      assert.ok(box, snap.text);
      return box.element_token;
    };
    const was = (app.state() as any).marked;
    const first = await v.call('invoke_menu', {
      element_token: await token(),
      path: ['Mark'],
      delivery_mode: 'foreground',
    });
    await app.waitFor((s) => (s as any).marked === was + 1, `Mark activated (${first.text})`);
    assert.equal(first.structured.effect, 'unverifiable', first.text);
    const again = await v.call('invoke_menu', {
      element_token: await token(),
      path: ['Mark'],
      delivery_mode: 'foreground',
    });
    assert.equal(again.structured.effect, 'no_effect', again.text);
    assert.match(again.text, /none of its 1 entries has an accessible object/);
    assert.equal(again.structured.escalation?.target, 'pixel', again.text);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((app.state() as any).marked, was + 1, 'Mark was not activated again');
    assert.equal(app.state().checked, false, 'the check box was not toggled');
  });
});

describe('invoke_menu with its capability off', { skip: missing ?? false }, () => {
  test('refused, naming --caps menus [matrix x11 gtk3 invoke_menu refused]', async () => {
    const off = await startVerity([], d.env);
    try {
      const app = apps.get('gtk3')!;
      const was = JSON.stringify(app.state());
      const r = await off.call('invoke_menu', { target: win(app), path: ['Format', 'Bold'] });
      assert.equal(r.isError, true, r.text);
      assert.match(r.text, /--caps menus/);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(JSON.stringify(app.state()), was, 'the app reports no change');
    } finally {
      await off.close();
    }
  });
});
