// A small X11 protocol client for the few queries the native route asks on every call (a window's pid,
// title, bounds and map state; the client list; the active window). Spawning xprop and xwininfo for them
// cost milliseconds per call; one socket answers them pipelined in a fraction of one. Besides reading,
// it sends only events and requests to the window manager (ewmh.ts, settle.ts' ping); the focus before keys
// stays with xdotool, input with XTest. A dead X server rejects what is pending and the
// next call reconnects, so it never takes the process down.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { hostname, homedir } from 'node:os';
import { join } from 'node:path';
import { machineEnv } from '../../../contract/machine-env.js';

/** An X protocol error reply (code 3 is BadWindow, 9 BadDrawable). */
export class XError extends Error {
  constructor(
    readonly code: number,
    readonly request: string,
    readonly badValue: number,
  ) {
    super(`X error ${code} (${X_ERROR_NAMES[code] ?? 'unknown'}) answering ${request} for 0x${badValue.toString(16)}`);
  }
}
const X_ERROR_NAMES: Record<number, string> = {
  3: 'BadWindow',
  4: 'BadPixmap',
  5: 'BadAtom',
  9: 'BadDrawable',
  11: 'BadAlloc',
};
export const isBadWindow = (e: unknown) => e instanceof XError && (e.code === 3 || e.code === 9);

const REQUEST_TIMEOUT_MS = 5000;
const pad4 = (n: number) => (4 - (n % 4)) % 4;

interface Pending {
  name: string;
  resolve: (reply: Buffer) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export interface XProperty {
  type: number;
  format: number;
  data: Buffer;
}

/** A 32-bit property's values (CARDINAL, WINDOW lists); none for a missing or differently typed one. */
export function cardinals(p: XProperty | null): number[] {
  if (p?.format !== 32) return [];
  const values: number[] = [];
  for (let at = 0; at + 4 <= p.data.length; at += 4) values.push(p.data.readUInt32LE(at));
  return values;
}

export class XConnection {
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  private buffer: Buffer = Buffer.alloc(0);
  private readonly atoms = new Map<string, Promise<number>>();
  closed = false;
  private readonly extensions = new Map<string, Promise<number | null>>();
  /** Who hears the events this connection selected (settle.ts: a _NET_WM_PING's answer on the root). */
  private readonly eventListeners = new Set<(event: Buffer) => void>();

  private constructor(
    private readonly socket: Socket,
    readonly setup: XSetup,
  ) {
    socket.unref(); // an idle X connection must not keep the process alive; a pending request's timer does
    socket.on('data', (chunk) => this.receive(chunk));
    socket.on('close', () => this.fail(new Error('the X server closed the connection')));
    socket.on('error', (e) => this.fail(new Error(`the X connection failed: ${e.message}`)));
  }

  /** Connects to DISPLAY (":N[.S]" over its unix socket, "host:N" over TCP) with its MIT cookie if there is one. */
  static async open(display: string): Promise<XConnection> {
    const m = /^([^:]*):(\d+)(?:\.(\d+))?$/.exec(display);
    if (!m) throw new Error(`DISPLAY=${display} is not of the form [host]:N[.S]`);
    const [, host, number, screenText] = m;
    const local = !host || host === 'unix';
    const socket = local ? connect(`/tmp/.X11-unix/X${number}`) : connect(6000 + Number(number), host);
    // Like Xlib, a display on this machine reached over TCP (ssh's localhost:10) uses the local host's cookie.
    const here = local || host === 'localhost' || host === '127.0.0.1' || host === hostname();
    const setup = await handshake(socket, cookieFor(here ? hostname() : host, number));
    return new XConnection(socket, parseSetup(setup, Number(screenText ?? 0)));
  }

  get root(): number {
    return this.setup.root;
  }

  close(): void {
    this.socket.destroy();
    this.fail(new Error('the X connection was closed'));
  }

  atom(name: string): Promise<number> {
    return this.once(this.atoms, name, () =>
      this.request(16, 0, nameBody(name), `InternAtom ${name}`).then((r) => r.readUInt32LE(8)),
    );
  }

