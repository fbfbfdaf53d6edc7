// The native route's view of the desktop: one AT-SPI connection (made on first use, remade when the bus
// dropped), X11 windows matched to their AT-SPI frames, Wayland-native windows (AT-SPI frames of apps with
// no X11 window, wayland.ts), and which windows belong to the browser Verity drives over CDP. The operator's
// app policy is asked here, in one place, for every window and point the native route uses.
import type { AppFacts } from '../../policy.js';
import type { WindowTarget } from '../../contract/driver.js';
import type { DesktopState, LaunchRequest, NativeHost, WaitHooks } from '../../contract/native-host.js';
import { Refusal } from '../../contract/refusal.js';
import { closeWaylandPointer } from './transport/wayland-pointer.js';
import { Atspi, Gone, objectKey, type AccRef, type HooksChooser } from './atspi/model.js';
import { closeXServer, requireDisplay, sessionBusAddress } from './transport/env.js';
import { giveBackBorrowedKeys } from './transport/input.js';
import { readClipboard, writeClipboard } from './transport/clipboard.js';
import { ROLE, STATE, has } from './atspi/roles.js';
import { frameIn, topLevels } from './atspi/top-levels.js';
import type { WindowInfo } from './atspi/window.js';
import {
  WaylandIds,
  compositorSaysFocus,
  isWaylandWindowId,
  placements,
  rememberContainers,
  routes,
  session,
  swayCommand,
  type Placement,
} from './transport/wayland.js';
import {
  activeWindow,
  describeWindow,
  listWindows,
  pointerPosition,
  topWindowAt,
  type XWindow,
} from './transport/x11.js';
import { descendsFrom, processFacts, processName } from '../shared/processes.js';
import { windowGone, windowOfOtherPid } from '../shared/window-refusals.js';
import { Launcher } from '../shared/launch.js';
import { linuxDesktop } from './desktop.js';
import { readDesktopState } from './desktop-state.js';

export interface LinuxHostOptions {
  /** The pid of the browser Verity drives over CDP (launched or attached), or null when there is none. */
  drivenBrowserPid(): Promise<number | null>;
  /**
   * Why the operator's policy keeps agents off an app (null: they may drive it); absent: no app policy.
   * Asked wherever this host lists windows and apps or finds a target, so every native call passes it.
   */
  appRefusal?(app: AppFacts): string | null;
  /** Call apps on their own AT-SPI socket when they offer one (--atspi-direct; default on). */
  atspiDirect?: boolean;
}

/** The AT-SPI names of a process's apps. */
const namesOf = (pid: number, apps: Array<{ name: string; pid: number | null }>) =>
  apps.filter((a) => a.pid === pid).map((a) => a.name);

type Rect = { x: number; y: number; w: number; h: number };
const contains = (r: Rect, p: { x: number; y: number }) =>
  p.x >= r.x && p.y >= r.y && p.x < r.x + r.w && p.y < r.y + r.h;
const intersects = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** A field's states, and its text and caret, read together before text goes in. */
export interface FieldReads {
  states: Promise<[number, number]>;
  textAndCaret: Promise<[string, number]>;
}

const BROWSER_NAMES = /chrom|electron|firefox|brave|msedge|opera|vivaldi|code|slack|discord|teams|signal|obsidian/i;

export class LinuxHost implements NativeHost {
  private client: Promise<Atspi> | null = null;
  /** The same client once connected, for the calls that find it ready. */
  private connected: Atspi | null = null;
  /** X11 window id → its AT-SPI frame, kept while the frame is still shown by the same process. */
  private readonly frames = new Map<
    number,
    { pid: number | null; frame: AccRef; app: { bus: string; name: string } }
  >();
  /** Verity's own ids for Wayland windows, stable for each frame's life. */
  private readonly waylandIds = new WaylandIds();
  /**
   * The Wayland windows of the last listing, and the apps whose windows it could not read (an AT-SPI call
   * not answered in time): window() checks such an app's window itself rather than call it not shown.
   */
  private lastWayland = new Map<number, WindowInfo>();
  private unreadBuses = new Set<string>();
  /** Reads started for one field as its type_text call arrived (prefetchField), until that call takes them. */
  private early: { ref: AccRef; reads: FieldReads } | null = null;

