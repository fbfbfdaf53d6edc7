// Asking the X11 window manager to raise, move, resize, minimize, maximize, restore or close a top-level
// window (EWMH client messages to the root, as pagers and taskbars do, over Verity's own X connection), and
// reading back what it did: the active window, the stacking order, the client list, the window's
// _NET_WM_STATE, WM_STATE and map state, and its area. Every verdict of the window tools is read here.
import { describeWindow, type XWindow } from './x11.js';
import { xServer } from './env.js';
import { cardinals, type XConnection } from './xproto.js';

const SUBSTRUCTURE_NOTIFY = 0x80000;
const SUBSTRUCTURE_REDIRECT = 0x100000;
/** EWMH source indication: a pager (a tool acting for the user), which window managers obey without focus-stealing checks. */
const SOURCE_PAGER = 2;
const STATE_REMOVE = 0;
const STATE_ADD = 1;
const ICONIC_STATE = 3;
/** ICCCM StaticGravity: x, y are where the client area goes, decorations around it (as list_windows reports it). */
const STATIC_GRAVITY = 10;
const POLL_MS = 50;

/** The window states _NET_WM_STATE may hold that the window tools read. */
const STATE_NAMES = ['MAXIMIZED_VERT', 'MAXIMIZED_HORZ', 'HIDDEN', 'FULLSCREEN', 'ABOVE', 'SHADED'] as const;
export type NetState = (typeof STATE_NAMES)[number];

/** What the window manager and the X server say of one window now. */
export interface WmView {
  /** Null when the window no longer exists. */
  window: XWindow | null;
  /** Whether the window manager still lists it (_NET_CLIENT_LIST). */
  listed: boolean;
  active: number;
  /** Client windows bottom to top (_NET_CLIENT_LIST_STACKING). */
  stacking: number[];
  states: NetState[];
  /** WM_STATE says IconicState. */
  iconic: boolean;
}

/** The window manager's name (_NET_SUPPORTING_WM_CHECK's _NET_WM_NAME), or null when no EWMH window manager runs. */
export async function windowManager(): Promise<string | null> {
  const x = await xServer();
  const [check] = cardinals(await x.property(x.root, '_NET_SUPPORTING_WM_CHECK', 1));
  if (!check) return null;
  const name = await x.property(check, '_NET_WM_NAME').catch(() => null);
  return name?.format === 8 ? name.data.toString('utf8') || 'an unnamed window manager' : 'an unnamed window manager';
}

/** Whether the window manager says it understands a message or state (_NET_SUPPORTED). */
export async function supports(name: string): Promise<boolean> {
  const x = await xServer();
  const [atom, supported] = await Promise.all([x.atom(name), x.property(x.root, '_NET_SUPPORTED')]);
  return cardinals(supported).includes(atom);
}

export async function readWm(id: number): Promise<WmView> {
  const x = await xServer();
  const [active, stacking, clients, netState, wmState, window] = await Promise.all([
    x.property(x.root, '_NET_ACTIVE_WINDOW', 1),
    x.property(x.root, '_NET_CLIENT_LIST_STACKING'),
    x.property(x.root, '_NET_CLIENT_LIST'),
    x.property(id, '_NET_WM_STATE').catch(() => null),
    x.property(id, 'WM_STATE', 2).catch(() => null),
    describeWindow(id).catch(() => null),
  ]);
  const atoms = await stateAtoms(x);
  const held = cardinals(netState);
  return {
    window,
    listed: cardinals(clients).includes(id),
    active: cardinals(active)[0] ?? 0,
    stacking: cardinals(stacking),
    states: STATE_NAMES.filter((name) => held.includes(atoms[name])),
    iconic: cardinals(wmState)[0] === ICONIC_STATE,
  };
}

async function stateAtoms(x: XConnection): Promise<Record<NetState, number>> {
  const values = await Promise.all(STATE_NAMES.map((name) => x.atom(`_NET_WM_STATE_${name}`)));
  return Object.fromEntries(STATE_NAMES.map((name, i) => [name, values[i]])) as Record<NetState, number>;
}

