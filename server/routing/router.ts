// Target resolution: which route an action takes (the browser over CDP, or native apps over AT-SPI and
// X11), over both drivers, the element tokens of snapshots, tab ownership between MCP connections, and
// the origin policy on every tab a call reaches. The router knows nothing of MCP or of tools: a caller is
// a connection id and the session a call was admitted to.
import type { BrowserRoute, PageOps, RoutedTab } from '../contract/browser-route.js';
import type { SideEffect } from '../contract/wire.js';
// The native route is loaded on its first use, and only where it can run: see nativeRoute().
import type { NativeRoute, NativeWindow } from '../contract/native-host.js';
import { type NativeBackendChoice, nativeBackendOf } from './native-backend.js';
import { detectSession } from '../contract/session-type.js';
import type { Policy } from '../policy.js';
import type { Session } from '../sessions/manager.js';
import type { CursorSettings, Driver, ResolvedTarget, TabHandle, TabTarget, WindowTarget } from '../contract/driver.js';
import { queuedDriver, queueKey, TargetQueue, type WaitHook } from './queue.js';
import { Refusal } from '../contract/refusal.js';
import { sessionKeyOf } from '../contract/session-key.js';
import { SessionBrowsers, type SessionBrowsersOptions } from './session-browsers.js';
import { SnapshotRegistry, type ResolvedToken } from './snapshots.js';
import { checkTargetShape, type TargetArgs } from '../contract/target.js';
import { setMachineEnv } from '../contract/machine-env.js';

/** Who a call comes from, as far as routing cares: its connection (the authority) and its session. */
export interface Caller {
  connectionId: string;
  session?: Session;
  /** Told when an action waits for earlier ones on its target (e.g. to send an MCP progress notification). */
  onQueued?: WaitHook;
  /** Fires when the operator stops the agent (sessions/brake.ts): a call waiting in a target's line leaves it. */
  signal?: AbortSignal;
  /** The call's element tokens, resolved once as it arrived (mcp/pipeline.ts); used while still current. */
  tokens?: ReadonlyMap<string, ResolvedToken>;
}

/** What the native route is built with (server/native/backends.ts). */
export interface NativeRouteOptions {
  /** The pid of the browser Verity drives over CDP (launched or attached), or null when there is none. */
  drivenBrowserPid(): Promise<number | null>;
  /** Why the operator's policy keeps agents off an app (null: they may drive it). */
  appRefusal?: Policy['appRefusal'];
}

export interface RouterOptions<T extends RoutedTab> {
  /** The browser route (the CDP one, built by the composition root). */
  browser: BrowserRoute<T>;
  /** What the page tool does with a tab (the browser route's). */
  pageOps: PageOps;
  /** Builds the native route of a backend, on the first native call (the composition root imports it then). */
  loadNative: (backend: 'atspi' | 'nutjs', options: NativeRouteOptions) => Promise<NativeRoute>;
  policy: Policy;
  /** A session's agent cursor as the driver needs it (none: no cursor). */
  cursorFor: (session: Session | undefined) => CursorSettings | undefined;
  /** A session moved to another tab: the operator's view follows it. */
  onCurrentTabChanged: () => void;
  /** A browser (--browser-endpoint) or context (--isolated) per MCP connection; none: every session shares `browser`. */
  perConnection: Omit<SessionBrowsersOptions<T>, 'tabGone'>;
  /** Which native backend (--native-backend): `auto` is the platform's own. */
  nativeBackend?: NativeBackendChoice;
  /** AT-SPI calls on an app's own socket when it offers one (--atspi-direct; default on). */
  atspiDirect?: boolean;
  /** The machine's environment (DISPLAY, WAYLAND_DISPLAY ...): whether the native route can run here. */
  env?: Readonly<NodeJS.ProcessEnv>;
}

/** What Router.aroundCall took before a call, and what it says after it (`end`). */
export interface CallWatch {
  /** The session's current tab before the call (recorded calls only; null when there is none). */
  before: string | null;
  end(): Promise<{ lost: Refusal | null; after: string | null }>;
}

/** The native route's driver: AT-SPI/XTest (or Wayland) on Linux, or the portable pixels-and-keys one. */
export type { NativeRoute };

