// The core every front door (stdio MCP, HTTP MCP, later the gateway) shares: the browser host, the
// drivers, the element tokens, and target resolution (which route an action takes).
import { BrowserHost, type BrowserOptions } from './cdp/browser.js';
import { CdpDriver } from './cdp/driver.js';
import type { Driver, ResolvedTarget } from './routing/driver.js';
import { Refusal } from './routing/refusal.js';
import { SnapshotRegistry } from './routing/snapshots.js';
import type { Tab } from './cdp/tab.js';
import { Policy } from './policy.js';
import { SessionManager, type Session } from './sessions/manager.js';
import { effectiveMotion, glideDuration, type MotionInput } from './sessions/cursor-config.js';
import { flushCursors, hideCursor } from './cdp/cursor-overlay.js';
import type { CursorSettings } from './routing/driver.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir } from './token.js';
import { queuedDriver, TargetQueue, type WaitHook } from './routing/queue.js';
// The native route (server/native) is imported on its first use, and only where it can run: see nativeRoute().
import type { NativeDriver, NativeTarget } from './native/driver.js';
import type { AccRef } from './native/atspi.js';
import { Activity } from './activity.js';
import { Approvals } from './approvals.js';
import type { Reply } from './tools/define.js';
import { guardRequests } from './cdp/guard.js';
import { Brake } from './sessions/brake.js';
import { AuditStore } from './audit/store.js';
import { labelledSummary, noteApprovalRequested, noteApprovalResolved } from './audit/trail.js';

/** Per-call state handed to every tool: the connection, and the session the call was admitted to. */
export interface CallContext {
  connectionId: string;
  session?: Session;
  /** The Control UI connection this MCP session is bound to (captured when its link was accepted). */
  uiTarget?: { connId: string; caps: string[] };
  /** Reports how the call is getting on (MCP notifications/progress), when the client asked for it. */
  progress?: (message: string) => void;
  /** How the client reached us, for the operator's session list. */
  transport?: 'stdio' | 'http';
  /** Runs one tool call through the full admission path (run_actions uses it for its steps). */
  runStep?: (tool: import('./tools/define.js').ToolDef, args: Record<string, unknown>) => Promise<{ structured: any; isError: boolean; images?: unknown[] }>;
  /** Told when an action waits for earlier ones on its target (e.g. to send an MCP progress notification). */
  onQueued?: WaitHook;
  /** Fires when the operator stops the agent or ends the session (sessions/brake.ts): waits give up. */
  signal?: AbortSignal;
}

export interface TargetArgs {
  element_token?: string;
  target?: { kind: 'tab'; tab_id: string } | { kind: 'window'; pid: number; window_id: number } | { kind: 'desktop'; display_id?: 'primary' };
  pid?: number;
  window_id?: number;
  scope?: 'window' | 'desktop';
  x?: number;
  y?: number;
  delivery_mode?: 'background' | 'foreground';
}

export interface VerityOptions extends BrowserOptions {
  allowJavascript?: boolean;
  policy?: Policy;
  sessionIdleMs?: number;
  onSessionEnd?: (session: Session, reason: string, hook: string) => void;
  /** The agent cursor in driven tabs (default on; VERITY_CURSOR=off turns it off). */
  cursor?: boolean;
  /** Which tool definitions tools/list sends: the lean default, or `full` (--tools full, VERITY_TOOLS). */
  tools?: 'default' | 'full';
  /** URL schemes beyond http, https, data and about:blank that agents may open (--allow-url-schemes). */
  allowUrlSchemes?: string[];
  /** Folders set_input_files may read from (--upload-root); none = uploads refused. */
  uploadRoots?: string[];
}

function loadSavedCursorMotion(): MotionInput | undefined {
  const file = join(configDir(), 'config.json');
  if (!existsSync(file)) return undefined;
  try { return JSON.parse(readFileSync(file, 'utf8'))?.cursor?.motion; } catch { return undefined; }
}

