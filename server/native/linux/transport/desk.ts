// The desktop as the Linux route reads it around each action (native/shared/background.ts): on X11 the
// window manager's _NET_ACTIVE_WINDOW (else the X input focus), its _NET_CLIENT_LIST_STACKING and the
// X server's QueryPointer, pipelined on Verity's own connection; on sway its IPC tree (the focused container,
// and its containers in the tree's order: floating ones last, in their stacking order) and no pointer (sway
// tells no client where it is). Putting back: XTest motion and an EWMH activation on X11, `focus` on sway.
import type { DeskProbe, DeskView } from '../../shared/background.js';
import { xServer } from './env.js';
import { moveTo } from './input.js';
import { activate } from './x11.js';
import { createConnection } from 'node:net';
import { machineEnv } from '../../../contract/machine-env.js';
import { routes, session, waylandFocus } from './wayland.js';
import { cardinals } from './xproto.js';

const SWAY_POINTER = 'sway tells no client where the pointer is (its IPC has no cursor query)';

interface SwayCon {
  id: number;
  type: string;
  pid?: number;
  focused: boolean;
  visible?: boolean;
  nodes?: SwayCon[];
  floating_nodes?: SwayCon[];
}

const IPC_MAGIC = Buffer.from('i3-ipc');
const GET_TREE = 4;
const IPC_TIMEOUT_MS = 5000;

/**
 * Sway's tree straight from its IPC socket (SWAYSOCK): read twice or three times per action, so without a
 * swaymsg process each time (its start costs more than the answer, most of all on a busy machine).
 */
function swayTree(): Promise<SwayCon> {
  const path = machineEnv().SWAYSOCK;
  if (!path) return Promise.reject(new Error('SWAYSOCK is not set: no sway IPC socket to ask'));
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let got = Buffer.alloc(0);
    const done = (e: Error | null, tree?: SwayCon) => {
      clearTimeout(timer);
      socket.destroy();
      if (e) reject(e);
      else resolve(tree!);
    };
    const timer = setTimeout(
      () => done(new Error(`sway's IPC gave no tree within ${IPC_TIMEOUT_MS} ms`)),
      IPC_TIMEOUT_MS,
    );
    socket.on('error', (e) => done(e));
    socket.on('connect', () => {
      const header = Buffer.alloc(14);
      IPC_MAGIC.copy(header, 0);
      header.writeUInt32LE(0, 6); // no payload
      header.writeUInt32LE(GET_TREE, 10);
      socket.write(header);
    });
    socket.on('data', (chunk) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < 14) return;
      const length = got.readUInt32LE(6);
      if (got.length < 14 + length) return;
      try {
        done(null, JSON.parse(got.subarray(14, 14 + length).toString('utf8')) as SwayCon);
      } catch (e) {
        done(e as Error);
      }
    });
  });
}

/** The desktop now: focus, stacking and pointer, each or the reason it cannot be read here. */
export async function readDesk(): Promise<DeskView> {
  const s = session();
  if (s.kind === 'wayland') {
    if (routes().placement !== 'sway-ipc') {
      const why = `${s.compositor ?? 'this'} Wayland compositor tells no client its focus, stacking or pointer (only sway's IPC is read)`;
      return { unread: { focus: why, z_order: why, pointer: why } };
    }
    const tree = await swayTree();
    const cons: number[] = [];
    let focus = 0;
    // The windows as placements() lists them (an app's visible containers, in the tree's order).
    const walk = (n: SwayCon, depth: number) => {
      if (depth > 64) return;
      if (n.pid && (n.type === 'con' || n.type === 'floating_con') && n.visible !== false) {
        cons.push(n.id);
        if (n.focused) focus = n.id;
      }
      for (const c of [...(n.nodes ?? []), ...(n.floating_nodes ?? [])]) walk(c, depth + 1);
    };
    walk(tree, 0);
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

/** The X11 window manager's stacking order, bottom to top (_NET_CLIENT_LIST_STACKING), or null where none says it. */
export async function stackingOrder(): Promise<number[] | null> {
  const x = await xServer();
  const order = cardinals(await x.property(x.root, '_NET_CLIENT_LIST_STACKING')).filter((id) => id > 0);
  return order.length ? order : null;
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
