// Which desktop the native route runs on (here, below the router, so that choosing a route loads nothing of
// server/native), from the session's own variables: XDG_SESSION_TYPE and
// WAYLAND_DISPLAY say Wayland, not the absence of DISPLAY. A GNOME or KDE session sets DISPLAY too (XWayland
// runs beside the compositor), and XTest sent there for a Wayland-native window is dropped without an error.
// Pure: the environment comes in, so the rules are unit-tested.

export type Compositor = 'sway' | 'hyprland' | 'gnome' | 'kde' | 'unknown';

export interface DesktopSession {
  kind: 'x11' | 'wayland' | 'none';
  /** The X display to use for X11 windows: the X session's, or XWayland's inside a Wayland session. */
  x11Display: string | null;
  waylandDisplay: string | null;
  /** On Wayland: which compositor (what it offers for input, capture and window placement). */
  compositor: Compositor | null;
}

export function detectSession(env: Record<string, string | undefined>): DesktopSession {
  const type = (env.XDG_SESSION_TYPE ?? '').toLowerCase();
  const x11Display = env.DISPLAY || null;
  const waylandDisplay = env.WAYLAND_DISPLAY || (type === 'wayland' ? 'wayland-0' : null);
  // An X session that merely has WAYLAND_DISPLAY left over says so (XDG_SESSION_TYPE=x11).
  const wayland = type === 'wayland' || (!!env.WAYLAND_DISPLAY && type !== 'x11');
  if (!wayland) return { kind: x11Display ? 'x11' : 'none', x11Display, waylandDisplay: null, compositor: null };
  return { kind: 'wayland', x11Display, waylandDisplay, compositor: compositorOf(env) };
}

function compositorOf(env: Record<string, string | undefined>): Compositor {
  if (env.SWAYSOCK) return 'sway';
  if (env.HYPRLAND_INSTANCE_SIGNATURE) return 'hyprland';
  const desktop = `${env.XDG_CURRENT_DESKTOP ?? ''}:${env.XDG_SESSION_DESKTOP ?? ''}`.toLowerCase();
  if (/gnome|ubuntu|unity/.test(desktop)) return 'gnome';
  if (/kde|plasma/.test(desktop)) return 'kde';
  if (/sway/.test(desktop)) return 'sway';
  return 'unknown';
}

/** What a Wayland window's keys, pointer, capture and placement go through on this compositor (null: nothing). */
export interface WaylandRoutes {
  keys: 'virtual-keyboard' | null;
  pointer: 'virtual-pointer' | null;
  capture: 'screencopy' | null;
  /** Where its windows are on the screen (a Wayland client does not know): the compositor's IPC. */
  placement: 'sway-ipc' | null;
  /** What is missing, in words, for the refusals. */
  missing: string;
}

/**
 * The routes for `compositor` given the tools found (wtype: virtual-keyboard, grim: screencopy). wlroots
 * compositors offer the protocols; GNOME and KDE offer only the RemoteDesktop/ScreenCast portals and libei,
 * which need a user's consent dialog and are not driven by Verity.
 */
export function waylandRoutes(compositor: Compositor, tools: { wtype: boolean; grim: boolean }): WaylandRoutes {
  if (compositor === 'gnome' || compositor === 'kde') {
    const name = compositor === 'gnome' ? 'GNOME (Mutter)' : 'KDE (KWin)';
    return {
      keys: null,
      pointer: null,
      capture: null,
      placement: null,
      missing: `${name} offers Wayland input and capture only through the RemoteDesktop/ScreenCast portals and libei, which Verity does not drive yet`,
    };
  }
  const missing: string[] = [];
  if (!tools.wtype) missing.push('wtype (apt-get install wtype) for keystrokes');
  if (!tools.grim) missing.push('grim (apt-get install grim) for screenshots');
  const placement = compositor === 'sway' ? 'sway-ipc' : null;
  if (!placement) missing.push("window positions (only sway's IPC says where a Wayland window is)");
  return {
    keys: tools.wtype ? 'virtual-keyboard' : null,
    // zwlr_virtual_pointer_v1 is spoken by Verity's own small client (wayland-pointer.ts), but only where a
    // point can be placed on the screen.
    pointer: placement ? 'virtual-pointer' : null,
    capture: tools.grim ? 'screencopy' : null,
    placement,
    missing: missing.length ? `missing: ${missing.join('; ')}` : '',
  };
}
