// The windows, apps and policy checks of the nutjs backend. Windows on Linux come from the Linux desktop
// (Verity's own X11 client, handed in as shared/desktop.ts's interface: nut-js there lists the window
// manager's frames with empty titles); elsewhere from nut-js, without pids.
import type { WindowTarget } from '../../contract/driver.js';
import type {
  ClipboardContent,
  DesktopState,
  LaunchRequest,
  NativeHost,
  WaitHooks,
} from '../../contract/native-host.js';
import { orderDesktop } from '../shared/desktop-state.js';
import { Refusal } from '../../contract/refusal.js';
import type { AppFacts } from '../../policy.js';
import type { LinuxDesktop } from '../shared/desktop.js';
import { descendsFrom, processFacts, processName } from '../shared/processes.js';
import { windowGone, windowOfOtherPid } from '../shared/window-refusals.js';
import { Launcher } from '../shared/launch.js';
import { notePointerMotion } from '../shared/background.js';
import { NutProcess } from './process.js';

export type Rect = { x: number; y: number; w: number; h: number };
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

/** The helper's operations that move the real pointer (and may press on a window). */
const POINTER_OPS = new Set(['click', 'move', 'scroll', 'drag']);

const contains = (r: Rect, p: { x: number; y: number }) =>
  p.x >= r.x && p.y >= r.y && p.x < r.x + r.w && p.y < r.y + r.h;
const intersects = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

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
    // The desk check after the action then waits for the window manager's answer to the press (background.ts).
    if (POINTER_OPS.has(op)) notePointerMotion();
    return this.nut.request<T>(op, args);
  }

  /** nut-js reads the clipboard as text only: text/plain is the one type it can say is offered. */
  async readClipboard(): Promise<ClipboardContent> {
    const text = await this.call<string>('clipboardRead');
    return { text, types: text ? ['text/plain'] : [] };
  }

  async writeClipboard(text: string): Promise<ClipboardContent> {
    await this.call('clipboardWrite', { text });
    return this.readClipboard();
  }

  /** nut-js's pointer, in its logical units (screen pixels where the scale is 1). */
  pointerPosition(): Promise<{ x: number; y: number }> {
    return this.call('pointer');
  }

  /**
   * get_desktop_state through nut-js: its screen and pointer; on Linux the windows, stacking order and focus
   * from the X11 window manager (Verity's own client, as listing does); elsewhere nut-js's windows, which
   * carry no pid and no stacking order (said in `unknown`).
   */
  async desktopState(): Promise<DesktopState> {
    const unknown: string[] = [];
    const [screen, cursor, windows] = await Promise.all([
      this.call<{ width: number; height: number }>('screen'),
      this.pointerPosition(),
      this.windows(),
    ]);
    let order: number[] | null = null;
    if (this.desktop) {
      order = await this.desktop.stacking();
      if (!order) unknown.push('z: no window manager keeps a stacking order on this display');
    } else unknown.push('z: nut-js gives no stacking order of windows', 'pid: nut-js names no process per window');
    const focused = await this.activeWindow();
    const appOf = (w: NutWindow) => (this.linux && w.pid !== null ? processName(w.pid) : '');
    return orderDesktop(windows, appOf, order, focused, {
      screens: [{ x: 0, y: 0, width: screen.width, height: screen.height }],
      cursor,
      unknown,
    });
  }

  /**
   * launch_app and kill_app (shared/launch.ts), the Linux route's own: nut-js starts no programs. Windows are
   * matched by pid, so only where the desktop names pids (Linux); its window manager closes them there.
   */
  private readonly launcher = new Launcher({
    route: 'pixel',
    windows: () => this.windows(),
    closeWindow: async (id) => (this.desktop ? this.desktop.closeWindow(id) : null),
    appRefusal: (app) => this.options.appRefusal?.(app) ?? null,
  });

  launchApp(request: LaunchRequest, hooks: WaitHooks) {
    if (!this.linux)
      throw new Refusal(
        'not_supported',
        "launch_app: the nutjs backend starts apps only on Linux (elsewhere nut-js names no window's process, so the app's window could not be told); nothing was started",
      );
    return this.launcher.launch(request, hooks);
  }

  killApp(pid: number, owner: string, hooks: WaitHooks) {
    return this.launcher.kill(pid, owner, hooks);
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

  /** The windows bottom to top where the desktop says (Linux: the window manager), else null. */
  async stacking(): Promise<number[] | null> {
    return this.desktop ? this.desktop.stacking() : null;
  }

  /** Gives a window the keyboard (raises it). */
  async focus(id: number): Promise<void> {
    if (this.desktop) return this.desktop.activate(id);
    await this.call('focus', { id });
  }
}
