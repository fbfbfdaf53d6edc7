// X11 top-level windows: which there are, whose they are (pid), where they are, which one has focus, and
// raising/focusing one. The queries go over Verity's own X connection (xproto.ts); raising a window is
// left to xdotool, which knows each window manager's EWMH dance.
import { Refusal } from '../../../contract/refusal.js';
import { windowGone } from '../../shared/window-refusals.js';
import { x11Tool, xServer } from './env.js';
import { focusMovedTo } from './settle.js';
import { compositorSaysFocus, focusWindow, focusedWindow, isWaylandWindowId, session, windowAt } from './wayland.js';
import { cardinals, isBadWindow, type XConnection, type XProperty } from './xproto.js';

export interface XWindow {
  id: number;
  /**
   * The creating X client's pid as the X server knows it (X-Resource, from the socket's peer credentials),
   * else _NET_WM_PID; null when neither is known.
   */
  pid: number | null;
  title: string;
  bounds: { x: number; y: number; w: number; h: number };
  viewable: boolean;
}

const BAD_WINDOW = /BadWindow|BadDrawable|No such window|Can't find window|X Error/i;

async function tool(bin: string, args: string[], windowId?: number): Promise<string> {
  try {
    return await x11Tool(bin, args);
  } catch (e) {
    if (windowId !== undefined && BAD_WINDOW.test((e as Error).message)) throw windowGone(windowId);
    throw e;
  }
}

const windowList = (p: XProperty | null) => cardinals(p).filter((n) => n > 0);

/** Top-level client windows: the window manager's _NET_CLIENT_LIST, else visible named windows. */
export async function windowIds(): Promise<number[]> {
  const x = await xServer();
  const listed = windowList(await x.property(x.root, '_NET_CLIENT_LIST'));
  if (listed.length) return listed;
  const found = await tool('xdotool', ['search', '--onlyvisible', '--maxdepth', '2', '--name', '.']).catch(() => '');
  return found.split('\n').filter(Boolean).map(Number);
}

/** One window's pid, title and absolute bounds (of the client area, i.e. what its screenshot shows). */
export async function describeWindow(id: number): Promise<XWindow> {
  const x = await xServer();
  try {
    // Pipelined on one connection: one round trip for all seven answers.
    const [geometry, corner, mapState, netPid, netName, wmName, clientPid] = await Promise.all([
      x.geometry(id),
      x.toRoot(id, 0, 0),
      x.mapState(id),
      x.property(id, '_NET_WM_PID', 1),
      x.property(id, '_NET_WM_NAME'),
      x.property(id, 'WM_NAME'),
      x.clientPid(id).catch(() => null),
    ]);
    return {
      id,
      // The X server's pid first: _NET_WM_PID is what the client says, in its own pid namespace (an app in
      // Flatpak's or a container's names a process there, another one here, or none), and Tk sets none
      // (Java AWT does). It is the fallback where the server does not know the pid (no X-Resource 1.2, a
      // remote client).
      pid: clientPid ?? cardinals(netPid)[0] ?? null,
      title: await titleOf(x, netName ?? wmName),
      // Like xwininfo's "Absolute upper-left": the outer corner, border included.
      bounds: { x: corner.x - geometry.border, y: corner.y - geometry.border, w: geometry.w, h: geometry.h },
      viewable: mapState === 2,
    };
  } catch (e) {
    if (isBadWindow(e)) throw windowGone(id);
    throw e;
  }
}

/** _NET_WM_NAME is UTF-8; WM_NAME is Latin-1 when typed STRING (else, in practice, UTF-8 too). */
async function titleOf(x: XConnection, name: XProperty | null): Promise<string> {
  if (name?.format !== 8) return '';
  return name.data.toString(name.type === (await x.atom('STRING')) ? 'latin1' : 'utf8');
}

export async function listWindows(): Promise<XWindow[]> {
  const ids = await windowIds();
  const all = await Promise.all(ids.map((id) => describeWindow(id).catch(() => null)));
  return all.filter((w): w is XWindow => !!w && w.viewable && w.bounds.w > 1 && w.bounds.h > 1);
}

