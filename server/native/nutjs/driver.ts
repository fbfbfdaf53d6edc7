// The portable native backend (--native-backend nutjs; the default on macOS and Windows): pixels and keys
// through @nut-tree-fork/nut-js. It sees no elements, so it proves nothing: every action is `unverifiable`
// with an escalation saying how to check. nut-js runs in a child process (nutjs-worker.ts): Xlib kills its
// process when the X server dies, and a missing binary or a crash must cost a refusal, not the server.
// Windows on Linux come from Verity's own X11 client (nut-js there lists the window manager's frames with
// empty titles); elsewhere from nut-js, without pids.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AppFacts } from '../../policy.js';
import type {
  ActionResult,
  ClickOptions,
  DragOptions,
  Evidence,
  ResolvedTarget,
  ScrollOptions,
  Snapshot,
  WindowTarget,
} from '../../contract/driver.js';
import type { ActionArgs } from '../../contract/actions.js';
import { Stopwatch } from '../../contract/driver.js';
import type { NativeHost, NativeRoute } from '../../contract/native-host.js';
import { Refusal } from '../../contract/refusal.js';
import type { LinuxDesktop } from '../shared/desktop.js';
import { maxChunkChars } from '../shared/key-pace.js';
import { descendsFrom, processFacts, processName } from '../shared/processes.js';
import { windowGone, windowOfOtherPid } from '../shared/window-refusals.js';
import type { NutReply } from './worker.js';

type Rect = { x: number; y: number; w: number; h: number };
export interface NutWindow {
  id: number;
  pid: number | null;
  title: string;
  bounds: Rect;
}

export interface NutjsOptions {
  /** The pid of the browser Verity drives over CDP, or null. */
  drivenBrowserPid(): Promise<number | null>;
  /** Why the operator's policy keeps agents off an app (null: allowed); absent: no app policy. */
  appRefusal?(app: AppFacts): string | null;
  platform?: NodeJS.Platform;
  /** On Linux, the desktop's windows, focus and keyboard map (Verity's X11 client): required there. */
  desktop?: LinuxDesktop;
}

/** How long one nut-js operation may take before its helper is taken for hung (and ended). */
const OP_TIMEOUT_MS = 20_000;
/** Requests waiting for the helper at most (actions on one target are queued before this; this bounds the rest). */
const MAX_PENDING = 64;
/** Screenshots remembered per target for mapping its pixels back (scale, size): the oldest is dropped past this. */
const MAX_SHOTS = 256;

const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));

/** The nut-js helper process: started on first use, started again after it ended. */
export class NutProcess {
  private child: ChildProcess | null = null;
  constructor(private readonly worker = WORKER) {}

  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout; op: string }
  >();

  private start(): ChildProcess {
    const child = fork(this.worker, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json' });
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr = (stderr + String(d)).slice(-4000); // bounded: the last of what it said
    });
    child.on('message', (m: NutReply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.ok) p.resolve(m.value);
      else p.reject(failure(p.op, m.error));
    });
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      // A module that does not load (nut-js, its binary, or what the helper imports) is said as such.
      const why = /^.*(Cannot find (module|package)|dlopen).*$/m.exec(stderr)?.[0] ?? stderr.trim().split('\n').pop();
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        clearTimeout(p.timer);
        p.reject(
          loadFailure(why ?? '') ??
            new Refusal(
              'unavailable',
              `the nut-js helper process ended (${how}${why ? `: ${why}` : ''}) during ${p.op}; the display it used may be gone. Nothing more was sent; the next call starts it again`,
            ),
        );
      }
    });
    child.on('error', () => undefined); // reported through 'exit'
    // The helper never keeps the server alive by itself: a waiting request holds the loop with its timer.
    child.unref();
    child.channel?.unref();
    return child;
  }

  request<T>(op: string, args: Record<string, unknown> = {}, timeoutMs = OP_TIMEOUT_MS): Promise<T> {
    if (this.pending.size >= MAX_PENDING)
      return Promise.reject(
        new Refusal('target_busy', `${MAX_PENDING} nut-js operations are waiting already; retry`, { retryable: true }),
      );
    this.child ??= this.start();
    const child = this.child;
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Refusal('timeout', `nut-js did not finish ${op} within ${timeoutMs} ms; its helper was ended`));
        if (child.pid) process.kill(child.pid, 'SIGKILL');
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer, op });
      child.send({ id, op, args });
    });
  }

  close(): void {
    const pid = this.child?.pid;
    this.child = null;
    if (pid) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  }
}

