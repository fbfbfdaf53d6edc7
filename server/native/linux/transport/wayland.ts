// The native route on a Wayland compositor. Windows are the apps' AT-SPI top-level frames (Wayland gives a
// client no list of other clients' windows), with window ids of Verity's own; where they are on the screen
// comes from the compositor's IPC (sway), since a Wayland client does not know, and its AT-SPI extents
// count from its window. Keystrokes go through the wlroots virtual-keyboard protocol (wtype), screenshots
// through screencopy (grim), the pointer through virtual-pointer (wayland-pointer.ts). What a compositor
// does not offer is refused naming what is missing and the alternative (an element target).
import { execFile, spawn } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { PNG } from 'pngjs';
import { Refusal } from '../../../contract/refusal.js';
import {
  detectSession,
  waylandRoutes,
  type DesktopSession,
  type WaylandRoutes,
} from '../../../contract/session-type.js';
import { machineEnv } from '../../../contract/machine-env.js';
import { swayTree } from './sway-ipc.js';

/** Window ids of Wayland windows: above any X11 resource id (XIDs are below 2^29), so the two never meet. */
export const WAYLAND_ID_BASE = 0x4000_0000;
/** At most this many Wayland windows are remembered (ids of closed ones are dropped first). */
const MAX_WINDOW_IDS = 4096;
const TOOL_TIMEOUT_MS = 5000;
/**
 * wtype uploads its keymap and types at once, and GTK sometimes lost the first key (measured under sway:
 * 1 call in 15 without a wait, 0 in 15 with 60 ms; every call when the seat had no keyboard of its own).
 */
const WTYPE_KEYMAP_SETTLE_MS = 60;

export const isWaylandWindowId = (id: number) => id >= WAYLAND_ID_BASE;

/** The session as the environment says now (tests start a compositor and set the variables). */
export function session(): DesktopSession {
  return detectSession(machineEnv());
}

const onPath = (bin: string) =>
  (machineEnv().PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, bin), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

/** What this compositor offers Wayland windows (tools looked up on PATH each time: cheap, and honest). */
export function routes(): WaylandRoutes {
  return waylandRoutes(session().compositor ?? 'unknown', { wtype: onPath('wtype'), grim: onPath('grim') });
}

function run(bin: string, args: string[], input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      bin,
      args,
      { timeout: TOOL_TIMEOUT_MS, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const e = error as NodeJS.ErrnoException;
        if (e.code === 'ENOENT')
          return reject(new Refusal('unavailable', `${bin} is not installed (apt-get install ${bin})`));
        reject(
          new Refusal(
            'unavailable',
            `${bin} ${args.slice(0, 3).join(' ')} failed: ${String(stderr).trim().split('\n')[0] || e.message} (waited at most ${TOOL_TIMEOUT_MS} ms)`,
          ),
        );
      },
    );
    // A tool that exits before reading its input (bad arguments) must not turn EPIPE into a crash.
    child.stdin?.on('error', () => undefined);
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** A window as the compositor places it: its content area on the screen, its pid, focus, and kind. */
export interface Placement {
  conId: number;
  pid: number;
  title: string;
  /** The client area in screen pixels (the node's rect plus the window's offset inside it: borders, title). */
  bounds: { x: number; y: number; w: number; h: number };
  focused: boolean;
  /** An XWayland window (its X11 window id) or a Wayland-native one (null). */
  xid: number | null;
}

interface SwayNode {
  id: number;
  type: string;
  name: string | null;
  pid?: number;
  focused: boolean;
  visible?: boolean;
  shell?: string;
  window?: number | null;
  rect: { x: number; y: number; width: number; height: number };
  window_rect: { x: number; y: number; width: number; height: number };
  nodes: SwayNode[];
  floating_nodes: SwayNode[];
}

/** The compositor's windows (sway IPC), or null where the compositor does not say (not sway). */
export async function placements(): Promise<Placement[] | null> {
  if (session().kind !== 'wayland' || routes().placement !== 'sway-ipc') return null; // an X session: X11 says
  const tree = await swayTree<SwayNode>();
  const out: Placement[] = [];
  const walk = (n: SwayNode, depth: number) => {
    if (depth > 64) return;
    if (n.pid && (n.type === 'con' || n.type === 'floating_con') && n.visible !== false)
      out.push({
        conId: n.id,
        pid: n.pid,
        title: n.name ?? '',
        bounds: {
          x: n.rect.x + n.window_rect.x,
          y: n.rect.y + n.window_rect.y,
          w: n.window_rect.width,
          h: n.window_rect.height,
        },
        focused: n.focused,
        xid: n.shell === 'xwayland' ? (n.window ?? null) : null,
      });
    for (const c of [...(n.nodes ?? []), ...(n.floating_nodes ?? [])]) walk(c, depth + 1);
  };
  walk(tree, 0);
  return out;
}

