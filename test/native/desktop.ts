// A private desktop for native tests (and the native bench): Xvfb on a free display, openbox, a session
// D-Bus and the AT-SPI bus, all started here and stopped by PID in order (apps and Chromium first, then
// the buses, then the window manager and Xvfb). Plus the GTK test app, which reports its own state.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { DBusConnection } from '../../server/native/linux/transport/dbus.js';
import { setMachineEnv } from '../../server/contract/machine-env.js';

// The native modules these files use in-process read the environment they are handed: this process's own.
setMachineEnv(process.env);

export const APP_PY = fileURLToPath(new URL('../../../test/native/app.py', import.meta.url));

/** The test apps, one per toolkit; each reports its own widgets' state as JSON lines on stdout. */
export type Toolkit = 'gtk3' | 'gtk4' | 'qt' | 'tk' | 'swing';
const PYTHON = '/usr/bin/python3';
const APPS: Record<
  Toolkit,
  {
    script: string;
    env: Record<string, string>;
    /** The program that runs the script (python3 unless said). */
    runner?: string;
    /** Python that exits 0 when the toolkit is here. */
    probe: string;
    needs: string;
    setsPid?: false;
  }
> = {
  gtk3: {
    script: APP_PY,
    env: {},
    probe: "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk",
    needs: 'python3-gi with GTK 3 (gir1.2-gtk-3.0)',
  },
  gtk4: {
    script: fileURLToPath(new URL('../../../test/native/app_gtk4.py', import.meta.url)),
    env: {},
    probe: "import gi; gi.require_version('Gtk', '4.0'); from gi.repository import Gtk",
    needs: 'python3-gi with GTK 4 (gir1.2-gtk-4.0)',
  },
  // Qt turns its AT-SPI bridge on only when asked (no desktop session here says a screen reader runs).
  qt: {
    script: fileURLToPath(new URL('../../../test/native/app_qt.py', import.meta.url)),
    env: { QT_ACCESSIBILITY: '1', QT_LINUX_ACCESSIBILITY_ALWAYS_ON: '1' },
    probe: 'import PyQt5.QtWidgets',
    needs: 'python3-pyqt5',
  },
  // Tk has no AT-SPI bridge and sets no _NET_WM_PID: its window is found by title only.
  tk: {
    script: fileURLToPath(new URL('../../../test/native/app_tk.py', import.meta.url)),
    env: {},
    probe: 'import tkinter',
    needs: 'python3-tk',
    setsPid: false,
  },
  // Swing without the ATK bridge (not installed): no AT-SPI tree either, but it sets _NET_WM_PID. Run from
  // source by the JDK's launcher; AWT's X11 toolkit needs a full (not headless) JRE.
  swing: {
    script: fileURLToPath(new URL('../../../test/native/AppSwing.java', import.meta.url)),
    env: {},
    runner: '/usr/bin/java',
    probe:
      "import glob, os, sys; sys.exit(0 if os.access('/usr/bin/java', os.X_OK) and glob.glob('/usr/lib/jvm/*/lib/libawt_xawt.so') else 1)",
    needs: 'a JDK with AWT for X11 (openjdk-17-jdk)',
  },
};

/** Whether the test app of `toolkit` can run here (and why not). */
export function missingToolkit(toolkit: Toolkit): string | null {
  const base = missingTools();
  if (base) return base;
  const r = spawnSync(PYTHON, ['-c', APPS[toolkit].probe], { stdio: 'ignore' });
  return r.status === 0 ? null : `${APPS[toolkit].needs} is missing`;
}

export interface Desktop {
  /** The X display ('' on a Wayland desktop without XWayland). */
  display: string;
  /** On a Wayland desktop: the compositor's runtime directory, socket name and IPC socket. */
  wayland?: { runtimeDir: string; socket: string; swaysock: string };
  env: Record<string, string>;
  /** Starts a process on this desktop; it is stopped (by PID) before the buses and Xvfb. */
  spawn(command: string, args: string[], extraEnv?: Record<string, string>): ChildProcess;
  /** Runs xdotool/xprop-style helpers against this display. */
  x(command: string, args: string[]): string;
  close(): Promise<void>;
}