/**
 * The checks on how a call names its target that need no browser (run_actions runs them for every step
 * before the first): one way only, and both x and y for the px form.
 */
export function checkTargetShape(args: TargetArgs): void {
  const named = [
    args.element_token !== undefined && 'element_token',
    args.target !== undefined && 'target',
    (args.pid !== undefined || args.window_id !== undefined) && 'pid/window_id',
    args.scope === 'desktop' && 'scope',
  ].filter(Boolean) as string[];
  if (named.length > 1) throw new Refusal('conflicting_target', `name the target one way only; got ${named.join(' and ')}`, { fields: named });
  if ((args.x === undefined) !== (args.y === undefined)) throw new Refusal('invalid_arguments', `${args.x === undefined ? 'x' : 'y'}: the px form needs both x and y`);
  if (args.element_token !== undefined && args.x !== undefined) throw new Refusal('conflicting_target', 'pass element_token or x,y, not both');
}

/**
 * Why the native route cannot run here, or null when it may: it needs Linux with an X display (and, found
 * on its first call, a session D-Bus with AT-SPI). Nothing of it is loaded while this says no.
 */
export function nativeUnavailable(platform: string = process.platform, env: NodeJS.ProcessEnv = process.env): string | null {
  if (platform !== 'linux') return `the native route needs Linux with X11 and AT-SPI; this is ${platform} (the browser route works here)`;
  if (!env.DISPLAY) return `the native route needs an X display: DISPLAY is not set (start Xvfb or run inside an X session${env.WAYLAND_DISPLAY ? '; a Wayland session needs XWayland' : ''})`;
  return null;
}

export class Verity {
  readonly browser: BrowserHost;
  readonly cdp: CdpDriver;
  /** The native route's driver and its X11 helpers, once nativeRoute() loaded them. */
  private native: NativeDriver | null = null;
  private x11: typeof import('./native/x11.js') | null = null;
  private nativeLoading: Promise<NativeDriver> | null = null;
  readonly snapshots = new SnapshotRegistry();
  readonly sessions: SessionManager;
  readonly policy: Policy;
  /** cursor.motion.* from <config dir>/config.json: the saved default under every session's settings. */
  readonly savedCursorMotion: MotionInput | undefined = loadSavedCursorMotion();
  readonly systemReducedMotion = process.env.VERITY_REDUCED_MOTION === '1';
  readonly activity = new Activity();
  readonly approvals = new Approvals();
  /** The operator's brake on each agent (stop, pause, resume): sessions/brake.ts. */
  readonly brake = new Brake();
  /** Every call, approval, brake and operator input: durable under the gateway (audit/store.ts), in memory otherwise. */
  audit: AuditStore = new AuditStore(null);
  /** Set by the gateway: delivers a ui.command to one Control UI connection; false when it is gone. */
  uiRouter?: (connId: string, command: Record<string, unknown>) => boolean;
  /** MCP connections, for the operator's session list. */
  readonly connections = new Map<string, { transport: string; client: string; since: string }>();

  constructor(readonly options: VerityOptions) {
    this.browser = new BrowserHost(options);
    this.cdp = new CdpDriver(this.browser);
    this.policy = options.policy ?? new Policy();
    // An owner entry lives as long as its tab: the map is bounded by the tabs open now.
    this.browser.closedListeners.add((tabId) => this.tabOwners.delete(tabId));
    this.policy.allowSchemes([...(options.allowUrlSchemes ?? []), ...(options.allowJavascript ? ['javascript'] : [])]);
    this.approvals.on('requested', (request) => noteApprovalRequested(this.audit, request));
    this.approvals.on('resolved', (outcome) => noteApprovalResolved(this.audit, outcome));
    this.sessions = new SessionManager({ idleMs: options.sessionIdleMs ?? 5 * 60_000, onEnd: options.onSessionEnd, onChange: () => this.activity.emit('sessions') });
    // Cleanup every session needs: its cursor leaves the tab it drove.
    this.sessions.addGlobalHook('cursor', async (session) => {
      session.cursor.visible = false;
      if (!this.browser.running) return;
      for (const tabId of session.tabs) {
        const tab = await this.browser.findTab(tabId).catch(() => null);
        if (tab) await hideCursor(tab);
      }
    });
  }

