// The window tools on the Linux desktop (bring_to_front, set_window_frame, set_window_state): which window
// a target names (a minimized one included: the tools restore it), the route its window manager offers
// (EWMH on X11, sway's IPC on sway, none on GNOME's or KDE's Wayland), and the result every half returns.
// A verdict is what the window manager reads back, never what was asked (transport/ewmh.ts).
import type { ActionResult, Evidence, ResolvedTarget } from '../../../contract/driver.js';
import { type Stopwatch, windowToolResult } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import type { LinuxHost } from '../host.js';
import type { NativeRef } from '../atspi/tree.js';
import { windowManager } from '../transport/ewmh.js';
import { compositorSaysFocus, isWaylandWindowId, routes, session } from '../transport/wayland.js';
import type { XWindow } from '../transport/x11.js';

/** How long the window manager is given to do what was asked, read back every 50 ms. */
export const WM_BOUND_MS = 3000;
/** A frame that changed, then held still this long without matching the request: the window manager clamped it. */
export const CLAMP_STEADY_MS = 400;

export interface WmWindow {
  id: number;
  title: string;
  /** X11 (EWMH through the window manager `wm`) or sway's IPC. */
  via: { kind: 'ewmh'; wm: string } | { kind: 'sway' };
  /** Known only for an X11 window. */
  x?: XWindow;
}

/** The window a window tool acts on, and the route to its window manager; refused where there is none. */
export async function wmWindow(host: LinuxHost, target: ResolvedTarget, tool: string): Promise<WmWindow> {
  let id: number;
  let pid: number | undefined;
  if (target.element) {
    const win = (target.element.ref as NativeRef).win;
    id = win.id;
    pid = win.pid ?? undefined;
  } else if (target.kind === 'window') {
    id = target.windowId;
    pid = target.pid;
  } else {
    throw new Refusal(
      'invalid_arguments',
      `target: ${tool} acts on a window; name one as {"kind": "window", "pid", "window_id"} (list_windows)`,
    );
  }
  const s = session();
  if (compositorSaysFocus() || isWaylandWindowId(id)) {
    if (routes().placement === 'sway-ipc') {
      const win = await host.window(pid, id);
      return { id, title: win.title, via: { kind: 'sway' } };
    }
    throw new Refusal(
      'unavailable',
      `${tool}: the compositor (${s.compositor ?? 'unknown'}) offers no protocol to arrange another app's Wayland windows (only sway's IPC does here); nothing was sent`,
      { window_id: id },
    );
  }
  const x = await host.managedWindow(pid, id);
  const wm = await windowManager();
  if (!wm)
    throw new Refusal(
      'unavailable',
      `${tool}: no EWMH window manager runs on this X display (no _NET_SUPPORTING_WM_CHECK), so there is no one to raise, minimize, maximize or close windows and nothing to read their state back from; nothing was sent`,
      { window_id: id },
    );
  return { id, title: x.title, via: { kind: 'ewmh', wm }, x };
}

/** The result of a window tool: what was asked of the window manager, and what it read back. */
export function wmResult(
  effect: ActionResult['effect'],
  sw: Stopwatch,
  win: WmWindow,
  method: string,
  evidence: Evidence[],
  extra: Partial<ActionResult> = {},
): ActionResult {
  return windowToolResult(
    effect,
    sw,
    { route: 'synthetic_events', target: `window ${win.id} ("${win.title}")` },
    method,
    evidence,
    extra,
  );
}

/** Who was asked, for evidence: the window manager by name, or sway. */
export function askedOf(win: WmWindow): string {
  return win.via.kind === 'ewmh' ? `the window manager (${win.via.wm})` : 'sway (its IPC)';
}
