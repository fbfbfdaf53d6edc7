// AT-SPI2 over raw D-Bus method calls (dbus.ts): no proxy objects, which would introspect every object
// first (a round trip per element, and toolkits answer introspection sparsely). One connection to the
// accessibility bus; every call is bounded so a hung app is a refusal, not a hung server.
import { Refusal } from '../../../contract/refusal.js';
import { DBusClosed, DBusConnection, DBusError, DBusTimeout, Variant } from '../transport/dbus.js';
import { busAddress, openBus } from './bus.js';
import { type ShownWatch, watchShown } from './events.js';
import { CacheBounds, cacheRows } from './cache.js';
import { CallTimeout, Gone } from './errors.js';
import { IFACE, PLACED_NOWHERE, codePoints, type AccRef, type CacheItem, type Toolkit } from './shapes.js';

/** AT-SPI's AtspiRelationType LABELLED_BY: the relation's targets are the labels that name the element. */
const RELATION_LABELLED_BY = 2;

export { IFACE, PLACED_NOWHERE, codePoints, objectKey, type AccRef, type CacheItem, type Toolkit } from './shapes.js';
export { CallTimeout, Gone } from './errors.js';

const CALL_TIMEOUT_MS = 5000;
/** Children read one by one (an app without GetChildren): at most this many per object. */
const MAX_CHILDREN = 2000;
/** Asking an app for its own socket and connecting to it: a slow answer just means the bus is used. */
const PEER_TIMEOUT_MS = 2000;
const ROOT_PATH = '/org/a11y/atspi/accessible/root';
const GONE = /ServiceUnknown|UnknownObject|NoReply|Disconnected|NameHasNoOwner|no such object/i;

/** What the AT-SPI model and tree ask of an app's toolkit profile (toolkits/ extends it for the actions). */
export interface ModelHooks {
  /** How Text offsets and counts are counted: UTF-16 units (Qt), else code points (ATK toolkits). */
  countsUtf16: boolean;
  /** EditableText.InsertText's length for `text`, in the unit the toolkit reads it in. */
  insertLength(text: string): number;
  /** Whether screen extents come relative to the window (GTK 4 on X11: "Screen coordinates not supported"). */
  windowRelative: boolean;
  /** Whether GetText(0, -1) is the whole text, so that a read needs no CharacterCount (GTK 3's fast path). */
  wholeText: boolean;
  /** Whether open popovers are surfaces of their own, placed apart from the widget AT-SPI puts them at (GTK 4). */
  popoversApart: boolean;
  /** What a combo box without Selection shows, where the toolkit says it its own way (tree.ts valueOf). */
  comboValue?(atspi: Atspi, ref: AccRef): Promise<string | undefined>;
  /**
   * Whether an element of this role says its value where its name belongs (Qt's combo box answers Name with
   * its current text, the name set on it is never sent): it is listed under the label that names it
   * (its LabelledBy relation; none: no name), its value apart (tree.ts readDetails).
   */
  nameIsValue?(role: number): boolean;
}

/** The hooks for an app naming `app` as its toolkit; null: not asked yet (toolkits/index.ts profileFor). */
export type HooksChooser = (app: Toolkit | null) => ModelHooks;

export class Atspi {
  private constructor(
    private readonly bus: DBusConnection,
    readonly address: string,
    /** Calls go to an app's own socket when it offers one (false: every call on the bus; --no-atspi-direct). */
    private readonly direct: boolean,
    private readonly choose: HooksChooser,
  ) {
    this.unasked = choose(null);
  }