/** nut-js (or its binary) not loading, as the refusal that says the backend is off here; null for other errors. */
function loadFailure(message: string): Refusal | null {
  if (!/Cannot find (module|package)|ERR_MODULE_NOT_FOUND|\.node\b|dlopen|libnut/i.test(message)) return null;
  return new Refusal(
    'unavailable',
    `the nutjs native backend is off: @nut-tree-fork/nut-js does not load on ${process.platform}-${process.arch} (${message}); the browser route works`,
  );
}

/** A helper's error as a refusal. */
function failure(op: string, message: string): Refusal {
  return loadFailure(message) ?? new Refusal('unavailable', `nut-js failed at ${op}: ${message}`);
}

/** The characters nut-js types as keys on every system: printable ASCII, newline and tab. */
export function nutUntypable(text: string): string[] {
  const odd = new Set(Array.from(text).filter((c) => !/^[\x20-\x7e\n\t]$/.test(c)));
  return [...odd].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
}

/**
 * On X11, which characters of `text` need Shift, and which the keyboard map has no key for. nut-js's Linux
 * typing finds each character's key but adds Shift to capitals only (measured: "!~{}" came out as "1`[]"),
 * so the helper holds Shift for the others itself; a character with no key would be dropped, so it is refused.
 */
async function x11Keys(desktop: LinuxDesktop, text: string): Promise<{ shifted: string[]; missing: string[] }> {
  const { perKeycode, keysyms } = await desktop.keyboardMapping();
  const level = new Map<number, number>();
  for (const l of [0, 1])
    for (let i = 0; i * perKeycode < keysyms.length; i++) {
      const k = keysyms[i * perKeycode + l];
      if (k && !level.has(k)) level.set(k, l);
    }
  const shifted = new Set<string>();
  const missing = new Set<string>();
  for (const c of new Set(Array.from(text))) {
    if (c === '\n' || c === '\t') continue;
    const l = level.get(c.codePointAt(0)!);
    if (l === undefined) missing.add(`"${c}"`);
    else if (l === 1 && !/[A-Z]/.test(c)) shifted.add(c);
  }
  return { shifted: [...shifted], missing: [...missing] };
}

const NUT_KEYS: Record<string, string> = {
  return: 'Enter',
  enter: 'Enter',
  esc: 'Escape',
  escape: 'Escape',
  del: 'Delete',
  delete: 'Delete',
  backspace: 'Backspace',
  tab: 'Tab',
  space: 'Space',
  ' ': 'Space',
  up: 'Up',
  down: 'Down',
  left: 'Left',
  right: 'Right',
  arrowup: 'Up',
  arrowdown: 'Down',
  arrowleft: 'Left',
  arrowright: 'Right',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pagedown: 'PageDown',
  insert: 'Insert',
  ctrl: 'LeftControl',
  control: 'LeftControl',
  shift: 'LeftShift',
  alt: 'LeftAlt',
  option: 'LeftAlt',
  meta: 'LeftSuper',
  cmd: 'LeftSuper',
  command: 'LeftSuper',
  super: 'LeftSuper',
};

