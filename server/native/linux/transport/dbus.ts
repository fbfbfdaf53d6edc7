// A small D-Bus client: one socket, EXTERNAL authentication, method calls with their replies. The native
// route makes several calls per action on the accessibility bus, so this path is kept short: a message is
// marshalled straight into one buffer (dbus-wire.ts), the calls of one tick leave in one write, and there
// is no proxy layer, no introspection and no native addon. Calls to us are answered UnknownMethod (Ping
// gets its reply); signals go to the listeners of onSignal (none but while invoke_menu watches for a Qt
// popup: atspi/model.ts watchShown), else they are dropped.
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  decodeMessage,
  encodeMessage,
  FLAG_NO_REPLY_EXPECTED,
  MESSAGE,
  messageLength,
  type Message,
} from './dbus-wire.js';

export { Variant } from './dbus-wire.js';

/** An error reply: its D-Bus error name (`type`) and message (`text`). */
export class DBusError extends Error {
  constructor(
    readonly type: string,
    readonly text: string,
    call: string,
  ) {
    super(`${call}: ${type}${text ? `: ${text}` : ''}`);
  }
}

/** A call that could not be answered because the connection closed (before or while it was pending). */
export class DBusClosed extends Error {}

/** A call that got no answer within its bound. */
export class DBusTimeout extends Error {}

export interface MethodCall {
  destination: string;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: readonly unknown[];
}

interface Pending {
  resolve: (body: unknown[]) => void;
  reject: (e: Error) => void;
  deadline: number;
  what: string;
  timeoutMs: number;
}

const DEFAULT_TIMEOUT_MS = 5000;
/**
 * The largest message read (the D-Bus specification's bound, 128 MiB). A peer announcing more (a broken or
 * hostile app, or a stream that lost its framing) closes the connection: its bytes are never gathered, so
 * what an app sends cannot grow this process's memory past it.
 */
export const MAX_MESSAGE_BYTES = 128 * 1024 * 1024;

export class DBusConnection {
  /** The name the bus gave this connection (Hello). */
  uniqueName = '';
  closed = false;
  private serial = 0;
  private readonly pending = new Map<number, Pending>();
  /** Bytes received and not yet read as messages, in the pieces they came in (joined once a message is whole). */
  private received: Buffer[] = [];
  private receivedBytes = 0;
  /** Messages of this tick, written together on the next. */
  private outbox: Buffer[] = [];
  /** One timer for every pending call's bound, set for the earliest deadline (a snapshot makes hundreds of calls). */
  private deadlineTimer: NodeJS.Timeout | null = null;
  private deadlineAt = Infinity;
  private readonly closeListeners: Array<() => void> = [];
  private readonly signalListeners = new Set<(m: Message) => void>();

  private constructor(private readonly socket: Duplex & { unref?(): void }) {
    socket.unref?.(); // an idle connection must not keep the process alive; a pending call's timer does
    socket.on('data', (chunk) => this.receive(chunk));
    socket.on('close', () => this.fail(new DBusClosed('the D-Bus connection closed')));
    socket.on('error', (e) => this.fail(new DBusClosed(`the D-Bus connection failed: ${e.message}`)));
  }

  /**
   * Connects to an address (unix:path=, unix:abstract=, tcp:host=,port=; the first that answers). A bus is
   * said Hello to; a peer (`peer: true`, an app's own socket) has no bus to greet.
   */
  static async open(address: string, { timeoutMs = DEFAULT_TIMEOUT_MS, peer = false } = {}): Promise<DBusConnection> {
    const failures: string[] = [];
    for (const entry of address.split(';').filter(Boolean)) {
      let socket: Duplex;
      try {
        socket = await socketFor(entry, timeoutMs);
        await authenticate(socket, timeoutMs);
      } catch (e) {
        failures.push(`${entry}: ${(e as Error).message}`);
        continue;
      }
      const bus = new DBusConnection(socket);
      if (peer) return bus;
      try {
        [bus.uniqueName] = (await bus.call(
          {
            destination: 'org.freedesktop.DBus',
            path: '/org/freedesktop/DBus',
            interface: 'org.freedesktop.DBus',
            member: 'Hello',
          },
          timeoutMs,
        )) as [string];
        return bus;
      } catch (e) {
        bus.close();
        failures.push(`${entry}: Hello: ${(e as Error).message}`);
      }
    }
    throw new Error(failures.join('; ') || `no usable address in "${address}"`);
  }

  /** Runs `listener` once when the connection closes (or failed). */
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  /** Hands every signal received to `listener` until the returned function is called. */
  onSignal(listener: (m: Message) => void): () => void {
    this.signalListeners.add(listener);
    return () => this.signalListeners.delete(listener);
  }