  /**
   * Connects to the AT-SPI bus: AT_SPI_BUS_ADDRESS when set, else org.a11y.Bus.GetAddress on the session
   * bus (bus.ts). Turns accessibility on (org.a11y.Status.IsEnabled) and registers one event listener, without
   * which toolkits do not serve their object cache.
   */
  static async connect(options: { direct?: boolean; profiles: HooksChooser }): Promise<Atspi> {
    const address = await busAddress();
    const bus = await openBus(address, 'the AT-SPI bus');
    const client = new Atspi(bus, address, options.direct !== false, options.profiles);
    bus.onClose(() => {
      client.connected = false;
    });
    await client
      .call(
        { bus: 'org.a11y.atspi.Registry', path: '/org/a11y/atspi/registry' },
        'org.a11y.atspi.Registry',
        'RegisterEvent',
        'sass',
        ['object:children-changed', [], ''],
      )
      .catch(() =>
        client.call(
          { bus: 'org.a11y.atspi.Registry', path: '/org/a11y/atspi/registry' },
          'org.a11y.atspi.Registry',
          'RegisterEvent',
          's',
          ['object:children-changed'],
        ),
      )
      .catch((e) => {
        bus.close();
        throw new Refusal(
          'unavailable',
          `the AT-SPI registry (at-spi2-registryd) does not answer: ${(e as Error).message}`,
        );
      });
    return client;
  }

  /** False once the bus connection dropped (the AT-SPI bus went away): the next use reconnects. */
  connected = true;
  /** Each app's own socket (or null: it offers none), keyed by its unique bus name. */
  private readonly peers = new Map<string, Promise<DBusConnection | null>>();
  /** The same, once known: most calls find their connection here without waiting on a promise. */
  private readonly knownPeers = new Map<string, DBusConnection | null>();
  /** Each app's next Cache.GetItems bound, from its last one (cache.ts). */
  private readonly cacheBounds = new CacheBounds();
  /** Each app's toolkit, keyed by unique bus name (see Toolkit), and its profile's hooks once known. */
  private readonly toolkits = new Map<string, Promise<Toolkit>>();
  private readonly knownToolkits = new Map<string, { toolkit: Toolkit; hooks: ModelHooks }>();
  private readonly unasked: ModelHooks; // an app's whose toolkit is not asked yet

  disconnect(): void {
    this.connected = false;
    this.bus.close();
    for (const peer of this.peers.values()) void peer.then((c) => c?.close());
    this.peers.clear();
    this.knownPeers.clear();
  }

  /**
   * The connection an app's calls take. Like libatspi, an app that offers its own socket
   * (Application.GetApplicationBusAddress, at-spi2-atk does) is called on it directly: no bus daemon in
   * between, which takes about a fifth off every round trip. Until that is known, the app's calls wait,
   * so all of them stay on one connection and in order.
   */
  private connectionFor(bus: string): Promise<DBusConnection | null> | null {
    // Well-known names (the registry, the bus itself) are on the bus; VERITY_ATSPI_DIRECT=0 keeps all there.
    if (!bus.startsWith(':') || !this.direct) return null;
    let peer = this.peers.get(bus);
    if (!peer) {
      peer = this.openPeer(bus);
      this.peers.set(bus, peer);
      void peer.then((c) => {
        if (this.peers.get(bus) === peer) this.knownPeers.set(bus, c);
      });
    }
    return peer;
  }

  private async openPeer(bus: string): Promise<DBusConnection | null> {
    try {
      const [address] = await this.bus.call(
        { destination: bus, path: ROOT_PATH, interface: IFACE.application, member: 'GetApplicationBusAddress' },
        PEER_TIMEOUT_MS,
      );
      if (typeof address !== 'string' || !address) return null;
      const peer = await DBusConnection.open(address, { timeoutMs: PEER_TIMEOUT_MS, peer: true });
      // Closed (the app exited): forget it, so a later call asks the bus, which says whether the app is gone.
      peer.onClose(() => {
        this.peers.delete(bus);
        this.knownPeers.delete(bus);
      });
      return peer;
    } catch {
      return null;
    }
  }

  /**
   * A raw method call; its reply body. An object that went away is `Gone` (target_not_found). Promise
   * chains rather than async functions here and in the readers below: every native action makes several
   * of these calls, and each async layer adds its own turns of the microtask queue.
   */
  call(
    ref: AccRef,
    iface: string,
    member: string,
    signature = '',
    body: unknown[] = [],
    what = 'the element',
    timeoutMs = CALL_TIMEOUT_MS,
  ): Promise<any[]> {
    const known = this.knownPeers.get(ref.bus);
    if (known !== undefined) return this.callOn(known, ref, iface, member, signature, body, what, timeoutMs);
    const peer = this.connectionFor(ref.bus);
    return peer
      ? peer.then((c) => this.callOn(c, ref, iface, member, signature, body, what, timeoutMs))
      : this.callOn(null, ref, iface, member, signature, body, what, timeoutMs);
  }

