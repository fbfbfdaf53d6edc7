// `verity doctor` run as a user runs it, on this machine: with no display and no bus (what a server or CI
// box has), on a private desktop (Xvfb, D-Bus, AT-SPI), with a DISPLAY that names nothing, and with a
// browser that is not there. Each finding is checked against what the test itself set up.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/fixtures.js';
import { missingTools, startDesktop, type Desktop } from './desktop.js';

const run = promisify(execFile);
const BIN = join(ROOT, 'bin', 'verity.js');

/** The environment with no display and no bus: only what the test adds. */
function bareEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = { ...(process.env as Record<string, string>) };
  for (const k of ['DISPLAY', 'WAYLAND_DISPLAY', 'XDG_SESSION_TYPE', 'DBUS_SESSION_BUS_ADDRESS', 'AT_SPI_BUS_ADDRESS'])
    delete env[k];
  return { ...env, ...extra };
}

async function doctor(env: Record<string, string>, args: string[] = []) {
  const r = await run(process.execPath, [BIN, 'doctor', ...args], { env, timeout: 60_000, encoding: 'utf8' });
  return r.stdout;
}

test('no display and no bus: the browser route works, the native route says what it needs and how', async () => {
  const report = JSON.parse(await doctor(bareEnv(), ['--json']));
  assert.equal(report.browser.ok, true, report.browser.detail);
  assert.match(report.browser.path, /chrom/i);
  assert.match(report.browser.version, /\d+\.\d+/);
  assert.equal(report.native.backend, 'atspi');
  assert.equal(report.native.display.ok, false);
  assert.equal(report.native.display.server, 'none');
  assert.match(report.native.display.fix, /Xvfb/);
  assert.equal(report.native.atspi.ok, false);
  assert.match(report.native.atspi.detail, /DBUS_SESSION_BUS_ADDRESS/);
  const text = await doctor(bareEnv());
  assert.match(text, /^ok\s+browser: /m);
  assert.match(text, /^MISSING display: .*\n\s+fix: /m);
  assert.match(text, /^browser route: works$/m);
  assert.match(text, /^native route: needs what is missing above$/m);
});

test('a DISPLAY with no X server behind it, and a browser that is not there', async () => {
  const report = JSON.parse(
    await doctor(bareEnv({ DISPLAY: ':987' }), ['--json', '--chromium', '/nonexistent/chrome']),
  );
  assert.equal(report.native.display.server, 'x11');
  assert.equal(report.native.display.ok, false);
  assert.match(report.native.display.detail, /DISPLAY=:987 does not answer/);
  assert.equal(report.browser.ok, false);
  assert.match(report.browser.detail, /\/nonexistent\/chrome/);
  assert.ok(report.browser.fix);
});

test('a Wayland session is told apart from X11 by its own variables, XWayland beside it included', async () => {
  const runtime = mkdtempSync(join(tmpdir(), 'verity-doctor-runtime-'));
  try {
    const only = JSON.parse(
      await doctor(bareEnv({ WAYLAND_DISPLAY: 'wayland-9', XDG_RUNTIME_DIR: runtime, XDG_SESSION_TYPE: 'wayland' }), [
        '--json',
      ]),
    );
    assert.equal(only.native.display.server, 'wayland');
    assert.equal(only.native.display.session_type, 'wayland');
    assert.match(only.native.display.detail, /no socket at .*wayland-9/);
    const mixed = JSON.parse(
      await doctor(bareEnv({ WAYLAND_DISPLAY: 'wayland-9', XDG_RUNTIME_DIR: runtime, DISPLAY: ':987' }), ['--json']),
    );
    assert.equal(mixed.native.display.server, 'xwayland');
  } finally {
    rmSync(runtime, { recursive: true, force: true });
  }
});

const missing = missingTools();
describe('on a private desktop (Xvfb, D-Bus, AT-SPI)', { skip: missing ?? false }, () => {
  let desktop: Desktop;
  before(async () => {
    desktop = await startDesktop();
  });
  after(async () => {
    await desktop?.close();
  });

  test('the display and the AT-SPI bus are found, and the native route works', async () => {
    const env = bareEnv(desktop.env);
    const report = JSON.parse(await doctor(env, ['--json']));
    assert.equal(report.native.display.ok, true, report.native.display.detail);
    assert.equal(report.native.display.server, 'x11');
    assert.equal(report.native.atspi.ok, true, report.native.atspi.detail);
    assert.match(report.native.atspi.detail, /connected; \d+ app\(s\) registered/);
    assert.match(await doctor(env), /^native route: works \(verified by AT-SPI read-back\)$/m);
    assert.match(report.native.why, /auto on Linux/);
    assert.equal(report.native.nutjs, undefined, 'nut-js is not tried when it is not the backend');
  });

  test('--native-backend nutjs: the backend, why, and that nut-js loads and sees the screen', async () => {
    const env = bareEnv(desktop.env);
    const report = JSON.parse(await doctor(env, ['--json', '--native-backend', 'nutjs']));
    assert.equal(report.native.backend, 'nutjs');
    assert.match(report.native.why, /--native-backend nutjs: .*unverifiable/);
    assert.equal(report.native.nutjs.ok, true, report.native.nutjs.detail);
    assert.match(report.native.nutjs.detail, /the screen is 1280x800/);
    const viaEnv = await doctor({ ...env, VERITY_NATIVE_BACKEND: 'nutjs' });
    assert.match(viaEnv, /^ok\s+native backend nutjs: /m);
    assert.match(viaEnv, /^native route: works: pixels and keys through nut-js, every action unverifiable/m);
  });
});

test('--native-backend nutjs with no display: nut-js is not started, and the fix is named', async () => {
  const report = JSON.parse(await doctor(bareEnv(), ['--json', '--native-backend', 'nutjs']));
  assert.equal(report.native.backend, 'nutjs');
  assert.equal(report.native.nutjs.ok, false);
  assert.match(report.native.nutjs.detail, /needs the X display/);
  assert.ok(report.native.nutjs.fix);
});