  /** A property's raw value (type 0 = any type); null when the window does not have it. */
  async property(window: number, name: string, maxLongs = 4096): Promise<XProperty | null> {
    const body = Buffer.alloc(20);
    body.writeUInt32LE(window, 0);
    body.writeUInt32LE(await this.atom(name), 4);
    body.writeUInt32LE(0, 8); // AnyPropertyType
    body.writeUInt32LE(0, 12);
    body.writeUInt32LE(maxLongs, 16);
    const r = await this.request(20, 0, body, `GetProperty ${name}`, window);
    const format = r[1],
      type = r.readUInt32LE(8),
      count = r.readUInt32LE(16);
    if (type === 0) return null;
    return { type, format, data: r.subarray(32, 32 + count * (format / 8)) };
  }

  async geometry(window: number): Promise<{ x: number; y: number; w: number; h: number; border: number }> {
    const r = await this.request(14, 0, u32(window), 'GetGeometry', window);
    return {
      x: r.readInt16LE(12),
      y: r.readInt16LE(14),
      w: r.readUInt16LE(16),
      h: r.readUInt16LE(18),
      border: r.readUInt16LE(20),
    };
  }

  /** Where a window's (x, y) is in root coordinates. */
  async toRoot(window: number, x: number, y: number): Promise<{ x: number; y: number }> {
    const body = Buffer.alloc(12);
    body.writeUInt32LE(window, 0);
    body.writeUInt32LE(this.root, 4);
    body.writeInt16LE(x, 8);
    body.writeInt16LE(y, 10);
    const r = await this.request(40, 0, body, 'TranslateCoordinates', window);
    return { x: r.readInt16LE(12), y: r.readInt16LE(14) };
  }

  /** 0 unmapped, 1 unviewable (an ancestor is unmapped), 2 viewable. */
  async mapState(window: number): Promise<number> {
    return (await this.request(3, 0, u32(window), 'GetWindowAttributes', window))[26];
  }

  /** Map state and override-redirect (popups, menus and popovers that no window manager manages). */
  async attributes(window: number): Promise<{ mapState: number; overrideRedirect: boolean }> {
    const r = await this.request(3, 0, u32(window), 'GetWindowAttributes', window);
    return { mapState: r[26], overrideRedirect: r[27] !== 0 };
  }

  /** A window's children, bottom to top (QueryTree). */
  async children(window: number): Promise<number[]> {
    const r = await this.request(15, 0, u32(window), 'QueryTree', window);
    const count = r.readUInt16LE(16);
    const out: number[] = [];
    for (let i = 0; i < count; i++) out.push(r.readUInt32LE(32 + 4 * i));
    return out;
  }

  /** A window's parent (0 for the root), from QueryTree. */
  async parent(window: number): Promise<number> {
    return (await this.request(15, 0, u32(window), 'QueryTree', window)).readUInt32LE(12);
  }

  /** Where the pointer is on the root window (screen pixels), from QueryPointer on the root. */
  async pointer(): Promise<{ x: number; y: number }> {
    const r = await this.request(38, 0, u32(this.root), 'QueryPointer', this.root);
    return { x: r.readInt16LE(16), y: r.readInt16LE(18) };
  }

  /** The child of `window` that holds the pointer (0 when none), from QueryPointer. */
  async pointerChild(window: number): Promise<number> {
    return (await this.request(38, 0, u32(window), 'QueryPointer', window)).readUInt32LE(12);
  }

  /**
   * GrabPointer on `window` (no events, both modes asynchronous) and its UngrabPointer right behind it: the
   * status says whether another client holds the pointer now (0 Success, 1 AlreadyGrabbed, 3 NotViewable,
   * 4 Frozen). A grab on the window that holds the pointer generates no crossing events.
   */
  async probePointerGrab(window: number): Promise<number> {
    const body = Buffer.alloc(20);
    body.writeUInt32LE(window, 0);
    body.writeUInt16LE(0, 4); // event mask
    body[6] = 1; // pointer mode: asynchronous
    body[7] = 1; // keyboard mode: asynchronous
    const status = this.request(26, 0, body, 'GrabPointer', window).then((r) => r[1]);
    this.send(27, 0, u32(0)); // UngrabPointer, CurrentTime: releases it whether or not it was taken
    return status;
  }