/**
 * Why the native route cannot run here, or null when it may: it needs Linux with an X display or a Wayland
 * session (and, found on its first call, a session D-Bus with AT-SPI). Nothing of it is loaded while this says no.
 */
export function nativeUnavailable(
  platform: string = process.platform,
  env: Readonly<NodeJS.ProcessEnv>,
  choice: NativeBackendChoice = 'auto',
): string | null {
  const { backend } = nativeBackendOf(choice, platform);
  if (backend === 'nutjs') {
    if (platform === 'linux' && !env.DISPLAY)
      return 'the nutjs native backend needs an X display on Linux: DISPLAY is not set (start Xvfb, or run inside an X session)';
    return null;
  }
  if (backend === 'none')
    return `the native route needs Linux, macOS or Windows; this is ${platform} (the browser route works here)`;
  if (detectSession(env).kind === 'none')
    return 'the native route needs an X display or a Wayland session: DISPLAY is not set, nor WAYLAND_DISPLAY (start Xvfb, or run inside an X or Wayland session)';
  return null;
}

export class Router<T extends RoutedTab = RoutedTab> {
  readonly browser: BrowserRoute<T>;
  readonly pageOps: PageOps;
  /** Each connection's own browser or context, with --browser-endpoint or --isolated (session-browsers.ts). */
  readonly browsers: SessionBrowsers<T>;
  readonly snapshots = new SnapshotRegistry();
  readonly actionQueue = new TargetQueue();
  private readonly policy: Policy;
  /** The native route's driver, once nativeRoute() loaded it. */
  private native: NativeRoute | null = null;
  private nativeLoading: Promise<NativeRoute> | null = null;

  constructor(private readonly options: RouterOptions<T>) {
    this.browser = options.browser;
    this.pageOps = options.pageOps;
    this.policy = options.policy;
    // An owner entry lives as long as its tab: the map is bounded by the tabs open now.
    this.browser.closedListeners.add((tabId) => this.tabOwners.delete(tabId));
    this.browsers = new SessionBrowsers(this.browser, this.browser.driver, {
      ...options.perConnection,
      tabGone: (tabId) => {
        this.tabOwners.delete(tabId);
        this.snapshots.forget('tab', tabId);
      },
    });
  }

  /** The native route's driver, imported on the first native call; refused `unavailable` where it cannot run. */
  async nativeRoute(): Promise<NativeRoute> {
    if (this.native) return this.native;
    const choice = this.options.nativeBackend ?? 'auto';
    const env = this.options.env ?? {};
    const missing = nativeUnavailable(process.platform, env, choice);
    if (missing) throw new Refusal('unavailable', missing);
    // Its transports (X11, Wayland, D-Bus) look at the machine's environment at each connection.
    setMachineEnv(env);
    const options = {
      drivenBrowserPid: () => this.drivenBrowserPid(),
      appRefusal: (app: Parameters<Policy['appRefusal']>[0]) => this.policy.appRefusal(app),
      atspiDirect: this.options.atspiDirect !== false,
    };
    const backend = nativeBackendOf(choice).backend === 'nutjs' ? 'nutjs' : 'atspi';
    this.nativeLoading ??= this.options.loadNative(backend, options).then((route) => (this.native = route));
    return this.nativeLoading;
  }

  /**
   * The router's part around one tool call (the pipeline's one hook into it): before the handler, the
   * session's current tab as a screenshot when the call is recorded, and how often its browser went away so
   * far; `end`, once the handler answered: the `browser_lost` refusal to give instead when its browser went
   * away meanwhile, the visual aids that waited for the result (the agent cursor's glide), and the screenshot after.
   */
  async aroundCall(caller: Caller, recorded: boolean): Promise<CallWatch> {
    const before = recorded ? await this.screenshotOfCurrentTab(caller) : null;
    const losses = this.browsers.lossesOf(caller.connectionId);
    return {
      before,
      end: async () => {
        const lost = this.browsers.lostDuring(caller.connectionId, losses);
        this.browser.flushCursors();
        return { lost, after: recorded ? await this.screenshotOfCurrentTab(caller) : null };
      },
    };
  }

  /** A session ended: its cursor leaves the tabs it drove. */
  async hideCursorOf(session: Session): Promise<void> {
    session.cursor.visible = false;
    if (!this.browser.running) return;
    for (const tabId of session.tabs) {
      const tab = await this.browser.findTab(tabId).catch(() => null);
      if (tab) await this.browser.hideCursor(tab);
    }
  }

