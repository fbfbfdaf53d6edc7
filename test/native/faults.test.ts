// The native route without its parts: no display, no session bus, no AT-SPI bus. Each is a refusal that
// names what is missing, and the server stays up, also when the X server goes away under it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { missingTools, startApp, startDesktop, until, type Desktop } from './desktop.js';

const missing = missingTools();
let d: Desktop;
const servers: Verity[] = [];
before(async () => {
  if (!missing) d = await startDesktop();
});
after(async () => {
  for (const v of servers) await v.close();
  await d?.close();
});

async function verity(env: Record<string, string>): Promise<Verity> {
  const v = await startVerity([], env);
  servers.push(v);
  return v;
}

async function stillServes(v: Verity): Promise<void> {
  const r = await v.call('get_session', {});
  assert.equal(r.isError, false, `the server still answers: ${r.text}`);
}

describe('native route faults', { skip: missing ?? false }, () => {
  test('no DISPLAY: window, desktop and px targets are refused as unavailable naming DISPLAY', async () => {
    const v = await verity({ DISPLAY: '', DBUS_SESSION_BUS_ADDRESS: d.env.DBUS_SESSION_BUS_ADDRESS });
    for (const args of [{ target: { kind: 'window', pid: 1, window_id: 1 } }, { target: { kind: 'desktop' } }]) {
      const r = await v.call('get_window_state', args);
      assert.equal(r.structured.refusal?.code, 'unavailable', r.text);
      assert.match(r.structured.refusal.message, /DISPLAY/);
    }
    const click = await v.call('click', { target: { kind: 'desktop' }, x: 10, y: 10 });
    assert.equal(click.structured.refusal?.code, 'unavailable', click.text);
    const windows = await v.call('list_windows');
    assert.equal(windows.isError, false, windows.text);
    assert.match(windows.structured.native, /DISPLAY/);
    await stillServes(v);
  });

  test('a DISPLAY with no X server behind it is refused, not a crash', async () => {
    const v = await verity({ DISPLAY: ':987', DBUS_SESSION_BUS_ADDRESS: d.env.DBUS_SESSION_BUS_ADDRESS });
    const r = await v.call('type_text', { target: { kind: 'desktop' }, text: 'x' });
    assert.equal(r.structured.refusal?.code, 'unavailable', r.text);
    assert.match(r.structured.refusal.message, /:987/);
    await stillServes(v);
  });

  test('the X server going away mid-session is a refusal, and the server keeps serving', async () => {
    const doomed = await startDesktop();
    try {
      const app = await startApp(doomed, 'Doomed Form');
      const v = await verity(doomed.env);
      const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
      const shot = await v.call('get_window_state', { format: 'full', target });
      assert.equal(shot.isError, false, shot.text);
      assert.equal(shot.images, 1, 'the window was captured over the X connection');
      const click = await v.call('click', { target, x: 5, y: 5, delivery_mode: 'foreground' });
      assert.notEqual(click.structured.status, 'refused', click.text);
      await doomed.close();
      for (const [tool, args] of [
        ['get_window_state', { format: 'full', target: { kind: 'desktop' } }],
        ['click', { target, x: 5, y: 5 }],
        ['press_key', { target, key: 'a' }],
      ] as const) {
        const r = await v.call(tool, args);
        assert.equal(r.structured.refusal?.code, 'unavailable', `${tool}: ${r.text}`);
      }
      await stillServes(v);
    } finally {
      await doomed.close();
    }
  });

  test('an X server that wants a cookie: read from XAUTHORITY; without it, refused saying the server refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verity-xauth-'));
    const auth = join(dir, 'Xauthority');
    // One MIT-MAGIC-COOKIE-1 entry for this host (FamilyLocal; the Xauthority format puts big-endian lengths
    // before each field), as a desktop session's file has it.
    const field = (b: Buffer) => Buffer.concat([Buffer.from([b.length >> 8, b.length & 255]), b]);
    writeFileSync(
      auth,
      Buffer.concat([
        Buffer.from([1, 0]),
        field(Buffer.from(hostname())),
        field(Buffer.alloc(0)),
        field(Buffer.from('MIT-MAGIC-COOKIE-1')),
        field(randomBytes(16)),
      ]),
    );
    // Listening on TCP too: a display reached as localhost:N (ssh's forwarding) takes the local cookie.
    const xvfb = spawn(
      '/usr/bin/Xvfb',
      ['-displayfd', '3', '-noreset', '-auth', auth, '-screen', '0', '640x480x24', '-listen', 'tcp'],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
    );
    try {
      let fdOut = '';
      xvfb.stdio[3]!.on('data', (b) => {
        fdOut += String(b);
      });
      const display = `:${await until(() => /^(\d+)\n/.exec(fdOut)?.[1], 'Xvfb with -auth to pick a display')}`;
      const refusedByServer = spawnSync('xdotool', ['getdisplaygeometry'], {
        env: { ...process.env, DISPLAY: display, XAUTHORITY: join(dir, 'none') },
        encoding: 'utf8',
      });
      assert.notEqual(refusedByServer.status, 0, 'the server really wants the cookie');
      const bus = d.env.DBUS_SESSION_BUS_ADDRESS;
      for (const via of [display, `localhost${display}`]) {
        const withCookie = await verity({ DISPLAY: via, XAUTHORITY: auth, DBUS_SESSION_BUS_ADDRESS: bus });
        const listed = await withCookie.call('list_windows');
        assert.equal(listed.structured.native, undefined, `DISPLAY=${via}: ${listed.text}`);
      }
      const without = await verity({ DISPLAY: display, XAUTHORITY: join(dir, 'none'), DBUS_SESSION_BUS_ADDRESS: bus });
      const refused = await without.call('list_windows');
      assert.match(
        String(refused.structured.native),
        new RegExp(`DISPLAY=${display} does not answer \\(the X server refused the connection`),
        refused.text,
      );
      await stillServes(without);
    } finally {
      if (xvfb.exitCode === null)
        await new Promise((r) => {
          xvfb.once('exit', r);
          xvfb.kill('SIGKILL');
        });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('no session bus: refused naming the session D-Bus', async () => {
    const v = await verity({ DISPLAY: d.display, DBUS_SESSION_BUS_ADDRESS: '', AT_SPI_BUS_ADDRESS: '' });
    const r = await v.call('get_window_state', { format: 'full', target: { kind: 'desktop' } });
    assert.equal(r.structured.refusal?.code, 'unavailable', r.text);
    assert.match(r.structured.refusal.message, /session D-Bus/);
    const apps = await v.call('list_apps');
    assert.match(apps.structured.native, /session D-Bus/);
    await stillServes(v);
  });

  test('a session bus without the AT-SPI bus: refused naming the AT-SPI bus', async (t) => {
    // A socket path (unix:tmpdir= would be an abstract socket here, which needs the optional usocket).
    const busDir = mkdtempSync(join(tmpdir(), 'verity-lonely-bus-'));
    t.after(() => rmSync(busDir, { recursive: true, force: true }));
    const lonely = d.spawn(
      '/usr/bin/dbus-daemon',
      ['--session', '--nofork', '--print-address=1', `--address=unix:path=${join(busDir, 'bus')}`],
      { XDG_DATA_DIRS: '/nonexistent', XDG_DATA_HOME: '/nonexistent' },
    );
    const address = await new Promise<string>((resolve) =>
      lonely.stdout!.once('data', (b) => resolve(String(b).trim())),
    );
    // The bus has no org.a11y.Bus service to activate: point the AT-SPI lookup at nothing.
    const v = await verity({
      DISPLAY: d.display,
      DBUS_SESSION_BUS_ADDRESS: address,
      AT_SPI_BUS_ADDRESS: '',
      XDG_DATA_DIRS: '/nonexistent',
    });
    const r = await v.call('get_window_state', { format: 'full', target: { kind: 'desktop' } });
    assert.equal(r.structured.refusal?.code, 'unavailable', r.text);
    assert.match(r.structured.refusal.message, /AT-SPI/);
    await stillServes(v);
  });
});