/** Ids for Wayland windows, keyed by their AT-SPI frame: the same id for as long as the frame exists. */
export class WaylandIds {
  private readonly byFrame = new Map<string, number>();
  private readonly byId = new Map<number, string>();
  private next = WAYLAND_ID_BASE;

  idOf(frameKey: string): number {
    let id = this.byFrame.get(frameKey);
    if (id === undefined) {
      if (this.byFrame.size >= MAX_WINDOW_IDS) {
        const [oldest] = this.byFrame; // Map order: the first remembered goes first
        this.byFrame.delete(oldest[0]);
        this.byId.delete(oldest[1]);
      }
      id = this.next++;
      this.byFrame.set(frameKey, id);
      this.byId.set(id, frameKey);
    }
    return id;
  }

  frameOf(id: number): string | undefined {
    return this.byId.get(id);
  }

  /** Forgets the frames not seen in a listing (their windows closed), except those of apps it could not read. */
  keepOnly(seen: Set<string>, unreadBuses: Set<string> = new Set()): void {
    for (const [key, id] of this.byFrame)
      if (!seen.has(key) && !unreadBuses.has(key.slice(0, key.indexOf('/')))) {
        this.byFrame.delete(key);
        this.byId.delete(id);
      }
  }
}

/** The surface an action's input goes to: set by aim.deliver for the window being acted on. */
const surface = new AsyncLocalStorage<{ wayland: boolean; id: number; title: string }>();

export function onSurface<T>(win: { surface: 'x11' | 'wayland'; id: number; title: string }, work: () => Promise<T>) {
  return surface.run({ wayland: win.surface === 'wayland', id: win.id, title: win.title }, work);
}

/** The Wayland window the current action is for, or null (an X11 window, or no action). */
export function waylandSurface(): { id: number; title: string } | null {
  const s = surface.getStore();
  return s?.wayland ? s : null;
}

const noRoute = (what: string, alternative: string) => {
  const r = routes();
  return new Refusal(
    'unavailable',
    `${what} to a Wayland window needs the compositor's ${alternative}; ${r.missing || 'this compositor does not offer it'}. Nothing was sent (XTest would not reach a Wayland window). Use an element_token (AT-SPI actions and text need no compositor route)`,
  );
};

/** Modifier keysyms (Control_L, Shift_L, Alt_L, Super_L) as wtype names them. */
const MODIFIERS = new Map<number, string>([
  [0xffe3, 'ctrl'],
  [0xffe1, 'shift'],
  [0xffe9, 'alt'],
  [0xffeb, 'logo'],
]);

/** A key chord by keysyms (modifiers among them held around the rest), through wtype. */
export async function waylandPressKeys(keysyms: number[]): Promise<void> {
  if (!routes().keys) throw noRoute('a keystroke', 'virtual-keyboard protocol (wtype)');
  const mods = keysyms.flatMap((k) => MODIFIERS.get(k) ?? []);
  const keys = keysyms.filter((k) => !MODIFIERS.has(k));
  const args = ['-s', String(WTYPE_KEYMAP_SETTLE_MS)];
  for (const m of mods) args.push('-M', m);
  for (const k of keys) args.push('-k', `0x${k.toString(16)}`); // xkbcommon reads keysyms in hex
  for (const m of mods.slice().reverse()) args.push('-m', m);
  await run('wtype', args);
}

/** How long wtype gets to hold the modifiers (it then waits on its input) before a click goes. */
const MODIFIER_HOLD_WAIT_MS = 2000;
/** How long wtype gets to let them go and exit once its input ends. */
const MODIFIER_RELEASE_WAIT_MS = 2000;

/** Whether process `pid` is blocked reading its stdin (fd 0): Linux's /proc/PID/syscall, "0 0x0 ..." is read(0). */
function readingStdin(pid: number): boolean | null {
  try {
    return readFileSync(`/proc/${pid}/syscall`, 'utf8').startsWith('0 0x0 ');
  } catch {
    return null; // no such file to read (not Linux, or not allowed): cannot tell
  }
}