/** nut-js's Key name for a key name (Enter, F5, a, 7, ctrl...), or invalid_arguments naming `field`. */
export function nutKey(name: string, field = 'key'): string {
  const lower = name.toLowerCase();
  const named = NUT_KEYS[lower];
  if (named) return named;
  if (/^f([1-9]|1[0-9]|2[0-4])$/.test(lower)) return lower.toUpperCase();
  if (/^[a-z]$/.test(lower)) return lower.toUpperCase();
  if (/^[0-9]$/.test(lower)) return `Num${lower}`;
  throw new Refusal(
    'invalid_arguments',
    `${field}: "${name}" is not a key this route can press (Enter, Tab, Escape, arrows, Backspace, Delete, Home, End, PageUp, PageDown, F1-F24, a-z, 0-9, ctrl, shift, alt, meta)`,
  );
}

const contains = (r: Rect, p: { x: number; y: number }) =>
  p.x >= r.x && p.y >= r.y && p.x < r.x + r.w && p.y < r.y + r.h;
const intersects = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

const ESCALATE = {
  target: 'verify' as const,
  reason:
    'the nutjs backend reads no elements, so it cannot prove what this did: call get_window_state and compare its screenshot',
};
const NO_ELEMENTS =
  'no elements: the nutjs native backend sees pixels only (no accessibility tree here); act at screenshot pixels (x, y) and check the next screenshot';

/** The windows, apps and policy checks of the nutjs backend (what tools and the router ask of a native host). */
export class NutjsHost implements NativeHost {
  readonly nut = new NutProcess();
  readonly linux: boolean;
  /** The Linux desktop (on Linux only). */
  private readonly desktop: LinuxDesktop | null;

  constructor(readonly options: NutjsOptions) {
    this.linux = (options.platform ?? process.platform) === 'linux';
    if (this.linux && !options.desktop) throw new Error('the nutjs backend on Linux is built with the Linux desktop');
    this.desktop = this.linux ? options.desktop! : null;
  }

  /** The Linux desktop; only asked where `linux` holds. */
  get linuxDesktop(): LinuxDesktop {
    return this.desktop!;
  }

