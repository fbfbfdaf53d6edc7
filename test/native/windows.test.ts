// The window tools on X11 (issue 44 item 2, --caps windows): bring_to_front, set_window_frame and
// set_window_state through openbox (EWMH), each verdict checked against the window manager's and the X
// server's own state read by xprop and xwininfo on their own connections: the active window and stacking
// order, the geometry, _NET_WM_STATE, WM_STATE and the map state, and the client list after a close. A frame
// below the GTK window's minimum size is clamped by openbox: partial, saying to what.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, until, type Desktop, type GtkApp } from './desktop.js';

const missing = missingTools();
let d: Desktop;
let v: Verity;
let a: GtkApp;
let b: GtkApp;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  a = await startApp(d, 'Verity Windows A');
  b = await startApp(d, 'Verity Windows B');
  v = await startVerity(['--caps', 'windows'], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

const targetOf = (app: GtkApp) => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });
/** A root property's window list, as xprop prints it (ids in hex). */
const rootWindows = (name: string) =>
  (d.x('xprop', ['-root', name]).split('#')[1] ?? '')
    .split(',')
    .map((s) => Number.parseInt(s.trim(), 16))
    .filter((n) => n > 0);
const netState = (id: number) => d.x('xprop', ['-id', String(id), '_NET_WM_STATE']);
function geometry(id: number) {
  const info = d.x('xwininfo', ['-id', String(id)]);
  const n = (label: string) => Number(new RegExp(`${label}:\\s+(-?\\d+)`).exec(info)?.[1]);
  return {
    x: n('Absolute upper-left X'),
    y: n('Absolute upper-left Y'),
    w: n('Width'),
    h: n('Height'),
    mapped: /Map State: IsViewable/.test(info),
  };
}

describe('window tools on X11 (openbox, EWMH)', { skip: missing ?? false }, () => {
  test('bring_to_front: confirmed, and openbox says the window is active and on top [matrix x11 any bring_to_front confirmed]', async () => {
    await until(() => rootWindows('_NET_ACTIVE_WINDOW')[0] === b.windowId(), 'B, started last, active', 10_000);
    const r = await v.call('bring_to_front', { target: targetOf(a) });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(rootWindows('_NET_ACTIVE_WINDOW')[0], a.windowId(), 'the active window per xprop');
    assert.equal(rootWindows('_NET_CLIENT_LIST_STACKING').at(-1), a.windowId(), 'top of the stacking order per xprop');
  });

  test('set_window_frame: confirmed at the frame asked, as xwininfo reads it [matrix x11 any set_window_frame confirmed]', async () => {
    const r = await v.call('set_window_frame', { target: targetOf(a), x: 140, y: 120, width: 560, height: 460 });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const g = geometry(a.windowId());
    assert.deepEqual([g.x, g.y, g.w, g.h], [140, 120, 560, 460], JSON.stringify(g));
    assert.deepEqual(r.structured.observed.frame, { x: 140, y: 120, w: 560, h: 460 });
  });

  test('set_window_frame below the minimum size: partial, saying the size openbox clamped it to [matrix x11 any set_window_frame partial]', async () => {
    const r = await v.call('set_window_frame', { target: targetOf(a), x: 150, y: 130, width: 20, height: 20 });
    assert.equal(r.structured.effect, 'partial', r.text);
    const g = geometry(a.windowId());
    assert.ok(g.w > 20 && g.h > 20, `xwininfo: ${JSON.stringify(g)}`);
    assert.deepEqual(
      r.structured.observed.frame,
      { x: g.x, y: g.y, w: g.w, h: g.h },
      'the result says what xwininfo reads',
    );
    assert.match(r.structured.escalation.reason, new RegExp(`clamped.*${g.w}x${g.h}`));
  });

  test('set_window_state maximized, then normal: confirmed, as _NET_WM_STATE reads [matrix x11 any set_window_state confirmed]', async () => {
    const max = await v.call('set_window_state', { target: targetOf(a), state: 'maximized' });
    assert.equal(max.structured.effect, 'confirmed', max.text);
    assert.match(netState(a.windowId()), /_NET_WM_STATE_MAXIMIZED_VERT/);
    assert.match(netState(a.windowId()), /_NET_WM_STATE_MAXIMIZED_HORZ/);
    const normal = await v.call('set_window_state', { target: targetOf(a), state: 'normal' });
    assert.equal(normal.structured.effect, 'confirmed', normal.text);
    assert.doesNotMatch(netState(a.windowId()), /MAXIMIZED/);
  });

  test('set_window_state minimized, then normal: confirmed, as WM_STATE and the map state read [matrix x11 any set_window_state confirmed]', async () => {
    const min = await v.call('set_window_state', { target: targetOf(a), state: 'minimized' });
    assert.equal(min.structured.effect, 'confirmed', min.text);
    assert.match(d.x('xprop', ['-id', String(a.windowId()), 'WM_STATE']), /Iconic/);
    assert.equal(geometry(a.windowId()).mapped, false, 'unmapped per xwininfo');
    const normal = await v.call('set_window_state', { target: targetOf(a), state: 'normal' });
    assert.equal(normal.structured.effect, 'confirmed', normal.text);
    assert.equal(geometry(a.windowId()).mapped, true, 'mapped again per xwininfo');
    assert.match(d.x('xprop', ['-id', String(a.windowId()), 'WM_STATE']), /Normal/);
  });

  test('set_window_state closed: confirmed once openbox no longer lists the window [matrix x11 any set_window_state confirmed]', async () => {
    const id = b.windowId();
    const r = await v.call('set_window_state', { target: targetOf(b), state: 'closed' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.ok(!rootWindows('_NET_CLIENT_LIST').includes(id), '_NET_CLIENT_LIST per xprop');
  });

  test('a desktop target is refused, naming the window form', async () => {
    const r = await v.call('bring_to_front', { target: { kind: 'desktop' } });
    assert.equal(r.structured.refusal?.code, 'invalid_arguments', r.text);
    assert.match(r.text, /acts on a window/);
  });
});
