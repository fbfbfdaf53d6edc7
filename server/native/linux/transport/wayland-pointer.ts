// Pointer input on wlroots compositors: a small Wayland client of Verity's own that speaks
// zwlr_virtual_pointer_v1 (no Debian tool does: ydotool needs /dev/uinput, wlrctl is not packaged). It needs
// no file descriptors, so a plain Unix socket carries it: bind the seat and the manager, create a virtual
// pointer, send absolute motion or buttons, and wait for the compositor's answer to a sync (so the events
// were taken before the call returns). One connection per call; every wait is bounded.
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { Refusal } from '../../../contract/refusal.js';
import { machineEnv } from '../../../contract/machine-env.js';
import { routes, waylandNoRoute, waylandScreenSize } from './wayland.js';

const ROUNDTRIP_TIMEOUT_MS = 3000;
/** Linux input event codes of the buttons (linux/input-event-codes.h). */
const BUTTON_CODE = { left: 0x110, right: 0x111, middle: 0x112 } as const;
const MANAGER = 'zwlr_virtual_pointer_manager_v1';

/** Encodes one request: object id, opcode, and its arguments (uint/int/object/new_id words and strings). */
export function request(object: number, opcode: number, args: Array<number | string>): Buffer {
  const parts: Buffer[] = [];
  for (const a of args) {
    if (typeof a === 'number') {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(a >>> 0);
      parts.push(b);
    } else {
      const bytes = Buffer.from(`${a}\0`, 'utf8');
      const padded = Buffer.alloc(4 + Math.ceil(bytes.length / 4) * 4);
      padded.writeUInt32LE(bytes.length);
      bytes.copy(padded, 4);
      parts.push(padded);
    }
  }
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeUInt32LE(object);
  head.writeUInt32LE(((8 + body.length) << 16) | opcode, 4);
  return Buffer.concat([head, body]);
}

/** Reads a string argument at `at`: its value and the offset after it. */
function stringAt(buf: Buffer, at: number): [string, number] {
  const len = buf.readUInt32LE(at);
  return [buf.toString('utf8', at + 4, at + 4 + Math.max(0, len - 1)), at + 4 + Math.ceil(len / 4) * 4];
}

class Client {
  private buffered = Buffer.alloc(0);
  private nextId = 2;
  private readonly globals = new Map<string, { name: number; version: number }>();
  private syncs = new Map<number, () => void>();
  private failure: Error | null = null;
  private readonly registry: number;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (d) => this.onData(d));
    socket.on('error', (e) => this.fail(new Error(`the Wayland connection failed: ${e.message}`)));
    socket.on('close', () => this.fail(new Error('the compositor closed the Wayland connection')));
    this.registry = this.newId();
    this.send(1, 1, [this.registry]); // wl_display.get_registry
  }

  static open(): Promise<Client> {
    const env = machineEnv();
    const display = env.WAYLAND_DISPLAY || 'wayland-0';
    const path = display.startsWith('/') ? display : join(env.XDG_RUNTIME_DIR ?? '', display);
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(
          new Refusal(
            'unavailable',
            `the Wayland compositor at ${path} did not accept a connection within ${ROUNDTRIP_TIMEOUT_MS} ms`,
          ),
        );
      }, ROUNDTRIP_TIMEOUT_MS);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(new Client(socket));
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(new Refusal('unavailable', `cannot connect to the Wayland compositor at ${path}: ${e.message}`));
      });
    });
  }

  newId(): number {
    return this.nextId++;
  }

  send(object: number, opcode: number, args: Array<number | string>): void {
    this.socket.write(request(object, opcode, args));
  }

  /** wl_display.sync: resolves once the compositor has handled everything sent before it. */
  roundtrip(what: string): Promise<void> {
    const callback = this.newId();
    this.send(1, 0, [callback]);
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const timer = setTimeout(
        () =>
          reject(
            new Refusal(
              'unavailable',
              `the Wayland compositor did not answer within ${ROUNDTRIP_TIMEOUT_MS} ms (${what})`,
            ),
          ),
        ROUNDTRIP_TIMEOUT_MS,
      );
      this.syncs.set(callback, () => {
        clearTimeout(timer);
        if (this.failure) reject(this.failure);
        else resolve();
      });
    });
  }

  bind(iface: string, version: number): number {
    const global = this.globals.get(iface);
    if (!global) throw new Error(`no ${iface}`);
    const id = this.newId();
    this.send(this.registry, 0, [global.name, iface, Math.min(version, global.version), id]);
    return id;
  }

  has(iface: string): boolean {
    return this.globals.has(iface);
  }

  close(): void {
    this.socket.destroy();
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const done of this.syncs.values()) done();
    this.syncs.clear();
  }

  private onData(d: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, d]);
    while (this.buffered.length >= 8) {
      const object = this.buffered.readUInt32LE(0);
      const word = this.buffered.readUInt32LE(4);
      const size = word >>> 16,
        opcode = word & 0xffff;
      if (size < 8 || this.buffered.length < size) return;
      const msg = this.buffered.subarray(0, size);
      this.buffered = this.buffered.subarray(size);
      if (object === 1 && opcode === 0) {
        const [message] = stringAt(msg, 16);
        this.fail(new Refusal('unavailable', `the Wayland compositor refused Verity's pointer: ${message}`));
      } else if (object === this.registry && opcode === 0) {
        const name = msg.readUInt32LE(8);
        const [iface, at] = stringAt(msg, 12);
        this.globals.set(iface, { name, version: msg.readUInt32LE(at) });
      } else if (opcode === 0 && this.syncs.has(object)) {
        const done = this.syncs.get(object)!;
        this.syncs.delete(object);
        done();
      }
    }
  }
}