  /** Whether the agent cursor is drawn in a tab now (false when the tab is gone or busy). */
  async cursorShown(tabId: string): Promise<boolean> {
    if (!this.browser.running) return false;
    try {
      return await this.browser.cursorVisible(await this.browser.findTab(tabId));
    } catch {
      return false;
    }
  }

  /**
   * Tab ownership (sessions apart): tab id -> the MCP connection that opened it, claimed it, or was given it
   * (tabs.assign). A popup belongs to its opener's owner. A tab nobody owns yet (the launched browser's
   * first tab, tabs already open in an attached browser) is the operator's: any session may see it, and
   * the first one that acts on it claims it. Tabs the operator shares through the extension's group are
   * given to every session and never claimed (unless assigned to one). Another connection's tab is
   * refused as if it did not exist. Labels of one connection share its tabs (the connection is the authority).
   */
  private readonly tabOwners = new Map<string, string>();
  private readonly openers = new WeakMap<T, string | null>();

  private async ownerOf(tab: T, depth = 0): Promise<string | undefined> {
    const owner = this.tabOwners.get(tab.id);
    if (owner !== undefined || depth > 3) return owner;
    let openerId = this.openers.get(tab);
    if (openerId === undefined) {
      openerId = await this.browser.openerIdOf(tab);
      this.openers.set(tab, openerId);
    }
    if (!openerId) return undefined;
    const opener = await this.browser.findTab(openerId).catch(() => null);
    const inherited = opener ? await this.ownerOf(opener, depth + 1) : this.tabOwners.get(openerId);
    if (inherited !== undefined) this.tabOwners.set(tab.id, inherited);
    return inherited;
  }

  private async mayUse(tab: T, caller: Caller): Promise<boolean> {
    // A tab on the gateway's own origin (an operator's Control UI in an attached browser) does not exist for agents.
    if (this.policy.isGateway(this.browser.urlOf(tab))) return false;
    const owner = await this.ownerOf(tab);
    return owner === undefined || owner === caller.connectionId;
  }

  /**
   * The browser-level request guard, installed on a tab the first time a session drives it (not on every tab
   * Verity merely lists: an operator's own tabs in an attached browser keep loading what they like).
   */
  private readonly guarded = new WeakMap<T, Promise<void>>();
  private guard(tab: T): Promise<void> {
    let done = this.guarded.get(tab);
    if (!done) {
      done = this.browser.guard(tab).catch(() => {});
      this.guarded.set(tab, done);
    }
    return done;
  }

  /** The tabs this call's connection may see: its own and the operator's unclaimed ones. */
  async tabsFor(caller: Caller): Promise<T[]> {
    const tabs = await this.browsers.hostFor(caller).tabs_();
    const usable = await Promise.all(tabs.map((t) => this.mayUse(t, caller)));
    return tabs.filter((_, i) => usable[i]);
  }

  /** A tab by id for this call: refused as not found when it is another connection's; claimed when unowned. */
  tabFor(caller: Caller, tabId: string): Promise<T> {
    return this.ownTab(caller, tabId, () => this.tabNotFound(caller, tabId));
  }

  private async tabNotFound(caller: Caller, tabId: string): Promise<Refusal> {
    return new Refusal(
      'target_not_found',
      `no tab with tab_id ${tabId}; call page {action:"list_tabs"} for the open tabs`,
      { tab_ids: (await this.tabsFor(caller).catch(() => [])).map((t) => t.id) },
    );
  }

  /**
   * The one lookup of a tab by id in a call: `gone` is the refusal when no such tab is open; another
   * connection's tab is refused as if it did not exist; an unowned one is claimed.
   */
  private async ownTab(caller: Caller, tabId: string, gone: () => Promise<Refusal> | Refusal): Promise<T> {
    let tab: T;
    try {
      tab = await this.browsers.hostFor(caller).findTab(tabId);
    } catch (e) {
      if (e instanceof Refusal && e.code === 'target_not_found') throw await gone();
      throw e;
    }
    if (!(await this.mayUse(tab, caller))) throw await this.tabNotFound(caller, tabId);
    await this.claim(tab, caller);
    return tab;
  }