  private callOn(
    peer: DBusConnection | null,
    ref: AccRef,
    iface: string,
    member: string,
    signature: string,
    body: unknown[],
    what: string,
    timeoutMs: number,
  ): Promise<any[]> {
    return (peer ?? this.bus)
      .call({ destination: ref.bus, path: ref.path, interface: iface, member, signature, body }, timeoutMs)
      .catch((e) => {
        throw this.explain(e, peer !== null, `${iface.split('.').pop()}.${member}`, what, timeoutMs);
      });
  }

  /** A failed call as what it means here: a timeout, an app or element gone, or the bus gone. */
  private explain(e: unknown, onPeer: boolean, name: string, what: string, timeoutMs: number): unknown {
    if (e instanceof DBusTimeout) return new CallTimeout(`the app did not answer ${name} within ${timeoutMs} ms`);
    if (e instanceof DBusClosed && onPeer) return new Gone(what); // the app's own socket closed: the app exited
    if (e instanceof DBusClosed) {
      this.connected = false;
      return new Refusal(
        'unavailable',
        `the connection to the AT-SPI bus closed before ${name} was answered; call get_window_state again (a new connection is made)`,
        { retryable: true },
      );
    }
    // UnknownMethod says the object lacks that interface (not that it is gone): the caller handles it.
    if (e instanceof DBusError && GONE.test(`${e.type} ${e.text}`) && !/UnknownMethod/.test(e.type))
      return new Gone(what);
    return e;
  }

  /** The toolkit the app on `bus` names, asked once (an app that does not say names none). */
  toolkit(bus: string): Promise<Toolkit> {
    let known = this.toolkits.get(bus);
    if (!known) {
      const root = { bus, path: ROOT_PATH };
      known = Promise.all([
        this.prop(root, IFACE.application, 'ToolkitName').catch(() => ''),
        this.prop(root, IFACE.application, 'Version').catch(() => ''),
        this.prop(root, IFACE.accessible, 'Name').catch(() => ''),
      ]).then(([name, version, app]) => {
        const toolkit: Toolkit = { name: String(name), version: String(version), app: String(app) };
        this.knownToolkits.set(bus, { toolkit, hooks: this.choose(toolkit) });
        return toolkit;
      });
      this.toolkits.set(bus, known);
    }
    return known;
  }

  /** The toolkit the app on `bus` named, if already asked (toolkit()); null otherwise. */
  knownToolkit(bus: string): Toolkit | null {
    return this.knownToolkits.get(bus)?.toolkit ?? null;
  }

  /** The model's hooks of the profile of `bus`'s toolkit (ATK's conventions until it is asked). */
  hooks(bus: string): ModelHooks {
    return this.knownToolkits.get(bus)?.hooks ?? this.unasked;
  }

  /** Whether the app on `bus` answers extents relative to its window (its toolkit's, or any Wayland client). */
  private countsFromWindow(bus: string): boolean {
    const known = this.knownToolkits.get(bus);
    return !!known && (known.hooks.windowRelative || !!known.toolkit.wayland);
  }

  /** A string's length in the unit the app on `bus` counts offsets in (its profile's countsUtf16). */
  units(bus: string, s: string): number {
    return this.hooks(bus).countsUtf16 ? s.length : codePoints(s);
  }

  /** What `app` shows from now on, heard from its events (events.ts). */
  watchShown(app: string): Promise<ShownWatch> {
    return watchShown(
      this.bus,
      (ref, iface, member, signature, args) => this.call(ref, iface, member, signature, args),
      app,
    );
  }

  /** Sends the calls to `ref`'s app made so far in this tick now (see DBusConnection.flush). */
  flush(ref: AccRef): void {
    const peer = this.knownPeers.get(ref.bus);
    if (peer !== undefined) (peer ?? this.bus).flush();
  }

  prop(ref: AccRef, iface: string, name: string): Promise<any> {
    return this.call(ref, 'org.freedesktop.DBus.Properties', 'Get', 'ss', [iface, name]).then(
      ([variant]) => (variant as Variant).value,
    );
  }