  /** Asks the helper, once the display it needs is known to answer (nut-js without one kills its process). */
  async call<T>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.desktop) await this.desktop.requireDisplay();
    return this.nut.request<T>(op, args);
  }

  get filtersApps(): boolean {
    return !!this.options.appRefusal;
  }

  prefetchField(): void {
    /* no fields: nothing to read ahead */
  }

  isDescendant(pid: number, ancestor: number): boolean {
    return this.linux && descendsFrom(pid, ancestor);
  }

  close(): void {
    this.nut.close();
    this.desktop?.close();
  }

  /** Every top-level window, the policy's refused ones included. */
  private async everyWindow(): Promise<NutWindow[]> {
    if (this.desktop) return this.desktop.listWindows();
    const found = await this.call<NutWindow[]>('windows');
    return found.filter((w) => w.bounds.w > 1 && w.bounds.h > 1).map((w) => ({ ...w, pid: null }));
  }

  private async refusalOf(w: NutWindow): Promise<string | null> {
    const rule = this.options.appRefusal;
    if (!rule) return null;
    const browser = await this.options.drivenBrowserPid().catch(() => null);
    const driven = !!w.pid && !!browser && descendsFrom(w.pid, browser);
    const proc = this.linux && w.pid !== null ? processFacts(w.pid) : { exe: '', comm: '', argv: [] };
    return rule({ pid: w.pid, names: [], ...proc, driven, title: w.title, browserLike: driven });
  }

  async windowsAndGaps(): Promise<{ windows: NutWindow[]; x11Missing: string | null }> {
    const all = await this.everyWindow();
    const refused = await Promise.all(all.map((w) => this.refusalOf(w)));
    return { windows: all.filter((_, i) => !refused[i]), x11Missing: null };
  }

  async windows(): Promise<NutWindow[]> {
    return (await this.windowsAndGaps()).windows;
  }

  /** The apps behind the windows (by process on Linux; elsewhere nut-js names no processes). */
  async apps(): Promise<Array<{ name: string; pid: number | null; accessibility: boolean }>> {
    if (!this.linux) return [];
    const seen = new Map<number, string>();
    for (const w of await this.windows()) if (w.pid !== null && !seen.has(w.pid)) seen.set(w.pid, processName(w.pid));
    return [...seen].map(([pid, name]) => ({ name, pid, accessibility: false }));
  }

  async windowTitle(windowId: number): Promise<string> {
    return (await this.window(undefined, windowId)).title;
  }

  /** A window target's window: the one the router's lookup found for this call (carried on it), else looked up now. */
  targetWindow(target: WindowTarget): Promise<NutWindow> {
    return target.window ? Promise.resolve(target.window as NutWindow) : this.window(target.pid, target.windowId);
  }

  /** The window a target names, refused as not found when it is gone, another pid's, or the policy's. */
  async window(pid: number | undefined, windowId: number): Promise<NutWindow> {
    const win = this.desktop
      ? await this.desktop.describeWindow(windowId).then((w) => (w.viewable ? w : null))
      : (await this.everyWindow()).find((w) => w.id === windowId);
    if (!win || (await this.refusalOf(win))) throw windowGone(windowId);
    if (pid !== undefined && win.pid !== null && win.pid !== pid) throw windowOfOtherPid(windowId, pid, win.pid);
    return win;
  }

  /** Refuses `not_permitted` a point on a window agents may not drive (the top one there, or any when unknown). */
  async checkPoint(p: { x: number; y: number }): Promise<void> {
    if (!this.options.appRefusal) return;
    const top = this.desktop ? await this.desktop.topWindowAt(p.x, p.y) : null;
    const there = top ? [top] : (await this.everyWindow()).filter((w) => contains(w.bounds, p));
    for (const w of there) {
      const why = await this.refusalOf(w);
      if (why)
        throw new Refusal(
          'not_permitted',
          `the point (${Math.round(p.x)}, ${Math.round(p.y)}) lands on a window agents may not drive: ${why}; nothing was done`,
        );
    }
  }

  async hiddenIn(region: Rect, except?: number): Promise<Rect[]> {
    if (!this.options.appRefusal) return [];
    const out: Rect[] = [];
    for (const w of await this.everyWindow())
      if (w.id !== except && intersects(w.bounds, region) && (await this.refusalOf(w))) out.push(w.bounds);
    return out;
  }

  /** The window with keyboard focus (0: none known). */
  async activeWindow(): Promise<number> {
    if (this.desktop) return this.desktop.activeWindow();
    return (await this.call<{ id: number }>('active')).id;
  }

  /** Gives a window the keyboard (raises it). */
  async focus(id: number): Promise<void> {
    if (this.desktop) return this.desktop.activate(id);
    await this.call('focus', { id });
  }
}

/** Where a target's screenshot pixels are on the screen: its origin now, and its last screenshot's scale. */
interface Mapping {
  origin: { x: number; y: number };
  scale: number;
  width: number;
  height: number;
  win: NutWindow | null;
}

/**
 * Where screenshot pixel `px` is on the screen: the target's origin (logical units, as the OS places windows
 * and moves the pointer) plus the pixel over the screenshot's scale (2 on a Retina display). A pixel outside
 * the screenshot is refused naming `field`.
 */
export function screenPoint(
  m: { origin: { x: number; y: number }; scale: number; width: number; height: number },
  px: { x: number; y: number },
  field = 'x, y',
): { x: number; y: number } {
  if (px.x < 0 || px.y < 0 || px.x >= m.width || px.y >= m.height)
    throw new Refusal(
      'invalid_arguments',
      `${field}: (${px.x}, ${px.y}) is outside the target's screenshot (${m.width}x${m.height} pixels); nothing was sent`,
    );
  return { x: Math.round(m.origin.x + px.x / m.scale), y: Math.round(m.origin.y + px.y / m.scale) };
}

export class NutjsDriver implements NativeRoute {
  readonly backend = 'nutjs';
  readonly host: NutjsHost;
  /** Each target's last screenshot: its scale and size (pixels), to map the px form back. */
  private readonly shots = new Map<string, { scale: number; width: number; height: number }>();

  constructor(options: NutjsOptions) {
    this.host = new NutjsHost(options);
  }