  private async claim(tab: T, caller: Caller): Promise<void> {
    if (!this.tabOwners.has(tab.id) && !this.browser.isShared(tab.id)) this.tabOwners.set(tab.id, caller.connectionId);
    await this.guard(tab);
  }

  /** A new tab, owned by this call's connection and guarded from its first moment (before it loads anything). */
  async openTab(caller: Caller): Promise<T> {
    const tab = await this.browsers.hostFor(caller).newTab();
    await this.claim(tab, caller);
    return tab;
  }

  /**
   * Navigates a tab of this caller's (page navigate, new_tab's URL) inside its driver's side-effect window:
   * a response that is a file is the navigation's download, counted against the caller's session's quota.
   */
  navigateTab(caller: Caller, tab: TabHandle, url: string): Promise<SideEffect[]> {
    return this.browsers.driverFor(caller).navigate(tab, downloadOwner(caller), url);
  }

  /** The operator's input to a tab (the Control UI's browser panel): in the tab's line, after the action in flight. */
  operatorInput<R>(tabId: string, work: () => Promise<R>): Promise<R> {
    return this.actionQueue.operatorInput(queueKey({ kind: 'tab', key: tabId }), work);
  }

  /** The operator gives a tab to a session's connection (gateway method tabs.assign). */
  assignTab(tabId: string, connectionId: string): void {
    this.tabOwners.set(tabId, connectionId);
  }

  /**
   * The operator's lookups (the gateway: browser panel, operator input, tabs.assign) go through here, beside
   * the ownership they must agree with. The operator is who gives tabs out, so it finds any open tab by id,
   * whoever owns it; listing never launches a browser.
   */
  operatorTab(tabId: string): Promise<T> {
    return this.browser.findTab(tabId);
  }

  /** Every open tab, for the operator (none while no browser runs: listing never launches one). */
  async operatorTabs(): Promise<T[]> {
    return this.browser.running ? this.browser.tabs_() : [];
  }

  /**
   * A session's tabs as the operator's tab strip shows them: the ones it drove (and its current one) that no
   * other connection owns now; a tab the operator gave to another session (tabs.assign) leaves this strip.
   */
  async sessionTabs(session: Session): Promise<T[]> {
    const drove = (await this.operatorTabs()).filter((t) => session.tabs.has(t.id) || session.currentTabId === t.id);
    const owners = await Promise.all(drove.map((t) => this.ownerOf(t)));
    return drove.filter((_, i) => owners[i] === undefined || owners[i] === session.connectionId);
  }

  /** The tab a call without a target acts on: the session's current tab, else its own, else the operator's first, else a new one. */
  async currentTab(caller: Caller): Promise<T> {
    const tabs = await this.tabsFor(caller);
    const current =
      tabs.find((t) => t.id === caller.session?.currentTabId) ??
      tabs.find((t) => this.tabOwners.get(t.id) === caller.connectionId) ??
      tabs[0] ??
      (await this.openTab(caller));
    await this.claim(current, caller);
    this.setCurrentTab(caller, current.id);
    return current;
  }

  setCurrentTab(caller: Caller, tabId: string | undefined): void {
    if (!caller.session || caller.session.currentTabId === tabId) return;
    caller.session.currentTabId = tabId;
    if (tabId) caller.session.tabs.add(tabId);
    this.options.onCurrentTabChanged(); // the operator's view follows the session to its new tab
  }

  /** A screenshot of the session's current tab (for its recording), if a browser is already running. */
  async screenshotOfCurrentTab(caller: Caller): Promise<string | null> {
    if (!this.browser.running) return null;
    try {
      return (await (await this.currentTab(caller)).screenshot()).data;
    } catch {
      return null;
    }
  }

  /** A small JPEG of a tab for the operators' action log; null when no browser runs. */
  async thumbnail(tabId: string): Promise<string | null> {
    if (!this.browser.running) return null;
    return this.browser.thumbnailOf(await this.browser.findTab(tabId));
  }

  /**
   * Closes a tab this call found, with what the router keeps of it: its snapshots' tokens go stale, and it
   * is no longer the session's current tab (its owner entry goes when the browser reports it closed).
   */
  async closeTab(caller: Caller, tab: TabHandle): Promise<void> {
    await this.browser.closeTab(tab);
    this.snapshots.forget('tab', tab.id);
    if (caller.session?.currentTabId === tab.id) this.setCurrentTab(caller, undefined);
  }

