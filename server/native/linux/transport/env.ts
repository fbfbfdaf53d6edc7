// What the native route needs from the machine: an X display (one connection, xproto.ts, for window queries,
// XTest input and capture), a session D-Bus, and the AT-SPI bus behind it. Each missing piece is a refusal
// naming it; nothing here throws anything else.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { Refusal } from '../../../contract/refusal.js';
import { machineEnv } from '../../../contract/machine-env.js';
import { XConnection } from './xproto.js';

const run = promisify(execFile);

/** Runs a helper binary (xdotool, xprop) against the configured display; stdout, trimmed. */
export async function x11Tool(bin: string, args: string[], timeoutMs = 5000): Promise<string> {
  try {
    const { stdout } = await run(bin, args, { timeout: timeoutMs, encoding: 'utf8' });
    return stdout.trim();
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string; code?: unknown };
    if (err.code === 'ENOENT')
      throw new Refusal(
        'unavailable',
        `${bin} is not installed (apt-get install ${bin === 'xprop' ? 'x11-utils' : bin})`,
      );
    throw Object.assign(new Error(`${bin} ${args.join(' ')}: ${(err.stderr ?? err.message).trim()}`), {
      x11: true,
      stderr: err.stderr ?? '',
    });
  }
}

/** The X connection of one DISPLAY: while it is being made, then (`ready`) once made, read without waiting. */
let current: { display: string; connecting: Promise<XConnection>; ready: XConnection | null } | null = null;

/**
 * The X server of DISPLAY, connected once and reconnected after it dropped; refuses naming what is missing
 * (DISPLAY unset, no server behind it, a server that does not answer or refuses us).
 */
export async function xServer(): Promise<XConnection> {
  const display = machineEnv().DISPLAY;
  if (!display)
    throw new Refusal(
      'unavailable',
      'the native route needs an X display or a Wayland session: DISPLAY is not set, nor WAYLAND_DISPLAY (start Xvfb, or run inside an X or Wayland session)',
    );
  if (current?.display === display) {
    if (current.ready && !current.ready.closed) return current.ready;
    if (!current.ready) {
      const existing = await current.connecting.catch(() => null);
      if (existing && !existing.closed) return existing;
    }
  }
  const connecting = (async () => {
    const local = /^(?:unix)?:(\d+)/.exec(display);
    if (local && !existsSync(`/tmp/.X11-unix/X${local[1]}`)) {
      throw new Refusal(
        'unavailable',
        `the native route needs an X display: DISPLAY=${display} has no X server (no /tmp/.X11-unix/X${local[1]})`,
      );
    }
    try {
      return await XConnection.open(display);
    } catch (e) {
      throw new Refusal(
        'unavailable',
        `the native route needs an X display: DISPLAY=${display} does not answer (${(e as Error).message.split('\n')[0]})`,
      );
    }
  })();
  const entry: NonNullable<typeof current> = { display, connecting, ready: null };
  current = entry;
  connecting.then(
    (x) => {
      entry.ready = x;
    },
    () => {
      if (current === entry) current = null;
    },
  );
  return connecting;
}

/** Refuses unless DISPLAY names an X server that answers. */
export async function requireDisplay(): Promise<void> {
  await xServer();
}

/** Drops the X connection (the server is shutting down). */
export function closeXServer(): void {
  void current?.connecting.then(
    (c) => c.close(),
    () => undefined,
  );
  current = null;
}

/** The session bus address, or the refusal naming that it is missing. */
export function sessionBusAddress(): string {
  const address = machineEnv().DBUS_SESSION_BUS_ADDRESS;
  if (!address)
    throw new Refusal(
      'unavailable',
      'the native route needs a session D-Bus: DBUS_SESSION_BUS_ADDRESS is not set (start dbus-daemon --session or dbus-launch)',
    );
  return address;
}

/** Whether a `unix:path=` D-Bus address points at a socket that exists (abstract sockets are assumed to). */
export function busSocketExists(address: string): boolean {
  const path = /unix:path=([^,;]+)/.exec(address)?.[1];
  return !path || existsSync(path);
}