  /** The name of the label that names `ref` (its first LabelledBy relation's target), or null: none says. */
  async labelledBy(ref: AccRef): Promise<string | null> {
    const [relations] = (await this.call(ref, IFACE.accessible, 'GetRelationSet')) as [
      Array<[number, Array<[string, string]>]>,
    ];
    const label = relations.find(([type]) => type === RELATION_LABELLED_BY)?.[1][0];
    if (!label) return null;
    return String(await this.prop({ bus: label[0], path: label[1] }, IFACE.accessible, 'Name'));
  }

  async setProp(ref: AccRef, iface: string, name: string, signature: string, value: unknown): Promise<void> {
    await this.call(ref, 'org.freedesktop.DBus.Properties', 'Set', 'ssv', [iface, name, new Variant(signature, value)]);
  }

  /** The apps registered on the bus, each with its name and process id. */
  async apps(): Promise<Array<{ ref: AccRef; name: string; pid: number | null }>> {
    return (await this.appsAndUnanswered()).apps;
  }

  /**
   * The apps registered on the bus, and the buses of those that did not say their name in time (busy: a
   * window list must not take their windows for closed). Those whose name cannot be read otherwise (gone)
   * are in neither.
   */
  async appsAndUnanswered(): Promise<{
    apps: Array<{ ref: AccRef; name: string; pid: number | null }>;
    unanswered: string[];
  }> {
    const [children] = await this.call(
      { bus: 'org.a11y.atspi.Registry', path: ROOT_PATH },
      IFACE.accessible,
      'GetChildren',
    );
    const unanswered: string[] = [];
    const apps = await Promise.all(
      (children as Array<[string, string]>).map(async ([bus, path]) => {
        const ref = { bus, path };
        const [name, pid] = await Promise.all([
          this.prop(ref, IFACE.accessible, 'Name').catch((e: unknown) => {
            if (e instanceof CallTimeout) unanswered.push(bus);
            return null;
          }),
          this.pidOf(bus),
        ]);
        return name === null ? null : { ref, name: String(name), pid };
      }),
    );
    return { apps: apps.filter((a): a is NonNullable<typeof a> => a !== null), unanswered };
  }