/**
 * Runs `work` with `keysyms` (modifiers) held on a virtual keyboard. wtype presses them, then reads the text
 * to type from its stdin, which stays open for the length of `work`: once it is blocked on that read, the
 * compositor has the modifiers (wtype makes a roundtrip after each). Ending its input lets them go: wtype
 * releases them and exits (the compositor drops what a gone keyboard held, too).
 */
export async function waylandHoldingModifiers<T>(keysyms: number[], work: () => Promise<T>): Promise<T> {
  if (!routes().keys) throw noRoute('a click with modifiers', 'virtual-keyboard protocol (wtype)');
  const mods = keysyms.map((k) => MODIFIERS.get(k) ?? `0x${k.toString(16)}`);
  const press = mods.flatMap((m) => (m.startsWith('0x') ? ['-P', m] : ['-M', m]));
  const release = mods
    .slice()
    .reverse()
    .flatMap((m) => (m.startsWith('0x') ? ['-p', m] : ['-m', m]));
  const child = spawn('wtype', [...press, '-', ...release], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr = (stderr + String(d)).slice(-1000);
  });
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'gone'));
    child.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? e.message));
  });
  let gone: number | string | null = null;
  void exited.then((c) => {
    gone = c;
  });
  const held = async (): Promise<boolean> => {
    const deadline = performance.now() + MODIFIER_HOLD_WAIT_MS;
    while (performance.now() < deadline && gone === null) {
      const reading = child.pid ? readingStdin(child.pid) : false;
      if (reading === null) {
        // Nothing says where wtype is: its roundtrips take a few ms; give it a settle well above that.
        await new Promise((r) => setTimeout(r, WTYPE_KEYMAP_SETTLE_MS * 3));
        return gone === null;
      }
      if (reading) return true;
      await new Promise((r) => setTimeout(r, 5));
    }
    return false;
  };
  const letGo = async () => {
    child.stdin.end();
    const timer = new Promise<'late'>((r) => setTimeout(() => r('late'), MODIFIER_RELEASE_WAIT_MS));
    if ((await Promise.race([exited, timer])) === 'late' && child.pid) process.kill(child.pid, 'SIGKILL');
  };
  if (!(await held())) {
    await letGo();
    if (gone === 'ENOENT') throw new Refusal('unavailable', 'wtype is not installed (apt-get install wtype)');
    throw new Refusal(
      'unavailable',
      gone === null
        ? `wtype did not hold the modifiers ${mods.join('+')} within ${MODIFIER_HOLD_WAIT_MS} ms; nothing was clicked`
        : `wtype exited before holding the modifiers ${mods.join('+')} (${stderr.trim().split('\n')[0] || `exit ${gone}`}); nothing was clicked`,
    );
  }
  try {
    return await work();
  } finally {
    await letGo();
  }
}

/** Text typed through wtype (any Unicode: wtype maps each character into its own keymap). */
export async function waylandTypeText(text: string, delayMs: number): Promise<void> {
  if (!routes().keys) throw noRoute('typing', 'virtual-keyboard protocol (wtype)');
  // wtype takes no "-d 0" (it says "Invalid sleep time"): no delay is no option.
  const delay = delayMs > 0 ? ['-d', String(Math.round(delayMs))] : [];
  await run('wtype', ['-s', String(WTYPE_KEYMAP_SETTLE_MS), ...delay, '-'], text);
}

/** A screen region through screencopy (grim), as PNG base64. */
export async function waylandCapture(region: {
  x: number;
  y: number;
  w: number;
  h: number;
}): Promise<{ data: string; width: number; height: number }> {
  if (!routes().capture) throw noRoute('a screenshot', 'screencopy protocol (grim)');
  const g = `${Math.round(region.x)},${Math.round(region.y)} ${Math.max(1, Math.round(region.w))}x${Math.max(1, Math.round(region.h))}`;
  const png = await run('grim', ['-t', 'png', '-l', '1', '-g', g, '-']);
  const { width, height } = PNG.sync.read(png);
  return { data: png.toString('base64'), width, height };
}

/** The compositor's active outputs (screens) and where each is in the layout, through sway's IPC. */
export async function waylandOutputs(): Promise<Array<{ x: number; y: number; width: number; height: number }>> {
  if (routes().placement !== 'sway-ipc') throw noRoute('placing a point', "IPC saying where windows are (sway's)");
  const outputs = JSON.parse((await run('swaymsg', ['-t', 'get_outputs', '-r'])).toString('utf8')) as Array<{
    active: boolean;
    rect: { x: number; y: number; width: number; height: number };
  }>;
  return outputs.filter((o) => o.active).map((o) => o.rect);
}