  constructor(
    readonly options: LinuxHostOptions,
    /**
     * Each app's toolkit profile from the toolkit it names (toolkits/index.ts profileFor, handed in by
     * driver.ts: the toolkits sit above this host). Without it (a test of window lookups) no AT-SPI connection.
     */
    private readonly profiles?: HooksChooser,
  ) {}

  /**
   * Starts reading a field's states, text and caret for a call that is still being checked (see
   * CallPipeline.anticipate). Only that call may use them, so they are dropped when this turn of the event loop
   * ends: its handler runs in the same turn, and one that waits on anything longer reads afresh.
   */
  prefetchField(ref: AccRef): void {
    const atspi = this.connected;
    if (!atspi?.connected) return;
    const reads: FieldReads = { states: atspi.states(ref), textAndCaret: atspi.textAndCaret(ref) };
    reads.states.catch(() => undefined); // a gone element is reported by the call's own use of them
    reads.textAndCaret.catch(() => undefined);
    atspi.flush(ref); // now, not after the SDK's own work on the request in this tick
    const early = { ref, reads };
    this.early = early;
    setImmediate(() => {
      if (this.early === early) this.early = null;
    });
  }

  /** The reads prefetchField started for `ref` in this turn, once. */
  takeField(ref: AccRef): FieldReads | null {
    const early = this.early;
    if (!early || early.ref !== ref) return null;
    this.early = null;
    return early.reads;
  }

  /** The AT-SPI connection; refuses naming what is missing (display, session bus, AT-SPI bus). */
  async atspi(): Promise<Atspi> {
    // AT-SPI needs no X display: on Wayland it is the only source of windows and elements.
    if (session().kind !== 'wayland') await requireDisplay();
    sessionBusAddress();
    if (this.connected?.connected) return this.connected;
    if (this.client) {
      const existing = await this.client.catch(() => null);
      if (existing?.connected) return existing;
      this.client = null;
    }
    if (!this.profiles)
      throw new Error('this LinuxHost was built without toolkit profiles: it has no AT-SPI connection');
    const connecting = Atspi.connect({ direct: this.options.atspiDirect !== false, profiles: this.profiles });
    this.client = connecting;
    connecting.then(
      (c) => {
        if (this.client === connecting) this.connected = c;
      },
      () => {
        if (this.client === connecting) this.client = null;
      },
    );
    return connecting;
  }

  /** Drops the AT-SPI connection (the server is shutting down). */
  close(): void {
    const client = this.client;
    this.client = null;
    this.connected = null;
    void client?.then(
      (c) => c.disconnect(),
      () => undefined,
    );
    giveBackBorrowedKeys(); // before its connection closes
    closeXServer();
    closeWaylandPointer();
  }

  /** AT-SPI apps with name and pid: those the policy refuses are left out. */
  async apps(): Promise<Array<{ ref: AccRef; name: string; pid: number | null }>> {
    const apps = await (await this.atspi()).apps();
    const rule = this.options.appRefusal;
    if (!rule) return apps;
    const admitted = await Promise.all(
      apps.map(
        async (app) =>
          rule(await this.factsOf(app.pid, app.pid !== null ? namesOf(app.pid, apps) : [app.name])) === null,
      ),
    );
    return apps.filter((_, i) => admitted[i]);
  }

  async isDriven(pid: number | null): Promise<boolean> {
    if (!pid) return false;
    const browser = await this.options.drivenBrowserPid().catch(() => null);
    return !!browser && descendsFrom(pid, browser);
  }

  /** Whether a process is `ancestor` or descends from it (the driven browser's renderers and helpers). */
  isDescendant(pid: number, ancestor: number): boolean {
    return descendsFrom(pid, ancestor);
  }

  readClipboard = readClipboard;
  writeClipboard = writeClipboard;
  pointerPosition = pointerPosition;

  /**
   * The desktop as the window manager or compositor keeps it (get_desktop_state): on X11 its stacking order
   * (_NET_CLIENT_LIST_STACKING), active window (_NET_ACTIVE_WINDOW) and the pointer (QueryPointer); on sway its
   * IPC tree and outputs. The windows are those list_windows lists (the policy's left out).
   */
  async desktopState(): Promise<DesktopState> {
    return readDesktopState(await this.windowsAndGaps());
  }

