// A launched browser lives no longer than the Verity process that launched it, and leaves no profile behind.
// 1. The pipe transport: when the server dies, Chromium reads EOF on its DevTools pipe and exits by itself.
// 2. A watchdog (POSIX): a tiny detached shell holding the read end of a pipe from the server; EOF without a
//    goodbye means the server died, so it gives Chromium a few seconds, then kills its process group
//    and removes the temporary profile. It covers a Chromium too busy (or too hung) to notice the pipe.
// 3. At start, temporary profiles whose owner process is gone are removed (their name carries the owner's pid).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';

const PROFILE_PREFIX = 'verity-profile-';
const PROFILE_NAME = /^verity-profile-(\d+)-/;

/** `--no-sandbox` only where Chromium refuses to start without it: as root on Linux. */
export function sandboxArgs(
  platform: NodeJS.Platform = process.platform,
  uid: number | undefined = process.getuid?.(),
): string[] {
  return platform === 'linux' && uid === 0 ? ['--no-sandbox'] : [];
}

/** A fresh temporary profile named after this process, so a later start can tell whether its owner is gone. */
export function newProfile(dir = tmpdir()): string {
  return mkdtempSync(join(dir, `${PROFILE_PREFIX}${process.pid}-`));
}

/** The owner pid in a temporary profile's name (null: not one of ours). */
export function profileOwner(name: string): number | null {
  const m = PROFILE_NAME.exec(name);
  return m ? Number(m[1]) : null;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Linux: the pids whose command line names this profile (an orphaned Chromium from before the watchdog, or one the watchdog missed). */
function processesUsing(profile: string): number[] {
  if (process.platform !== 'linux') return [];
  const needle = `--user-data-dir=${profile}`;
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(needle)) pids.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids;
}

/**
 * Removes the temporary profiles (and, on Linux, ends the Chromium processes still using them) left by
 * Verity processes that are gone. A profile whose owner is alive, or that is not ours by name, is left alone.
 */
export async function cleanStaleProfiles(dir = tmpdir(), log: (line: string) => void = () => {}): Promise<string[]> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const stale = names
    .filter((name) => {
      const owner = profileOwner(name);
      return owner !== null && owner !== process.pid && !alive(owner);
    })
    .map((name) => join(dir, name));
  for (const profile of stale) {
    for (const pid of processesUsing(profile))
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    await rm(profile, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
  }
  if (stale.length)
    log(`removed ${stale.length} browser profile(s) left by ended Verity processes: ${stale.join(', ')}`);
  return stale;
}

// $1: Chromium's pid, which is also its process group (puppeteer starts it detached); $2: a profile to remove, or ''.
// A line on stdin is the server's goodbye (it closes the browser itself); EOF means the server is gone.
// PATH is set here: the server may run with an empty or odd PATH, and the script needs sleep and rm.
const WATCHDOG = `
PATH=/bin:/usr/bin:$PATH
if read -r _; then exit 0; fi
i=0
while kill -0 "$1" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
kill -9 -"$1" 2>/dev/null
if [ -n "$2" ]; then sleep 0.2; rm -rf "$2"; fi
`;

export interface Watchdog {
  pid: number | undefined;
  release(): void;
}

/** Starts the watchdog for a launched browser (POSIX only; null elsewhere, where the pipe alone ends it). */
export function startWatchdog(browserPid: number, profile: string | null): Watchdog | null {
  if (process.platform === 'win32') return null;
  let child: ChildProcess;
  try {
    // Detached: a signal to the server's process group (Ctrl-C) must not take the watchdog with it.
    child = spawn('/bin/sh', ['-c', WATCHDOG, 'verity-watchdog', String(browserPid), profile ?? ''], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  } catch {
    return null;
  }
  child.on('error', () => {});
  child.stdin?.on('error', () => {});
  // Neither the process nor its pipe keeps the server's event loop alive.
  child.unref();
  (child.stdin as unknown as Socket | null)?.unref?.();
  let released = false;
  return {
    pid: child.pid,
    release() {
      if (released) return;
      released = true;
      child.stdin?.end('bye\n');
    },
  };
}