  /** A method call; resolves with the reply's body, rejects with DBusError, DBusClosed or DBusTimeout. */
  call(m: MethodCall, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<unknown[]> {
    const what = `${m.interface}.${m.member}`;
    if (this.closed) return Promise.reject(new DBusClosed(`the D-Bus connection is closed; ${what} was not sent`));
    const serial = this.nextSerial();
    let bytes: Buffer;
    try {
      bytes = encodeMessage({ type: MESSAGE.methodCall, flags: 0, serial, ...m });
    } catch (e) {
      return Promise.reject(new TypeError(`${what}: ${(e as Error).message}`));
    }
    return new Promise<unknown[]>((resolve, reject) => {
      const deadline = performance.now() + timeoutMs;
      this.pending.set(serial, { resolve, reject, deadline, what, timeoutMs });
      this.watch(deadline);
      this.write(bytes);
    });
  }

  close(): void {
    this.socket.destroy();
    this.fail(new DBusClosed('the D-Bus connection was closed'));
  }

  private nextSerial(): number {
    this.serial = this.serial >= 0xffffffff ? 1 : this.serial + 1;
    return this.serial;
  }

  /** The messages of one tick (a pipelined batch of calls) leave in one write. */
  private write(bytes: Buffer): void {
    this.outbox.push(bytes);
    if (this.outbox.length === 1) process.nextTick(() => this.flush());
  }

  /** Sends the messages of this tick so far now, in one write, rather than when the tick ends. */
  flush(): void {
    if (!this.outbox.length) return;
    const batch = this.outbox;
    this.outbox = [];
    if (!this.closed) this.socket.write(batch.length === 1 ? batch[0]! : Buffer.concat(batch));
  }

  /** Makes sure the deadline timer fires by `deadline`; it holds the process open only while calls are pending. */
  private watch(deadline: number): void {
    if (this.deadlineTimer && deadline >= this.deadlineAt) {
      this.deadlineTimer.ref();
      return;
    }
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineAt = deadline;
    this.deadlineTimer = setTimeout(() => this.expire(), Math.max(0, deadline - performance.now()));
  }

  /** Rejects the calls past their deadline and watches the earliest of the rest. */
  private expire(): void {
    this.deadlineTimer = null;
    this.deadlineAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const [serial, p] of this.pending) {
      if (p.deadline <= now) {
        this.pending.delete(serial);
        p.reject(new DBusTimeout(`no answer to ${p.what} within ${p.timeoutMs} ms`));
      } else next = Math.min(next, p.deadline);
    }
    if (next < Infinity) this.watch(next);
  }

  private receive(chunk: Buffer): void {
    this.received.push(chunk);
    this.receivedBytes += chunk.length;
    while (!this.closed) {
      // A message's length is in its first 16 bytes; its pieces are joined only once all have come (a
      // large reply, the app's whole cache, comes in many reads: joining each read to the rest was quadratic).
      if (this.receivedBytes < 16) return;
      if (this.received[0]!.length < 16) this.received = [Buffer.concat(this.received)];
      const length = messageLength(this.received[0]!);
      if (!(length >= 16 && length <= MAX_MESSAGE_BYTES)) {
        this.socket.destroy();
        this.fail(
          new DBusClosed(
            `the D-Bus peer announced a message of ${length} bytes, past the ${MAX_MESSAGE_BYTES}-byte bound; the connection was closed`,
          ),
        );
        return;
      }
      if (this.receivedBytes < length) return;
      const all = this.received.length === 1 ? this.received[0]! : Buffer.concat(this.received);
      const bytes = all.subarray(0, length);
      const rest = all.subarray(length);
      this.received = rest.length ? [rest] : [];
      this.receivedBytes = rest.length;
      let message: Message;
      try {
        message = decodeMessage(bytes);
      } catch (e) {
        // The stream cannot be resynchronised after a message it cannot read.
        this.socket.destroy();
        this.fail(
          new DBusClosed(`the D-Bus connection sent a message this client cannot read (${(e as Error).message})`),
        );
        return;
      }
      try {
        this.dispatch(message);
      } catch (e) {
        // Never out of the socket's data event (an uncaught exception ends the process): one message this
        // client cannot act on (a call to us it cannot answer) is dropped, and the connection goes on.
        process.stderr.write(
          `verity: a D-Bus message was dropped, it could not be handled: ${(e as Error)?.stack ?? String(e)}\n`,
        );
      }
    }
  }

