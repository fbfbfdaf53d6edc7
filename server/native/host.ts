// The native route's view of the desktop: one AT-SPI connection (made on first use, remade when the bus
// dropped), X11 windows matched to their AT-SPI frames, and which windows belong to the browser Verity
// drives over CDP.
import type { AppFacts } from '../policy.js';
import { Refusal } from '../routing/refusal.js';
import { Atspi, type AccRef, type CacheItem } from './atspi.js';
import { closeXServer, requireDisplay, sessionBusAddress } from './env.js';
import { ROLE, STATE, TOP_LEVEL_ROLES, has } from './roles.js';
import {
  activeWindow,
  describeWindow,
  descendsFrom,
  listWindows,
  processFacts,
  processName,
  topWindowAt,
  windowGone,
  type XWindow,
} from './x11.js';

export interface NativeHostOptions {
  /** The pid of the browser Verity drives over CDP (launched or attached), or null when there is none. */
  drivenBrowserPid(): Promise<number | null>;
  /**
   * Why the operator's policy keeps agents off an app (null: they may drive it); absent: no app policy.
   * Asked wherever this host lists windows and apps or finds a target, so every native call passes it.
   */
  appRefusal?(app: AppFacts): string | null;
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

/** A window as the native route acts on it: X11 facts plus its AT-SPI frame, when the app exposes one. */
export interface WindowInfo extends XWindow {
  frame: AccRef | null;
  app: { bus: string; name: string } | null;
  /** Owned by the browser Verity drives over CDP. */
  driven: boolean;
  /** A browser or Electron app (web content there is never confirmed natively). */
  browserLike: boolean;
}

const BROWSER_NAMES = /chrom|electron|firefox|brave|msedge|opera|vivaldi|code|slack|discord|teams|signal|obsidian/i;

export class NativeHost {
  private client: Promise<Atspi> | null = null;
  /** The same client once connected, for the calls that find it ready. */
  private connected: Atspi | null = null;
  /** X11 window id → its AT-SPI frame, kept while the frame is still shown by the same process. */
  private readonly frames = new Map<
    number,
    { pid: number | null; frame: AccRef; app: { bus: string; name: string } }
  >();
  /** Reads started for one field as its type_text call arrived (prefetchField), until that call takes them. */
  private early: { ref: AccRef; reads: FieldReads } | null = null;

  constructor(readonly options: NativeHostOptions) {}

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
    await requireDisplay();
    sessionBusAddress();
    if (this.connected?.connected) return this.connected;
    if (this.client) {
      const existing = await this.client.catch(() => null);
      if (existing?.connected) return existing;
      this.client = null;
    }
    const connecting = Atspi.connect();
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
    closeXServer();
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

  /** An X11 window's title (the router matches it to the driven browser's tab titles). */
  async windowTitle(windowId: number): Promise<string> {
    return (await describeWindow(windowId)).title;
  }

  /** Whether an app policy is in force (the desktop's view says some windows may be left out). */
  get filtersApps(): boolean {
    return !!this.options.appRefusal;
  }

  /** The windows agents may see: those of apps the policy refuses are left out, as if they were not there. */
  async windows(): Promise<WindowInfo[]> {
    const windows = await listWindows();
    const atspi = await this.atspi().catch(() => null);
    const apps = atspi ? await atspi.apps().catch(() => []) : [];
    const admitted = await Promise.all(windows.map(async (w) => ((await this.refusalOf(w, apps)) ? null : w)));
    return Promise.all(admitted.filter((w): w is XWindow => !!w).map((w) => this.enrich(w, apps, atspi)));
  }

  /**
   * The policy's word on the app behind a window (null: agents may drive it). The one app check of the
   * native route: listing, finding a target, and where a point or the keyboard focus lands all ask it.
   * The browser Verity drives is the origin policy's (its windows route to their tabs), so only the
   * Control UI rule applies to it.
   */
  private async refusalOf(w: XWindow, apps: Array<{ name: string; pid: number | null }>): Promise<string | null> {
    const rule = this.options.appRefusal;
    if (!rule) return null;
    return rule(await this.factsOf(w.pid, w.pid !== null ? namesOf(w.pid, apps) : [], w));
  }

