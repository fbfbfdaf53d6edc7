// The native route's view of the desktop: one AT-SPI connection (made on first use, remade when the bus
// dropped), X11 windows matched to their AT-SPI frames, and which windows belong to the browser Verity
// drives over CDP.
import { Refusal } from '../routing/refusal.js';
import { Atspi, type AccRef, type CacheItem } from './atspi.js';
import { closeXServer, requireDisplay, sessionBusAddress } from './env.js';
import { ROLE, STATE, TOP_LEVEL_ROLES, has } from './roles.js';
import { describeWindow, descendsFrom, listWindows, processName, windowGone, type XWindow } from './x11.js';

export interface NativeHostOptions {
  /** The pid of the browser Verity drives over CDP (launched or attached), or null when there is none. */
  drivenBrowserPid(): Promise<number | null>;
}

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

  /** AT-SPI apps with name and pid. */
  async apps(): Promise<Array<{ ref: AccRef; name: string; pid: number | null }>> {
    return (await this.atspi()).apps();
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

  async windows(): Promise<WindowInfo[]> {
    const windows = await listWindows();
    const atspi = await this.atspi().catch(() => null);
    const apps = atspi ? await atspi.apps().catch(() => []) : [];
    return Promise.all(windows.map((w) => this.enrich(w, apps, atspi)));
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
    // A bare Qt top-level widget's accessible is a `filler`: as the app's own child it is a window. A GTK 4
    // dialog's (a file chooser's) is a `filler` that says `visible` but never `showing`: it is this
    // window's when it bears its title.
    const tops2 = candidates.filter(
      (c) =>
        (TOP_LEVEL_ROLES.has(c.role) || c.role === ROLE.filler) &&
        (has(c.states, STATE.showing) || (has(c.states, STATE.visible) && c.name === w.title)),
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