  /** launch_app and kill_app (shared/launch.ts): this host's windows, and its window manager's close. */
  private readonly launcher = new Launcher({
    route: 'synthetic_events',
    windows: () => this.windows(),
    closeWindow: (id) => this.closeWindow(id),
    appRefusal: (app) => this.options.appRefusal?.(app) ?? null,
  });
  launchApp = (request: LaunchRequest, hooks: WaitHooks) => this.launcher.launch(request, hooks);
  killApp = (pid: number, owner: string, hooks: WaitHooks) => this.launcher.kill(pid, owner, hooks);

  /** Asks the window manager to close a window as its close button does (set_window_state closed's way). */
  private async closeWindow(id: number): Promise<string | null> {
    if (compositorSaysFocus() || isWaylandWindowId(id)) {
      if (routes().placement !== 'sway-ipc') return null;
      await swayCommand(id, 'kill');
      return 'sway (its IPC) kill';
    }
    return linuxDesktop.closeWindow(id);
  }

  /** An X11 window's title (the router matches it to the driven browser's tab titles). */
  async windowTitle(windowId: number): Promise<string> {
    if (isWaylandWindowId(windowId)) return (await this.window(undefined, windowId)).title;
    return (await describeWindow(windowId)).title;
  }

  /**
   * Every window: X11 ones (an X session's, or XWayland's inside a Wayland session) and, in a Wayland
   * session, the Wayland-native ones. `x11Missing` says why X11 windows are not among them, when they are not.
   */
  async windowsAndGaps(): Promise<{ windows: WindowInfo[]; x11Missing: string | null }> {
    const { windows, x11Missing } = await this.everyWindow();
    const rule = this.options.appRefusal;
    if (!rule) return { windows, x11Missing };
    const apps = await this.appNames();
    const refused = await Promise.all(windows.map((w) => this.refusalOf(w, apps)));
    return { windows: windows.filter((_, i) => !refused[i]), x11Missing };
  }

  /** Every window, the policy's refused ones included (for the policy's own questions: points, blackouts). */
  private async everyWindow(): Promise<{ windows: WindowInfo[]; x11Missing: string | null }> {
    const s = session();
    if (s.kind !== 'wayland') {
      const windows = await listWindows();
      const atspi = await this.atspi().catch(() => null);
      const apps = atspi ? await atspi.apps().catch(() => []) : [];
      return { windows: await Promise.all(windows.map((w) => this.enrich(w, apps, atspi))), x11Missing: null };
    }
    const atspi = await this.atspi();
    const { apps, unanswered } = await atspi.appsAndUnanswered();
    let x11Missing: string | null = null;
    let xWindows: XWindow[] = [];
    if (s.x11Display) {
      xWindows = await listWindows().catch((e) => {
        if (!(e instanceof Refusal)) throw e;
        x11Missing = `XWayland windows are not listed: ${e.message}`;
        return [];
      });
    }
    const placed = await placements().catch(() => null);
    const x11 = await Promise.all(xWindows.map((w) => this.enrich(w, apps, atspi, placed)));
    // Each window's container: an X11 one's by its X id, a Wayland one's as waylandWindows placed it (an app
    // with several windows, LibreOffice's documents, has one container per window, told apart by title).
    const pairs: Array<[number, number]> = [];
    const wayland = await this.waylandWindows(atspi, apps, x11, placed, pairs, unanswered);
    const all = [...x11, ...wayland];
    for (const w of x11) {
      const con = placed?.find((p) => p.xid === w.id);
      if (con) pairs.push([w.id, con.conId]);
    }
    rememberContainers(pairs);
    return { windows: all, x11Missing };
  }

  /** The windows agents may see: those of apps the policy refuses are left out, as if they were not there. */
  async windows(): Promise<WindowInfo[]> {
    return (await this.windowsAndGaps()).windows;
  }

  /** Whether an app policy is in force (the desktop's view says some windows may be left out). */
  get filtersApps(): boolean {
    return !!this.options.appRefusal;
  }