/** The size of the screen (the outputs' layout) through sway's IPC. */
export async function waylandScreenSize(): Promise<{ width: number; height: number }> {
  let width = 0,
    height = 0;
  for (const o of await waylandOutputs()) {
    width = Math.max(width, o.x + o.width);
    height = Math.max(height, o.y + o.height);
  }
  return { width, height };
}

/** Gives a window keyboard focus through the compositor (sway: by its container id). */
export async function waylandFocus(conId: number): Promise<void> {
  if (routes().placement !== 'sway-ipc') throw noRoute('focusing a window', "IPC (sway's)");
  await run('swaymsg', [`[con_id=${conId}]`, 'focus']);
}

export { noRoute as waylandNoRoute };

/** Window id (Verity's for Wayland windows, the X11 id for XWayland ones) → sway container, from the last listing. */
const containers = new Map<number, number>();

/** Remembers where the host's last listing placed each window (bounded by the listing itself). */
export function rememberContainers(pairs: Array<[number, number]>): void {
  containers.clear();
  for (const [id, con] of pairs.slice(0, MAX_WINDOW_IDS)) containers.set(id, con);
}

/**
 * Whether focus and stacking are asked of the compositor: in a Wayland session whose compositor says (sway),
 * or that has no X display to ask. GNOME and KDE do not say, but keep XWayland's EWMH view of X11 windows.
 */
export function compositorSaysFocus(): boolean {
  const s = session();
  return s.kind === 'wayland' && (routes().placement !== null || !s.x11Display);
}

/** The window with keyboard focus in the compositor's view (0 when none or the compositor does not say). */
export async function focusedWindow(): Promise<number> {
  const focused = (await placements().catch(() => null))?.find((p) => p.focused);
  if (!focused) return 0;
  if (focused.xid) return focused.xid;
  for (const [id, con] of containers) if (con === focused.conId) return id;
  return 0;
}

/** Gives window `id` keyboard focus through the compositor. */
export async function focusWindow(id: number): Promise<void> {
  await waylandFocus(await containerOf(id, 'focus_failed'));
}

/** The sway container of window `id` (the last listing's, or an XWayland window's by its X11 id). */
async function containerOf(id: number, code: 'focus_failed' | 'target_not_found'): Promise<number> {
  const con =
    containers.get(id) ?? (await placements().catch(() => null))?.find((p) => p.xid === id)?.conId ?? undefined;
  if (con === undefined)
    throw new Refusal(code, `the compositor does not say which of its windows is window ${id}; call list_windows`);
  return con;
}

/** Runs sway commands on window `id`'s container (its IPC, through swaymsg); returns the container's id. */
export async function swayCommand(id: number, command: string): Promise<number> {
  if (routes().placement !== 'sway-ipc')
    throw new Refusal('unavailable', `only sway's IPC arranges Wayland windows here; ${routes().missing}`);
  const con = await containerOf(id, 'target_not_found');
  await run('swaymsg', [`[con_id=${con}]`, command]);
  return con;
}

/**
 * The compositor's windows bottom to top as windowAt reads them (sway's tree in order, floating windows
 * after the tiled ones: above them), by window id (an XWayland window's X11 id, else the last listing's id
 * for its container); null where the compositor does not say.
 */
export async function compositorOrder(): Promise<number[] | null> {
  const all = await placements().catch(() => null);
  if (!all) return null;
  const idOf = new Map([...containers].map(([id, con]) => [con, id]));
  return all.flatMap((p) => p.xid ?? idOf.get(p.conId) ?? []);
}

/** The window the compositor shows at a screen point (floating windows are above tiled ones), if it says. */
export async function windowAt(x: number, y: number): Promise<{ id: number; conId: number } | null> {
  const all = await placements().catch(() => null);
  if (!all) return null;
  const hit = all
    .slice()
    .reverse()
    .find((p) => x >= p.bounds.x && y >= p.bounds.y && x < p.bounds.x + p.bounds.w && y < p.bounds.y + p.bounds.h);
  if (!hit) return null;
  if (hit.xid) return { id: hit.xid, conId: hit.conId };
  for (const [id, con] of containers) if (con === hit.conId) return { id, conId: con };
  return { id: 0, conId: hit.conId };
}
