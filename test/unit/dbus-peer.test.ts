// Verity's D-Bus client (server/native/dbus.ts) against a peer that misbehaves, on a socket of the test's
// own (no daemon): what an app sends must never end the server (issue 42 item 3: `verity mcp` went away
// during the Calc sheet walk with nothing said). A peer that announces a message past the D-Bus bound
// closes that connection and fails its calls as closed, at once and naming the bound, with nothing of it
// gathered; a message that cannot be read does the same; a reply that comes in pieces of a few bytes is
// put together; a call to us is answered and the connection goes on serving.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DBusClosed, DBusConnection, MAX_MESSAGE_BYTES } from '../../server/native/linux/transport/dbus.js';
import {
  decodeMessage,
  encodeMessage,
  MESSAGE,
  messageLength,
  type Message,
} from '../../server/native/linux/transport/dbus-wire.js';

const dir = mkdtempSync(join(tmpdir(), 'verity-dbus-peer-'));
const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A peer on a unix socket: it accepts EXTERNAL authentication, then hands every method call it is sent to
 * `answer` with the socket to answer on. Its address, for DBusConnection.open(..., { peer: true }).
 */
async function peer(name: string, answer: (call: Message, socket: Socket) => void): Promise<string> {
  const path = join(dir, name);
  const server = createServer((socket) => {
    let text = '';
    let binary: Buffer | null = null;
    socket.on('data', (chunk) => {
      if (binary === null) {
        text += chunk.toString('latin1');
        if (text.includes('AUTH') && !text.includes('OK sent')) {
          socket.write('OK 0123456789abcdef0123456789abcdef\r\n');
          text += 'OK sent';
        }
        const begin = text.indexOf('BEGIN\r\n');
        if (begin < 0) return;
        binary = Buffer.from(text.slice(begin + 'BEGIN\r\n'.length).replace('OK sent', ''), 'latin1');
      } else binary = Buffer.concat([binary, chunk]);
      for (let length = messageLength(binary); length && binary.length >= length; length = messageLength(binary)) {
        const call = decodeMessage(binary.subarray(0, length));
        binary = binary.subarray(length);
        if (call.type === MESSAGE.methodCall) answer(call, socket);
      }
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return `unix:path=${path}`;
}

const CALL = { destination: ':1.1', path: '/x', interface: 'org.example.Peer', member: 'Get' };

/** A method return of one string to `call`. */
const reply = (call: Message, text: string) =>
  encodeMessage({
    type: MESSAGE.methodReturn,
    flags: 1,
    serial: 1,
    replySerial: call.serial,
    signature: 's',
    body: [text],
  });

test('a peer announcing a message past the D-Bus bound: the call fails as closed at once, naming the bound; nothing of it is gathered', async () => {
  const address = await peer('huge', (call, socket) => {
    // A reply's fixed header claiming a body of nearly 4 GiB, then a little of it: the client must not wait
    // for, nor keep, the rest.
    const head = reply(call, '').subarray(0, 16);
    head.writeUInt32LE(0xffff_fff0, 4);
    socket.write(Buffer.concat([head, Buffer.alloc(64 * 1024)]));
  });
  const bus = await DBusConnection.open(address, { peer: true });
  const heapBefore = process.memoryUsage().arrayBuffers;
  const t0 = performance.now();
  const failed = await bus.call(CALL, 10_000).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(failed instanceof DBusClosed, String(failed));
  assert.match((failed as Error).message, new RegExp(`past the ${MAX_MESSAGE_BYTES}-byte bound`));
  assert.ok(performance.now() - t0 < 5_000, 'failed at once, not at the call timeout');
  assert.ok(process.memoryUsage().arrayBuffers - heapBefore < 64 * 1024 * 1024, 'nothing of it was gathered');
  assert.equal(bus.closed, true);
  const after = await bus.call(CALL).catch((e: unknown) => e);
  assert.ok(after instanceof DBusClosed, String(after));
});

test('a message that cannot be read (its byte order neither l nor B) closes the connection and fails its calls as closed', async () => {
  const address = await peer('garbage', (call, socket) => {
    const bytes = reply(call, 'x');
    bytes[0] = 0x21; // neither 'l' nor 'B'
    socket.write(bytes);
  });
  const bus = await DBusConnection.open(address, { peer: true });
  const failed = await bus.call(CALL, 10_000).catch((e: unknown) => e);
  assert.ok(failed instanceof DBusClosed, String(failed));
  // Read big-endian, its lengths are past the bound, which is said first.
  assert.match((failed as Error).message, /cannot read|past the \d+-byte bound/);
});

test('a reply sent a few bytes at a time is put together, and the next call is answered', async () => {
  const big = 'é'.repeat(100_000);
  const address = await peer('pieces', (call, socket) => {
    const bytes = reply(call, call.serial === 1 ? big : 'second');
    // The fixed header itself split (3 bytes at a time), then the rest in small pieces, each its own write.
    let at = 0;
    const next = () => {
      if (at >= bytes.length) return;
      const size = at < 48 ? 3 : 4096;
      socket.write(bytes.subarray(at, at + size));
      at += size;
      setImmediate(next);
    };
    next();
  });
  const bus = await DBusConnection.open(address, { peer: true });
  const [text] = await bus.call(CALL, 10_000);
  assert.equal(text, big);
  assert.deepEqual(await bus.call(CALL, 10_000), ['second']);
  bus.close();
});

test('a call to this connection is answered (UnknownMethod) and the connection goes on serving', async () => {
  let answered = null as Message | null;
  const address = await peer('caller', (call, socket) => {
    // Before answering, the peer calls us; our reply comes back to it on the same socket.
    socket.on('data', (chunk) => {
      if (chunk.length >= 16 && chunk[1] === MESSAGE.error) answered = decodeMessage(chunk);
    });
    socket.write(
      encodeMessage({
        type: MESSAGE.methodCall,
        flags: 0,
        serial: 7,
        path: '/us',
        interface: 'org.example.Ask',
        member: 'Q',
      }),
    );
    setTimeout(() => socket.write(reply(call, 'still here')), 50);
  });
  const bus = await DBusConnection.open(address, { peer: true });
  assert.deepEqual(await bus.call(CALL, 10_000), ['still here']);
  for (let i = 0; i < 50 && !answered; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(answered?.replySerial, 7);
  assert.equal(answered?.errorName, 'org.freedesktop.DBus.Error.UnknownMethod');
  bus.close();
});