  /**
   * The Wayland-native windows: the showing top-level frames of apps that have no X11 window (an app is a
   * Wayland client or an X11 one, not both), placed where the compositor says, when it says.
   */
  private async waylandWindows(
    atspi: Atspi,
    apps: Array<{ ref: AccRef; name: string; pid: number | null }>,
    x11: WindowInfo[],
    placed: Placement[] | null,
    containers: Array<[number, number]>,
    unanswered: string[] = [],
  ): Promise<WindowInfo[]> {
    const x11Pids = new Set(x11.map((w) => w.pid));
    const out: WindowInfo[] = [];
    const seen = new Set<string>();
    // Apps that did not answer in time (their name, or their top-levels below): their windows keep their ids.
    const unread = new Set<string>(unanswered);
    for (const app of apps) {
      if (app.pid === null || x11Pids.has(app.pid)) continue;
      const tops = await topLevels(atspi, app.ref.bus).catch(() => null);
      if (!tops) {
        unread.add(app.ref.bus); // not read this time: its windows keep their ids
        continue;
      }
      if (!tops.length) continue;
      const toolkit = await atspi.toolkit(app.ref.bus);
      toolkit.wayland = true; // its extents count from its window (measured: GTK 3 and GTK 4 on sway)
      const nodes = (placed ?? []).filter((p) => p.pid === app.pid && p.xid === null);
      for (const top of tops) {
        const key = objectKey(top.ref);
        seen.add(key);
        const node =
          nodes.find((n) => n.title === top.name) ?? (nodes.length === 1 && tops.length === 1 ? nodes[0] : null);
        const size = top.box ?? { x: 0, y: 0, w: 0, h: 0 };
        const driven = await this.isDriven(app.pid);
        const id = this.waylandIds.idOf(key);
        if (node) containers.push([id, node.conId]);
        out.push({
          id,
          pid: app.pid,
          title: top.name,
          bounds: node ? node.bounds : { x: 0, y: 0, w: size.w, h: size.h },
          viewable: true,
          surface: 'wayland',
          placed: !!node,
          frame: top.ref,
          app: { bus: app.ref.bus, name: app.name },
          driven,
          browserLike: driven || BROWSER_NAMES.test(processName(app.pid)),
        });
      }
    }
    this.waylandIds.keepOnly(seen, unread);
    const last = new Map(out.map((w) => [w.id, w]));
    for (const [id, w] of this.lastWayland) if (w.app && unread.has(w.app.bus) && !last.has(id)) last.set(id, w);
    this.lastWayland = last;
    this.unreadBuses = unread;
    return out;
  }

  /**
   * The policy's word on the app behind a window (null: agents may drive it). The one app check of the
   * native route: listing, finding a target, and where a point or the keyboard focus lands all ask it.
   * The browser Verity drives is the origin policy's (its windows route to their tabs), so only the
   * Control UI rule applies to it.
   */
  private async refusalOf(
    w: Pick<XWindow, 'pid' | 'title'>,
    apps: Array<{ name: string; pid: number | null }>,
  ): Promise<string | null> {
    const rule = this.options.appRefusal;
    if (!rule) return null;
    return rule(await this.factsOf(w.pid, w.pid !== null ? namesOf(w.pid, apps) : [], w));
  }

  /** What the policy is told of a process: /proc's facts, its AT-SPI names, and its window when asked about one. */
  private async factsOf(pid: number | null, names: string[], w?: Pick<XWindow, 'title'>): Promise<AppFacts> {
    const driven = await this.isDriven(pid);
    const proc = pid !== null ? processFacts(pid) : { exe: '', comm: '', argv: [] };
    const window = w ? { title: w.title, browserLike: driven || BROWSER_NAMES.test(proc.comm) } : {};
    return { pid, names, ...proc, driven, ...window };
  }

  /** The AT-SPI apps' names and pids for a policy question (none when AT-SPI is not reachable). */
  private async appNames(): Promise<Array<{ name: string; pid: number | null }>> {
    if (!this.options.appRefusal) return [];
    const atspi = await this.atspi().catch(() => null);
    return atspi ? atspi.apps().catch(() => []) : [];
  }

  /**
   * Refuses `not_permitted` an action whose screen point lands on a window of an app the policy keeps agents
   * off (the top window there; without a window manager's stacking order, any window there).
   */
  async checkPoint(p: { x: number; y: number }): Promise<void> {
    if (!this.options.appRefusal) return;
    // Under Wayland the compositor keeps the stacking order to itself: every placed window there counts.
    const top = session().kind === 'wayland' ? null : await topWindowAt(p.x, p.y);
    const there = top
      ? [top]
      : (await this.everyWindow()).windows.filter((w) => w.placed !== false && contains(w.bounds, p));
    const apps = await this.appNames();
    for (const w of there) {
      const why = await this.refusalOf(w, apps);
      if (why)
        throw new Refusal(
          'not_permitted',
          `the point (${Math.round(p.x)}, ${Math.round(p.y)}) lands on a window agents may not drive: ${why}; nothing was done`,
        );
    }
  }

