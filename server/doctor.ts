// `verity doctor`: what works on this machine and what to do about the rest. Each check is bounded (a
// browser that hangs on --version, an X server that does not answer) and says how to fix what it found
// missing; nothing here throws past `runDoctor`. `--json` prints the same findings for programs.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findBrowser, type Channel } from './cdp/browser/discovery.js';
import { type NativeBackendChoice, nativeBackendOf } from './routing/native-backend.js';
import { bounded } from './contract/bounded.js';
import { setMachineEnv } from './contract/machine-env.js';
import { detectSession } from './contract/session-type.js';
import { VERSION } from './version.js';

const run = promisify(execFile);
const CHECK_MS = 5000;

/** One finding: `ok` null when the check does not apply here (macOS permissions on Linux). */
export interface Finding {
  ok: boolean | null;
  detail: string;
  fix?: string;
}

export interface DoctorReport {
  verity: string;
  node: Finding & { version: string };
  browser: Finding & { path?: string; version?: string; found_by?: string };
  native: {
    backend: string;
    why: string;
    display: Finding & { server: 'x11' | 'wayland' | 'xwayland' | 'none'; session_type: string | null };
    atspi: Finding;
    permissions: Finding;
    /** With the nutjs backend: whether nut-js loads and reaches the screen here. */
    nutjs?: Finding;
  };
}

/** Which display server this session runs, from the session's own variables (not from DISPLAY alone). */
export function displayServerOf(env: NodeJS.ProcessEnv): 'x11' | 'wayland' | 'xwayland' | 'none' {
  const session = detectSession(env);
  if (session.kind === 'wayland') return session.x11Display ? 'xwayland' : 'wayland';
  return session.kind;
}

function nodeFinding(version = process.versions.node): DoctorReport['node'] {
  const [major, minor] = version.split('.').map(Number);
  const ok = major > 20 || (major === 20 && minor >= 16);
  return {
    ok,
    version,
    detail: `Node ${version}`,
    ...(ok ? {} : { fix: 'install Node 20.16 or later (22 or 24, the current LTS lines)' }),
  };
}

async function browserFinding(
  opts: { chromium?: string; channel?: Channel; browserUrl?: string },
  env: Readonly<NodeJS.ProcessEnv>,
) {
  if (opts.browserUrl) {
    try {
      const res = await bounded(fetch(new URL('/json/version', opts.browserUrl)), CHECK_MS, opts.browserUrl);
      const info = (await res.json()) as { Browser?: string };
      return { ok: true, version: info.Browser, found_by: '--browser-url', detail: `attached at ${opts.browserUrl}` };
    } catch (e) {
      return {
        ok: false,
        found_by: '--browser-url',
        detail: `nothing answers at ${opts.browserUrl} (${(e as Error).message})`,
        fix: 'start Chromium with --remote-debugging-port=9222, or drop --browser-url so Verity launches its own',
      };
    }
  }
  let path: string;
  try {
    path = findBrowser({ explicit: opts.chromium, channel: opts.channel, env });
  } catch (e) {
    return { ok: false, detail: (e as Error).message, fix: 'install Chromium (Debian: apt-get install chromium)' };
  }
  const found_by = opts.chromium ? '--chromium' : opts.channel ? `--channel ${opts.channel}` : 'the usual places';
  try {
    const { stdout } = await run(path, ['--version'], { timeout: CHECK_MS, encoding: 'utf8' });
    return { ok: true, path, version: stdout.trim(), found_by, detail: `${path} (${stdout.trim()})` };
  } catch (e) {
    return {
      ok: false,
      path,
      found_by,
      detail: `${path} does not run (${(e as Error).message.split('\n')[0]})`,
      fix: 'reinstall it, or name another with --chromium PATH',
    };
  }
}

async function displayFinding(env: NodeJS.ProcessEnv): Promise<DoctorReport['native']['display']> {
  const server = displayServerOf(env);
  const session_type = env.XDG_SESSION_TYPE ?? null;
  if (server === 'none')
    return {
      ok: false,
      server,
      session_type,
      detail: 'no display: neither DISPLAY nor WAYLAND_DISPLAY is set',
      fix: 'run inside a desktop session, or start Xvfb and set DISPLAY (the browser route works without one)',
    };
  const problems: string[] = [];
  if (env.WAYLAND_DISPLAY) {
    const socket = env.WAYLAND_DISPLAY.startsWith('/')
      ? env.WAYLAND_DISPLAY
      : join(env.XDG_RUNTIME_DIR ?? '', env.WAYLAND_DISPLAY);
    if (!existsSync(socket)) problems.push(`WAYLAND_DISPLAY=${env.WAYLAND_DISPLAY} has no socket at ${socket}`);
  }
  if (env.DISPLAY) {
    const { XConnection } = await import('./native/linux/transport/xproto.js');
    try {
      const x = await bounded(XConnection.open(env.DISPLAY), CHECK_MS, `the X server at DISPLAY=${env.DISPLAY}`);
      x.close();
    } catch (e) {
      problems.push(`DISPLAY=${env.DISPLAY} does not answer (${(e as Error).message.split('\n')[0]})`);
    }
  }
  const names = { x11: 'X11', wayland: 'Wayland', xwayland: 'Wayland with XWayland' };
  return {
    ok: problems.length === 0,
    server,
    session_type,
    detail: problems.length
      ? problems.join('; ')
      : `${names[server]} (${[env.DISPLAY && `DISPLAY=${env.DISPLAY}`, env.WAYLAND_DISPLAY && `WAYLAND_DISPLAY=${env.WAYLAND_DISPLAY}`].filter(Boolean).join(', ')})`,
    ...(problems.length ? { fix: 'start the display server, or unset the variable that names a gone one' } : {}),
  };
}