/**
 * The virtual pointer, made once and kept like a real mouse: a pointer made per call appears on the seat
 * just before its button event, and GTK, not yet holding a wl_pointer for it, missed the click (measured).
 */
let held: Promise<{ client: Client; pointer: number }> | null = null;
/** How long clients get to take a new pointer device on the seat before its first event. */
const NEW_DEVICE_SETTLE_MS = 150;

async function makePointer(): Promise<{ client: Client; pointer: number }> {
  const client = await Client.open();
  try {
    await client.roundtrip('listing its globals');
    if (!client.has(MANAGER) || !client.has('wl_seat'))
      throw new Refusal(
        'unavailable',
        `this Wayland compositor does not offer ${client.has('wl_seat') ? MANAGER : 'a seat'} (wlroots compositors do; GNOME and KDE need the RemoteDesktop portal), so no pointer event was sent; use an element_token`,
      );
    const seat = client.bind('wl_seat', 1);
    const manager = client.bind(MANAGER, 1);
    const pointer = client.newId();
    client.send(manager, 0, [seat, pointer]); // create_virtual_pointer(seat, id)
    await client.roundtrip('making the virtual pointer');
    await new Promise((r) => setTimeout(r, NEW_DEVICE_SETTLE_MS));
    return { client, pointer };
  } catch (e) {
    client.close();
    throw e;
  }
}

/** Sends `events` on the held virtual pointer, and returns once the compositor has taken them. */
async function withPointer(events: (send: (opcode: number, args: number[]) => void) => void): Promise<void> {
  if (!routes().pointer)
    throw waylandNoRoute('a pointer event', 'virtual-pointer protocol and a known window position');
  held ??= makePointer();
  const mine = held;
  try {
    const { client, pointer } = await mine;
    events((opcode, args) => client.send(pointer, opcode, args));
    await client.roundtrip('taking the pointer events');
  } catch (e) {
    if (held === mine) held = null; // made again on the next call (the compositor restarted, or refused)
    void mine.then(
      (p) => p.client.close(),
      () => undefined,
    );
    throw e;
  }
}

/** Lets the virtual pointer go (the server is shutting down). */
export function closeWaylandPointer(): void {
  const h = held;
  held = null;
  void h?.then(
    (p) => p.client.close(),
    () => undefined,
  );
}