  /** A browser window's title changes with its tab: checks again that it does not show the Control UI now. */
  async recheck(win: WindowInfo): Promise<void> {
    if (!this.options.appRefusal || !win.browserLike) return;
    const now = isWaylandWindowId(win.id)
      ? ((await this.everyWindow()).windows.find((w) => w.id === win.id) ?? win)
      : await describeWindow(win.id);
    if (await this.refusalOf(now, await this.appNames())) throw windowGone(win.id);
  }

  /** Screen rectangles of windows agents may not see that overlap `region` (blanked in its screenshot). */
  async hiddenIn(region: Rect, except?: number): Promise<Rect[]> {
    if (!this.options.appRefusal) return [];
    const apps = await this.appNames();
    const out: Rect[] = [];
    for (const w of (await this.everyWindow()).windows)
      if (w.id !== except && intersects(w.bounds, region) && (await this.refusalOf(w, apps))) out.push(w.bounds);
    return out;
  }

  /** The focused window (0: none) as the window manager says (verify_state); null under Wayland, which does not say. */
  async activeWindowId(): Promise<number | null> {
    return session().kind === 'wayland' ? null : activeWindow();
  }

  /** The focused window (0: none), refused `not_permitted` for desktop keys when the policy keeps agents off it. */
  async focusedWindow(): Promise<number> {
    if (this.options.appRefusal && session().kind === 'wayland')
      throw new Refusal(
        'not_permitted',
        'under Wayland the compositor does not say which window has the keyboard, and an app policy is in force: keys sent to the desktop could reach a window agents may not drive, so nothing was sent; name an element or a window instead',
      );
    const active = await activeWindow();
    if (!active || !this.options.appRefusal) return active;
    const w = await describeWindow(active).catch(() => null);
    const why = w ? await this.refusalOf(w, await this.appNames()) : null;
    if (why)
      throw new Refusal(
        'not_permitted',
        `the focused window is one agents may not drive (${why}); keys sent to the desktop would reach it, so nothing was sent`,
      );
    return active;
  }

  /** A window target's window: the one the router's lookup found for this call (carried on it), else looked up now. */
  targetWindow(target: WindowTarget): Promise<WindowInfo> {
    return target.window ? Promise.resolve(target.window as WindowInfo) : this.window(target.pid, target.windowId);
  }

  /** The window `pid`/`windowId` names, refused with target_not_found when it is gone or not that pid's. */
  async window(pid: number | undefined, windowId: number): Promise<WindowInfo> {
    if (isWaylandWindowId(windowId)) {
      const win = (await this.windows()).find((w) => w.id === windowId) ?? (await this.unreadWindow(windowId));
      if (!win)
        throw new Refusal(
          'target_not_found',
          `Wayland window ${windowId} is not shown (its frame closed or is hidden); call list_windows`,
          { window_id: windowId },
        );
      if (pid !== undefined && win.pid !== pid) throw windowOfOtherPid(windowId, pid, win.pid);
      return win;
    }
    const x = await describeWindow(windowId);
    if (!x.viewable)
      throw new Refusal('target_not_found', `window ${windowId} is not shown (unmapped or closed); call list_windows`);
    if (pid !== undefined && x.pid !== null && x.pid !== pid) throw windowOfOtherPid(windowId, pid, x.pid);
    const atspi = await this.atspi();
    const known = this.frames.get(windowId);
    // A window of an app the policy refuses is refused as one that does not exist.
    const names = known && known.pid === x.pid ? [{ name: known.app.name, pid: x.pid }] : await this.appNames();
    if (await this.refusalOf(x, names)) throw windowGone(windowId);
    if (known && known.pid === x.pid) {
      const states = await atspi.states(known.frame).catch(() => null);
      if (states && has(states, STATE.showing) && !has(states, STATE.defunct)) {
        await atspi.toolkit(known.app.bus);
        const driven = await this.isDriven(x.pid);
        return {
          ...x,
          ...this.x11Surface(x, await placements().catch(() => null)),
          frame: known.frame,
          app: known.app,
          driven,
          browserLike: driven || (x.pid !== null && BROWSER_NAMES.test(processName(x.pid))),
        };
      }
    }
    return this.enrich(x, await atspi.apps(), atspi, await placements().catch(() => null));
  }

