// XTest keyboard and mouse, and screen capture, over Verity's own X connection (xproto.ts). No Xlib is
// loaded into the process, so an X server that goes away fails the call in flight instead of exiting
// the process. Characters without a key on the keyboard map are typed the way xdotool does it: a spare
// keycode is mapped to their keysym for the keystroke, and unmapped once the keyboard has been idle a while.
import { PNG } from 'pngjs';
import { Refusal } from '../../../contract/refusal.js';
import { resampleRgba, scaledSize } from '../../../contract/zoom.js';
import { xServer } from './env.js';
import {
  focusedWindow,
  routes,
  session,
  waylandCapture,
  waylandHoldingModifiers,
  waylandPressKeys,
  waylandScreenSize,
  waylandSurface,
  waylandTypeText,
} from './wayland.js';
import { appHasRead, loadScaledMs, SettleLog, settleAfterMapChange } from './settle.js';
import { alongPath, waylandClick, waylandDrag, waylandMove, waylandWheel } from './wayland-pointer.js';
import type { XConnection } from './xproto.js';
import { notePointerMotion } from '../../shared/background.js';

const KEY_PRESS = 2,
  KEY_RELEASE = 3,
  BUTTON_PRESS = 4,
  BUTTON_RELEASE = 5,
  MOTION = 6;
const XK = {
  Enter: 0xff0d,
  Tab: 0xff09,
  Escape: 0xff1b,
  Backspace: 0xff08,
  Delete: 0xffff,
  Home: 0xff50,
  Left: 0xff51,
  Up: 0xff52,
  Right: 0xff53,
  Down: 0xff54,
  PageUp: 0xff55,
  PageDown: 0xff56,
  End: 0xff57,
  Insert: 0xff63,
  Space: 0x20,
  Control: 0xffe3,
  Shift: 0xffe1,
  Alt: 0xffe9,
  Super: 0xffeb,
  F1: 0xffbe,
} as const;

const KEY_NAMES: Record<string, number> = {
  return: XK.Enter,
  enter: XK.Enter,
  esc: XK.Escape,
  escape: XK.Escape,
  del: XK.Delete,
  delete: XK.Delete,
  backspace: XK.Backspace,
  tab: XK.Tab,
  space: XK.Space,
  ' ': XK.Space,
  up: XK.Up,
  down: XK.Down,
  left: XK.Left,
  right: XK.Right,
  arrowup: XK.Up,
  arrowdown: XK.Down,
  arrowleft: XK.Left,
  arrowright: XK.Right,
  home: XK.Home,
  end: XK.End,
  pageup: XK.PageUp,
  pagedown: XK.PageDown,
  insert: XK.Insert,
  ctrl: XK.Control,
  control: XK.Control,
  shift: XK.Shift,
  alt: XK.Alt,
  option: XK.Alt,
  meta: XK.Super,
  cmd: XK.Super,
  command: XK.Super,
  super: XK.Super,
};

/** The keysym for a key name (Enter, Tab, F5, a, 7, ctrl, ...), or invalid_arguments. */
export function keyFor(name: string): number {
  const lower = name.toLowerCase();
  const named = KEY_NAMES[lower];
  if (named !== undefined) return named;
  const f = /^f([1-9]|1[0-9]|2[0-4])$/.exec(lower);
  if (f) return XK.F1 + Number(f[1]) - 1;
  if (/^[a-z0-9]$/.test(lower)) return lower.charCodeAt(0);
  throw new Refusal(
    'invalid_arguments',
    `key: "${name}" is not a key this route can press (Enter, Tab, Escape, arrows, Backspace, Delete, Home, End, PageUp, PageDown, F1-F24, a-z, 0-9)`,
  );
}

/** The characters of `text` no keystroke can type, as U+XXXX: control characters other than newline and tab. */
export function untypable(text: string): string[] {
  const odd = new Set(Array.from(text).filter((c) => c !== '\n' && c !== '\t' && /[\p{Cc}\p{Cs}]/u.test(c)));
  return [...odd].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
}

/** The keysym of one character: Latin-1 as is, the rest as Unicode keysyms (0x01000000 + code point). */
function charKeysym(c: string): number {
  if (c === '\n') return XK.Enter;
  if (c === '\t') return XK.Tab;
  const cp = c.codePointAt(0)!;
  return (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff) ? cp : 0x01000000 + cp;
}