  /** Sets this connection's event mask on a window (ChangeWindowAttributes, CWEventMask). */
  selectInput(window: number, mask: number): void {
    const body = Buffer.alloc(12);
    body.writeUInt32LE(window, 0);
    body.writeUInt32LE(0x800, 4); // CWEventMask
    body.writeUInt32LE(mask, 8);
    this.send(2, 0, body);
  }

  /** ConfigureWindow with x, y, width and height (no reply; a window manager redirects it to itself). */
  configureWindow(window: number, f: { x: number; y: number; width: number; height: number }): void {
    const body = Buffer.alloc(8 + 16);
    body.writeUInt32LE(window, 0);
    body.writeUInt16LE(0xf, 4); // CWX | CWY | CWWidth | CWHeight
    body.writeInt32LE(f.x, 8);
    body.writeInt32LE(f.y, 12);
    body.writeUInt32LE(f.width, 16);
    body.writeUInt32LE(f.height, 20);
    this.send(12, 0, body);
  }

  /** SendEvent of a 32-byte event to `window` (mask 0: to the client that created it). */
  sendEvent(window: number, mask: number, event: Buffer): void {
    const body = Buffer.alloc(8 + 32);
    body.writeUInt32LE(window, 0);
    body.writeUInt32LE(mask, 4);
    event.copy(body, 8, 0, 32);
    this.send(25, 0, body);
  }

