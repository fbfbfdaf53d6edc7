// AT-SPI2 over raw D-Bus method calls (dbus.ts): no proxy objects, which would introspect every object
// first (a round trip per element, and toolkits answer introspection sparsely). One connection to the
// accessibility bus; every call is bounded so a hung app is a refusal, not a hung server.
import { Refusal } from '../routing/refusal.js';
import { DBusClosed, DBusConnection, DBusError, DBusTimeout, Variant } from './dbus.js';
import { busSocketExists, sessionBusAddress } from './env.js';

/** One accessible object: the app's unique bus name and the object path. */
export interface AccRef { bus: string; path: string }

/** One row of org.a11y.atspi.Cache.GetItems: a((so)(so)(so)iiassusau). */
export interface CacheItem {
  ref: AccRef;
  parent: AccRef;
  indexInParent: number;
  childCount: number;
  interfaces: string[];
  name: string;
  role: number;
  states: [number, number];
}

export const IFACE = {
  accessible: 'org.a11y.atspi.Accessible', component: 'org.a11y.atspi.Component', text: 'org.a11y.atspi.Text',
  editable: 'org.a11y.atspi.EditableText', action: 'org.a11y.atspi.Action', value: 'org.a11y.atspi.Value',
  selection: 'org.a11y.atspi.Selection', application: 'org.a11y.atspi.Application',
} as const;

const CALL_TIMEOUT_MS = 5000;
/** Asking an app for its own socket and connecting to it: a slow answer just means the bus is used. */
const PEER_TIMEOUT_MS = 2000;
const ROOT_PATH = '/org/a11y/atspi/accessible/root';
const GONE = /ServiceUnknown|UnknownObject|NoReply|Disconnected|NameHasNoOwner|no such object/i;

/** The error an AT-SPI call ends with when its object or app went away. */
export class Gone extends Refusal {
  constructor(what: string) { super('target_not_found', `${what} is gone (its window or app closed, or the element was removed); call list_windows and get_window_state again`); }
}

export class Atspi {
  private constructor(private readonly bus: DBusConnection, readonly address: string) {}

  /**
   * Connects to the AT-SPI bus: AT_SPI_BUS_ADDRESS when set, else org.a11y.Bus.GetAddress on the session
   * bus. Turns accessibility on (org.a11y.Status.IsEnabled) and registers one event listener, without
   * which toolkits do not serve their object cache.
   */
  static async connect(): Promise<Atspi> {
    let address = process.env.AT_SPI_BUS_ADDRESS;
    const sessionAddress = process.env.DBUS_SESSION_BUS_ADDRESS;
    if (!address || sessionAddress) {
      const session = await open(sessionBusAddress(), 'the session D-Bus');
      try {
        if (!address) {
          const reply = await session.call({ destination: 'org.a11y.Bus', path: '/org/a11y/bus', interface: 'org.a11y.Bus', member: 'GetAddress' })
            .catch((e: Error) => { throw new Refusal('unavailable', `the native route needs the AT-SPI bus: org.a11y.Bus.GetAddress failed on the session bus (${e.message.trim()}); install at-spi2-core or start at-spi-bus-launcher`); });
          address = String(reply[0] ?? '');
          if (!address) throw new Refusal('unavailable', 'the native route needs the AT-SPI bus: org.a11y.Bus returned no address');
        }
        await session.call({
          destination: 'org.a11y.Bus', path: '/org/a11y/bus', interface: 'org.freedesktop.DBus.Properties', member: 'Set',
          signature: 'ssv', body: ['org.a11y.Status', 'IsEnabled', new Variant('b', true)],
        }).catch(() => undefined);
      } finally {
        session.close();
      }
    }
    const bus = await open(address, 'the AT-SPI bus');
    const client = new Atspi(bus, address);
    bus.onClose(() => { client.connected = false; });
    await client.call({ bus: 'org.a11y.atspi.Registry', path: '/org/a11y/atspi/registry' }, 'org.a11y.atspi.Registry', 'RegisterEvent', 'sass', ['object:children-changed', [], ''])
      .catch(() => client.call({ bus: 'org.a11y.atspi.Registry', path: '/org/a11y/atspi/registry' }, 'org.a11y.atspi.Registry', 'RegisterEvent', 's', ['object:children-changed']))
      .catch((e) => { bus.close(); throw new Refusal('unavailable', `the AT-SPI registry (at-spi2-registryd) does not answer: ${(e as Error).message}`); });
    return client;
  }