/**
 * How long borrowed keycodes stay mapped after the last keys sent on them, on an idle machine (scaled by its
 * load, loadScaledMs, up to KEYMAP_LEASE_CEILING_MS). An X client translates a key with the map as it stands
 * when it reads the event from its socket, not as it stood when the key was sent, so a busy app that reads
 * late (a Swing app under load; any app stopped for a moment) loses every character whose keycode was given
 * back first: 50 ms was too short. The next call finds them mapped still. Before they go back, every window
 * that took keys on them and answers _NET_WM_PING is pinged: one that has not answered keeps them mapped.
 */
const KEYMAP_LEASE_MS = 5000;
export const KEYMAP_LEASE_CEILING_MS = 60_000;

/**
 * The keycodes this process has borrowed (on the X connection that mapped them), kept until no call has
 * used them for the lease; `generation` counts the give-backs, so a map read before one is read again;
 * `readers` are the windows keys went to while they were mapped.
 */
const lease = {
  x: null as XConnection | null,
  perKeycode: 0,
  keycodes: new Set<number>(),
  users: 0,
  timer: undefined as ReturnType<typeof setTimeout> | undefined,
  generation: 0,
  readers: new Set<number>(),
};

/** Unmaps the borrowed keycodes now (the lease ran out, or the native host closes); safe to call at any time. */
export function giveBackBorrowedKeys(): void {
  clearTimeout(lease.timer);
  const { x, keycodes, perKeycode } = lease;
  // Sent without waiting: the server applies them in order.
  if (x && !x.closed) for (const keycode of keycodes) x.changeKeyboardMapping(keycode, new Array(perKeycode).fill(0));
  keycodes.clear();
  lease.readers.clear();
  lease.generation++;
}

/** The lease ran out: gives the keycodes back once every pinged reader answered; else it runs again. */
async function leaseRanOut(): Promise<void> {
  const readers = [...lease.readers];
  const answers = await Promise.all(readers.map((w) => appHasRead(w).catch(() => null)));
  // A call that started meanwhile holds them; it arms the lease again when it ends.
  if (lease.users > 0) return;
  if (answers.some((a) => a === false)) return armLease();
  giveBackBorrowedKeys();
}

async function armLease(): Promise<void> {
  const ms = await loadScaledMs(KEYMAP_LEASE_MS, KEYMAP_LEASE_CEILING_MS).catch(() => KEYMAP_LEASE_MS);
  if (lease.users > 0 || !lease.keycodes.size) return;
  clearTimeout(lease.timer);
  // Unref'd: a lease never keeps the process alive (the native host gives it back when it closes).
  lease.timer = setTimeout(() => void leaseRanOut().catch(giveBackBorrowedKeys), ms).unref();
}

