// Background proven through the nutjs backend (issue 44 item 7) under Xvfb and openbox: nut-js moves the real
// pointer and its clicks go through the window manager like a user's, so its deliveries are foreground and
// nothing is put back; the result says what moved (nut-js's own mouse position, the focused window and the
// stacking order read from X11), and the window manager's own state (xdotool, xprop) agrees with it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, until, type Desktop, type GtkApp } from './desktop.js';
import { activeDuring, agrees, pointer, wm } from './desk-truth.js';

const missing = missingTools();
let d: Desktop;
let a: GtkApp;
let b: GtkApp;
let nut: Verity;
let atspi: Verity;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  a = await startApp(d, 'Nut Background A');
  b = await startApp(d, 'Nut Background B');
  nut = await startVerity(['--native-backend', 'nutjs'], d.env);
  atspi = await startVerity([], d.env);
});
after(async () => {
  await nut?.close();
  await atspi?.close();
  await d?.close();
});

describe('nutjs backend: what a click moved is said, as the window manager says it', { skip: missing ?? false }, () => {
  test('a click at pixels with another window focused on top: foreground, pointer (and focus, where openbox moved it) said moved [matrix nutjs gtk3 click unverifiable]', async (t) => {
    const target = { kind: 'window', pid: a.pid, window_id: a.windowId() };
    d.x('xdotool', ['windowmove', '--sync', String(a.windowId()), '20', '40']);
    // Its element frames come from the AT-SPI backend (nut-js sees pixels only).
    const snap = await atspi.call('get_window_state', { format: 'full', target, include_screenshot: false });
    const button = snap.structured.elements.find((e: any) => e.label === 'Press me');
    assert.ok(button, snap.text);
    const point = {
      x: Math.round(button.frame.x + button.frame.w / 2),
      y: Math.round(button.frame.y + button.frame.h / 2),
    };
    d.x('xdotool', [
      'windowmove',
      '--sync',
      String(b.windowId()),
      '200',
      String(40 + button.frame.y + button.frame.h + 40),
    ]);
    d.x('xdotool', ['windowactivate', '--sync', String(b.windowId())]);
    await until(() => wm(d).z_order.at(-1) === b.windowId() || null, 'B active and on top per xprop');
    await a.waitFor((s) => !s.active, 'A to report itself inactive');
    d.x('xdotool', ['mousemove', '1250', '10']);
    await until(() => pointer(d).x === 1250 || null, 'the pointer parked at (1250, 10)');
    // Its screenshot first: nut-js maps pixels by the target's last one.
    await nut.call('get_window_state', { format: 'full', target, include_screenshot: true });
    const was = wm(d);
    const clicks = a.state().clicks;
    const { value: r, wasActive } = await activeDuring(a, () => nut.call('click', { target, ...point }));
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    t.diagnostic(`A active during the click: ${wasActive}; ${r.text.split('\n')[1]}`);
    await a.waitFor((s) => s.clicks === clicks + 1, 'the app counting the click', 5000);
    const now = wm(d);
    assert.equal(r.structured.delivery.mode, 'foreground', r.text);
    agrees(r.structured.delivery, was, now, r.text);
    assert.equal(r.structured.delivery.restored, undefined, 'a foreground delivery puts nothing back');
    assert.ok(r.structured.delivery.moved?.includes('pointer'), r.text);
    if (wasActive) assert.ok(r.structured.delivery.moved.includes('focus'), `A became active: ${r.text}`);
  });
});