  private remember(key: string, shot: { scale: number; width: number; height: number }): void {
    this.shots.delete(key);
    this.shots.set(key, shot);
    if (this.shots.size > MAX_SHOTS) this.shots.delete(this.shots.keys().next().value!);
  }

  private async region(target: ResolvedTarget): Promise<{ rect: Rect; win: NutWindow | null }> {
    if (target.kind === 'desktop') {
      const s = await this.host.call<{ width: number; height: number }>('screen');
      return { rect: { x: 0, y: 0, w: s.width, h: s.height }, win: null };
    }
    if (target.kind !== 'window') throw new Refusal('not_supported', 'a browser tab is not a native target');
    const win = await this.host.targetWindow(target);
    return { rect: win.bounds, win };
  }

  async snapshot(target: ResolvedTarget, _id: string, options: { includeScreenshot: boolean }): Promise<Snapshot> {
    const { rect, win } = await this.region(target);
    const hidden = options.includeScreenshot ? await this.host.hiddenIn(rect, win?.id) : [];
    const shot = options.includeScreenshot
      ? await this.host.call<{ data: string; width: number; height: number; scale: number }>('grab', {
          region: rect,
          hidden,
        })
      : null;
    const scale = shot?.scale ?? this.shots.get(target.key)?.scale ?? (await this.screenScale(rect));
    const width = shot?.width ?? Math.round(rect.w * scale);
    const height = shot?.height ?? Math.round(rect.h * scale);
    this.remember(target.key, { scale, width, height });
    const about = win
      ? { kind: 'window', window_id: win.id, pid: win.pid, title: win.title, bounds: win.bounds }
      : {
          kind: 'desktop',
          display_id: 'primary',
          windows: (await this.host.windows()).map((w) => ({ window_id: w.id, pid: w.pid, title: w.title })),
        };
    return {
      target: { ...about, native_backend: 'nutjs', elements: NO_ELEMENTS },
      elements: [],
      ...(shot ? { screenshot: { data: shot.data, mimeType: 'image/png', width, height } } : {}),
      screenshot_width: width,
      screenshot_height: height,
      scale,
      incomplete: NO_ELEMENTS,
    };
  }

  /** Screenshot pixels per logical unit where `rect` is, measured on one pixel (X11's are always 1). */
  private async screenScale(rect: Rect): Promise<number> {
    if (this.host.linux) return 1;
    const one = await this.host.call<{ scale: number }>('grab', { region: { x: rect.x, y: rect.y, w: 1, h: 1 } });
    return one.scale;
  }

  /** The screen point of screenshot pixel `px` of a target: its origin plus the pixel over the scale. */
  private async mapping(target: ResolvedTarget): Promise<Mapping> {
    const { rect, win } = await this.region(target);
    const known = this.shots.get(target.key);
    const scale = known?.scale ?? (await this.screenScale(rect));
    return {
      origin: { x: rect.x, y: rect.y },
      scale,
      width: known?.width ?? Math.round(rect.w * scale),
      height: known?.height ?? Math.round(rect.h * scale),
      win,
    };
  }

  private toScreen(m: Mapping, px: { x: number; y: number }, field = 'x, y'): { x: number; y: number } {
    return screenPoint(m, px, field);
  }

  /** The screen point an action at the target's px point lands on, checked against the policy. */
  private async pointOf(target: ResolvedTarget, what: string): Promise<{ m: Mapping; at: { x: number; y: number } }> {
    if (target.element)
      throw new Refusal('not_supported', 'the nutjs native backend has no elements; use x, y from the screenshot');
    if (!target.point)
      throw new Refusal(
        'invalid_arguments',
        `x, y: the nutjs native backend ${what} at screenshot pixels; give x and y from get_window_state's screenshot`,
      );
    const m = await this.mapping(target);
    const at = this.toScreen(m, target.point);
    await this.host.checkPoint(at);
    return { m, at };
  }

