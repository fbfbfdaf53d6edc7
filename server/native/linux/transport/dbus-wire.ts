// The D-Bus wire format (marshalling of the message header and of bodies by their type signature), for the
// small client in dbus.ts. Values map to JavaScript as: y n q i u d h → number, x t → bigint, b → boolean,
// s o g → string, ay → Buffer, a… → array, a{…} → object, (…) → array, v → Variant.

/** A D-Bus variant: a value with its own signature (properties are read and written as these). */
export class Variant {
  constructor(
    readonly signature: string,
    readonly value: unknown,
  ) {}
}

export const MESSAGE = { methodCall: 1, methodReturn: 2, error: 3, signal: 4 } as const;
export const FLAG_NO_REPLY_EXPECTED = 1;
const FIELD = {
  path: 1,
  interface: 2,
  member: 3,
  errorName: 4,
  replySerial: 5,
  destination: 6,
  sender: 7,
  signature: 8,
} as const;

export interface Message {
  type: number;
  flags: number;
  serial: number;
  path?: string;
  interface?: string;
  member?: string;
  errorName?: string;
  replySerial?: number;
  destination?: string;
  sender?: string;
  signature?: string;
  body: unknown[];
}

/** One complete type of a signature: its code, and for containers the types inside. */
interface TypeNode {
  code: string;
  inner: TypeNode[];
}

const ALIGN: Record<string, number> = {
  y: 1,
  g: 1,
  v: 1,
  n: 2,
  q: 2,
  b: 4,
  i: 4,
  u: 4,
  h: 4,
  s: 4,
  o: 4,
  a: 4,
  x: 8,
  t: 8,
  d: 8,
  '(': 8,
  '{': 8,
};
const signatures = new Map<string, TypeNode[]>();

/** A signature's complete types, parsed once per distinct signature. */
export function parseSignature(signature: string): TypeNode[] {
  let nodes = signatures.get(signature);
  if (nodes) return nodes;
  let at = 0;
  const one = (): TypeNode => {
    const code = signature[at++];
    if (code === 'a') return { code, inner: [one()] };
    if (code === '(' || code === '{') {
      const close = code === '(' ? ')' : '}';
      const inner: TypeNode[] = [];
      while (signature[at] !== close) {
        if (at >= signature.length) throw new TypeError(`D-Bus signature "${signature}" has an unclosed ${code}`);
        inner.push(one());
      }
      at++;
      return { code, inner };
    }
    if (!(code in ALIGN)) throw new TypeError(`D-Bus signature "${signature}" has an unknown type code "${code}"`);
    return { code, inner: [] };
  };
  nodes = [];
  while (at < signature.length) nodes.push(one());
  signatures.set(signature, nodes);
  return nodes;
}

