// The session type and the Wayland route choice (pure rules), Verity's own Wayland window ids, and the
// Wayland wire encoding of the virtual-pointer client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectSession, waylandRoutes } from '../../server/contract/session-type.js';
import {
  WAYLAND_ID_BASE,
  WaylandIds,
  compositorSaysFocus,
  isWaylandWindowId,
} from '../../server/native/linux/transport/wayland.js';
import { request } from '../../server/native/linux/transport/wayland-pointer.js';
import { setMachineEnv } from '../../server/contract/machine-env.js';

test('the session type comes from XDG_SESSION_TYPE and WAYLAND_DISPLAY, not from a missing DISPLAY', () => {
  assert.equal(detectSession({ DISPLAY: ':0' }).kind, 'x11');
  assert.equal(detectSession({}).kind, 'none');
  // GNOME and KDE set DISPLAY too (XWayland): still a Wayland session, with an X display for XWayland windows.
  const gnome = detectSession({
    DISPLAY: ':0',
    WAYLAND_DISPLAY: 'wayland-0',
    XDG_SESSION_TYPE: 'wayland',
    XDG_CURRENT_DESKTOP: 'GNOME',
  });
  assert.deepEqual(gnome, { kind: 'wayland', x11Display: ':0', waylandDisplay: 'wayland-0', compositor: 'gnome' });
  assert.equal(
    detectSession({ DISPLAY: ':1', WAYLAND_DISPLAY: 'wayland-1', XDG_CURRENT_DESKTOP: 'KDE' }).compositor,
    'kde',
  );
  assert.equal(detectSession({ WAYLAND_DISPLAY: 'wayland-1', SWAYSOCK: '/run/sway.sock' }).compositor, 'sway');
  assert.equal(
    detectSession({ WAYLAND_DISPLAY: 'wayland-1', HYPRLAND_INSTANCE_SIGNATURE: 'x' }).compositor,
    'hyprland',
  );
  assert.equal(detectSession({ WAYLAND_DISPLAY: 'wayland-1' }).compositor, 'unknown');
  // XDG_SESSION_TYPE=wayland alone names the default socket.
  assert.equal(detectSession({ XDG_SESSION_TYPE: 'wayland' }).waylandDisplay, 'wayland-0');
  // An X session with a stray WAYLAND_DISPLAY (a nested compositor's) stays an X session.
  assert.equal(detectSession({ DISPLAY: ':0', WAYLAND_DISPLAY: 'wayland-9', XDG_SESSION_TYPE: 'x11' }).kind, 'x11');
  assert.equal(detectSession({ DISPLAY: '', WAYLAND_DISPLAY: '' }).kind, 'none');
});

test('the Wayland routes: wlroots protocols where offered, GNOME/KDE and missing tools refused by name', () => {
  const sway = waylandRoutes('sway', { wtype: true, grim: true });
  assert.deepEqual(sway, {
    keys: 'virtual-keyboard',
    pointer: 'virtual-pointer',
    capture: 'screencopy',
    placement: 'sway-ipc',
    missing: '',
  });
  const gnome = waylandRoutes('gnome', { wtype: true, grim: true });
  assert.equal(gnome.keys, null);
  assert.equal(gnome.pointer, null);
  assert.equal(gnome.capture, null);
  assert.match(gnome.missing, /GNOME .*RemoteDesktop\/ScreenCast portals and libei/);
  assert.match(waylandRoutes('kde', { wtype: true, grim: true }).missing, /KDE/);
  const bare = waylandRoutes('sway', { wtype: false, grim: false });
  assert.equal(bare.keys, null);
  assert.equal(bare.capture, null);
  assert.match(bare.missing, /apt-get install wtype/);
  assert.match(bare.missing, /apt-get install grim/);
  // Hyprland has the protocols but no sway IPC: keys and capture yes, no pointer (a point cannot be placed).
  const hypr = waylandRoutes('hyprland', { wtype: true, grim: true });
  assert.equal(hypr.keys, 'virtual-keyboard');
  assert.equal(hypr.pointer, null);
  assert.equal(hypr.placement, null);
  assert.match(hypr.missing, /window positions/);
});

