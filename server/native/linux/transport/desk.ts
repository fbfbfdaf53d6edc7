// The desktop as the Linux route reads it around each action (native/shared/background.ts): on X11 the
// window manager's _NET_ACTIVE_WINDOW (else the X input focus), its _NET_CLIENT_LIST_STACKING and the
// X server's QueryPointer, pipelined on Verity's own connection; on sway its IPC tree (the focused container,
// and its containers in the tree's order: floating ones last, in their stacking order) and no pointer (sway
// tells no client where it is). Putting back: XTest motion and an EWMH activation on X11, `focus` on sway.
import type { DeskProbe, DeskView } from '../../shared/background.js';
import { xServer } from './env.js';
import { moveTo } from './input.js';
import { activate } from './x11.js';
import { placements, routes, session, waylandFocus } from './wayland.js';
import { cardinals } from './xproto.js';

const SWAY_POINTER = 'sway tells no client where the pointer is (its IPC has no cursor query)';

/** The desktop now: focus, stacking and pointer, each or the reason it cannot be read here. */
export async function readDesk(): Promise<DeskView> {
  const s = session();
  if (s.kind === 'wayland') {
    if (routes().placement !== 'sway-ipc') {
      const why = `${s.compositor ?? 'this'} Wayland compositor tells no client its focus, stacking or pointer (only sway's IPC is read)`;
      return { unread: { focus: why, z_order: why, pointer: why } };
    }
    // The windows as placements() lists them (an app's visible containers, in the tree's order: floating
    // ones last, in their stacking order).
    const all = (await placements()) ?? [];
    const cons = all.map((p) => p.conId);
    const focus = all.find((p) => p.focused)?.conId ?? 0;
    return { focus, stacking: cons, unread: { pointer: SWAY_POINTER } };
  }
  const x = await xServer();
  // One round trip for the three answers.
  const [active, stacking, pointer, inputFocus] = await Promise.all([
    x.property(x.root, '_NET_ACTIVE_WINDOW', 1),
    x.property(x.root, '_NET_CLIENT_LIST_STACKING'),
    x.pointer(),
    x.inputFocus(),
  ]);
  const [activeId] = cardinals(active);
  const order = cardinals(stacking).filter((id) => id > 0);
  return {
    // Without an EWMH window manager: the X input focus (0 None, 1 PointerRoot: no window).
    focus: activeId ?? (inputFocus > 1 ? inputFocus : 0),
    ...(order.length ? { stacking: order } : {}),
    pointer,
    ...(order.length
      ? {}
      : { unread: { z_order: 'no window manager says the stacking order here (_NET_CLIENT_LIST_STACKING is empty)' } }),
  };
}

/** The Linux route's probe: its reads, XTest motion back on X11, activation on X11 (EWMH) and sway (IPC). */
export const linuxDeskProbe: DeskProbe = {
  read: readDesk,
  async movePointer(p) {
    // Sway's pointer is never read, so never put back: this is X11's (XTest; no Wayland surface is current here).
    await moveTo(p.x, p.y);
  },
  async activate(id) {
    if (session().kind === 'wayland') return waylandFocus(id); // a sway container id, as readDesk gives them
    await activate(id);
  },
};