/** Writes little-endian D-Bus data into a growing buffer; offsets (and so alignment) count from the message start. */
export class Writer {
  private buf = Buffer.allocUnsafe(512);
  at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  align(n: number): void {
    const pad = (n - (this.at % n)) % n;
    this.room(pad);
    this.buf.fill(0, this.at, this.at + pad);
    this.at += pad;
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.at++] = v;
  }
  bytes(b: Buffer): void {
    this.room(b.length);
    b.copy(this.buf, this.at);
    this.at += b.length;
  }
  u32(v: number): void {
    this.align(4);
    this.room(4);
    this.buf.writeUInt32LE(v >>> 0, this.at);
    this.at += 4;
  }
  patchU32(offset: number, v: number): void {
    this.buf.writeUInt32LE(v, offset);
  }

  string(s: string): void {
    const length = Buffer.byteLength(s, 'utf8');
    this.u32(length);
    this.room(length + 1);
    this.buf.write(s, this.at, 'utf8');
    this.at += length;
    this.buf[this.at++] = 0;
  }

  signature(s: string): void {
    this.room(s.length + 2);
    this.buf[this.at++] = s.length;
    this.buf.write(s, this.at, 'latin1');
    this.at += s.length;
    this.buf[this.at++] = 0;
  }

  values(signature: string, body: readonly unknown[]): void {
    const nodes = parseSignature(signature);
    if (nodes.length !== body.length)
      throw new TypeError(`D-Bus signature "${signature}" has ${nodes.length} value(s), the body ${body.length}`);
    nodes.forEach((node, i) => this.value(node, body[i]));
  }

  value(node: TypeNode, v: unknown): void {
    const { code } = node;
    this.align(ALIGN[code]);
    this.room(8);
    const b = this.buf;
    switch (code) {
      case 'y':
        b[this.at++] = Number(v);
        return;
      case 'b':
        b.writeUInt32LE(v ? 1 : 0, this.at);
        this.at += 4;
        return;
      case 'n':
        b.writeInt16LE(Number(v), this.at);
        this.at += 2;
        return;
      case 'q':
        b.writeUInt16LE(Number(v), this.at);
        this.at += 2;
        return;
      case 'i':
        b.writeInt32LE(Number(v), this.at);
        this.at += 4;
        return;
      case 'u':
      case 'h':
        b.writeUInt32LE(Number(v), this.at);
        this.at += 4;
        return;
      case 'x':
        b.writeBigInt64LE(BigInt(v as number), this.at);
        this.at += 8;
        return;
      case 't':
        b.writeBigUInt64LE(BigInt(v as number), this.at);
        this.at += 8;
        return;
      case 'd':
        b.writeDoubleLE(Number(v), this.at);
        this.at += 8;
        return;
      case 's':
      case 'o':
        this.string(String(v));
        return;
      case 'g':
        this.signature(String(v));
        return;
      case 'v': {
        if (!(v instanceof Variant)) throw new TypeError('a D-Bus variant takes a Variant(signature, value)');
        const types = parseSignature(v.signature);
        if (types.length !== 1) throw new TypeError(`a D-Bus variant holds one complete type, not "${v.signature}"`);
        this.signature(v.signature);
        this.value(types[0], v.value);
        return;
      }
      case '(':
      case '{': {
        const fields = v as unknown[];
        node.inner.forEach((f, i) => this.value(f, fields[i]));
        return;
      }
      case 'a': {
        const [item] = node.inner;
        const lengthAt = this.at;
        this.at += 4;
        this.align(ALIGN[item.code]);
        const start = this.at;
        if (item.code === 'y' && Buffer.isBuffer(v)) {
          this.room(v.length);
          v.copy(this.buf, this.at);
          this.at += v.length;
        } else if (item.code === '{') {
          const entries = v instanceof Map ? [...v.entries()] : Object.entries(v as object);
          for (const entry of entries) this.value(item, entry);
        } else {
          for (const element of v as unknown[]) this.value(item, element);
        }
        this.buf.writeUInt32LE(this.at - start, lengthAt);
        return;
      }
    }
  }

  result(): Buffer {
    return this.buf.subarray(0, this.at);
  }
}

/** Reads D-Bus data of either byte order from one received message. */
class Reader {
  constructor(
    private readonly buf: Buffer,
    private readonly le: boolean,
    public at: number,
  ) {}

  align(n: number): void {
    this.at += (n - (this.at % n)) % n;
  }
  u32(): number {
    this.align(4);
    const v = this.le ? this.buf.readUInt32LE(this.at) : this.buf.readUInt32BE(this.at);
    this.at += 4;
    return v;
  }

  private text(length: number): string {
    const s = this.buf.toString('utf8', this.at, this.at + length);
    this.at += length + 1;
    return s;
  }

  values(signature: string): unknown[] {
    return parseSignature(signature).map((node) => this.value(node));
  }

  value(node: TypeNode): unknown {
    const { code } = node,
      b = this.buf,
      le = this.le;
    this.align(ALIGN[code]);
    const at = this.at;
    switch (code) {
      case 'y':
        this.at += 1;
        return b[at];
      case 'b':
        return this.u32() !== 0;
      case 'n':
        this.at += 2;
        return le ? b.readInt16LE(at) : b.readInt16BE(at);
      case 'q':
        this.at += 2;
        return le ? b.readUInt16LE(at) : b.readUInt16BE(at);
      case 'i':
        this.at += 4;
        return le ? b.readInt32LE(at) : b.readInt32BE(at);
      case 'u':
      case 'h':
        return this.u32();
      case 'x':
        this.at += 8;
        return le ? b.readBigInt64LE(at) : b.readBigInt64BE(at);
      case 't':
        this.at += 8;
        return le ? b.readBigUInt64LE(at) : b.readBigUInt64BE(at);
      case 'd':
        this.at += 8;
        return le ? b.readDoubleLE(at) : b.readDoubleBE(at);
      case 's':
      case 'o':
        return this.text(this.u32());
      case 'g':
        this.at += 1;
        return this.text(b[at]);
      case 'v': {
        const signature = this.value(SIGNATURE) as string;
        return new Variant(signature, this.value(parseSignature(signature)[0]));
      }
      case '(':
        return node.inner.map((f) => this.value(f));
      case '{':
        return [this.value(node.inner[0]), this.value(node.inner[1])];
      case 'a': {
        const length = this.u32();
        const [item] = node.inner;
        this.align(ALIGN[item.code]);
        const end = this.at + length;
        if (item.code === 'y') {
          this.at = end;
          return b.subarray(end - length, end);
        }
        if (item.code === '{') {
          const dict: Record<string, unknown> = {};
          while (this.at < end) {
            const [k, v] = this.value(item) as [string | number, unknown];
            dict[String(k)] = v;
          }
          return dict;
        }
        const items: unknown[] = [];
        while (this.at < end) items.push(this.value(item));
        return items;
      }
    }
    throw new TypeError(`unknown D-Bus type code "${code}"`);
  }
}