/** A 32-bit ClientMessage about `window`, sent to the root for the window manager (EWMH). */
async function tellWm(window: number, type: string, data: number[]): Promise<void> {
  const x = await xServer();
  const event = Buffer.alloc(32);
  event[0] = 33; // ClientMessage
  event[1] = 32; // format
  event.writeUInt32LE(window, 4);
  event.writeUInt32LE(await x.atom(type), 8);
  data.slice(0, 5).forEach((value, i) => event.writeUInt32LE(value >>> 0, 12 + 4 * i));
  x.sendEvent(x.root, SUBSTRUCTURE_REDIRECT | SUBSTRUCTURE_NOTIFY, event);
  await x.sync();
}

/** Asks the window manager to activate (raise, focus, and restore if minimized) a window. */
export async function requestActivate(id: number, current: number): Promise<void> {
  await tellWm(id, '_NET_ACTIVE_WINDOW', [SOURCE_PAGER, 0, current]);
}

/** Asks for the window's client area at (x, y), w × h, screen pixels (_NET_MOVERESIZE_WINDOW, or ConfigureWindow without one). */
export async function requestFrame(id: number, f: { x: number; y: number; width: number; height: number }) {
  if (await supports('_NET_MOVERESIZE_WINDOW')) {
    // Bits 8-11: x, y, width and height are given; 12-13: the source.
    await tellWm(id, '_NET_MOVERESIZE_WINDOW', [
      STATIC_GRAVITY | 0xf00 | (SOURCE_PAGER << 12),
      f.x,
      f.y,
      f.width,
      f.height,
    ]);
    return '_NET_MOVERESIZE_WINDOW';
  }
  const x = await xServer();
  x.configureWindow(id, f);
  await x.sync();
  return 'ConfigureWindow';
}

/** Adds or removes _NET_WM_STATE atoms (at most two per message, as EWMH has it). */
export async function requestStates(id: number, add: boolean, states: [NetState, NetState?]): Promise<void> {
  const x = await xServer();
  const atoms = await Promise.all(states.map((s) => (s ? x.atom(`_NET_WM_STATE_${s}`) : 0)));
  await tellWm(id, '_NET_WM_STATE', [add ? STATE_ADD : STATE_REMOVE, atoms[0], atoms[1] ?? 0, SOURCE_PAGER]);
}

/** Asks the window manager to iconify (minimize) a window (ICCCM WM_CHANGE_STATE). */
export async function requestIconic(id: number): Promise<void> {
  await tellWm(id, 'WM_CHANGE_STATE', [ICONIC_STATE]);
}

/** Asks the window manager to close a window as its close button does (_NET_CLOSE_WINDOW: the app may ask first). */
export async function requestClose(id: number): Promise<void> {
  await tellWm(id, '_NET_CLOSE_WINDOW', [0, SOURCE_PAGER]);
}

/**
 * Reads the window's state until `holds` says so or `boundMs` runs out; `settled` (optional) ends the wait
 * early on a state that will not change into one that holds (a clamped frame, steady for a while).
 */
export async function waitForWm(
  id: number,
  holds: (view: WmView) => boolean,
  boundMs: number,
  settled?: (view: WmView, steadyMs: number) => boolean,
): Promise<{ view: WmView; held: boolean; waitedMs: number }> {
  const began = Date.now();
  let last = '';
  let steadySince = began;
  for (;;) {
    const view = await readWm(id);
    const waitedMs = Date.now() - began;
    if (holds(view)) return { view, held: true, waitedMs };
    const key = JSON.stringify([view.window?.bounds, view.states, view.iconic, view.listed]);
    if (key !== last) {
      last = key;
      steadySince = Date.now();
    }
    if (waitedMs >= boundMs || settled?.(view, Date.now() - steadySince)) return { view, held: false, waitedMs };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** What the window manager says of a window, in words, for evidence and messages. */
export function describeView(id: number, view: WmView): string {
  if (!view.window || !view.listed) return `window ${id} is not listed by the window manager (closed)`;
  const b = view.window.bounds;
  const shown = view.window.viewable ? 'shown' : 'not shown (unmapped)';
  const top = view.stacking[view.stacking.length - 1];
  return [
    `at (${b.x}, ${b.y}) ${b.w}x${b.h}`,
    shown,
    view.iconic ? 'iconic' : null,
    view.states.length ? `_NET_WM_STATE ${view.states.join(' ')}` : 'no _NET_WM_STATE',
    view.active === id ? 'active' : `not active (active: ${view.active ? `window ${view.active}` : 'none'})`,
    top === id ? 'top of the stacking order' : `below window ${top}`,
  ]
    .filter(Boolean)
    .join(', ');
}