const now = () => Date.now() >>> 0;
/** wl_fixed_t: 24.8 fixed point. */
const fixed = (n: number) => Math.round(n * 256);
/** How far one wheel notch scrolls, in the axis's units (libinput's 15 degrees a notch). */
const WHEEL_NOTCH = 15;

/** A screen point as absolute motion over the outputs' layout; a point off the screen is refused. */
interface Point {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The last point moved to, sent again with a click (the pointer's position is the compositor's). */
let lastPoint: Point | null = null;

async function place(x: number, y: number): Promise<Point> {
  const { width, height } = await waylandScreenSize();
  if (!(x >= 0 && y >= 0 && x < width && y < height))
    throw new Refusal(
      'invalid_arguments',
      `the point (${Math.round(x)}, ${Math.round(y)}) is off the screen (${width}x${height}); nothing was sent`,
    );
  return { x: Math.round(x), y: Math.round(y), width, height };
}

type Send = (opcode: number, args: number[]) => void;
const motion = (send: Send, p: Point) => {
  send(1, [now(), p.x, p.y, p.width, p.height]); // motion_absolute
  send(4, []); // frame
};
const buttonEvent = (send: Send, button: 'left' | 'right' | 'middle', pressed: boolean) => {
  send(2, [now(), BUTTON_CODE[button], pressed ? 1 : 0]);
  send(4, []);
};

/** Moves the compositor's pointer to a screen point. */
export async function waylandMove(x: number, y: number): Promise<void> {
  const p = await place(x, y);
  lastPoint = p;
  await withPointer((send) => motion(send, p));
}

/** Presses and releases a button `count` times where the pointer is (modifiers: input.ts holds them around it). */
export async function waylandClick(button: 'left' | 'right' | 'middle', count: number): Promise<void> {
  const at = lastPoint;
  await withPointer((send) => {
    if (at) motion(send, at);
    for (let i = 0; i < count; i++) {
      buttonEvent(send, button, true);
      buttonEvent(send, button, false);
    }
  });
}

/** Wheel notches where the pointer is: a wheel's discrete axis steps, one frame each, as a mouse sends them. */
export async function waylandWheel(direction: 'up' | 'down' | 'left' | 'right', steps: number): Promise<void> {
  const at = lastPoint;
  const axis = direction === 'up' || direction === 'down' ? 0 : 1; // vertical_scroll, horizontal_scroll
  const sign = direction === 'down' || direction === 'right' ? 1 : -1;
  await withPointer((send) => {
    if (at) motion(send, at);
    for (let i = 0; i < steps; i++) {
      send(5, [0]); // axis_source: wheel
      send(7, [now(), axis, fixed(sign * WHEEL_NOTCH), sign]); // axis_discrete
      send(4, []);
    }
  });
}

/** Visits `steps` points from `from` to `to` (its end included), `durationMs` spread between them. */
export async function alongPath(
  from: { x: number; y: number },
  to: { x: number; y: number },
  steps: number,
  durationMs: number,
  visit: (p: { x: number; y: number }) => Promise<void>,
): Promise<void> {
  for (let i = 1; i <= steps; i++) {
    if (durationMs > 0) await new Promise((r) => setTimeout(r, durationMs / steps));
    const t = i / steps;
    await visit({ x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t });
  }
}

/**
 * A drag: press at `from`, `steps` motions to `to` (`durationMs` spread over them), release. Each step is
 * its own frame and roundtrip, as a hand's motion arrives; the button is let go even when a step fails.
 */
export async function waylandDrag(
  from: { x: number; y: number },
  to: { x: number; y: number },
  steps: number,
  durationMs: number,
  button: 'left' | 'right' | 'middle',
): Promise<void> {
  const start = await place(from.x, from.y);
  const end = await place(to.x, to.y);
  await withPointer((send) => {
    motion(send, start);
    buttonEvent(send, button, true);
  });
  let last = start;
  try {
    await alongPath(start, end, steps, durationMs, async ({ x, y }) => {
      const p = { ...end, x: Math.round(x), y: Math.round(y) };
      last = p;
      await withPointer((send) => motion(send, p));
    });
  } finally {
    lastPoint = last;
    await withPointer((send) => buttonEvent(send, button, false));
  }
}