const SIGNATURE = parseSignature('g')[0];

/** One message as bytes: the fixed header, the header fields, padding to 8, the body. */
export function encodeMessage(m: Omit<Message, 'body'> & { body?: readonly unknown[] }): Buffer {
  const w = new Writer();
  w.u8(0x6c); // 'l'
  w.u8(m.type);
  w.u8(m.flags);
  w.u8(1);
  w.u32(0); // body length, patched below
  w.u32(m.serial);
  w.bytes(m.type === MESSAGE.methodCall ? callFields(m) : headerFields(m));
  const bodyAt = w.at;
  if (m.signature) w.values(m.signature, m.body ?? []);
  w.patchU32(4, w.at - bodyAt);
  return w.result();
}

/**
 * A method call's header fields, encoded once per destination, object, method and signature: an action
 * calls the same few methods on the same element again and again. Bounded; cleared when full.
 */
const callFieldCache = new Map<string, Buffer>();
const CALL_FIELDS_KEPT = 2048;

function callFields(m: Omit<Message, 'body'>): Buffer {
  const key = `${m.destination}\n${m.path}\n${m.interface}\n${m.member}\n${m.signature}`;
  let fields = callFieldCache.get(key);
  if (!fields) {
    if (callFieldCache.size >= CALL_FIELDS_KEPT) callFieldCache.clear();
    fields = headerFields(m);
    callFieldCache.set(key, fields);
  }
  return fields;
}

/**
 * The header fields array (its length first) and the padding after it, as they sit from byte 12 of a
 * message: alignment counts from the message start, and byte 16 is 8-aligned, so the bytes do not
 * depend on anything before them.
 */
function headerFields(m: Omit<Message, 'body'>): Buffer {
  const w = new Writer();
  w.bytes(Buffer.alloc(12));
  w.u32(0); // the array's length, patched below
  const field = (code: number, type: string, value: unknown) => {
    if (value === undefined) return;
    w.align(8);
    w.u8(code);
    w.signature(type);
    w.value({ code: type, inner: [] }, value);
  };
  field(FIELD.path, 'o', m.path);
  field(FIELD.interface, 's', m.interface);
  field(FIELD.member, 's', m.member);
  field(FIELD.errorName, 's', m.errorName);
  field(FIELD.replySerial, 'u', m.replySerial);
  field(FIELD.destination, 's', m.destination);
  field(FIELD.signature, 'g', m.signature || undefined);
  w.patchU32(12, w.at - 16);
  w.align(8);
  return Buffer.from(w.result().subarray(12));
}

/** The length of the message at the start of `buf`, or 0 when its fixed header has not all arrived. */
export function messageLength(buf: Buffer): number {
  if (buf.length < 16) return 0;
  const le = buf[0] === 0x6c;
  const body = le ? buf.readUInt32LE(4) : buf.readUInt32BE(4);
  const fields = le ? buf.readUInt32LE(12) : buf.readUInt32BE(12);
  return 16 + fields + ((8 - ((16 + fields) % 8)) % 8) + body;
}

/** Decodes one whole message (as `messageLength` measured it). */
export function decodeMessage(buf: Buffer): Message {
  if (buf[0] !== 0x6c && buf[0] !== 0x42)
    throw new Error(`a D-Bus message starts with byte order 'l' or 'B', not 0x${buf[0].toString(16)}`);
  const le = buf[0] === 0x6c;
  const r = new Reader(buf, le, 8);
  const m: Message = { type: buf[1], flags: buf[2], serial: r.u32(), body: [] };
  const end = 16 + r.u32();
  // The header fields (a(yv)) read in place: every reply has five or six, and this is the hot path.
  while (r.at < end) {
    r.align(8);
    const code = buf[r.at++];
    const v = r.value(parseSignature(r.value(SIGNATURE) as string)[0]);
    switch (code) {
      case FIELD.path:
        m.path = v as string;
        break;
      case FIELD.interface:
        m.interface = v as string;
        break;
      case FIELD.member:
        m.member = v as string;
        break;
      case FIELD.errorName:
        m.errorName = v as string;
        break;
      case FIELD.replySerial:
        m.replySerial = v as number;
        break;
      case FIELD.destination:
        m.destination = v as string;
        break;
      case FIELD.sender:
        m.sender = v as string;
        break;
      case FIELD.signature:
        m.signature = v as string;
        break;
    }
  }
  r.align(8);
  if (m.signature) m.body = r.values(m.signature);
  return m;
}