  /** What the policy is told of a process: /proc's facts, its AT-SPI names, and its window when asked about one. */
  private async factsOf(pid: number | null, names: string[], w?: XWindow): Promise<AppFacts> {
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
    const top = await topWindowAt(p.x, p.y);
    const there = top ? [top] : (await listWindows()).filter((w) => contains(w.bounds, p));
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
    const now = await describeWindow(win.id);
    if (await this.refusalOf(now, await this.appNames())) throw windowGone(win.id);
  }

  /** Screen rectangles of windows agents may not see that overlap `region` (blanked in its screenshot). */
  async hiddenIn(region: Rect, except?: number): Promise<Rect[]> {
    if (!this.options.appRefusal) return [];
    const apps = await this.appNames();
    const out: Rect[] = [];
    for (const w of await listWindows())
      if (w.id !== except && intersects(w.bounds, region) && (await this.refusalOf(w, apps))) out.push(w.bounds);
    return out;
  }

  /** The focused window (0: none), refused `not_permitted` for desktop keys when the policy keeps agents off it. */
  async focusedWindow(): Promise<number> {
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

  /** The window `pid`/`windowId` names, refused with target_not_found when it is gone or not that pid's. */
  async window(pid: number | undefined, windowId: number): Promise<WindowInfo> {
    const x = await describeWindow(windowId);
    if (!x.viewable)
      throw new Refusal('target_not_found', `window ${windowId} is not shown (unmapped or closed); call list_windows`);
    if (pid !== undefined && x.pid !== null && x.pid !== pid) {
      throw new Refusal(
        'target_not_found',
        `window ${windowId} belongs to pid ${x.pid}, not ${pid}; call list_windows`,
        { window_id: windowId, pid: x.pid },
      );
    }
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
          frame: known.frame,
          app: known.app,
          driven,
          browserLike: driven || (x.pid !== null && BROWSER_NAMES.test(processName(x.pid))),
        };
      }
    }
    return this.enrich(x, await atspi.apps(), atspi);
  }

  /** Checks that a window still exists (between delivery and read-back). */
  async stillThere(windowId: number): Promise<void> {
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
  ): Promise<WindowInfo> {
    const driven = await this.isDriven(w.pid);
    const browserLike = driven || (w.pid !== null && BROWSER_NAMES.test(processName(w.pid)));
    const info: WindowInfo = { ...w, frame: null, app: null, driven, browserLike };
    if (!atspi || w.pid === null) return info;
    for (const app of apps.filter((a) => a.pid === w.pid)) {
      const toolkit = atspi.toolkit(app.ref.bus); // its units and coordinates, known before any element is used
      const frame = await this.frameIn(atspi, app.ref.bus, w).catch(() => null);
      if (frame) {
        await toolkit;
        this.frames.set(w.id, { pid: w.pid, frame, app: { bus: app.ref.bus, name: app.name } });
        return { ...info, frame, app: { bus: app.ref.bus, name: app.name } };
      }
    }
    return info;
  }

  /** The app's top-level accessible for an X window: same title, else the one whose extents fit it best. */
  private async frameIn(atspi: Atspi, bus: string, w: XWindow): Promise<AccRef | null> {
    const tops = await atspi.children({ bus, path: '/org/a11y/atspi/accessible/root' });
    const candidates = await Promise.all(
      tops.map(async (ref) => {
        const [[role], name, states, box] = await Promise.all([
          atspi.call(ref, 'org.a11y.atspi.Accessible', 'GetRole'),
          atspi.prop(ref, 'org.a11y.atspi.Accessible', 'Name'),
          atspi.states(ref),
          atspi.extents(ref).catch(() => null),
        ]);
        return { ref, role: Number(role), name: String(name), states, box };
      }),
    );
    // A bare Qt top-level widget's accessible is a `filler`: as the app's own child it is a window.
    const tops2 = candidates.filter(
      (c) => (TOP_LEVEL_ROLES.has(c.role) || c.role === ROLE.filler) && has(c.states, STATE.showing),
    );
    const score = (c: (typeof tops2)[number]) => {
      let s = c.name === w.title ? 100 : 0;
      if (c.box)
        s -= Math.abs(c.box.x + c.box.w / 2 - (w.bounds.x + w.bounds.w / 2)) / 10 + Math.abs(c.box.w - w.bounds.w) / 10;
      if (has(c.states, STATE.active)) s += 5;
      return s;
    };
    tops2.sort((a, b) => score(b) - score(a));
    return tops2[0]?.ref ?? null;
  }
}