export interface AppState {
  entry: string;
  /** The password entry's text (app.py --password), else null. */
  secret?: string | null;
  notes: string;
  checked: boolean;
  clicks: number;
  combo: string;
  term: string;
  volume: number;
  selection: number[];
  focus: string | null;
  active: boolean;
  /** GTK 3 app: the modifiers held at the button's last press, and how far the notes are scrolled. */
  press_mods?: string[];
  notes_scroll?: number;
  /** GTK 3 app: whether the pointer is over its button, as GTK tells the button (enter and leave). */
  hovered?: boolean;
  count?: number;
  /** GTK 4 app: its popover menu's action count and check item, the popover's check box, what is open. */
  opened?: number;
  bold?: boolean;
  wrap?: boolean;
  /** Tk app: where its red swatch and its button are drawn in the window ([x, y, w, h]), and the _NET_WM_PID it set. */
  swatch?: [number, number, number, number] | null;
  button?: [number, number, number, number] | null;
  net_wm_pid?: number | null;
  /** GTK 4 app: the text of the entry in its popover ("Find"). */
  find?: string;
  menu_open?: boolean;
  popover_open?: boolean;
  dialog_open?: boolean;
}

export interface GtkApp {
  pid: number;
  title: string;
  state(): AppState;
  waitFor(pred: (s: AppState) => boolean, what: string, ms?: number): Promise<AppState>;
  windowId(): number;
  kill(): Promise<void>;
}

/** The unique name on the AT-SPI bus of the app with process `pid` (as the registry lists it), or null. */
export async function appBusName(bus: DBusConnection, pid: number): Promise<string | null> {
  const [apps] = (await bus.call({
    destination: 'org.a11y.atspi.Registry',
    path: '/org/a11y/atspi/accessible/root',
    interface: 'org.a11y.atspi.Accessible',
    member: 'GetChildren',
  })) as [Array<[string, string]>];
  for (const [name] of apps) {
    const [owner] = await bus.call({
      destination: 'org.freedesktop.DBus',
      path: '/org/freedesktop/DBus',
      interface: 'org.freedesktop.DBus',
      member: 'GetConnectionUnixProcessID',
      signature: 's',
      body: [name],
    });
    if (owner === pid) return name;
  }
  return null;
}

/** Whether this machine can run native tests (and why not). */
export function missingTools(): string | null {
  for (const bin of [
    '/usr/bin/Xvfb',
    '/usr/bin/openbox',
    '/usr/bin/dbus-daemon',
    '/usr/libexec/at-spi-bus-launcher',
    '/usr/bin/python3',
    '/usr/bin/xdotool',
    '/usr/bin/xprop',
    '/usr/bin/xwininfo',
  ]) {
    if (!existsSync(bin)) return `${bin} is missing`;
  }
  const gi = spawnSync(
    '/usr/bin/python3',
    ['-c', "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk"],
    { stdio: 'ignore' },
  );
  if (gi.status !== 0) return 'python3-gi with GTK 3 (gir1.2-gtk-3.0) is missing';
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns something, within a bound (X11, D-Bus and AT-SPI settle asynchronously). */
export async function until<T>(
  probe: () => T | null | undefined | Promise<T | null | undefined>,
  /** What is waited for; a function to name what was seen last, at the bound. */
  what: string | (() => string),
  ms = 10_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${typeof what === 'function' ? what() : what}${last ? `: ${(last as Error).message}` : ''}`,
      );
    await sleep(everyMs);
  }
}

/** Whether a process is still there. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops a process by PID: SIGTERM, then SIGKILL after about 3 s. */
export async function stop(pid: number | undefined): Promise<void> {
  if (!pid || !alive(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 60 && alive(pid); i++) await sleep(50);
  if (alive(pid))
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
}

/** Child pids of a process we started (the AT-SPI launcher's own bus daemon). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout.split('\n')) {
    const n = Number(entry.trim());
    if (n > 0) out.push(n);
  }
  return out;
}

/**
 * The session bus's configuration: the stock session bus, but activating nothing from the system's service
 * directories. The stock one activates a second at-spi-bus-launcher (/usr/share/dbus-1/services/org.a11y.Bus)
 * whenever org.a11y.Bus is asked for before this desktop's launcher owns it (its GetAddress poll below did, in
 * each start probed: dbus-daemon logs "Activating service name='org.a11y.Bus' requested by dbus-send"). That
 * one has the bus daemon's environment, no DISPLAY and no runtime directory of its own, so its bus is
 * ~/.cache/at-spi/bus, one path for every desktop on the machine (the newest takes it over), and it is left
 * running, reparented to init. When it won the name, the desktop's apps that ask the session bus for the
 * address (Qt does) registered on whichever desktop's bus held that path. Only dconf stays activatable
 * (GTK writes its settings there).
 */
function sessionBusConfig(dir: string): string {
  const services = join(dir, 'services');
  mkdirSync(services, { recursive: true });
  const dconf = '/usr/share/dbus-1/services/ca.desrt.dconf.service';
  if (existsSync(dconf)) writeFileSync(join(services, 'ca.desrt.dconf.service'), readFileSync(dconf));
  const config = join(dir, 'session.conf');
  writeFileSync(
    config,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=${join(dir, 'bus')}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>${services}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_message_size">1000000000</limit>
  <limit name="service_start_timeout">120000</limit>
  <limit name="max_replies_per_connection">50000</limit>
</busconfig>
`,
  );
  return config;
}