  /** Calls `listener` with every event this connection receives (32 bytes each) until the returned function is called. */
  onEvent(listener: (event: Buffer) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  async inputFocus(): Promise<number> {
    return (await this.request(43, 0, Buffer.alloc(0), 'GetInputFocus')).readUInt32LE(8);
  }

  /** Waits until the server has handled everything sent before (XSync): requests without replies included. */
  async sync(): Promise<void> {
    await this.inputFocus();
  }

  /** An extension's major opcode, or null when the server does not have it. */
  extension(name: string): Promise<number | null> {
    return this.once(this.extensions, name, () =>
      this.request(98, 0, nameBody(name), `QueryExtension ${name}`).then((r) => (r[8] ? r[9] : null)),
    );
  }

  /**
   * The pid of the X client that created `window`, from the X-Resource extension's QueryClientIds (1.2):
   * the server knows it for local clients from the socket's peer credentials, in the server's pid namespace
   * (where _NET_WM_PID is the client's claim in its own, and Tk and Java AWT set none). Null when the server
   * lacks the extension or does not know the pid.
   */
  async clientPid(window: number): Promise<number | null> {
    const major = await this.extension('X-Resource');
    if (major === null) return null;
    const supportsIds = await this.once(this.extensions, 'X-Resource 1.2', async () => {
      const version = Buffer.from([1, 2, 0, 0]); // client major 1, minor 2
      const r = await this.request(major, 0 /* QueryVersion */, version, 'XResQueryVersion');
      const [serverMajor, serverMinor] = [r.readUInt16LE(8), r.readUInt16LE(10)];
      return serverMajor > 1 || (serverMajor === 1 && serverMinor >= 2) ? 1 : null;
    });
    if (!supportsIds) return null;
    const body = Buffer.alloc(12);
    body.writeUInt32LE(1, 0); // one spec:
    body.writeUInt32LE(window, 4); // the client owning this XID
    body.writeUInt32LE(2, 8); // XRES_CLIENT_ID_PID_MASK
    const r = await this.request(major, 4 /* QueryClientIds */, body, 'XResQueryClientIds', window);
    const count = r.readUInt32LE(8);
    for (let i = 0, at = 32; i < count && at + 12 <= r.length; i++) {
      const mask = r.readUInt32LE(at + 4),
        length = r.readUInt32LE(at + 8);
      if (mask === 2 && length >= 4) return r.readUInt32LE(at + 12);
      at += 12 + length;
    }
    return null;
  }

  /** Asked once per key for the connection's life (atoms, extension opcodes); a failed answer is asked again. */
  private once<T>(cache: Map<string, Promise<T>>, key: string, ask: () => Promise<T>): Promise<T> {
    let answer = cache.get(key);
    if (!answer) {
      answer = ask();
      answer.catch(() => cache.delete(key));
      cache.set(key, answer);
    }
    return answer;
  }

  /** Keysyms of every keycode from min to max keycode, `perKeycode` per keycode. */
  async keyboardMapping(): Promise<{ perKeycode: number; keysyms: Uint32Array }> {
    const { minKeycode, maxKeycode } = this.setup;
    const body = Buffer.alloc(4);
    body[0] = minKeycode;
    body[1] = maxKeycode - minKeycode + 1;
    const r = await this.request(101, 0, body, 'GetKeyboardMapping');
    const perKeycode = r[1],
      count = (r.length - 32) / 4;
    const keysyms = new Uint32Array(count);
    for (let i = 0; i < count; i++) keysyms[i] = r.readUInt32LE(32 + 4 * i);
    return { perKeycode, keysyms };
  }

  /** Sets one keycode's keysyms (no reply: sync before relying on it). */
  changeKeyboardMapping(keycode: number, keysyms: number[]): void {
    const body = Buffer.alloc(4 + 4 * keysyms.length);
    body[0] = keycode;
    body[1] = keysyms.length;
    keysyms.forEach((k, i) => body.writeUInt32LE(k, 4 + 4 * i));
    this.send(100, 1, body);
  }

  /** A rectangle of the root window as 32-bit pixels in the server's byte order (ZPixmap). */
  async image(x: number, y: number, w: number, h: number): Promise<{ depth: number; data: Buffer }> {
    const body = Buffer.alloc(16);
    body.writeUInt32LE(this.root, 0);
    body.writeInt16LE(x, 4);
    body.writeInt16LE(y, 6);
    body.writeUInt16LE(w, 8);
    body.writeUInt16LE(h, 10);
    body.writeUInt32LE(0xffffffff, 12);
    const r = await this.request(73, 2, body, 'GetImage');
    return { depth: r[1], data: r.subarray(32) };
  }

  /** A request with no reply, e.g. XTEST FakeInput (errors for it are not waited for). */
  send(opcode: number, data: number, body: Buffer): void {
    if (this.closed) throw new Error('the X connection is closed');
    this.write(opcode, data, body);
  }

  private write(opcode: number, data: number, body: Buffer): number {
    const header = Buffer.alloc(4);
    header[0] = opcode;
    header[1] = data;
    header.writeUInt16LE(1 + body.length / 4, 2);
    this.seq = (this.seq + 1) & 0xffff;
    this.socket.write(body.length ? Buffer.concat([header, body]) : header);
    return this.seq;
  }

  private request(opcode: number, data: number, body: Buffer, name: string, about = 0): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('the X connection is closed'));
    const seq = this.write(opcode, data, body);
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        reject(new Error(`the X server did not answer ${name} within ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(seq, { name: `${name}${about ? ` 0x${about.toString(16)}` : ''}`, resolve, reject, timer });
    });
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    while (this.buffer.length >= 32) {
      const kind = this.buffer[0];
      const size = kind === 1 ? 32 + 4 * this.buffer.readUInt32LE(4) : 32;
      if (this.buffer.length < size) return;
      const packet = this.buffer.subarray(0, size);
      this.buffer = this.buffer.subarray(size);
      if (kind > 1) {
        // An event: only those selected for a moment (settle.ts) are heard.
        for (const listener of this.eventListeners) listener(Buffer.from(packet));
        continue;
      }
      const seq = packet.readUInt16LE(2);
      const pending = this.pending.get(seq);
      if (!pending) continue;
      this.pending.delete(seq);
      clearTimeout(pending.timer);
      if (kind === 1) pending.resolve(Buffer.from(packet));
      else pending.reject(new XError(packet[1], pending.name, packet.readUInt32LE(4)));
    }
  }

  private fail(e: Error): void {
    this.closed = true;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.pending.clear();
  }
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n, 0);
  return b;
};

/** A request body that is a name: its length, two unused bytes, the name padded to four. */
function nameBody(name: string): Buffer {
  const bytes = Buffer.from(name, 'latin1');
  const body = Buffer.alloc(4 + bytes.length + pad4(bytes.length));
  body.writeUInt16LE(bytes.length, 0);
  bytes.copy(body, 4);
  return body;
}

/** The MIT-MAGIC-COOKIE-1 for this display from the Xauthority file, if it has one. */
function cookieFor(host: string, display: string): Buffer | null {
  let file: Buffer;
  try {
    file = readFileSync(machineEnv().XAUTHORITY || join(homedir(), '.Xauthority'));
  } catch {
    return null;
  }
  let at = 0;
  const field = () => {
    const n = file.readUInt16BE(at);
    const v = file.subarray(at + 2, at + 2 + n);
    at += 2 + n;
    return v;
  };
  let wildcard: Buffer | null = null;
  while (at + 2 <= file.length) {
    try {
      const family = file.readUInt16BE(at);
      at += 2;
      const address = field().toString('latin1'),
        number = field().toString('latin1'),
        name = field().toString('latin1'),
        data = field();
      if (name !== 'MIT-MAGIC-COOKIE-1' || (number !== display && number !== '')) continue;
      if (family === 0xffff) wildcard ??= data;
      else if (address === host) return data;
    } catch {
      break;
    }
  }
  return wildcard;
}

/** Sends the connection setup and returns the server's setup block (after its 8-byte header). */
function handshake(socket: Socket, cookie: Buffer | null): Promise<Buffer> {
  const name = cookie ? Buffer.from('MIT-MAGIC-COOKIE-1', 'latin1') : Buffer.alloc(0);
  const data = cookie ?? Buffer.alloc(0);
  const head = Buffer.alloc(12);
  head[0] = 0x6c; // 'l': little-endian
  head.writeUInt16LE(11, 2);
  head.writeUInt16LE(name.length, 6);
  head.writeUInt16LE(data.length, 8);
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0);
    const timer = setTimeout(
      () => done(new Error(`the X server did not answer the connection setup within ${REQUEST_TIMEOUT_MS} ms`)),
      REQUEST_TIMEOUT_MS,
    );
    const done = (e: Error | null, setup?: Buffer) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      if (e) {
        socket.destroy();
        reject(e);
      } else resolve(setup!);
    };
    const onError = (e: Error) => done(new Error(`cannot connect to the X server: ${e.message}`));
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length < 8) return;
      const total = 8 + 4 * got.readUInt16LE(6);
      if (got.length < total) return;
      if (got[0] !== 1)
        return done(
          new Error(
            `the X server refused the connection: ${got.subarray(8, 8 + got[1]).toString('latin1') || 'authentication required'}`,
          ),
        );
      done(null, got.subarray(8, total));
    };
    socket.on('data', onData);
    socket.once('error', onError);
    socket.write(Buffer.concat([head, name, Buffer.alloc(pad4(name.length)), data, Buffer.alloc(pad4(data.length))]));
  });
}

export interface XSetup {
  root: number;
  width: number;
  height: number;
  minKeycode: number;
  maxKeycode: number;
  /** Bits per pixel of the root window's depth (32 for the usual depth 24). */
  bitsPerPixel: number;
  /** 0 LSBFirst (BGRX for depth 24), 1 MSBFirst. */
  imageByteOrder: number;
  /** The bits of a resource id that a client picks; the rest say which client it is (the same for all). */
  resourceIdMask: number;
}

/** What the server's setup block says about screen `index` (vendor, pixmap formats, then screens). */
function parseSetup(setup: Buffer, index: number): XSetup {
  const vendorLength = setup.readUInt16LE(16),
    screens = setup[20],
    formatCount = setup[21];
  if (index >= screens) throw new Error(`the X server has ${screens} screen(s), not screen ${index}`);
  const formatsAt = 32 + vendorLength + pad4(vendorLength);
  let at = formatsAt + 8 * formatCount;
  for (let s = 0; s < index; s++) {
    const depths = setup[at + 39];
    at += 40;
    for (let d = 0; d < depths; d++) at += 8 + 24 * setup.readUInt16LE(at + 2);
  }
  const depth = setup[at + 38];
  let bitsPerPixel = 0;
  for (let f = 0; f < formatCount; f++)
    if (setup[formatsAt + 8 * f] === depth) bitsPerPixel = setup[formatsAt + 8 * f + 1];
  return {
    root: setup.readUInt32LE(at),
    width: setup.readUInt16LE(at + 20),
    height: setup.readUInt16LE(at + 22),
    minKeycode: setup[26],
    maxKeycode: setup[27],
    bitsPerPixel,
    imageByteOrder: setup[22],
    resourceIdMask: setup.readUInt32LE(8),
  };
}