/**
 * The window manager's stacking order of its client windows, bottom to top (_NET_CLIENT_LIST_STACKING), or
 * null when no window manager says (none runs, or it keeps no such list).
 */
export async function stackingOrder(): Promise<number[] | null> {
  const x = await xServer();
  const ids = windowList(await x.property(x.root, '_NET_CLIENT_LIST_STACKING'));
  return ids.length ? ids : null;
}

/** The window that has keyboard focus (0 when none): the window manager's active window, else the X focus. */
export async function activeWindow(): Promise<number> {
  // In a Wayland session the compositor knows, for its own windows and XWayland's alike.
  if (compositorSaysFocus()) return focusedWindow();
  const x = await xServer();
  const [active] = cardinals(await x.property(x.root, '_NET_ACTIVE_WINDOW', 1));
  if (active !== undefined) return active;
  const focus = await x.inputFocus();
  return focus > 1 ? focus : 0; // 0 None, 1 PointerRoot
}

/** Raises and focuses a window, waiting until the window manager says it is active. */
export async function activate(id: number): Promise<void> {
  if (compositorSaysFocus() || isWaylandWindowId(id)) return focusWindow(id);
  // The app learns of it in its own time: keys sent next wait for it (settle.ts).
  focusMovedTo(id);
  await tool('xdotool', ['windowactivate', '--sync', String(id)], id).catch(async (e) => {
    if (e instanceof Refusal) throw e;
    // Without a window manager there is no _NET_ACTIVE_WINDOW: raise and set the input focus directly.
    await tool('xdotool', ['windowraise', String(id), 'windowfocus', '--sync', String(id)], id);
  });
}

/**
 * The top-most client window whose area holds a screen point (the window manager's stacking order), or
 * null when there is no window manager to say what is on top.
 */
export async function topWindowAt(x: number, y: number): Promise<XWindow | null> {
  if (compositorSaysFocus()) {
    const hit = await windowAt(x, y);
    return hit ? { id: hit.id, pid: null, title: '', bounds: { x, y, w: 1, h: 1 }, viewable: true } : null;
  }
  const server = await xServer();
  const ids = windowList(await server.property(server.root, '_NET_CLIENT_LIST_STACKING')).reverse();
  if (!ids.length) return null;
  for (const id of ids) {
    const w = await describeWindow(id).catch(() => null);
    if (w?.viewable && x >= w.bounds.x && y >= w.bounds.y && x < w.bounds.x + w.bounds.w && y < w.bounds.y + w.bounds.h)
      return w;
  }
  return null;
}

/**
 * The popup surfaces shown now by the X client that owns window `id`: its mapped override-redirect
 * top-levels (GTK 4 draws each popover, popover menu and drop-down list in one), in screen pixels. A
 * client's resource ids share the bits outside the server's resource-id mask.
 */
export async function popupSurfaces(id: number): Promise<Array<{ x: number; y: number; w: number; h: number }>> {
  const x = await xServer();
  const client = (n: number) => (n & ~x.setup.resourceIdMask) >>> 0;
  const mine = (await x.children(x.root)).filter((w) => w !== id && client(w) === client(id));
  const found = await Promise.all(
    mine.map((w) =>
      Promise.all([x.attributes(w), x.geometry(w), x.toRoot(w, 0, 0)]).then(
        ([attributes, geometry, corner]) =>
          attributes.overrideRedirect && attributes.mapState === 2 && geometry.w > 1 && geometry.h > 1
            ? { x: corner.x, y: corner.y, w: geometry.w, h: geometry.h }
            : null,
        () => null, // closed while asked
      ),
    ),
  );
  return found.filter((s): s is NonNullable<typeof s> => !!s);
}

/** Where the pointer is, in screen pixels: the X server's QueryPointer; Wayland compositors tell no one. */
export async function pointerPosition(): Promise<{ x: number; y: number }> {
  const s = session();
  if (s.kind === 'wayland')
    throw new Refusal(
      'unavailable',
      `the pointer's position is not readable on ${s.compositor ?? 'this'} Wayland session: the compositor tells clients the pointer only over their own surfaces (sway's IPC has no cursor query)`,
    );
  return (await xServer()).pointer();
}