/** Cache rows of one top-level's subtree, in document order (depth first, children by index). */
export function subtree(
  items: CacheItem[],
  root: AccRef,
): Array<{ item: CacheItem; depth: number; parent: CacheItem | null }> {
  const key = (r: AccRef) => `${r.bus}${r.path}`;
  const rootKey = key(root);
  const children = new Map<string, CacheItem[]>();
  const keys = new Map<CacheItem, string>();
  let rootItem: CacheItem | undefined;
  for (const item of items) {
    const own = key(item.ref),
      parent = key(item.parent);
    keys.set(item, own);
    if (own === rootKey) rootItem = item;
    const list = children.get(parent);
    if (list) list.push(item);
    else children.set(parent, [item]);
  }
  if (!rootItem) return [];
  for (const list of children.values()) if (list.length > 1) list.sort((a, b) => a.indexInParent - b.indexInParent);
  const out: Array<{ item: CacheItem; depth: number; parent: CacheItem | null }> = [];
  const seen = new Set<CacheItem>();
  const visit = (item: CacheItem, depth: number, parent: CacheItem | null) => {
    if (seen.has(item) || depth > 200) return;
    seen.add(item);
    out.push({ item, depth, parent });
    for (const child of children.get(keys.get(item)!) ?? []) visit(child, depth + 1, item);
  };
  visit(rootItem, 0, null);
  return out;
}

/**
 * Adds what the app's cache left out (objects created lazily, never announced): wherever a node has more
 * children than the cache lists, its children are read directly, recursively.
 */
export async function completeTree(atspi: Atspi, items: CacheItem[], root: AccRef): Promise<CacheItem[]> {
  const key = (r: AccRef) => `${r.bus}${r.path}`;
  const counts = new Map<string, number>();
  for (const item of items) {
    const parent = key(item.parent);
    counts.set(parent, (counts.get(parent) ?? 0) + 1);
  }
  const short = (i: CacheItem) => i.childCount > (counts.get(key(i.ref)) ?? 0);
  if (!items.some(short)) return items; // the usual case: the cache is complete, no subtree walk needed
  const known = new Map(items.map((i) => [key(i.ref), i]));
  let pending = subtree(items, root)
    .map((r) => r.item)
    .filter(short);
  const added: CacheItem[] = [];
  for (let round = 0; pending.length && round < 20; round++) {
    const next: CacheItem[] = [];
    await Promise.all(
      pending.map(async (parent) => {
        const children = await atspi.children(parent.ref).catch(() => []);
        await Promise.all(
          children.map(async (ref, index) => {
            if (known.has(key(ref))) return;
            const item = await atspi.describe(ref, parent.ref).catch(() => null);
            if (!item) return;
            if (item.indexInParent < 0) item.indexInParent = index;
            known.set(key(ref), item);
            added.push(item);
            if (item.childCount > 0) next.push(item);
          }),
        );
      }),
    );
    pending = next;
  }
  return added.length ? [...items, ...added] : items;
}

export const isWebDocument = (role: number) => role === ROLE.documentWeb;