  private dispatch(m: Message): void {
    if (m.type === MESSAGE.methodReturn || m.type === MESSAGE.error) {
      const pending = m.replySerial === undefined ? undefined : this.pending.get(m.replySerial);
      if (!pending) return;
      this.pending.delete(m.replySerial!);
      if (!this.pending.size) this.deadlineTimer?.unref();
      if (m.type === MESSAGE.methodReturn) pending.resolve(m.body);
      else
        pending.reject(
          new DBusError(
            m.errorName ?? 'org.freedesktop.DBus.Error.Failed',
            typeof m.body[0] === 'string' ? m.body[0] : '',
            pending.what,
          ),
        );
    } else if (m.type === MESSAGE.signal) {
      for (const listener of this.signalListeners) listener(m);
    } else if (m.type === MESSAGE.methodCall && !(m.flags & FLAG_NO_REPLY_EXPECTED)) {
      // On a bus the reply goes to the caller by name; on a peer connection there is no name (nor need for one).
      const ping = m.interface === 'org.freedesktop.DBus.Peer' && m.member === 'Ping';
      this.write(
        encodeMessage(
          ping
            ? {
                type: MESSAGE.methodReturn,
                flags: FLAG_NO_REPLY_EXPECTED,
                serial: this.nextSerial(),
                replySerial: m.serial,
                destination: m.sender,
              }
            : {
                type: MESSAGE.error,
                flags: FLAG_NO_REPLY_EXPECTED,
                serial: this.nextSerial(),
                replySerial: m.serial,
                destination: m.sender,
                errorName: 'org.freedesktop.DBus.Error.UnknownMethod',
                signature: 's',
                body: [`this connection serves no ${m.interface}.${m.member}`],
              },
        ),
      );
    }
  }

  private fail(e: Error): void {
    if (!this.closed) {
      this.closed = true;
      for (const listener of this.closeListeners.splice(0)) listener();
    }
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = null;
    this.deadlineAt = Infinity;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}

/**
 * A connected socket for one address entry (values percent-decoded, as the D-Bus spec says). Node pads an
 * abstract socket name to the whole sun_path and so cannot reach the exact-length names dbus-daemon binds:
 * those go through usocket.
 */
function socketFor(entry: string, timeoutMs: number): Promise<Duplex> {
  const colon = entry.indexOf(':');
  const transport = entry.slice(0, colon);
  const params = new Map(
    entry
      .slice(colon + 1)
      .split(',')
      .map((kv) => {
        const eq = kv.indexOf('=');
        return [kv.slice(0, eq), decodeURIComponent(kv.slice(eq + 1))] as [string, string];
      }),
  );
  let socket: Duplex, connected: string;
  if (transport === 'unix' && params.has('path')) [socket, connected] = [connect(params.get('path')!), 'connect'];
  else if (transport === 'tcp' && params.has('port'))
    [socket, connected] = [connect(Number(params.get('port')), params.get('host') ?? 'localhost'), 'connect'];
  else if (transport === 'unix' && params.has('abstract')) {
    let USocket: new (options: { path: string }) => Duplex;
    try {
      ({ USocket } = createRequire(import.meta.url)('usocket'));
    } catch {
      return Promise.reject(
        new Error(
          'a unix:abstract= address needs the optional usocket package, which is not installed (npm install usocket)',
        ),
      );
    }
    [socket, connected] = [new USocket({ path: `\0${params.get('abstract')}` }), 'connected'];
  } else {
    return Promise.reject(
      new Error('unsupported D-Bus address (this client speaks unix:path=, unix:abstract= and tcp:)'),
    );
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
    const fail = (e: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(`cannot connect: ${e.message}`));
    };
    socket.once('error', fail);
    socket.once(connected, () => {
      clearTimeout(timer);
      socket.off('error', fail);
      resolve(socket);
    });
  });
}

/** The SASL exchange: EXTERNAL with our uid, then BEGIN. */
function authenticate(socket: Duplex, timeoutMs: number): Promise<void> {
  const uid = Buffer.from(String(process.getuid?.() ?? 0)).toString('hex');
  return new Promise((resolve, reject) => {
    let got = '';
    const timer = setTimeout(() => done(new Error(`no answer to authentication within ${timeoutMs} ms`)), timeoutMs);
    const done = (e: Error | null) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      if (e) {
        socket.destroy();
        reject(e);
      } else resolve();
    };
    const onError = (e: Error) => done(new Error(`the connection failed during authentication: ${e.message}`));
    const onData = (chunk: Buffer) => {
      got += chunk.toString('latin1');
      const end = got.indexOf('\r\n');
      if (end < 0) return;
      const line = got.slice(0, end);
      if (!line.startsWith('OK ')) return done(new Error(`the bus refused EXTERNAL authentication (${line})`));
      socket.write(Buffer.from('BEGIN\r\n', 'latin1'));
      done(null);
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.write(Buffer.from(`\0AUTH EXTERNAL ${uid}\r\n`, 'latin1'));
  });
}