  /** The native route's driver, imported on the first native call; refused `unavailable` where it cannot run. */
  async nativeRoute(): Promise<NativeDriver> {
    if (this.native) return this.native;
    const missing = nativeUnavailable();
    if (missing) throw new Refusal('unavailable', missing);
    this.nativeLoading ??= Promise.all([import('./native/driver.js'), import('./native/x11.js')]).then(([{ NativeDriver }, x11]) => {
      this.x11 = x11;
      return (this.native = new NativeDriver({ drivenBrowserPid: () => this.drivenBrowserPid() }));
    });
    return this.nativeLoading;
  }

  /** After an action's result is in: visual aids that waited for it (the agent cursor's glide). */
  afterAction(): void {
    flushCursors();
  }

  /** Tells the operators' action log about a call, then (if anyone watches) adds a thumbnail. */
  noteAction(ctx: CallContext, tool: string, args: Record<string, unknown>, reply: Reply, extra: { labels?: Record<string, string>; approval?: { id: string; by?: string } } = {}): void {
    const structured = reply.structured as { effect?: string; evidence?: unknown[]; refusal?: { code: string; message: string } };
    const entry = this.activity.record({
      sessionKey: ctx.session ? this.sessions.keyOf(ctx.session) : ctx.connectionId, tool, summary: labelledSummary(args, extra.labels),
      ...(extra.labels ? { labels: extra.labels } : {}), ...(extra.approval ? { approval: extra.approval } : {}),
      effect: structured.effect ?? null, refusal: structured.refusal ? `${structured.refusal.code}: ${structured.refusal.message}` : null,
      evidence: (structured.evidence ?? []).slice(0, 4), isError: !!reply.isError,
    });
    if (!this.activity.watched || !this.browser.running || !ctx.session?.currentTabId) return;
    void this.browser.findTab(ctx.session.currentTabId)
      .then((tab) => tab.session.send('Page.captureScreenshot', { format: 'jpeg', quality: 40, clip: undefined, optimizeForSpeed: true }))
      .then(({ data }) => this.activity.attachThumbnail(entry, data))
      .catch(() => { /* a thumbnail is a courtesy */ });
  }

