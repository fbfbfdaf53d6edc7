// What the native route needs from the machine: an X display (one connection, xproto.ts, for window queries,
// XTest input and capture), a session D-Bus, and the AT-SPI bus behind it. Each missing piece is a refusal
// naming it; nothing here throws anything else.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { Refusal } from '../routing/refusal.js';
import { XConnection } from './xproto.js';

const run = promisify(execFile);

/** Runs a helper binary (xdotool, xprop) against the configured display; stdout, trimmed. */
export async function x11Tool(bin: string, args: string[], timeoutMs = 5000): Promise<string> {
  try {
    const { stdout } = await run(bin, args, { timeout: timeoutMs, encoding: 'utf8', env: process.env });
    return stdout.trim();
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string; code?: unknown };
    if (err.code === 'ENOENT') throw new Refusal('unavailable', `${bin} is not installed (apt-get install ${bin === 'xprop' ? 'x11-utils' : bin})`);
    throw Object.assign(new Error(`${bin} ${args.join(' ')}: ${(err.stderr ?? err.message).trim()}`), { x11: true, stderr: err.stderr ?? '' });
  }
}

let connection: Promise<XConnection> | null = null;
let connectionFor: string | undefined;
/** The same connection once made: every native call asks for it, most without waiting on a promise. */
let established: { display: string; x: XConnection } | null = null;

/**
 * The X server of DISPLAY, connected once and reconnected after it dropped; refuses naming what is missing
 * (DISPLAY unset, no server behind it, a server that does not answer or refuses us).
 */
export async function xServer(): Promise<XConnection> {
  const display = process.env.DISPLAY;
  if (!display) throw new Refusal('unavailable', 'the native route needs an X display: DISPLAY is not set (start Xvfb or run inside an X session)');
  if (established && established.display === display && !established.x.closed) return established.x;
  if (connection && connectionFor === display) {
    const existing = await connection.catch(() => null);
    if (existing && !existing.closed) return existing;
  }
  connectionFor = display;
  connection = (async () => {
    const local = /^(?:unix)?:(\d+)/.exec(display);
    if (local && !existsSync(`/tmp/.X11-unix/X${local[1]}`)) {
      throw new Refusal('unavailable', `the native route needs an X display: DISPLAY=${display} has no X server (no /tmp/.X11-unix/X${local[1]})`);
    }
    try {
      return await XConnection.open(display);
    } catch (e) {
      throw new Refusal('unavailable', `the native route needs an X display: DISPLAY=${display} does not answer (${(e as Error).message.split('\n')[0]})`);
    }
  })();
  const pending = connection;
  pending.then((x) => { if (connection === pending) established = { display, x }; }, () => { if (connection === pending) connection = null; });
  return pending;
}

/** Refuses unless DISPLAY names an X server that answers. */
export async function requireDisplay(): Promise<void> {
  await xServer();
}

/** Drops the X connection (the server is shutting down). */
export function closeXServer(): void {
  void connection?.then((c) => c.close(), () => undefined);
  connection = null;
  established = null;
}

/** The session bus address, or the refusal naming that it is missing. */
export function sessionBusAddress(): string {
  const address = process.env.DBUS_SESSION_BUS_ADDRESS;
  if (!address) throw new Refusal('unavailable', 'the native route needs a session D-Bus: DBUS_SESSION_BUS_ADDRESS is not set (start dbus-daemon --session or dbus-launch)');
  return address;
}

/** Whether a `unix:path=` D-Bus address points at a socket that exists (abstract sockets are assumed to). */
export function busSocketExists(address: string): boolean {
  const path = /unix:path=([^,;]+)/.exec(address)?.[1];
  return !path || existsSync(path);
}