  /** False once the bus connection dropped (the AT-SPI bus went away): the next use reconnects. */
  connected = true;
  /** Each app's own socket (or null: it offers none), keyed by its unique bus name. */
  private readonly peers = new Map<string, Promise<DBusConnection | null>>();
  /** The same, once known: most calls find their connection here without waiting on a promise. */
  private readonly knownPeers = new Map<string, DBusConnection | null>();
  /** VERITY_ATSPI_DIRECT=0 keeps every call on the bus (read once: the environment is slow to ask). */
  private readonly direct = process.env.VERITY_ATSPI_DIRECT !== '0';

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
      void peer.then((c) => { if (this.peers.get(bus) === peer) this.knownPeers.set(bus, c); });
    }
    return peer;
  }

  private async openPeer(bus: string): Promise<DBusConnection | null> {
    try {
      const [address] = await this.bus.call({ destination: bus, path: ROOT_PATH, interface: IFACE.application, member: 'GetApplicationBusAddress' }, PEER_TIMEOUT_MS);
      if (typeof address !== 'string' || !address) return null;
      const peer = await DBusConnection.open(address, { timeoutMs: PEER_TIMEOUT_MS, peer: true });
      // Closed (the app exited): forget it, so a later call asks the bus, which says whether the app is gone.
      peer.onClose(() => { this.peers.delete(bus); this.knownPeers.delete(bus); });
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
  call(ref: AccRef, iface: string, member: string, signature = '', body: unknown[] = [], what = 'the element'): Promise<any[]> {
    const known = this.knownPeers.get(ref.bus);
    if (known !== undefined) return this.callOn(known, ref, iface, member, signature, body, what);
    const peer = this.connectionFor(ref.bus);
    return peer ? peer.then((c) => this.callOn(c, ref, iface, member, signature, body, what)) : this.callOn(null, ref, iface, member, signature, body, what);
  }

  private callOn(peer: DBusConnection | null, ref: AccRef, iface: string, member: string, signature: string, body: unknown[], what: string): Promise<any[]> {
    return (peer ?? this.bus).call({ destination: ref.bus, path: ref.path, interface: iface, member, signature, body }, CALL_TIMEOUT_MS)
      .catch((e) => { throw this.explain(e, peer !== null, `${iface.split('.').pop()}.${member}`, what); });
  }

  /** A failed call as what it means here: a timeout, an app or element gone, or the bus gone. */
  private explain(e: unknown, onPeer: boolean, name: string, what: string): unknown {
    if (e instanceof DBusTimeout) return new Refusal('timeout', `the app did not answer ${name} within ${CALL_TIMEOUT_MS} ms`, { retryable: true });
    if (e instanceof DBusClosed && onPeer) return new Gone(what); // the app's own socket closed: the app exited
    if (e instanceof DBusClosed) {
      this.connected = false;
      return new Refusal('unavailable', `the connection to the AT-SPI bus closed before ${name} was answered; call get_window_state again (a new connection is made)`, { retryable: true });
    }
    // UnknownMethod says the object lacks that interface (not that it is gone): the caller handles it.
    if (e instanceof DBusError && GONE.test(`${e.type} ${e.text}`) && !/UnknownMethod/.test(e.type)) return new Gone(what);
    return e;
  }

  /** Sends the calls to `ref`'s app made so far in this tick now (see DBusConnection.flush). */
  flush(ref: AccRef): void {
    const peer = this.knownPeers.get(ref.bus);
    if (peer !== undefined) (peer ?? this.bus).flush();
  }

  prop(ref: AccRef, iface: string, name: string): Promise<any> {
    return this.call(ref, 'org.freedesktop.DBus.Properties', 'Get', 'ss', [iface, name]).then(([variant]) => (variant as Variant).value);
  }

  async setProp(ref: AccRef, iface: string, name: string, signature: string, value: unknown): Promise<void> {
    await this.call(ref, 'org.freedesktop.DBus.Properties', 'Set', 'ssv', [iface, name, new Variant(signature, value)]);
  }

  /** The apps registered on the bus, each with its name and process id. */
  async apps(): Promise<Array<{ ref: AccRef; name: string; pid: number | null }>> {
    const [children] = await this.call({ bus: 'org.a11y.atspi.Registry', path: ROOT_PATH }, IFACE.accessible, 'GetChildren');
    const apps = await Promise.all((children as Array<[string, string]>).map(async ([bus, path]) => {
      const ref = { bus, path };
      const [name, pid] = await Promise.all([
        this.prop(ref, IFACE.accessible, 'Name').catch(() => null),
        this.pidOf(bus),
      ]);
      return name === null ? null : { ref, name: String(name), pid };
    }));
    return apps.filter((a): a is NonNullable<typeof a> => a !== null);
  }

  async pidOf(bus: string): Promise<number | null> {
    try {
      const [pid] = await this.call({ bus: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus' }, 'org.freedesktop.DBus', 'GetConnectionUnixProcessID', 's', [bus]);
      return Number(pid);
    } catch { return null; }
  }

  /** Every object an app exposes, in one call (the toolkit's own cache). */
  async cacheItems(bus: string): Promise<CacheItem[]> {
    const [items] = await this.call({ bus, path: '/org/a11y/atspi/cache' }, 'org.a11y.atspi.Cache', 'GetItems', '', [], 'the app');
    return (items as any[]).map((row) => ({
      ref: { bus: row[0][0], path: row[0][1] },
      parent: { bus: row[2][0], path: row[2][1] },
      indexInParent: row[3], childCount: row[4], interfaces: row[5], name: row[6], role: row[7],
      states: [row[9][0] ?? 0, row[9][1] ?? 0],
    }));
  }

  /**
   * The objects of an app, for a walk from `root`: its cache, or (a toolkit without one) just the root,
   * which completeTree then grows by reading children directly.
   */
  async itemsFor(bus: string, root: AccRef): Promise<CacheItem[]> {
    try {
      return await this.cacheItems(bus);
    } catch (e) {
      if (e instanceof Refusal) throw e;
      const parent = await this.prop(root, IFACE.accessible, 'Parent').catch(() => [bus, ROOT_PATH]) as [string, string];
      return [await this.describe(root, { bus: parent[0], path: parent[1] })];
    }
  }

  /** One object read the slow way (apps without a cache, or a fresh read of one element). */
  async describe(ref: AccRef, parent: AccRef): Promise<CacheItem> {
    const [[role], [states], [interfaces], name, index] = await Promise.all([
      this.call(ref, IFACE.accessible, 'GetRole'), this.call(ref, IFACE.accessible, 'GetState'),
      this.call(ref, IFACE.accessible, 'GetInterfaces'), this.prop(ref, IFACE.accessible, 'Name'),
      this.call(ref, IFACE.accessible, 'GetIndexInParent').then(([i]) => Number(i)).catch(() => -1),
    ]);
    const childCount = Number(await this.prop(ref, IFACE.accessible, 'ChildCount').catch(() => 0));
    return { ref, parent, indexInParent: index, childCount, interfaces, name: String(name), role: Number(role), states: [states[0] ?? 0, states[1] ?? 0] };
  }

  async children(ref: AccRef): Promise<AccRef[]> {
    const [children] = await this.call(ref, IFACE.accessible, 'GetChildren');
    return (children as Array<[string, string]>).map(([bus, path]) => ({ bus, path }));
  }

  states(ref: AccRef): Promise<[number, number]> {
    return this.call(ref, IFACE.accessible, 'GetState').then(([states]) => [states[0] ?? 0, states[1] ?? 0]);
  }

  /** Screen-coordinate extents (x, y, w, h). */
  async extents(ref: AccRef): Promise<{ x: number; y: number; w: number; h: number }> {
    const [[x, y, w, h]] = await this.call(ref, IFACE.component, 'GetExtents', 'u', [0]);
    return { x, y, w, h };
  }

  /** The whole text of a Text object (AT-SPI counts characters as code points). */
  text(ref: AccRef): Promise<string> {
    return this.call(ref, IFACE.text, 'GetText', 'ii', [0, -1]).then(([text]) => String(text));
  }

  caret(ref: AccRef): Promise<number> { return this.prop(ref, IFACE.text, 'CaretOffset').then(Number); }

  /** The text and the caret (-1: none), asked for together. */
  textAndCaret(ref: AccRef): Promise<[string, number]> {
    return Promise.all([this.text(ref), this.caret(ref).catch(() => -1)]);
  }

  async setCaret(ref: AccRef, offset: number): Promise<boolean> {
    const [ok] = await this.call(ref, IFACE.text, 'SetCaretOffset', 'i', [offset]);
    return !!ok;
  }

  /** EditableText.InsertText; `length` is the text's UTF-8 byte length (what GTK and Qt both accept). */
  insertText(ref: AccRef, position: number, text: string): Promise<boolean> {
    return this.call(ref, IFACE.editable, 'InsertText', 'isi', [position, text, Buffer.byteLength(text, 'utf8')]).then(([ok]) => !!ok);
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

  /** The deepest child at a screen point, starting from `ref` (Component.GetAccessibleAtPoint, repeated). */
  async at(ref: AccRef, x: number, y: number): Promise<AccRef> {
    let current = ref;
    for (let depth = 0; depth < 64; depth++) {
      const [[bus, path]] = await this.call(current, IFACE.component, 'GetAccessibleAtPoint', 'iiu', [Math.round(x), Math.round(y), 0]).catch(() => [['', '']]);
      if (!bus || path === '/org/a11y/atspi/null' || (bus === current.bus && path === current.path)) return current;
      current = { bus, path };
    }
    return current;
  }
}

async function open(address: string, what: string): Promise<DBusConnection> {
  if (!busSocketExists(address)) throw new Refusal('unavailable', `the native route needs ${what}: nothing listens at ${address}`);
  try {
    return await DBusConnection.open(address);
  } catch (e) {
    throw new Refusal('unavailable', `the native route needs ${what}: could not connect to ${address} (${(e as Error).message})`);
  }
}
