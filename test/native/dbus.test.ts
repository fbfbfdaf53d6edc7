// Verity's own D-Bus client (server/native/dbus.ts) against real dbus-daemons and an independent peer
// (GLib's GDBus, test/native/echo.py): values of every type survive a round trip in both byte orders,
// large replies arrive in pieces, errors, timeouts and a daemon that dies are told apart, calls to us
// are answered, and the address forms the AT-SPI bus uses all connect.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import {
  DBusClosed,
  DBusConnection,
  DBusError,
  DBusTimeout,
  Variant,
} from '../../server/native/linux/transport/dbus.js';
import { missingTools, until } from './desktop.js';

const ECHO_PY = fileURLToPath(new URL('../../../test/native/echo.py', import.meta.url));
const missing = missingTools();
const started: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'verity-dbus-'));
let address = '';
let bus: DBusConnection;

/** A dbus-daemon of our own on `listen`; its address once it prints it. */
async function daemon(listen: string): Promise<{ address: string; proc: ChildProcess }> {
  const proc = spawn('/usr/bin/dbus-daemon', ['--session', '--nofork', '--print-address=1', `--address=${listen}`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  started.push(proc);
  let out = '';
  proc.stdout!.on('data', (d) => {
    out += String(d);
  });
  return { address: await until(() => /^(\S+)\n/.exec(out)?.[1], `dbus-daemon on ${listen}`), proc };
}

/** echo.py serving on the bus at `on`, once it says it is ready. */
async function echoService(on: string): Promise<void> {
  const echo = spawn('/usr/bin/python3', [ECHO_PY, on], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(echo);
  const lines = createInterface({ input: echo.stdout! });
  await new Promise<void>((resolve, reject) => {
    lines.once('line', (l) => (l === 'ready' ? resolve() : reject(new Error(`echo.py said ${l}`))));
    echo.once('exit', (code) => reject(new Error(`echo.py exited with ${code}`)));
  });
}

before(async () => {
  if (missing) return;
  ({ address } = await daemon(`unix:path=${join(dir, 'bus')}`));
  await echoService(address);
  bus = await DBusConnection.open(address);
});

after(() => {
  bus?.close();
  for (const p of started.reverse()) if (p.exitCode === null) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const echo = (method: string, value: Variant, timeoutMs?: number) =>
  bus.call(
    {
      destination: 'org.verity.Echo',
      path: '/org/verity/Echo',
      interface: 'org.verity.Echo',
      member: method,
      signature: 'v',
      body: [value],
    },
    timeoutMs,
  );

// [signature, value sent, value expected back (when it reads back differently)]
const VALUES: Array<[string, unknown, unknown?]> = [
  ['y', 255],
  ['b', true],
  ['b', false],
  ['n', -32768],
  ['q', 65535],
  ['i', -2147483648],
  ['u', 4294967295],
  ['x', -(2n ** 63n)],
  ['t', 2n ** 64n - 1n],
  ['d', 3.5],
  ['d', -0.1],
  ['s', 'Ok é ß → 世界 🙂'],
  ['s', ''],
  ['o', '/org/verity/Echo'],
  ['g', 'a{sv}(ii)'],
  ['ay', Buffer.from([0, 1, 2, 255])],
  ['as', ['a', '', 'ccc']],
  ['ai', []],
  [
    'a(yx)',
    [
      [1, 2n],
      [3, -4n],
    ],
  ], // an 8-aligned struct after a 4-byte length: padding inside the array
  ['a{sv}', { a: new Variant('i', 1), b: new Variant('as', ['x']) }],
  ['a{is}', { 1: 'one', 2: 'two' }],
  ['(iu)', [-1, 1]],
  ['v', new Variant('s', 'nested')],
  ['a(so)', [[':1.5', '/a/b']]],
  ['(bay(dd))', [false, Buffer.from('hi'), [1.5, 2.5]]],
  [
    'a((so)(so)iiassusau)',
    [[[':1.2', '/o/1'], [':1.2', '/o/0'], 3, 0, ['org.a11y.atspi.Text'], 'Name', 61, 'text', [1, 2]]],
  ], // an AT-SPI cache row's shape
];

describe('D-Bus client', { skip: missing ?? false }, () => {
  test('every type survives a round trip through GLib, in little- and big-endian replies', async () => {
    assert.match(bus.uniqueName, /^:\d+\.\d+$/);
    for (const method of ['Echo', 'EchoBigEndian']) {
      for (const [signature, value, expected] of VALUES) {
        const [back] = (await echo(method, new Variant(signature, value))) as [Variant];
        assert.ok(back instanceof Variant, `${method} ${signature}: a variant comes back`);
        assert.equal(back.signature, signature, `${method} ${signature}: its signature`);
        assert.deepEqual(back.value, expected ?? value, `${method} ${signature}: its value`);
      }
    }
  });

  test('a reply larger than one socket read is put together from its pieces', async () => {
    const many = Array.from({ length: 20_000 }, (_, i) => `item ${String(i).padStart(5, '0')}`);
    for (const method of ['Echo', 'EchoBigEndian']) {
      const [back] = (await echo(method, new Variant('as', many))) as [Variant];
      assert.deepEqual(back.value, many, method);
    }
  });

  test('error replies carry their D-Bus name and text', async () => {
    const unknown = await bus
      .call({ destination: 'org.verity.Echo', path: '/org/verity/Echo', interface: 'org.verity.Echo', member: 'Nope' })
      .catch((e) => e);
    assert.ok(unknown instanceof DBusError, String(unknown));
    assert.equal(unknown.type, 'org.freedesktop.DBus.Error.UnknownMethod');
    assert.match(unknown.message, /org\.verity\.Echo\.Nope/);
    const wrongArgs = await bus
      .call({
        destination: 'org.verity.Echo',
        path: '/org/verity/Echo',
        interface: 'org.verity.Echo',
        member: 'Echo',
        signature: 's',
        body: ['x'],
      })
      .catch((e) => e);
    assert.ok(wrongArgs instanceof DBusError, String(wrongArgs));
    assert.equal(wrongArgs.type, 'org.freedesktop.DBus.Error.InvalidArgs');
    const nobody = await bus
      .call({ destination: 'org.verity.Nobody', path: '/', interface: 'org.verity.Nobody', member: 'Hello' })
      .catch((e) => e);
    assert.ok(nobody instanceof DBusError, String(nobody));
    assert.equal(nobody.type, 'org.freedesktop.DBus.Error.ServiceUnknown');
  });

  test('a call without an answer in time is a timeout, and the connection goes on serving', async () => {
    const late = await bus
      .call(
        {
          destination: 'org.verity.Echo',
          path: '/org/verity/Echo',
          interface: 'org.verity.Echo',
          member: 'Sleep',
          signature: 'u',
          body: [400],
        },
        100,
      )
      .catch((e) => e);
    assert.ok(late instanceof DBusTimeout, String(late));
    assert.match(late.message, /Sleep within 100 ms/);
    await new Promise((r) => setTimeout(r, 450)); // the late reply arrives and is dropped
    const [back] = (await echo('Echo', new Variant('s', 'still here'))) as [Variant];
    assert.equal(back.value, 'still here');
  });

  test('calls to this connection are answered: Ping replies, anything else is UnknownMethod', async () => {
    const [said] = await bus.call({
      destination: 'org.verity.Echo',
      path: '/org/verity/Echo',
      interface: 'org.verity.Echo',
      member: 'CallBack',
      signature: 's',
      body: [bus.uniqueName],
    });
    assert.equal(said, 'ping answered; unknown method refused: org.freedesktop.DBus.Error.UnknownMethod');
  });

  test('a body that does not fit its signature is refused before anything is sent', async () => {
    const short = await bus
      .call({
        destination: 'org.verity.Echo',
        path: '/org/verity/Echo',
        interface: 'org.verity.Echo',
        member: 'Echo',
        signature: 'v',
        body: [],
      })
      .catch((e) => e);
    assert.ok(short instanceof TypeError && /1 value\(s\), the body 0/.test(short.message), String(short));
    const bare = await bus
      .call({
        destination: 'org.verity.Echo',
        path: '/org/verity/Echo',
        interface: 'org.verity.Echo',
        member: 'Echo',
        signature: 'v',
        body: ['not a Variant'],
      })
      .catch((e) => e);
    assert.ok(bare instanceof TypeError && /Variant/.test(bare.message), String(bare));
    const odd = await bus
      .call({
        destination: 'org.verity.Echo',
        path: '/org/verity/Echo',
        interface: 'org.verity.Echo',
        member: 'Echo',
        signature: '(i',
        body: [[1]],
      })
      .catch((e) => e);
    assert.ok(odd instanceof TypeError && /unclosed/.test(odd.message), String(odd));
    const two = await echo('Echo', new Variant('ii', [1, 2])).catch((e) => e);
    assert.ok(two instanceof TypeError && /one complete type/.test(two.message), String(two));
    const [back] = (await echo('Echo', new Variant('i', 7))) as [Variant];
    assert.equal(back.value, 7);
  });

  test('abstract socket addresses and address lists connect (with usocket; refused by name without); unknown forms are refused by name', async () => {
    const name = `verity-test-${randomBytes(6).toString('hex')}`;
    const abstract = await daemon(`unix:abstract=${name}`);
    assert.match(abstract.address, /unix:abstract=/);
    // usocket compiles on install, so it is an optional peer, not a devDependency: a fresh `npm ci` has none.
    let usocket = true;
    try {
      createRequire(import.meta.url)('usocket');
    } catch {
      usocket = false;
    }
    if (!usocket) {
      const refused = await DBusConnection.open(abstract.address).catch((e) => e);
      assert.match(
        String(refused),
        /needs the optional usocket package, which is not installed \(npm install usocket\)/,
      );
      return;
    }
    const other = await DBusConnection.open(`unix:path=${join(dir, 'nothing-here')};${abstract.address}`);
    const [names] = (await other.call({
      destination: 'org.freedesktop.DBus',
      path: '/org/freedesktop/DBus',
      interface: 'org.freedesktop.DBus',
      member: 'ListNames',
    })) as [string[]];
    assert.ok(names.includes(other.uniqueName), `ListNames has ${other.uniqueName}`);
    other.close();
    const refused = await DBusConnection.open('launchd:env=NOPE').catch((e) => e);
    assert.match(String(refused), /unsupported D-Bus address/);
  });

  test('a daemon that goes away fails what is pending and what comes after, as closed', async () => {
    const doomed = await daemon(`unix:path=${join(dir, 'doomed')}`);
    const c = await DBusConnection.open(doomed.address);
    let told = false;
    c.onClose(() => {
      told = true;
    });
    await echoService(doomed.address);
    const pending = c
      .call(
        {
          destination: 'org.verity.Echo',
          path: '/org/verity/Echo',
          interface: 'org.verity.Echo',
          member: 'Sleep',
          signature: 'u',
          body: [5000],
        },
        10_000,
      )
      .catch((e) => e);
    await new Promise((r) => setTimeout(r, 100));
    doomed.proc.kill('SIGKILL');
    const failed = await pending;
    assert.ok(failed instanceof DBusClosed, String(failed));
    await until(() => c.closed, 'the connection to see the daemon gone', 5000);
    assert.ok(told, 'onClose listeners ran');
    const after = await c
      .call({
        destination: 'org.freedesktop.DBus',
        path: '/org/freedesktop/DBus',
        interface: 'org.freedesktop.DBus',
        member: 'GetId',
      })
      .catch((e) => e);
    assert.ok(after instanceof DBusClosed, String(after));
    assert.match(after.message, /GetId was not sent/);
  });
});