  /** The session's effective cursor motion, as the driver needs it. */
  cursorFor(session: Session | undefined): CursorSettings | undefined {
    if (!session || this.options.cursor === false) return undefined;
    const motion = effectiveMotion({ saved: this.savedCursorMotion, start: session.cursor.start, set: session.cursor.set }, session.cursor.theme, this.systemReducedMotion);
    session.cursor.visible = true;
    return { ...motion, durationFor: (distance: number) => glideDuration(motion, distance) };
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
  private readonly openers = new WeakMap<Tab, string | null>();

  private async ownerOf(tab: Tab, depth = 0): Promise<string | undefined> {
    const owner = this.tabOwners.get(tab.id);
    if (owner !== undefined || depth > 3) return owner;
    let openerId = this.openers.get(tab);
    if (openerId === undefined) {
      openerId = await tab.session.send('Target.getTargetInfo').then(({ targetInfo }) => targetInfo.openerId ?? null, () => null);
      this.openers.set(tab, openerId);
    }
    if (!openerId) return undefined;
    const opener = await this.browser.findTab(openerId).catch(() => null);
    const inherited = opener ? await this.ownerOf(opener, depth + 1) : this.tabOwners.get(openerId);
    if (inherited !== undefined) this.tabOwners.set(tab.id, inherited);
    return inherited;
  }

  private async mayUse(tab: Tab, ctx: CallContext): Promise<boolean> {
    // A tab on the gateway's own origin (an operator's Control UI in an attached browser) does not exist for agents.
    if (this.policy.isGateway(tab.page.url())) return false;
    const owner = await this.ownerOf(tab);
    return owner === undefined || owner === ctx.connectionId;
  }

  /**
   * The browser-level request guard, installed on a tab the first time a session drives it (not on every tab
   * Verity merely lists: an operator's own tabs in an attached browser keep loading what they like).
   */
  private readonly guarded = new WeakMap<Tab, Promise<void>>();
  private guard(tab: Tab): Promise<void> {
    let done = this.guarded.get(tab);
    if (!done) { done = guardRequests(tab, this.policy).catch(() => {}); this.guarded.set(tab, done); }
    return done;
  }

  /** The tabs this call's connection may see: its own and the operator's unclaimed ones. */
  async tabsFor(ctx: CallContext): Promise<Tab[]> {
    const tabs = await this.browser.tabs_();
    const usable = await Promise.all(tabs.map((t) => this.mayUse(t, ctx)));
    return tabs.filter((_, i) => usable[i]);
  }

  /** A tab by id for this call: refused as not found when it is another connection's; claimed when unowned. */
  async tabFor(ctx: CallContext, tabId: string): Promise<Tab> {
    const notFound = async () => new Refusal('target_not_found', `no tab with tab_id ${tabId}; call page {action:"list_tabs"} for the open tabs`,
      { tab_ids: (await this.tabsFor(ctx).catch(() => [])).map((t) => t.id) });
    let tab: Tab;
    try { tab = await this.browser.findTab(tabId); } catch (e) {
      if (e instanceof Refusal && e.code === 'target_not_found') throw await notFound();
      throw e;
    }
    if (!(await this.mayUse(tab, ctx))) throw await notFound();
    await this.claim(tab, ctx);
    return tab;
  }

  private async claim(tab: Tab, ctx: CallContext): Promise<void> {
    if (!this.tabOwners.has(tab.id) && !this.browser.isShared(tab.id)) this.tabOwners.set(tab.id, ctx.connectionId);
    await this.guard(tab);
  }

  /** A new tab, owned by this call's connection and guarded from its first moment (before it loads anything). */
  async openTab(ctx: CallContext): Promise<Tab> {
    const tab = await this.browser.newTab();
    await this.claim(tab, ctx);
    return tab;
  }

  /** The operator gives a tab to a session's connection (gateway method tabs.assign). */
  assignTab(tabId: string, connectionId: string): void { this.tabOwners.set(tabId, connectionId); }

  /** The tab a call without a target acts on: the session's current tab, else its own, else the operator's first, else a new one. */
  async currentTab(ctx: CallContext): Promise<Tab> {
    const tabs = await this.tabsFor(ctx);
    const current = tabs.find((t) => t.id === ctx.session?.currentTabId) ?? tabs.find((t) => this.tabOwners.get(t.id) === ctx.connectionId)
      ?? tabs[0] ?? await this.openTab(ctx);
    await this.claim(current, ctx);
    this.setCurrentTab(ctx, current.id);
    return current;
  }

  setCurrentTab(ctx: CallContext, tabId: string | undefined): void {
    if (!ctx.session || ctx.session.currentTabId === tabId) return;
    ctx.session.currentTabId = tabId;
    if (tabId) ctx.session.tabs.add(tabId);
    this.activity.emit('sessions'); // the operator's view follows the session to its new tab
  }

  /** A screenshot of the session's current tab for its recording, if a browser is already running. */
  async recordingShot(ctx: CallContext): Promise<string | null> {
    if (!ctx.session?.recordingDir || !this.browser.running) return null;
    try { return (await (await this.currentTab(ctx)).screenshot()).data; } catch { return null; }
  }

  /**
   * A request as it arrives, before the SDK and the call path have checked it: a type_text for a native
   * element starts the reads its insertion will need (the field's states, text and caret), so that they
   * overlap with that checking. Only that call can use them (see NativeHost.prefetchField); anything
   * unexpected here just means no head start.
   */
  anticipate(request: { method: string; params?: Record<string, unknown> }): void {
    if (request.method !== 'tools/call' || request.params?.name !== 'type_text') return;
    const token = (request.params.arguments as { element_token?: unknown } | undefined)?.element_token;
    if (typeof token !== 'string') return;
    try {
      const found = this.snapshots.resolve(token);
      if (found.kind !== 'tab') this.native?.host.prefetchField(found.element.ref as AccRef);
    } catch { /* a stale or invalid token is refused by the call itself */ }
  }

  /**
   * Turns a call's targeting arguments into one resolved target and the driver for its route.
   * Mixing two ways of naming a target is refused; tokens are checked for staleness here.
   */
  async resolve(args: TargetArgs, ctx: CallContext, options: { needsTarget?: boolean } = {}): Promise<{ target: ResolvedTarget; driver: Driver }> {
    const { target, driver } = await this.route(args, ctx, options);
    // Every action path passes here: its actions on one target run one at a time (routing/queue.ts).
    return { target, driver: queuedDriver(this.actionQueue, driver, target, ctx.onQueued, ctx.signal) };
  }

  readonly actionQueue = new TargetQueue();

  private async route(args: TargetArgs, ctx: CallContext, options: { needsTarget?: boolean }): Promise<{ target: ResolvedTarget; driver: Driver }> {
    checkTargetShape(args);
    const point = args.x !== undefined ? { x: args.x, y: args.y! } : undefined;

    const deliveryMode = args.delivery_mode ?? 'background';
    if (args.element_token !== undefined) {
      const found = this.snapshots.resolve(args.element_token);
      const element = { snapshotId: found.snapshotId, index: found.index, ref: found.element.ref };
      if (found.kind !== 'tab') {
        const target: NativeTarget = { kind: found.kind, key: found.key, element, deliveryMode };
        return { target, driver: await this.nativeRoute() };
      }
      const tab = await this.checkTabOpen(found.key, ctx);
      this.policy.checkUrl(tab.page.url());
      this.setCurrentTab(ctx, found.key);
      return { target: { kind: 'tab', key: found.key, element, cursor: this.cursorFor(ctx.session) }, driver: this.cdp };
    }
    const t = args.target;
    if (t?.kind === 'tab') {
      const tab = await this.tabFor(ctx, t.tab_id);
      this.policy.checkUrl(tab.page.url());
      this.setCurrentTab(ctx, t.tab_id);
      return { target: { kind: 'tab', key: t.tab_id, point, cursor: this.cursorFor(ctx.session) }, driver: this.cdp };
    }
    if (t?.kind === 'desktop' || args.scope === 'desktop') {
      const target: NativeTarget = { kind: 'desktop', key: 'primary', point, deliveryMode };
      return { target, driver: await this.nativeRoute() };
    }
    if (t?.kind === 'window' || args.pid !== undefined || args.window_id !== undefined) {
      const native = await this.nativeRoute(); // a window is an X11 window: none without the native route
      const { pid, windowId } = await this.windowOf(t?.kind === 'window' ? t.pid : args.pid, t?.kind === 'window' ? t.window_id : args.window_id);
      // A window of the browser Verity drives goes to the CDP route: its active tab, verified DOM effects.
      const tab = await this.tabOfWindow(pid, windowId, ctx);
      if (tab) {
        this.policy.checkUrl(tab.page.url());
        this.setCurrentTab(ctx, tab.id);
        return { target: { kind: 'tab', key: tab.id, point, cursor: this.cursorFor(ctx.session) }, driver: this.cdp };
      }
      const target: NativeTarget = { kind: 'window', key: `${pid}:${windowId}`, point, deliveryMode };
      return { target, driver: native };
    }
    void options;
    const tab = await this.currentTab(ctx);
    this.policy.checkUrl(tab.page.url());
    return { target: { kind: 'tab', key: tab.id, point, cursor: this.cursorFor(ctx.session) }, driver: this.cdp };
  }

  /** The pid of the browser driven over CDP: the launched one, or (attached) the one CDP reports. */
  private attachedPid: number | null = null;
  async drivenBrowserPid(): Promise<number | null> {
    if (this.browser.launchedPid) return this.browser.running ? this.browser.launchedPid : null;
    if (!this.browser.attached) return null;
    if (this.attachedPid) return this.attachedPid;
    const browser = await this.browser.get().catch(() => null);
    if (!browser) return null;
    const session = await browser.target().createCDPSession();
    try {
      const info = await session.send('SystemInfo.getProcessInfo') as { processInfo: Array<{ type: string; id: number }> };
      this.attachedPid = info.processInfo.find((p) => p.type === 'browser')?.id ?? null;
    } catch { /* older browsers: no process info */ } finally { await session.detach().catch(() => undefined); }
    return this.attachedPid;
  }

  /** A window target's pid and window id; either may be left out when the other names one window. */
  private async windowOf(pid: number | undefined, windowId: number | undefined): Promise<{ pid: number; windowId: number }> {
    if (windowId !== undefined && pid !== undefined) return { pid, windowId };
    const windows = await (await this.nativeRoute()).host.windows();
    const found = windows.find((w) => (windowId === undefined || w.id === windowId) && (pid === undefined || w.pid === pid));
    if (!found) throw new Refusal('target_not_found', `no window ${windowId ?? ''}${pid !== undefined ? ` of pid ${pid}` : ''}; call list_windows`);
    return { pid: found.pid ?? 0, windowId: found.id };
  }

  /** Whether a process belongs to the browser driven over CDP (the browser or one of its children). */
  belongsToDrivenBrowser(pid: number | null | undefined, browserPid: number | null): boolean {
    return !!pid && !!browserPid && !!this.x11?.descendsFrom(pid, browserPid);
  }

  /** The active tab of an X11 window of the driven browser (null when the window is not the driven browser's). */
  async tabOfWindow(pid: number, windowId: number, ctx: CallContext): Promise<Tab | null> {
    const browserPid = await this.drivenBrowserPid().catch(() => null);
    if (!this.belongsToDrivenBrowser(pid, browserPid)) return null;
    const win = await this.x11!.describeWindow(windowId);
    const tabs = await this.tabsFor(ctx); // another connection's tabs are not this session's to drive
    const facts = await Promise.all(tabs.map(async (tab) => ({
      tab,
      title: await tab.title().catch(() => ''),
      visible: await tab.page.evaluate('document.visibilityState').then((v) => v === 'visible').catch(() => false),
    })));
    const titled = (f: (typeof facts)[number]) => !!f.title && win.title.startsWith(f.title);
    const pick = facts.find((f) => f.visible && titled(f)) ?? facts.find(titled) ?? facts.find((f) => f.visible) ?? facts[0];
    if (!pick) throw new Refusal('target_not_found', `window ${windowId} belongs to the driven browser but it has no tab this session may drive`);
    await this.claim(pick.tab, ctx);
    return pick.tab;
  }

  private async checkTabOpen(tabId: string, ctx: CallContext): Promise<Tab> {
    const exists = await this.browser.findTab(tabId).then(() => true, (e) => { if (e instanceof Refusal && e.code === 'target_not_found') return false; throw e; });
    if (!exists) {
      this.snapshots.forget('tab', tabId);
      throw new Refusal('target_not_found', `the tab of this element_token (${tabId}) is closed; call page list_tabs and get_window_state`);
    }
    // Another connection's tab: refused like a tab that does not exist (its snapshots stay its owner's).
    return this.tabFor(ctx, tabId);
  }

  async close(): Promise<void> {
    await this.sessions.shutdown();
    this.audit.close();
    await this.browser.close();
    this.native?.host.close();
  }
}
