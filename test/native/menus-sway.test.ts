// invoke_menu on sway (Wayland, issue 44 item 5, --caps menus): the GTK 3 and GTK 4 test apps as Wayland
// clients, run with --menus. The app's own state is the truth (Bold on, the About dialog open); a missing item is refused
// naming the items of its level, and the menu opened to look is closed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
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

const missing = missingWaylandTools();

/** One describe's sway desktop, its menus test app (GTK 3, or `toolkit`) and a Verity with menus on, started before its tests and closed after. */
function menusOnSway(title: string, toolkit?: 'gtk4') {
  const s = {} as { d: Desktop; v: Verity; app: GtkApp; windowId: number; target(): object };
  s.target = () => ({ kind: 'window', pid: s.app.pid, window_id: s.windowId });
  before(async () => {
    s.d = await startWaylandDesktop();
    s.app = await startApp(s.d, title, ['--menus'], toolkit);
    s.v = await startVerity(['--caps', 'menus'], s.d.env);
    s.windowId = await until(
      async () =>
        (await s.v.call('list_windows')).structured?.windows?.find((w: any) => w.pid === s.app.pid)?.window_id,
      'the window in list_windows',
      15_000,
      200,
    );
  });
  after(async () => {
    await s.v?.close();
    await s.d?.close();
  });
  return s;
}

describe('invoke_menu on sway (GTK 3, Wayland)', { skip: missing ?? false }, () => {
  const m = menusOnSway('Sway Menus');

  test('Format > Bold: confirmed, and the app holds Bold on [matrix sway gtk3 invoke_menu confirmed]', async () => {
    const r = await m.v.call('invoke_menu', { target: m.target(), path: ['Format', 'Bold'] });
    await m.app.waitFor((s) => !!s.bold, `Bold on (${r.text})`);
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });

  test('a missing item: refused, naming the items of Format, the menu closed [matrix sway gtk3 invoke_menu refused]', async () => {
    const r = await m.v.call('invoke_menu', { target: m.target(), path: ['Format', 'Underline'] });
    assert.equal(r.structured.refusal?.code, 'target_not_found', r.text);
    assert.match(r.text, /Bold, Strike \(disabled\), Size, Count/);
    assert.doesNotMatch(r.text, /still show/);
  });

  test('Help > About: confirmed by the dialog, which the app says is open [matrix sway gtk3 invoke_menu confirmed]', async () => {
    const r = await m.v.call('invoke_menu', { target: m.target(), path: ['Help', 'About'] });
    await m.app.waitFor((s) => !!s.dialog_open, `the About dialog open (${r.text})`);
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });
});

// GTK 4 as a Wayland client: its menu bar's items offer no AT-SPI action, so an item of the bar is opened by a
// click at its centre (the virtual pointer; foreground raises the window first), and the popover's items by
// their own action; its context menu by a right click there.
describe('invoke_menu on sway (GTK 4, Wayland)', { skip: missing ?? missingToolkit('gtk4') ?? false }, () => {
  const m = menusOnSway('Sway Menus 4', 'gtk4');

  test('Format > Bold (the bar item clicked open): confirmed, and the app holds Bold on [matrix sway gtk4 invoke_menu confirmed]', async () => {
    const r = await m.v.call('invoke_menu', {
      target: m.target(),
      path: ['Format', 'Bold'],
      delivery_mode: 'foreground',
    });
    await m.app.waitFor((s) => !!(s as any).menu_bold, `Bold on (${r.text})`);
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.match(r.text, /"Format" \(by a virtual pointer click at its centre/);
  });

  test('a missing item: refused, naming the items of Format, the menu closed [matrix sway gtk4 invoke_menu refused]', async () => {
    const was = JSON.stringify(m.app.state());
    const r = await m.v.call('invoke_menu', {
      target: m.target(),
      path: ['Format', 'Underline'],
      delivery_mode: 'foreground',
    });
    assert.equal(r.structured.refusal?.code, 'target_not_found', r.text);
    assert.match(r.text, /Bold, Strike \(disabled\), Size, Count/);
    assert.doesNotMatch(r.text, /still show/);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(JSON.stringify(m.app.state()), was, 'the app reports no change');
  });

  test("the button's context menu: Pinned confirmed [matrix sway gtk4 invoke_menu confirmed]", async () => {
    const snap = await m.v.call('get_window_state', {
      target: m.target(),
      format: 'full',
      include_screenshot: false,
      query: 'Press me',
    });
    const button = snap.structured.elements.find((e: any) => e.label === 'Press me' && e.role === 'push button');
    assert.ok(button, snap.text);
    const r = await m.v.call('invoke_menu', {
      element_token: button.element_token,
      path: ['Pinned'],
      delivery_mode: 'foreground',
    });
    await m.app.waitFor((s) => !!(s as any).pinned, `Pinned on (${r.text})`);
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });
});
