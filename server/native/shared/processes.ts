// What /proc says of a process (Linux): its ancestry, name, executable and command line. Both native
// backends ask it on Linux, for the app policy and to tell the driven browser's windows.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Whether `pid` is `ancestor` or one of its descendants (Chromium's renderers and GPU process). */
export function descendsFrom(pid: number, ancestor: number): boolean {
  let current = pid;
  for (let i = 0; i < 16 && current > 1; i++) {
    if (current === ancestor) return true;
    try {
      const stat = readFileSync(`/proc/${current}/stat`, 'utf8');
      current = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return false;
    }
  }
  return false;
}

/** The executable name of a process (to tell browsers and Electron apps). */
export function processName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * What /proc says of a process, for the app policy: its executable ('' when another user's is unreadable),
 * its process name and its command line. Empty for a process that is gone.
 */
export function processFacts(pid: number): { exe: string; comm: string; argv: string[] } {
  const read = (what: () => string) => {
    try {
      return what();
    } catch {
      return '';
    }
  };
  return {
    exe: read(() => readlinkSync(`/proc/${pid}/exe`)).replace(/ \(deleted\)$/, ''),
    comm: read(() => readFileSync(`/proc/${pid}/comm`, 'utf8').trim()),
    argv: read(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
      .split('\0')
      .filter((arg, i, all) => arg !== '' || i < all.length - 1),
  };
}

/** One process as /proc/<pid>/stat tells it: its parent, process group and state (Z: a zombie, gone). */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
}

/** Every process /proc lists now (those that end while it is read are left out). */
export function processTable(): ProcessEntry[] {
  const out: ProcessEntry[] = [];
  let names: string[] = [];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // After the command's closing parenthesis: state, ppid, pgrp (the command itself may hold spaces and parentheses).
      const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(name), ppid: Number(ppid), pgrp: Number(pgrp), state: state ?? '' });
    } catch {
      /* it ended meanwhile */
    }
  }
  return out;
}