  private result(sw: Stopwatch, method: string, detail: string, m: Mapping | null, extra: Partial<ActionResult> = {}) {
    const evidence: Evidence[] = [{ kind: 'os_input', detail: `nut-js ${detail}` }];
    return {
      effect: 'unverifiable' as const,
      route: 'pixel' as const,
      delivery: { mode: 'foreground' as const },
      evidence,
      escalation: ESCALATE,
      timings_ms: sw.timings,
      method,
      target: m?.win ? `window ${m.win.id} ("${m.win.title}")` : 'the desktop',
      ...extra,
    } satisfies ActionResult;
  }

  private where(m: Mapping, at: { x: number; y: number }): string {
    return `at screen (${at.x}, ${at.y}) = ${m.win ? `window origin (${m.origin.x}, ${m.origin.y})` : 'the screen'} + pixel / scale ${m.scale}`;
  }

  async click(target: ResolvedTarget, options: ClickOptions): Promise<ActionResult> {
    const sw = new Stopwatch();
    const modifiers = options.modifiers.map((k) => nutKey(k, 'modifiers'));
    const { m, at } = await this.pointOf(target, 'clicks');
    sw.lap('resolve');
    await this.host.call('click', { ...at, button: options.button, count: options.count, modifiers });
    sw.lap('deliver');
    const how = `${options.button} click${options.count > 1 ? ` x${options.count}` : ''}${modifiers.length ? ` with ${options.modifiers.join('+')}` : ''}`;
    return this.result(sw, 'pointer_click', `${how} ${this.where(m, at)}`, m);
  }

  async hover(target: ResolvedTarget): Promise<ActionResult> {
    const sw = new Stopwatch();
    const { m, at } = await this.pointOf(target, 'hovers');
    sw.lap('resolve');
    await this.host.call('move', at);
    sw.lap('deliver');
    return this.result(sw, 'pointer_motion', `pointer moved ${this.where(m, at)}`, m);
  }

  async scroll(target: ResolvedTarget, options: ScrollOptions): Promise<ActionResult> {
    const sw = new Stopwatch();
    const { m, at } = await this.pointOf(target, 'scrolls');
    // A page is taken as ten wheel steps: nut-js has no page scroll, and a step's distance is the OS's.
    const steps = options.by === 'page' ? options.amount * 10 : options.amount;
    sw.lap('resolve');
    await this.host.call('scroll', { ...at, direction: options.direction, amount: steps });
    sw.lap('deliver');
    return this.result(sw, 'wheel', `${steps} wheel step(s) ${options.direction} ${this.where(m, at)}`, m);
  }

  async drag(target: ResolvedTarget, options: DragOptions): Promise<ActionResult> {
    const sw = new Stopwatch();
    const m = await this.mapping(target);
    const from = this.toScreen(m, options.from, 'from');
    const to = this.toScreen(m, options.to, 'to');
    await this.host.checkPoint(from);
    await this.host.checkPoint(to);
    sw.lap('resolve');
    await this.host.call('drag', {
      from,
      to,
      steps: options.steps,
      durationMs: options.durationMs,
      button: options.button,
    });
    sw.lap('deliver');
    return this.result(
      sw,
      'pointer_drag',
      `${options.button} drag from (${from.x}, ${from.y}) to (${to.x}, ${to.y}) in ${options.steps} steps`,
      m,
    );
  }

  /**
   * Keys go to the focused window. A window target must have it already (background, the default) or is
   * raised first (foreground); a desktop target takes whatever has it, unless the policy keeps agents off it.
   */
  private async keyboardFor(target: ResolvedTarget): Promise<Mapping | null> {
    if (target.element)
      throw new Refusal('not_supported', 'the nutjs native backend has no elements; name a window or the desktop');
    if (target.kind === 'desktop') {
      const active = await this.host.activeWindow().catch(() => 0);
      if (active && this.host.filtersApps) {
        const w = await this.host.window(undefined, active).catch(() => null);
        if (!w)
          throw new Refusal(
            'not_permitted',
            'the focused window is one agents may not drive; keys sent to the desktop would reach it, so nothing was sent',
          );
      }
      return null;
    }
    const m = await this.mapping(target);
    const win = m.win!;
    const mode = target.deliveryMode;
    if ((await this.host.activeWindow()) === win.id) return m;
    if (mode === 'foreground') {
      await this.host.focus(win.id);
      if ((await this.host.activeWindow()) === win.id) return m;
      throw new Refusal(
        'focus_failed',
        `window ${win.id} ("${win.title}") would not take the keyboard; nothing was sent`,
      );
    }
    throw new Refusal(
      'focus_failed',
      `keystrokes reach only the focused window, and window ${win.id} ("${win.title}") does not have focus; nothing was sent. Click into it first, or call again with delivery_mode "foreground" (raises it)`,
      { escalation: 'foreground' },
    );
  }