test("Wayland window ids: Verity's own, above X11 ids, stable per frame, dropped when the frame is gone", () => {
  const ids = new WaylandIds();
  const a = ids.idOf(':1.5/org/a11y/atspi/accessible/1');
  const b = ids.idOf(':1.6/org/a11y/atspi/accessible/1');
  assert.ok(isWaylandWindowId(a) && isWaylandWindowId(b) && a !== b);
  assert.ok(a >= WAYLAND_ID_BASE && !isWaylandWindowId(0x1e00003), 'X11 ids stay below');
  assert.equal(ids.idOf(':1.5/org/a11y/atspi/accessible/1'), a, 'the same frame keeps its id');
  ids.keepOnly(new Set([':1.6/org/a11y/atspi/accessible/1']));
  assert.equal(ids.frameOf(a), undefined);
  assert.equal(ids.frameOf(b), ':1.6/org/a11y/atspi/accessible/1');
  assert.notEqual(ids.idOf(':1.5/org/a11y/atspi/accessible/1'), a, 'a new window never reuses a closed one’s id');
  // An app that could not be read this time keeps its windows' ids (a slow app is not a closed window).
  const c = ids.idOf(':1.7/org/a11y/atspi/accessible/3');
  ids.keepOnly(new Set(), new Set([':1.7']));
  assert.equal(ids.frameOf(c), ':1.7/org/a11y/atspi/accessible/3');
  assert.equal(ids.frameOf(b), undefined);
});

test('Wayland requests are encoded as the wire format says: header, words, padded strings', () => {
  // wl_registry.bind(name 7, "wl_seat", version 1, new id 4) on object 2.
  const msg = request(2, 0, [7, 'wl_seat', 1, 4]);
  assert.equal(msg.length, 8 + 4 + (4 + 8) + 4 + 4);
  assert.equal(msg.readUInt32LE(0), 2);
  assert.equal(msg.readUInt32LE(4), (msg.length << 16) | 0);
  assert.equal(msg.readUInt32LE(8), 7);
  assert.equal(msg.readUInt32LE(12), 8, 'string length counts its NUL');
  assert.equal(msg.toString('utf8', 16, 23), 'wl_seat');
  assert.equal(msg[23], 0);
  assert.equal(msg.readUInt32LE(24), 1);
  assert.equal(msg.readUInt32LE(28), 4);
  // motion_absolute(time, x, y, x_extent, y_extent), opcode 1.
  const motion = request(6, 1, [0xffffffff, 10, 20, 1280, 720]);
  assert.equal(motion.readUInt32LE(4), (28 << 16) | 1);
  assert.equal(motion.readUInt32LE(8), 0xffffffff);
});

test('focus is asked of the compositor where it says (sway) or there is no X display; GNOME keeps X11 for XWayland', () => {
  const keys = ['DISPLAY', 'WAYLAND_DISPLAY', 'XDG_SESSION_TYPE', 'XDG_CURRENT_DESKTOP', 'SWAYSOCK'] as const;
  // The native route reads the environment it is handed (a value), here the one of each case.
  const withEnv = (env: Partial<Record<(typeof keys)[number], string>>) => {
    setMachineEnv(env);
    return compositorSaysFocus();
  };
  try {
    assert.equal(withEnv({ DISPLAY: ':0' }), false, 'an X session: X11 says');
    assert.equal(withEnv({ WAYLAND_DISPLAY: 'wayland-1', SWAYSOCK: '/tmp/s', DISPLAY: ':1' }), true, 'sway says');
    assert.equal(
      withEnv({
        WAYLAND_DISPLAY: 'wayland-0',
        XDG_SESSION_TYPE: 'wayland',
        XDG_CURRENT_DESKTOP: 'GNOME',
        DISPLAY: ':0',
      }),
      false,
      "GNOME does not say: XWayland's EWMH view of X11 windows is asked",
    );
    assert.equal(withEnv({ WAYLAND_DISPLAY: 'wayland-0', XDG_CURRENT_DESKTOP: 'GNOME' }), true, 'no X display to ask');
  } finally {
    setMachineEnv({});
  }
});