/** Polls `probe` until it says yes, within `ms`; false when the time ran out or the probe failed. */
export async function pollUntil(probe: () => Promise<boolean>, ms: number, everyMs = 5): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (;;) {
    if (await probe().catch(() => false)) return true;
    if (performance.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

/** Where keys go (the window, 0 when the focused one is all that is known) and where their waits are noted. */
export interface KeysTo {
  window: number;
  log: SettleLog;
}
const anyWindow = (): KeysTo => ({ window: 0, log: new SettleLog() });

interface KeyMap {
  perKeycode: number;
  keysyms: Uint32Array;
}

/** The XTEST extension on the connection, the root window, and (for keys) the keyboard map as it is now. */
class Synth {
  private constructor(
    private readonly x: XConnection,
    private readonly xtest: number,
    private map: KeyMap | null,
    /** lease.generation when `map` was read. */
    private mapGeneration = lease.generation,
  ) {}

  static async open(keyboard: boolean): Promise<Synth> {
    const x = await xServer();
    const xtest = await x.extension('XTEST');
    if (xtest === null)
      throw new Refusal(
        'unavailable',
        'the X server has no XTEST extension, so keystrokes and pointer events cannot be synthesized',
      );
    return new Synth(x, xtest, keyboard ? await x.keyboardMapping() : null);
  }

  fake(type: number, detail: number, x = 0, y = 0): void {
    const body = Buffer.alloc(32);
    body[0] = type;
    body[1] = detail;
    body.writeUInt32LE(this.x.root, 8);
    body.writeInt16LE(Math.round(x), 20);
    body.writeInt16LE(Math.round(y), 22);
    this.x.send(this.xtest, 2, body); // XTEST FakeInput
  }

  sync(): Promise<void> {
    return this.x.sync();
  }

  private byKeysym: Map<number, { keycode: number; shift: boolean }> | null = null;

  /** The keycode producing `keysym`, and whether Shift is needed for it (unshifted keys win). */
  keycodeOf(keysym: number): { keycode: number; shift: boolean } | null {
    if (!this.byKeysym) {
      const { perKeycode, keysyms } = this.map!;
      this.byKeysym = new Map();
      for (const level of [0, 1]) {
        for (let i = 0; i * perKeycode < keysyms.length; i++) {
          const k = keysyms[i * perKeycode + level];
          if (k && !this.byKeysym.has(k))
            this.byKeysym.set(k, { keycode: this.x.setup.minKeycode + i, shift: level === 1 });
        }
      }
    }
    return this.byKeysym.get(keysym) ?? null;
  }

  /** Keycodes with no keysym at all, free to borrow (highest first, away from the real keys). */
  private spareKeycodes(): number[] {
    const { perKeycode, keysyms } = this.map!;
    const spare: number[] = [];
    for (let i = 0; i * perKeycode < keysyms.length; i++) {
      const keycode = this.x.setup.minKeycode + i;
      // A keycode another call of this process borrowed after this map was read is not free.
      if (keysyms.subarray(i * perKeycode, (i + 1) * perKeycode).every((k) => k === 0) && !lease.keycodes.has(keycode))
        spare.push(keycode);
    }
    return spare.reverse();
  }

  /**
   * Runs `use` with a keycode for every keysym: the keyboard's own (a keycode borrowed earlier and still
   * leased among them), or a spare keycode mapped to it now. All borrowing happens before the first key, and
   * the app of `to.window` (the focused window when 0) is waited for to take the change in (settle.ts). The
   * map goes back once the lease runs out after the last call using it ends, never while one is running.
   */
  async withKeys<T>(
    wanted: number[],
    to: KeysTo,
    use: (codeOf: (keysym: number) => { keycode: number; shift: boolean }) => Promise<T>,
  ): Promise<T> {
    lease.users++;
    clearTimeout(lease.timer);
    try {
      if (this.mapGeneration !== lease.generation) {
        // The keycodes this map shows borrowed were given back since: read what the keyboard has now.
        this.map = await this.x.keyboardMapping();
        this.byKeysym = null;
        this.mapGeneration = lease.generation;
      }
      const missing = [...new Set(wanted)].filter((k) => !this.keycodeOf(k));
      const spare = this.spareKeycodes();
      if (missing.length > spare.length) {
        throw new Refusal(
          'text_not_deliverable',
          `${missing.length} different characters are not on the keyboard map and only ${spare.length} keycodes are free to borrow for them; nothing was typed. Send fewer different non-ASCII characters per call`,
          { free_keycodes: spare.length },
        );
      }
      const borrowed = new Map(missing.map((k, i) => [k, spare[i]!]));
      const { perKeycode } = this.map!;
      for (const [keysym, keycode] of borrowed) {
        this.x.changeKeyboardMapping(keycode, new Array(perKeycode).fill(keysym));
        lease.keycodes.add(keycode);
      }
      if (borrowed.size) {
        Object.assign(lease, { x: this.x, perKeycode });
        await settleAfterMapChange(to.window, to.log);
      }
      if (lease.keycodes.size) lease.readers.add(to.window || (await this.x.inputFocus()));
      return await use((k) => this.keycodeOf(k) ?? { keycode: borrowed.get(k)!, shift: false });
    } finally {
      lease.users--;
      if (lease.users === 0 && lease.keycodes.size) void armLease();
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Paints `hidden` rectangles (absolute pixels) black in a PNG of the region whose corner is (left, top). */
function blackOut(png: PNG, left: number, top: number, hidden: Array<{ x: number; y: number; w: number; h: number }>) {
  const { width: w, height: h, data } = png;
  for (const r of hidden) {
    const x0 = Math.max(0, Math.round(r.x) - left),
      x1 = Math.min(w, Math.round(r.x + r.w) - left);
    for (let y = Math.max(0, Math.round(r.y) - top); y < Math.min(h, Math.round(r.y + r.h) - top); y++)
      if (x1 > x0) data.fill(0, (y * w + x0) * 4, (y * w + x1) * 4);
  }
  if (hidden.length) for (let i = 3; i < data.length; i += 4) data[i] = 255;
}

/** The PNG of `png` at `scale` (resampled first unless it is 1), base64, with its size. */
function encode(png: PNG, scale: number): { data: string; width: number; height: number } {
  let out = png;
  if (scale !== 1) {
    const { width, height } = scaledSize(png.width, png.height, scale);
    out = new PNG({ width, height });
    out.data = Buffer.from(resampleRgba(png.data, png.width, png.height, width, height).buffer);
  }
  return {
    data: PNG.sync.write(out, { deflateLevel: 1, filterType: 1 }).toString('base64'),
    width: out.width,
    height: out.height,
  };
}

/**
 * A PNG of a screen region (absolute pixels), base64; `hidden` rectangles (absolute) come out black. The one
 * capture of the Linux route: screenshots (scale 1) and zoom (its scale, resampled after the blackout so that
 * no hidden pixel is blended into a visible one).
 */
export async function capture(
  region: { x: number; y: number; w: number; h: number },
  hidden: Array<{ x: number; y: number; w: number; h: number }> = [],
  scale = 1,
): Promise<{ data: string; width: number; height: number }> {
  // Inside a Wayland session the screen is the compositor's (XWayland's root shows only X11 windows): its
  // capture route where there is one; an X11 window there falls back to XWayland's own image of itself.
  if (session().kind === 'wayland' && (waylandSurface() || routes().capture)) {
    const shot = await waylandCapture(region);
    if (!hidden.length && scale === 1) return shot;
    // The policy's hidden windows are blacked out on this route too.
    const png = PNG.sync.read(Buffer.from(shot.data, 'base64'));
    blackOut(png, Math.round(region.x), Math.round(region.y), hidden);
    return encode(png, scale);
  }
  const x = await xServer();
  const { width: sw, height: sh, bitsPerPixel, imageByteOrder } = x.setup;
  if (bitsPerPixel !== 32)
    throw new Refusal(
      'unavailable',
      `screen capture needs a 24- or 32-bit display; this one has ${bitsPerPixel} bits per pixel`,
    );
  const left = Math.max(0, Math.round(region.x)),
    top = Math.max(0, Math.round(region.y));
  const w = Math.max(1, Math.min(Math.round(region.w) - (left - Math.round(region.x)), sw - left));
  const h = Math.max(1, Math.min(Math.round(region.h) - (top - Math.round(region.y)), sh - top));
  const { data } = await x.image(left, top, w, h);
  const png = new PNG({ width: w, height: h });
  const dst = png.data;
  // LSBFirst depth-24 pixels are B, G, R, X in memory; MSBFirst ones X, R, G, B.
  const [r, g, b] = imageByteOrder === 0 ? [2, 1, 0] : [1, 2, 3];
  for (let i = 0; i < dst.length; i += 4) {
    dst[i] = data[i + r];
    dst[i + 1] = data[i + g];
    dst[i + 2] = data[i + b];
    dst[i + 3] = 255;
  }
  blackOut(png, left, top, hidden);
  return encode(png, scale);
}

/** The size of the screen in pixels. */
export async function screenSize(): Promise<{ width: number; height: number }> {
  if (session().kind === 'wayland') return waylandScreenSize();
  const { width, height } = (await xServer()).setup;
  return { width, height };
}

export async function pressKeys(names: string[], to: KeysTo = anyWindow()): Promise<void> {
  const keysyms = names.map(keyFor);
  if (waylandSurface()) return waylandPressKeys(keysyms);
  const synth = await Synth.open(true);
  await synth.withKeys(keysyms, to, async (codeOf) => {
    const codes = keysyms.map((k) => codeOf(k).keycode);
    for (const c of codes) synth.fake(KEY_PRESS, c);
    for (const c of codes.slice().reverse()) synth.fake(KEY_RELEASE, c);
    await synth.sync();
  });
}

/**
 * Types text key by key, `delayMs` apart (callers refuse `untypable` text first). A character that needs
 * Shift gets it; one the keyboard map lacks gets a borrowed keycode (see withKeys). The app reads the keys
 * in its own time: the caller's read-back says when they landed.
 */
export async function typeKeys(text: string, delayMs: number, to: KeysTo = anyWindow()): Promise<void> {
  if (waylandSurface()) return waylandTypeText(text, delayMs);
  const synth = await Synth.open(true);
  const keysyms = Array.from(text, charKeysym);
  const shift = synth.keycodeOf(XK.Shift)?.keycode;
  await synth.withKeys(keysyms, to, async (codeOf) => {
    for (const [i, keysym] of keysyms.entries()) {
      if (i > 0 && delayMs > 0) await sleep(delayMs);
      const { keycode, shift: shifted } = codeOf(keysym);
      const withShift = shifted && shift !== undefined;
      if (withShift) synth.fake(KEY_PRESS, shift);
      synth.fake(KEY_PRESS, keycode);
      synth.fake(KEY_RELEASE, keycode);
      if (withShift) synth.fake(KEY_RELEASE, shift);
      if (delayMs > 0) await synth.sync();
    }
    await synth.sync();
  });
}

const BUTTON: Record<string, number> = { left: 1, middle: 2, right: 3 };

export async function moveTo(x: number, y: number): Promise<void> {
  notePointerMotion(); // said in the result even where the pointer cannot be read (sway)
  if (waylandSurface()) return waylandMove(x, y);
  const synth = await Synth.open(false);
  synth.fake(MOTION, 0, x, y);
  await synth.sync();
}

export async function clickAt(button: 'left' | 'right' | 'middle', count: number, modifiers: string[]): Promise<void> {
  const mods = modifiers.map(keyFor);
  const surface = waylandSurface();
  if (surface) {
    if (!mods.length) return waylandClick(button, count);
    // Wayland gives modifiers to the keyboard focus only: a click elsewhere would arrive without them.
    const focused = await focusedWindow();
    if (focused !== surface.id)
      throw new Refusal(
        'focus_failed',
        `a click with modifiers on a Wayland window needs it focused (the compositor sends modifiers to the focused window only), and window ${surface.id} is not${focused ? ` (window ${focused} is)` : ''}; nothing was clicked. Use delivery_mode "foreground"`,
      );
    return waylandHoldingModifiers(mods, () => waylandClick(button, count));
  }
  const synth = await Synth.open(mods.length > 0);
  const press = async (modCodes: number[]) => {
    for (const c of modCodes) synth.fake(KEY_PRESS, c);
    try {
      for (let i = 0; i < count; i++) {
        synth.fake(BUTTON_PRESS, BUTTON[button]);
        synth.fake(BUTTON_RELEASE, BUTTON[button]);
      }
    } finally {
      for (const c of modCodes.slice().reverse()) synth.fake(KEY_RELEASE, c);
      await synth.sync();
    }
  };
  if (!mods.length) return press([]);
  await synth.withKeys(mods, anyWindow(), (codeOf) => press(mods.map((k) => codeOf(k).keycode)));
}

/** Wheel clicks: X buttons 4 (up), 5 (down), 6 (left), 7 (right). */
export async function wheel(direction: 'up' | 'down' | 'left' | 'right', steps: number): Promise<void> {
  if (waylandSurface()) return waylandWheel(direction, steps);
  const synth = await Synth.open(false);
  const b = { up: 4, down: 5, left: 6, right: 7 }[direction];
  for (let i = 0; i < steps; i++) {
    synth.fake(BUTTON_PRESS, b);
    synth.fake(BUTTON_RELEASE, b);
  }
  await synth.sync();
}

export async function dragPath(
  from: { x: number; y: number },
  to: { x: number; y: number },
  steps: number,
  durationMs: number,
  button: 'left' | 'right' | 'middle',
): Promise<void> {
  notePointerMotion();
  if (waylandSurface()) return waylandDrag(from, to, steps, durationMs, button);
  const synth = await Synth.open(false);
  synth.fake(MOTION, 0, from.x, from.y);
  synth.fake(BUTTON_PRESS, BUTTON[button]);
  try {
    if (durationMs > 0) await synth.sync();
    await alongPath(from, to, steps, durationMs, async (p) => {
      synth.fake(MOTION, 0, p.x, p.y);
      if (durationMs > 0) await synth.sync(); // each step reaches the server before the next wait
    });
  } finally {
    synth.fake(BUTTON_RELEASE, BUTTON[button]);
    await synth.sync();
  }
}