/**
 * The session D-Bus and the AT-SPI bus behind it, for a desktop whose display variables are `displayEnv`.
 * Both are this desktop's own: the session bus activates no second AT-SPI launcher (sessionBusConfig), and
 * the launcher's runtime directory is in `dir`, so its bus socket is too (without one it is under
 * ~/.cache/at-spi, named after the display only). The address it gives is checked to be that socket.
 */
async function startBuses(dir: string, started: ChildProcess[], displayEnv: Record<string, string>) {
  const dbus = spawn(
    '/usr/bin/dbus-daemon',
    ['--nofork', '--print-address=1', `--config-file=${sessionBusConfig(dir)}`],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  started.push(dbus);
  let busOut = '';
  dbus.stdout!.on('data', (d) => {
    busOut += String(d);
  });
  const address = await until(() => /^(unix:\S+)\n/.exec(busOut)?.[1], 'the session D-Bus');
  const env: Record<string, string> = {
    ...displayEnv,
    DBUS_SESSION_BUS_ADDRESS: address,
    ACCESSIBILITY_ENABLED: '1',
    NO_AT_BRIDGE: '0',
  };
  const fullEnv = () => ({ ...process.env, ...env, AT_SPI_BUS_ADDRESS: '' });
  const a11yRuntime = join(dir, 'a11y-runtime');
  mkdirSync(a11yRuntime, { mode: 0o700 });
  const launcher = spawn('/usr/libexec/at-spi-bus-launcher', ['--launch-immediately', '--a11y=1'], {
    env: { ...fullEnv(), XDG_RUNTIME_DIR: a11yRuntime },
    stdio: 'ignore',
  });
  started.push(launcher);
  const a11yAddress = await until(
    () => {
      const r = spawnSync(
        'dbus-send',
        ['--session', '--print-reply=literal', '--dest=org.a11y.Bus', '/org/a11y/bus', 'org.a11y.Bus.GetAddress'],
        { env: fullEnv(), encoding: 'utf8' },
      );
      return r.status === 0 ? r.stdout.trim() : null;
    },
    'the AT-SPI bus',
    30_000,
  );
  if (!a11yAddress.startsWith(`unix:path=${a11yRuntime}/`))
    throw new Error(`the AT-SPI bus is not this desktop's own: org.a11y.Bus gave ${a11yAddress}`);
  env.AT_SPI_BUS_ADDRESS = a11yAddress;
  const stopBuses = async () => {
    const a11yDaemon = launcher.pid ? childrenOf(launcher.pid) : [];
    await stop(launcher.pid);
    for (const pid of a11yDaemon) await stop(pid);
    await stop(dbus.pid);
  };
  return { env, fullEnv, stopBuses };
}

/** A desktop's spawn (its processes, stopped by PID on close) and x (a helper run on it), for both kinds. */
function runners(env: Record<string, string>, apps: ChildProcess[]): Pick<Desktop, 'spawn' | 'x'> {
  return {
    spawn(command, args, extraEnv = {}) {
      const child = spawn(command, args, {
        env: { ...process.env, ...env, ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // Both pipes are always read, whether or not the caller listens too (its own listeners, attached in
      // the same tick, see everything). A pipe nobody reads fills at 64 KiB and the app's next write blocks
      // for good: LibreOffice logs a GLib warning to stderr for many AT-SPI calls (an AT-SPI client's walk
      // writes kilobytes), and its main thread blocked in that write while holding the SolarMutex, so a
      // new document's UNO call waited forever (gdb: write(2) on the main thread, answering AT-SPI).
      child.stdout!.resume();
      child.stderr!.resume();
      apps.push(child);
      return child;
    },
    x(command, args) {
      const r = spawnSync(command, args, { env: { ...process.env, ...env }, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${r.stderr}`);
      return r.stdout.trim();
    },
  };
}

export async function startDesktop(): Promise<Desktop> {
  const started: ChildProcess[] = [];
  try {
    return await startAll(started);
  } catch (e) {
    for (const child of started.reverse()) {
      const kids = child.pid ? childrenOf(child.pid) : [];
      await stop(child.pid);
      for (const pid of kids) await stop(pid);
    }
    throw e;
  }
}

async function startAll(started: ChildProcess[]): Promise<Desktop> {
  const dir = mkdtempSync(join(tmpdir(), 'verity-desktop-'));
  const apps: ChildProcess[] = [];
  // -noreset: an X server resets when its last client leaves, and at-spi-bus-launcher is one that comes and
  // goes; a window manager connecting during that reset was refused ("Failed to open the display").
  const xvfb = spawn(
    '/usr/bin/Xvfb',
    ['-displayfd', '3', '-noreset', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
  );
  started.push(xvfb);
  let fdOut = '';
  xvfb.stdio[3]!.on('data', (d) => {
    fdOut += String(d);
  });
  const number = await until(() => /^(\d+)\n/.exec(fdOut)?.[1], 'Xvfb to pick a display', 30_000);
  const display = `:${number}`;
  const { env, fullEnv, stopBuses } = await startBuses(dir, started, { DISPLAY: display });
  // Before -noreset, openbox sometimes never claimed the display (1 start in 12 at worst). It is still
  // given 15 s, then replaced once, and a second failure says what it was doing.
  const wmReady = () => spawnSync('xprop', ['-root', '_NET_SUPPORTING_WM_CHECK'], { env: fullEnv(), encoding: 'utf8' });
  let wm: ChildProcess;
  for (let attempt = 1; ; attempt++) {
    wm = spawn('/usr/bin/openbox', ['--sm-disable'], { env: fullEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    started.push(wm);
    let wmErr = '';
    wm.stderr!.on('data', (d) => {
      wmErr += String(d);
    });
    wm.on('exit', (code, signal) => {
      wmErr += ` [openbox exited: ${code ?? signal}]`;
    });
    try {
      await until(() => wmReady().stdout.includes('window id'), 'openbox', 15_000);
      break;
    } catch (e) {
      const probe = wmReady();
      let state = '';
      try {
        state = readFileSync(`/proc/${wm!.pid}/wchan`, 'utf8');
      } catch {
        state = 'gone';
      }
      const detail = `${(e as Error).message} (attempt ${attempt}; openbox stderr: ${wmErr.trim() || 'none'}; openbox waits in: ${state}; xprop: ${(probe.stdout + probe.stderr).trim().slice(0, 200)})`;
      await stop(wm.pid);
      if (attempt >= 2) throw new Error(detail);
      process.stderr.write(`desktop: ${detail}; starting openbox again\n`);
    }
  }

  return {
    display,
    env,
    ...runners(env, apps),
    async close() {
      for (const app of apps.reverse()) await stop(app.pid);
      await stopBuses();
      await stop(wm.pid);
      await stop(xvfb.pid);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Verity's X client, copied where the unprivileged user can read it: the checkout may sit in a folder only
 * root may enter (/root is 0700 on Debian, mkdtemp makes 0700 folders), and ESM needs the package.json.
 */
function readableXproto(dir: string): string {
  const built = new URL('../../server/', import.meta.url);
  const copy = join(dir, 'x-client');
  for (const file of ['native/linux/transport/xproto.js', 'contract/machine-env.js']) {
    mkdirSync(dirname(join(copy, 'server', file)), { recursive: true });
    copyFileSync(new URL(file, built), join(copy, 'server', file));
  }
  writeFileSync(join(copy, 'package.json'), '{"type":"module"}\n');
  return pathToFileURL(join(copy, 'server', 'native/linux/transport/xproto.js')).href;
}
const GRANT_ROOT = `
const { XConnection } = await import(process.env.XPROTO);
const x = await XConnection.open(process.env.DISPLAY);
const addr = Buffer.from('localuser\\0root', 'latin1');
const body = Buffer.alloc(4 + Math.ceil(addr.length / 4) * 4);
body[0] = 5; // ServerInterpreted
body.writeUInt16LE(addr.length, 2);
addr.copy(body, 4);
x.send(109, 0, body); // ChangeHosts, Insert
await x.sync();
x.close();
`;

/** Whether this machine can run the Wayland tests (sway, its clients, and the X11 desktop's tools), and why not. */
export function missingWaylandTools(): string | null {
  for (const bin of ['/usr/bin/sway', '/usr/bin/swaymsg', '/usr/bin/wtype', '/usr/bin/grim', '/usr/bin/Xwayland'])
    if (!existsSync(bin)) return `${bin} is missing`;
  return missingTools();
}

/**
 * A private Wayland desktop: sway on its headless backend (no DISPLAY), with XWayland beside it when asked
 * (a mixed session, as GNOME and KDE are), plus the session D-Bus and AT-SPI bus. Sway refuses to run as
 * root, so as root it runs as nobody; root's clients reach its sockets all the same.
 */
export async function startWaylandDesktop(options: { xwayland?: boolean } = {}): Promise<Desktop> {
  const started: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'verity-wayland-'));
  const runtimeDir = join(dir, 'runtime');
  const asRoot = process.getuid?.() === 0;
  try {
    mkdirSync(runtimeDir, { mode: 0o700 });
    if (asRoot) {
      chownSync(dir, 65534, 65534);
      chownSync(runtimeDir, 65534, 65534);
    }
    const config = join(dir, 'sway.conf');
    writeFileSync(config, `xwayland ${options.xwayland ? 'force' : 'disable'}\n`);
    const swayEnv = {
      ...process.env,
      XDG_RUNTIME_DIR: runtimeDir,
      WLR_BACKENDS: 'headless',
      WLR_LIBINPUT_NO_DEVICES: '1',
      WLR_RENDERER: 'pixman',
      HOME: dir,
      DISPLAY: '',
      WAYLAND_DISPLAY: '',
    };
    const [cmd, args] = asRoot
      ? ['/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '/usr/bin/sway', '-c', config]]
      : ['/usr/bin/sway', ['-c', config]];
    const sway = spawn(cmd, args as string[], { env: swayEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    started.push(sway);
    let swayErr = '';
    sway.stderr!.on('data', (d) => {
      swayErr = (swayErr + String(d)).slice(-4000);
    });
    const sockets = await until(
      () => {
        const names = readdirSync(runtimeDir);
        const socket = names.find((n) => /^wayland-\d+$/.test(n));
        const ipc = names.find((n) => n.startsWith('sway-ipc.'));
        return socket && ipc ? { socket, swaysock: join(runtimeDir, ipc) } : null;
      },
      `sway to open its sockets (${swayErr.trim().split('\n').slice(-2).join(' ')})`,
      30_000,
    );
    const waylandEnv: Record<string, string> = {
      XDG_RUNTIME_DIR: runtimeDir,
      WAYLAND_DISPLAY: sockets.socket,
      SWAYSOCK: sockets.swaysock,
      XDG_SESSION_TYPE: 'wayland',
      DISPLAY: '',
    };
    const swaymsg = (...a: string[]) =>
      spawnSync('/usr/bin/swaymsg', a, { env: { ...process.env, ...waylandEnv }, encoding: 'utf8' });
    if (options.xwayland) {
      // XWayland's display is in sway's own environment: a command sway runs writes it down.
      const file = join(runtimeDir, 'display');
      await until(() => {
        swaymsg('exec', `printf %s "$DISPLAY" > ${file}`);
        return existsSync(file) && readFileSync(file, 'utf8').startsWith(':') ? readFileSync(file, 'utf8') : null;
      }, "XWayland's display");
      waylandEnv.DISPLAY = readFileSync(join(runtimeDir, 'display'), 'utf8');
      const local = /^:(\d+)/.exec(waylandEnv.DISPLAY)![1];
      await until(() => existsSync(`/tmp/.X11-unix/X${local}`), 'the XWayland socket');
      // XWayland admits only its own user: as root, sway's user lets root in (ChangeHosts si:localuser:root,
      // sent over Verity's own X client; Debian's xhost is not installed).
      if (asRoot) {
        const grant = spawnSync(
          '/usr/bin/setpriv',
          [
            '--reuid=65534',
            '--regid=65534',
            '--clear-groups',
            process.execPath,
            '--input-type=module',
            '-e',
            GRANT_ROOT,
          ],
          {
            env: { ...process.env, DISPLAY: waylandEnv.DISPLAY, XPROTO: readableXproto(dir) },
            encoding: 'utf8',
            timeout: 10_000,
          },
        );
        if (grant.status !== 0) throw new Error(`letting root into XWayland failed: ${grant.stderr}`);
      }
    }
    const { env, stopBuses } = await startBuses(dir, started, waylandEnv);
    // Headless sway has no input devices, and a seat without a keyboard never activates a window (GTK then
    // reports no focus). A desktop always has a keyboard: a virtual one held for the desktop's life stands in.
    const keyboard = spawn('/usr/bin/wtype', ['-s', '2000000000', '-k', 'Shift_L'], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    started.push(keyboard);
    await until(
      () => /"capabilities": [1-9]/.test(swaymsg('-t', 'get_seats').stdout),
      'the virtual keyboard on the seat',
    );
    const apps: ChildProcess[] = [];
    return {
      display: waylandEnv.DISPLAY,
      wayland: { runtimeDir, socket: sockets.socket, swaysock: sockets.swaysock },
      env,
      ...runners(env, apps),
      async close() {
        for (const app of apps.reverse()) await stop(app.pid);
        await stop(keyboard.pid);
        await stopBuses();
        const xwayland = sway.pid ? childrenOf(sway.pid) : [];
        await stop(sway.pid);
        for (const pid of xwayland) await stop(pid);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    for (const child of started.reverse()) {
      const kids = child.pid ? childrenOf(child.pid) : [];
      await stop(child.pid);
      for (const pid of kids) await stop(pid);
    }
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Starts the test app of `toolkit` (GTK 3 unless said) and waits for its window and first state line. On a
 * Wayland desktop it is a Wayland client unless `backend` is 'x11' (XWayland); a Wayland window has no X id.
 * `under` is a command the app runs under (`unshare --pid --fork ...`), which must run it as its only child:
 * the app's pid is then that child's, and both are stopped by PID.
 */
export async function startApp(
  desktop: Desktop,
  title: string,
  extraArgs: string[] = [],
  toolkit: Toolkit = 'gtk3',
  backend: 'x11' | 'wayland' = desktop.wayland ? 'wayland' : 'x11',
  under: string[] = [],
): Promise<GtkApp> {
  const backendEnv: Record<string, string> = desktop.wayland
    ? backend === 'wayland'
      ? { GDK_BACKEND: 'wayland', QT_QPA_PLATFORM: 'wayland' }
      : { GDK_BACKEND: 'x11', QT_QPA_PLATFORM: 'xcb', WAYLAND_DISPLAY: '' }
    : {};
  const command = [...under, APPS[toolkit].runner ?? PYTHON, APPS[toolkit].script, title, ...extraArgs];
  const child = desktop.spawn(command[0]!, command.slice(1), {
    ...APPS[toolkit].env,
    ...backendEnv,
  });
  let latest: AppState | null = null;
  let buffer = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (d) => {
    buffer += String(d);
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        latest = JSON.parse(line);
      } catch {
        continue;
      }
      for (const w of waiters) w();
    }
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += String(d);
  });
  // An app's start is seconds of CPU (a JVM's most of all): with every core busy it takes that many times
  // longer, so the bound grows with the load per core (up to 4x), and says so when it is passed.
  const load = loadavg()[0] / availableParallelism();
  const startBound = 15_000 * Math.min(4, Math.max(1, load));
  await until(
    () => {
      if (child.exitCode !== null) throw new Error(`it exited with status ${child.exitCode}`);
      return latest;
    },
    `the app "${title}" to report its state within ${startBound / 1000} s (load ${load.toFixed(1)} per core; ${stderr.trim()})`,
    startBound,
  );
  const pid = under.length
    ? await until(() => childrenOf(child.pid!)[0], `the app "${title}" as the only child of ${under[0]}`)
    : child.pid!;
  let id = 0;
  const app: GtkApp = {
    pid,
    title,
    state: () => latest!,
    async waitFor(pred, what, ms = 3000) {
      if (pred(latest!)) return latest!;
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pred(latest!)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(latest!);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the app never reported ${what}; last state ${JSON.stringify(latest)}`));
        }, ms);
        waiters.add(check);
      });
    },
    windowId() {
      if (backend === 'wayland') throw new Error(`"${title}" is a Wayland window: it has no X11 window id`);
      const byPid = APPS[toolkit].setsPid === false ? [] : ['--pid', String(pid)];
      if (!id)
        id = Number(
          desktop.x('xdotool', ['search', '--sync', '--onlyvisible', ...byPid, '--name', `^${title}$`]).split('\n')[0],
        );
      return id;
    },
    async kill() {
      if (pid !== child.pid) await stop(pid);
      await stop(child.pid);
    },
  };
  if (backend === 'x11')
    await until(() => {
      try {
        return app.windowId();
      } catch {
        return 0;
      }
    }, `the window of "${title}"`);
  return app;
}