  /**
   * A type_text for a native element, as its request arrives: starts the reads its insertion will need (the
   * field's states, text and caret), so that they overlap with the checking of the call. Only that call can
   * use them (see NativeHost.prefetchField).
   */
  prefetchNativeField(found: ResolvedToken): void {
    if (found.kind !== 'tab') this.native?.host.prefetchField(found.element.ref);
  }

  /** A token of this call: as the call's pipeline resolved it when still current, else resolved (or refused) now. */
  private tokenOf(token: string, caller: Caller): ResolvedToken {
    const early = caller.tokens?.get(token);
    return early && this.snapshots.isCurrent(early) ? early : this.snapshots.resolve(token);
  }

  /**
   * Turns a call's targeting arguments into one resolved target and the driver for its route.
   * Mixing two ways of naming a target is refused; tokens are checked for staleness here.
   */
  async resolve(
    args: TargetArgs,
    caller: Caller,
    options: { needsTarget?: boolean } = {},
  ): Promise<{ target: ResolvedTarget; driver: Driver }> {
    const { target, driver } = await this.route(args, caller, options);
    // What a tab action causes (downloads) counts against its session's quota.
    if (target.kind === 'tab') target.owner = downloadOwner(caller);
    // Every action path passes here: its actions on one target run one at a time (routing/queue.ts).
    return { target, driver: queuedDriver(this.actionQueue, driver, target, caller.onQueued, caller.signal) };
  }

  private async route(
    args: TargetArgs,
    caller: Caller,
    options: { needsTarget?: boolean },
  ): Promise<{ target: ResolvedTarget; driver: Driver }> {
    checkTargetShape(args);
    const point = args.x !== undefined ? { x: args.x, y: args.y! } : undefined;
    const deliveryMode = args.delivery_mode ?? 'background';
    // A tab target carries the tab just found: the driver acts on it without looking it up again.
    const onTab = (tab: T, element?: TabTarget['element']) => {
      this.policy.checkUrl(this.browser.urlOf(tab));
      this.setCurrentTab(caller, tab.id);
      const target: TabTarget = {
        kind: 'tab',
        key: tab.id,
        tab,
        ...(element ? { element } : { point }),
        deliveryMode,
        cursor: this.options.cursorFor(caller.session),
      };
      return { target, driver: this.browsers.driverFor(caller) };
    };

    if (args.element_token !== undefined) {
      const found = this.tokenOf(args.element_token, caller);
      const element = { snapshotId: found.snapshotId, index: found.index, ref: found.element.ref };
      if (found.kind === 'desktop')
        return { target: { kind: 'desktop', key: found.key, element, deliveryMode }, driver: await this.nativeRoute() };
      if (found.kind === 'window') {
        const target = { kind: 'window' as const, key: found.key, element, deliveryMode, ...windowOfKey(found.key) };
        return { target, driver: await this.nativeRoute() };
      }
      const tab = await this.ownTab(caller, found.key, () => {
        this.snapshots.forget('tab', found.key);
        return new Refusal(
          'target_not_found',
          `the tab of this element_token (${found.key}) is closed; call page list_tabs and get_window_state`,
        );
      });
      return onTab(tab, element);
    }
    const t = args.target;
    if (t?.kind === 'tab') return onTab(await this.tabFor(caller, t.tab_id));
    if (t?.kind === 'desktop' || args.scope === 'desktop')
      return { target: { kind: 'desktop', key: 'primary', point, deliveryMode }, driver: await this.nativeRoute() };
    if (t?.kind === 'window' || args.pid !== undefined || args.window_id !== undefined) {
      const native = await this.nativeRoute(); // a window is an X11 window: none without the native route
      const { pid, windowId, found } = await this.windowOf(
        t?.kind === 'window' ? t.pid : args.pid,
        t?.kind === 'window' ? t.window_id : args.window_id,
      );
      // A window of the browser Verity drives goes to the CDP route: its active tab, verified DOM effects.
      const tab = await this.tabOfWindow(pid, windowId, caller, found?.title);
      if (tab) return onTab(tab);
      // The window found travels with the target (like a tab): the native route does not look it up again.
      const target: WindowTarget = {
        kind: 'window',
        key: `${pid}:${windowId}`,
        point,
        deliveryMode,
        pid: pid || undefined,
        windowId,
        ...(found ? { window: found } : {}),
      };
      return { target, driver: native };
    }
    void options;
    const tab = await this.currentTab(caller);
    return onTab(tab);
  }