  async typeText(target: ResolvedTarget, { text, ...options }: ActionArgs['typeText']): Promise<ActionResult> {
    const sw = new Stopwatch();
    const odd = nutUntypable(text);
    if (odd.length)
      throw new Refusal(
        'text_not_deliverable',
        `the nutjs native backend types printable ASCII, newlines and tabs only (nut-js drops other characters without a word); this text has ${odd.slice(0, 10).join(' ')}; nothing was typed`,
        { characters: odd.slice(0, 10).join(' ') },
      );
    const chars = Array.from(text).length;
    const limit = maxChunkChars(options.delayMs);
    if (chars > limit)
      throw new Refusal(
        'type_text_synthesis_budget_exceeded',
        `the nutjs native backend types key by key, and ${chars} characters at delay_ms ${options.delayMs} exceed one call's budget; nothing was typed. Send at most ${limit} characters per call`,
        { max_chunk_chars: limit, delay_ms: options.delayMs, chars },
      );
    const keys = this.host.linux ? await x11Keys(this.host.linuxDesktop, text) : { shifted: [], missing: [] };
    if (keys.missing.length)
      throw new Refusal(
        'text_not_deliverable',
        `the keyboard map of this X server has no key for ${keys.missing.slice(0, 10).join(' ')}, and nut-js would drop it; nothing was typed`,
        { characters: keys.missing.slice(0, 10).join(' ') },
      );
    // The px form clicks the field first, as a user would (the click also gives its window the keyboard).
    let clicked = '';
    if (target.point) {
      const { m, at } = await this.pointOf(target, 'types');
      await this.host.call('click', { ...at, button: 'left', count: 1, modifiers: [] });
      await new Promise((r) => setTimeout(r, 50));
      clicked = `clicked ${this.where(m, at)}, then `;
    }
    const m = await this.keyboardFor({ ...target, point: undefined });
    sw.lap('resolve');
    await this.host.call('type', { text, delayMs: options.delayMs, shifted: keys.shifted });
    sw.lap('deliver');
    return {
      ...this.result(sw, 'key_events', `${clicked}typed ${chars} character(s) as keys to the focused window`, m),
      delivery: { mode: 'foreground', delivered_count: chars },
    };
  }

  async pressKey(target: ResolvedTarget, { key, modifiers }: ActionArgs['pressKey']): Promise<ActionResult> {
    const sw = new Stopwatch();
    const keys = [...modifiers.map((k) => nutKey(k, 'modifiers')), nutKey(key)];
    const m = await this.keyboardFor(target);
    sw.lap('resolve');
    await this.host.call('keys', { keys });
    sw.lap('deliver');
    return this.result(sw, 'key_events', `${[...modifiers, key].join('+')} to the focused window`, m);
  }

  async setValue(): Promise<ActionResult> {
    throw new Refusal(
      'not_supported',
      'set_value needs an element, and the nutjs native backend sees none: click the field (x, y) and type_text',
    );
  }
}

/** Whether nut-js loads here and reaches the screen (`verity doctor`); its helper is ended after. */
export async function probeNutjs(timeoutMs: number): Promise<{ width: number; height: number }> {
  const nut = new NutProcess();
  try {
    return await nut.request<{ width: number; height: number }>('screen', {}, timeoutMs);
  } finally {
    nut.close();
  }
}