async function atspiFinding(env: NodeJS.ProcessEnv): Promise<Finding> {
  if (!env.DBUS_SESSION_BUS_ADDRESS && !env.AT_SPI_BUS_ADDRESS)
    return {
      ok: false,
      detail: 'no session D-Bus: DBUS_SESSION_BUS_ADDRESS is not set',
      fix: 'run inside a desktop session, or start one with dbus-launch (apt-get install dbus-x11 at-spi2-core)',
    };
  const { Atspi } = await import('./native/linux/atspi/model.js');
  const { profileFor } = await import('./native/linux/toolkits/index.js');
  try {
    const atspi = await bounded(Atspi.connect({ profiles: profileFor }), CHECK_MS, 'the AT-SPI bus');
    try {
      const apps = await bounded(atspi.apps(), CHECK_MS, "the AT-SPI registry's apps");
      return { ok: true, detail: `connected; ${apps.length} app(s) registered` };
    } finally {
      atspi.disconnect();
    }
  } catch (e) {
    return {
      ok: false,
      detail: (e as Error).message,
      fix: 'apt-get install at-spi2-core; apps join it when accessibility is on (GTK and Qt: QT_ACCESSIBILITY=1)',
    };
  }
}

/** Whether nut-js loads here and sees the screen (in its helper process: a crash there costs nothing). */
async function nutjsFinding(display: Finding, platform: NodeJS.Platform): Promise<Finding> {
  if (platform === 'linux' && !display.ok)
    return { ok: false, detail: 'not tried: nut-js needs the X display', fix: display.fix ?? 'start an X server' };
  const { probeNutjs } = await import('./native/nutjs/process.js');
  try {
    const s = await probeNutjs(CHECK_MS * 2);
    return { ok: true, detail: `nut-js loads; the screen is ${s.width}x${s.height}` };
  } catch (e) {
    return {
      ok: false,
      detail: (e as Error).message,
      fix: 'install @nut-tree-fork/nut-js 4.2.6 beside Verity (npm install @nut-tree-fork/nut-js@4.2.6); its binary ships for macOS, Windows and Linux x64/arm64',
    };
  }
}

function permissionsFinding(platform: NodeJS.Platform): Finding {
  if (platform === 'darwin')
    return {
      ok: null,
      detail: 'Accessibility and Screen Recording are granted per app in System Settings',
      fix: 'System Settings > Privacy & Security: allow your terminal or MCP client under Accessibility and Screen Recording',
    };
  if (platform === 'win32')
    return {
      ok: null,
      detail:
        "input reaches windows of the same or lower integrity level only (an elevated app ignores a normal one's input)",
      fix: 'run the MCP client elevated to drive elevated apps',
    };
  return { ok: null, detail: 'no OS permission gates native input on Linux' };
}

export async function runDoctor(
  opts: { chromium?: string; channel?: Channel; browserUrl?: string; nativeBackend?: NativeBackendChoice } = {},
  env: Readonly<NodeJS.ProcessEnv>,
  platform: NodeJS.Platform = process.platform,
): Promise<DoctorReport> {
  setMachineEnv(env); // the AT-SPI and X connections it opens look at it
  const onLinux = platform === 'linux';
  const [browser, display, atspi] = await Promise.all([
    browserFinding(opts, env),
    onLinux
      ? displayFinding(env)
      : Promise.resolve({ ok: null, server: 'none' as const, session_type: null, detail: 'checked on Linux only' }),
    onLinux ? atspiFinding(env) : Promise.resolve({ ok: null, detail: 'AT-SPI is Linux only' }),
  ]);
  const backend = nativeBackendOf(opts.nativeBackend, platform);
  const nutjs = backend.backend === 'nutjs' ? await nutjsFinding(display, platform) : undefined;
  return {
    verity: VERSION,
    node: nodeFinding(),
    browser,
    native: { ...backend, display, atspi, permissions: permissionsFinding(platform), ...(nutjs ? { nutjs } : {}) },
  };
}

function nativeSummary(n: DoctorReport['native']): string {
  if (n.backend === 'none') return 'not on this system yet';
  if (n.backend === 'nutjs')
    return n.nutjs?.ok
      ? 'works: pixels and keys through nut-js, every action unverifiable (nothing is read back)'
      : 'needs what is missing above (nut-js)';
  return n.display.ok && n.atspi.ok ? 'works (verified by AT-SPI read-back)' : 'needs what is missing above';
}

/** The report for a person: one line a check, a mark, and the fix under what is missing. */
export function doctorText(r: DoctorReport): string {
  const line = (name: string, f: Finding) => {
    const mark = f.ok === null ? '-' : f.ok ? 'ok' : 'MISSING';
    return [`${mark.padEnd(8)}${name}: ${f.detail}`, ...(f.ok === false && f.fix ? [`        fix: ${f.fix}`] : [])];
  };
  const routes = [
    `browser route: ${r.browser.ok ? 'works' : 'needs a browser'}`,
    `native route: ${nativeSummary(r.native)}`,
  ];
  return [
    `verity ${r.verity} doctor`,
    '',
    ...line('node', r.node),
    ...line('browser', r.browser),
    ...line(`native backend ${r.native.backend}`, { ok: r.native.backend !== 'none', detail: r.native.why }),
    ...line('display', r.native.display),
    ...line('AT-SPI bus', r.native.atspi),
    ...(r.native.nutjs ? line('nut-js', r.native.nutjs) : []),
    ...line('permissions', r.native.permissions),
    '',
    ...routes,
  ].join('\n');
}