  /** An X11 window's surface facts; inside a Wayland session (XWayland) its bounds are the compositor's. */
  private x11Surface(w: XWindow, placed: Placement[] | null): Pick<WindowInfo, 'surface' | 'placed' | 'bounds'> {
    const node = placed?.find((p) => p.xid === w.id);
    return { surface: 'x11', placed: true, bounds: node ? node.bounds : w.bounds };
  }

  /**
   * A Wayland window the last listing left out because its app did not answer in time (busy: LibreOffice
   * making a document, or a loaded machine): its frame asked directly, with the usual call bound. Still
   * showing: the window as last listed. Gone or hidden: null (not shown). No answer again: refused as a
   * timeout naming the app, not as a window that is not shown.
   */
  private async unreadWindow(windowId: number): Promise<WindowInfo | null> {
    const last = this.lastWayland.get(windowId);
    if (!last?.frame || !last.app || !this.unreadBuses.has(last.app.bus)) return null;
    // The last listing is every window's: one of an app the policy refuses is one that does not exist
    // (asked by the name its app gave then, as it may not give one now).
    if (await this.refusalOf(last, [{ name: last.app.name, pid: last.pid }])) return null;
    const atspi = await this.atspi();
    const states = await atspi.states(last.frame).catch((e: unknown) => {
      if (e instanceof Gone) return null;
      if (e instanceof Refusal && e.code === 'timeout')
        throw new Refusal(
          'timeout',
          `the app of Wayland window ${windowId} ("${last.title}") did not answer in time, so whether the window is still shown is not known (${e.message}); call again`,
          { retryable: true, window_id: windowId },
        );
      throw e;
    });
    return states && has(states, STATE.showing) && !has(states, STATE.defunct) ? last : null;
  }

  /**
   * An X11 window the window manager manages, shown or not (a minimized one is unmapped, so window() refuses
   * it): for the window tools, which restore it. The policy's refused apps are refused as windows that do not exist.
   */
  async managedWindow(pid: number | undefined, windowId: number): Promise<XWindow> {
    const x = await describeWindow(windowId);
    if (pid !== undefined && x.pid !== null && x.pid !== pid) throw windowOfOtherPid(windowId, pid, x.pid);
    if (await this.refusalOf(x, await this.appNames())) throw windowGone(windowId);
    return x;
  }

  /** Checks that a window still exists (between delivery and read-back). */
  async stillThere(windowId: number): Promise<void> {
    if (isWaylandWindowId(windowId)) {
      await this.window(undefined, windowId);
      return;
    }
    const x = await describeWindow(windowId).catch((e) => {
      if (e instanceof Refusal) throw e;
      throw windowGone(windowId);
    });
    if (!x.viewable) throw windowGone(windowId);
  }

  private async enrich(
    w: XWindow,
    apps: Array<{ ref: AccRef; name: string; pid: number | null }>,
    atspi: Atspi | null,
    placed: Placement[] | null = null,
  ): Promise<WindowInfo> {
    const driven = await this.isDriven(w.pid);
    const browserLike = driven || (w.pid !== null && BROWSER_NAMES.test(processName(w.pid)));
    const info: WindowInfo = { ...w, ...this.x11Surface(w, placed), frame: null, app: null, driven, browserLike };
    if (!atspi || w.pid === null) return info;
    for (const app of apps.filter((a) => a.pid === w.pid)) {
      const toolkit = atspi.toolkit(app.ref.bus); // its units and coordinates, known before any element is used
      const frame = await frameIn(atspi, app.ref.bus, w).catch(() => null);
      if (frame) {
        await toolkit;
        this.frames.set(w.id, { pid: w.pid, frame, app: { bus: app.ref.bus, name: app.name } });
        return { ...info, frame, app: { bus: app.ref.bus, name: app.name } };
      }
    }
    return info;
  }
}

export const isWebDocument = (role: number) => role === ROLE.documentWeb;