  async pidOf(bus: string): Promise<number | null> {
    try {
      const [pid] = await this.call(
        { bus: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus' },
        'org.freedesktop.DBus',
        'GetConnectionUnixProcessID',
        's',
        [bus],
      );
      return Number(pid);
    } catch {
      return null;
    }
  }

  /** The bound of an app's next Cache.GetItems. */
  cacheBound(bus: string): number {
    return this.cacheBounds.bound(bus);
  }

  /** Every object an app exposes, in one call (the toolkit's own cache); a CallTimeout past cacheBound(). */
  async cacheItems(bus: string): Promise<CacheItem[]> {
    const bound = this.cacheBound(bus);
    const t0 = performance.now();
    const [items] = await this.call(
      { bus, path: '/org/a11y/atspi/cache' },
      'org.a11y.atspi.Cache',
      'GetItems',
      '',
      [],
      'the app',
      bound,
    ).catch((e: unknown) => {
      // Not answered in time: the next bound is twice this one.
      if (e instanceof CallTimeout) this.cacheBounds.timedOut(bus, bound);
      throw e;
    });
    this.cacheBounds.answeredIn(bus, performance.now() - t0);
    return cacheRows(items as any[]);
  }

  /**
   * The objects of an app, for a walk from `root`: its cache, or just the root, which the walk then grows
   * by reading children directly: a toolkit without a cache, or an app whose cache did not come within its
   * bound (`cacheLate` says so; the live reads are bounded one by one, and what they miss is said as usual).
   */
  async itemsFor(bus: string, root: AccRef): Promise<{ items: CacheItem[]; cacheLate?: string }> {
    let items: CacheItem[];
    let cacheLate: string | undefined;
    try {
      items = await this.cacheItems(bus);
    } catch (e) {
      if (e instanceof CallTimeout) cacheLate = e.message;
      else if (e instanceof Refusal) throw e;
      items = [];
    }
    const late = cacheLate ? { cacheLate } : {};
    // Qt 5 answers GetItems with no rows at all: without the root among them, the walk starts at the root.
    if (items.some((i) => i.ref.bus === root.bus && i.ref.path === root.path)) return { items, ...late };
    const parent = (await this.prop(root, IFACE.accessible, 'Parent').catch(() => [bus, ROOT_PATH])) as [
      string,
      string,
    ];
    return { items: [...items, await this.describe(root, { bus: parent[0], path: parent[1] })], ...late };
  }

  /** One object read the slow way (apps without a cache, or a fresh read of one element). */
  async describe(ref: AccRef, parent: AccRef): Promise<CacheItem> {
    const [[role], [states], [interfaces], name, index, childCount] = await Promise.all([
      this.call(ref, IFACE.accessible, 'GetRole'),
      this.call(ref, IFACE.accessible, 'GetState'),
      this.call(ref, IFACE.accessible, 'GetInterfaces'),
      this.prop(ref, IFACE.accessible, 'Name'),
      this.call(ref, IFACE.accessible, 'GetIndexInParent')
        .then(([i]) => Number(i))
        .catch(() => -1),
      this.prop(ref, IFACE.accessible, 'ChildCount')
        .then(Number)
        .catch(() => 0),
    ]);
    return {
      ref,
      parent,
      indexInParent: index,
      childCount,
      interfaces,
      name: String(name),
      role: Number(role),
      states: [states[0] ?? 0, states[1] ?? 0],
    };
  }

  /** An object's children: GetChildren, or one GetChildAtIndex each where an app lacks it (bounded). */
  async children(ref: AccRef): Promise<AccRef[]> {
    try {
      const [children] = await this.call(ref, IFACE.accessible, 'GetChildren');
      return (children as Array<[string, string]>).map(([bus, path]) => ({ bus, path }));
    } catch (e) {
      if (!(e instanceof DBusError)) throw e;
      const count = Math.min(MAX_CHILDREN, Number(await this.prop(ref, IFACE.accessible, 'ChildCount')));
      const refs = await Promise.all(
        Array.from({ length: count }, (_, i) =>
          this.call(ref, IFACE.accessible, 'GetChildAtIndex', 'i', [i]).then(
            ([[bus, path]]) => ({ bus: String(bus), path: String(path) }),
            () => null,
          ),
        ),
      );
      return refs.filter((r): r is AccRef => r !== null && r.path !== '/org/a11y/atspi/null');
    }
  }

  /** The child at `index` (GetChildAtIndex), or null where there is none. */
  childAt(ref: AccRef, index: number): Promise<AccRef | null> {
    return this.call(ref, IFACE.accessible, 'GetChildAtIndex', 'i', [index]).then(([[bus, path]]) =>
      bus && path !== '/org/a11y/atspi/null' ? { bus: String(bus), path: String(path) } : null,
    );
  }

  states(ref: AccRef): Promise<[number, number]> {
    return this.call(ref, IFACE.accessible, 'GetState').then(([states]) => [states[0] ?? 0, states[1] ?? 0]);
  }

  /**
   * Screen extents (x, y, w, h). A toolkit that answers relative to its window (GTK 4 on X11) gets the
   * window's client origin added (`origin`: the X window's top-left on the screen).
   */
  async extents(
    ref: AccRef,
    origin?: { x: number; y: number },
  ): Promise<{ x: number; y: number; w: number; h: number }> {
    const [[x, y, w, h]] = await this.call(ref, IFACE.component, 'GetExtents', 'u', [0]);
    // INT32_MIN says "placed nowhere" (LibreOffice's closed menus' separators): kept as said, not moved by
    // the window's origin, so that it is still recognised (on Wayland LibreOffice counts from its window).
    if (x === PLACED_NOWHERE || y === PLACED_NOWHERE) return { x, y, w, h };
    if (origin && this.countsFromWindow(ref.bus)) return { x: x + origin.x, y: y + origin.y, w, h };
    return { x, y, w, h };
  }

  /**
   * The whole text of a Text object, checked against the app's own CharacterCount (asked in the same
   * flush). GTK 4.8 answers GetText(0, -1) with "" whatever the field holds: a count above what was read
   * is read again with the count as the end. `whole` is false when the count still disagrees (Qt holding
   * NULs, which D-Bus cannot carry): the text read is then not all the field holds.
   */
  textChecked(ref: AccRef): Promise<{ text: string; count: number; whole: boolean }> {
    const reading = this.call(ref, IFACE.text, 'GetText', 'ii', [0, -1]);
    // GTK 3 (the common case, and the fast path the bench holds to the floor) is read whole without it.
    if (this.hooks(ref.bus).wholeText) return reading.then(([raw]) => ({ text: String(raw), count: -1, whole: true }));
    const counting = this.prop(ref, IFACE.text, 'CharacterCount').then(Number, () => -1);
    return reading.then(async ([raw]) => {
      let text = String(raw);
      const count = await counting;
      if (count < 0) return { text, count, whole: true };
      if (count > this.units(ref.bus, text))
        text = String((await this.call(ref, IFACE.text, 'GetText', 'ii', [0, count]))[0]);
      return { text, count, whole: count === this.units(ref.bus, text) };
    });
  }

  /** The whole text of a Text object (see textChecked). */
  text(ref: AccRef): Promise<string> {
    return this.textChecked(ref).then((t) => t.text);
  }

  caret(ref: AccRef): Promise<number> {
    return this.prop(ref, IFACE.text, 'CaretOffset').then(Number);
  }

  /** The text and the caret (-1: none), asked for together. */
  textAndCaret(ref: AccRef): Promise<[string, number]> {
    return Promise.all([this.text(ref), this.caret(ref).catch(() => -1)]);
  }

  async setCaret(ref: AccRef, offset: number): Promise<boolean> {
    const [ok] = await this.call(ref, IFACE.text, 'SetCaretOffset', 'i', [offset]);
    return !!ok;
  }

  /** EditableText.InsertText at `position` (in the app's unit, see units()), its length as its profile says. */
  insertText(ref: AccRef, position: number, text: string): Promise<boolean> {
    const length = this.hooks(ref.bus).insertLength(text);
    return this.call(ref, IFACE.editable, 'InsertText', 'isi', [position, text, length]).then(([ok]) => !!ok);
  }

  async setTextContents(ref: AccRef, text: string): Promise<boolean> {
    const [ok] = await this.call(ref, IFACE.editable, 'SetTextContents', 's', [text]);
    return !!ok;
  }

  async grabFocus(ref: AccRef): Promise<boolean> {
    const [ok] = await this.call(ref, IFACE.component, 'GrabFocus');
    return !!ok;
  }

  async actions(ref: AccRef): Promise<string[]> {
    const [list] = await this.call(ref, IFACE.action, 'GetActions');
    return (list as Array<[string, string, string]>).map(([name]) => name);
  }

  async doAction(ref: AccRef, index: number): Promise<boolean> {
    const [ok] = await this.call(ref, IFACE.action, 'DoAction', 'i', [index]);
    return !!ok;
  }

  async selectChild(ref: AccRef, index: number): Promise<boolean> {
    const [ok] = await this.call(ref, IFACE.selection, 'SelectChild', 'i', [index]);
    return !!ok;
  }

  /**
   * The deepest child at a screen point, starting from `ref` (Component.GetAccessibleAtPoint, repeated).
   * A toolkit that counts from its window (GTK 4) is asked in window coordinates (`origin`: the window's).
   */
  async at(ref: AccRef, x: number, y: number, origin?: { x: number; y: number }): Promise<AccRef> {
    let current = ref;
    if (origin && this.countsFromWindow(ref.bus)) {
      x -= origin.x;
      y -= origin.y;
    }
    for (let depth = 0; depth < 64; depth++) {
      const [[bus, path]] = await this.call(current, IFACE.component, 'GetAccessibleAtPoint', 'iiu', [
        Math.round(x),
        Math.round(y),
        0,
      ]).catch(() => [['', '']]);
      if (!bus || path === '/org/a11y/atspi/null' || (bus === current.bus && path === current.path)) return current;
      current = { bus, path };
    }
    return current;
  }
}