  /** Whether a browser is driven now (launched and running, or attached). */
  get browserInUse(): boolean {
    return this.browser.running || this.browser.attached;
  }

  /** The pid of the browser Verity launched, if it did. */
  get launchedBrowserPid(): number | null {
    return this.browser.launchedPid ?? null;
  }

  /** The driven browser's product and version (attaching or launching it when needed). */
  async browserVersion(): Promise<string> {
    return this.browser.version();
  }

  /** The pid of the browser driven over CDP: the launched one, or (attached) the one CDP reports. */
  private attachedPid: number | null = null;
  async drivenBrowserPid(): Promise<number | null> {
    if (this.browser.launchedPid) return this.browser.running ? this.browser.launchedPid : null;
    if (!this.browser.attached) return null;
    if (this.attachedPid) return this.attachedPid;
    this.attachedPid = await this.browser.processPid();
    return this.attachedPid;
  }

  /**
   * A window target's pid and window id; either may be left out when the other names one window. Looked up
   * (the host's windows) only then, and the window found is handed on with the target.
   */
  private async windowOf(
    pid: number | undefined,
    windowId: number | undefined,
  ): Promise<{ pid: number; windowId: number; found?: NativeWindow }> {
    if (windowId !== undefined && pid !== undefined) return { pid, windowId };
    const windows = await (await this.nativeRoute()).host.windows();
    const found = windows.find(
      (w) => (windowId === undefined || w.id === windowId) && (pid === undefined || w.pid === pid),
    );
    if (!found)
      throw new Refusal(
        'target_not_found',
        `no window ${windowId ?? ''}${pid !== undefined ? ` of pid ${pid}` : ''}; call list_windows`,
      );
    return { pid: found.pid ?? 0, windowId: found.id, found };
  }

  /** Whether a process belongs to the browser driven over CDP (the browser or one of its children). */
  belongsToDrivenBrowser(pid: number | null | undefined, browserPid: number | null): boolean {
    return !!pid && !!browserPid && !!this.native?.host.isDescendant(pid, browserPid);
  }

  /** The active tab of an X11 window of the driven browser (null when the window is not the driven browser's). */
  private async tabOfWindow(pid: number, windowId: number, caller: Caller, knownTitle?: string): Promise<T | null> {
    const browserPid = await this.drivenBrowserPid().catch(() => null);
    if (!this.belongsToDrivenBrowser(pid, browserPid)) return null;
    const winTitle = knownTitle ?? (await this.native!.host.windowTitle(windowId));
    const tabs = await this.tabsFor(caller); // another connection's tabs are not this session's to drive
    const facts = await Promise.all(
      tabs.map(async (tab) => ({
        tab,
        title: await tab.title().catch(() => ''),
        visible: await this.browser.isVisible(tab),
      })),
    );
    const titled = (f: (typeof facts)[number]) => !!f.title && winTitle.startsWith(f.title);
    const pick =
      facts.find((f) => f.visible && titled(f)) ?? facts.find(titled) ?? facts.find((f) => f.visible) ?? facts[0];
    if (!pick)
      throw new Refusal(
        'target_not_found',
        `window ${windowId} belongs to the driven browser but it has no tab this session may drive`,
      );
    await this.claim(pick.tab, caller);
    return pick.tab;
  }

  /** Ends what the routes hold: the browser (a launched one is closed) and the native route's connections. */
  async close(): Promise<void> {
    await this.browsers.closeAll();
    await this.browser.close();
    this.native?.host.close();
  }
}

/** A window's pid and id from the key its snapshots are kept under (`${pid}:${windowId}`; pid 0: not known). */
function windowOfKey(key: string): { pid: number | undefined; windowId: number } {
  const [pid, windowId] = key.split(':').map(Number);
  return { pid: pid || undefined, windowId };
}

/** Whose quota what a tab action causes (downloads) counts against: the caller's session, else its connection. */
function downloadOwner(caller: Caller): string {
  return caller.session ? sessionKeyOf(caller.session.connectionId, caller.session.label) : caller.connectionId;
}
