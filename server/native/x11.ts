// X11 top-level windows: which there are, whose they are (pid), where they are, which one has focus, and
// raising/focusing one. No Node library speaks EWMH for us, so these are xprop / xwininfo / xdotool queries.
import { readFileSync } from 'node:fs';
import { Refusal } from '../routing/refusal.js';
import { requireDisplay, x11Tool } from './env.js';

export interface XWindow { id: number; pid: number | null; title: string; bounds: { x: number; y: number; w: number; h: number }; viewable: boolean }

const BAD_WINDOW = /BadWindow|BadDrawable|No such window|Can't find window|X Error/i;

/** The error for a window that is gone (closed before or during an action). */
export function windowGone(id: number): Refusal {
  return new Refusal('target_not_found', `window ${id} does not exist (it closed); call list_windows for the open windows`, { window_id: id });
}

async function tool(bin: string, args: string[], windowId?: number): Promise<string> {
  try {
    return await x11Tool(bin, args);
  } catch (e) {
    if (windowId !== undefined && BAD_WINDOW.test((e as Error).message)) throw windowGone(windowId);
    throw e;
  }
}

/** Top-level client windows: the window manager's _NET_CLIENT_LIST, else visible named windows. */
export async function windowIds(): Promise<number[]> {
  await requireDisplay();
  const root = await tool('xprop', ['-root', '-notype', '_NET_CLIENT_LIST']);
  const listed = /#\s*(.+)$/m.exec(root)?.[1];
  if (listed) return listed.split(',').map((s) => parseInt(s.trim(), 16)).filter((n) => n > 0);
  const found = await tool('xdotool', ['search', '--onlyvisible', '--maxdepth', '2', '--name', '.']).catch(() => '');
  return found.split('\n').filter(Boolean).map(Number);
}

/** One window's pid, title and absolute bounds (of the client area, i.e. what its screenshot shows). */
export async function describeWindow(id: number): Promise<XWindow> {
  await requireDisplay();
  const [info, props] = await Promise.all([
    tool('xwininfo', ['-id', String(id)], id),
    tool('xprop', ['-id', String(id), '-notype', '_NET_WM_PID', '_NET_WM_NAME', 'WM_NAME'], id),
  ]);
  const num = (label: string) => Number(new RegExp(`${label}:\\s*(-?\\d+)`).exec(info)?.[1] ?? 0);
  const pid = /_NET_WM_PID = (\d+)/.exec(props)?.[1];
  const title = parseXString(/_NET_WM_NAME = (".*")/.exec(props)?.[1] ?? /WM_NAME = (".*")/.exec(props)?.[1] ?? '""');
  return {
    id, pid: pid ? Number(pid) : null, title,
    bounds: { x: num('Absolute upper-left X'), y: num('Absolute upper-left Y'), w: num('Width'), h: num('Height') },
    viewable: /Map State:\s*IsViewable/.test(info),
  };
}

/** xprop prints strings C-escaped (\" and \\, and octal for bytes it deems unprintable). */
function parseXString(quoted: string): string {
  const body = quoted.slice(1, -1);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\' && /[0-7]{3}/.test(body.slice(i + 1, i + 4))) { bytes.push(parseInt(body.slice(i + 1, i + 4), 8)); i += 3; continue; }
    if (c === '\\') { i++; bytes.push(...Buffer.from(body[i] ?? '', 'utf8')); continue; }
    bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

export async function listWindows(): Promise<XWindow[]> {
  const ids = await windowIds();
  const all = await Promise.all(ids.map((id) => describeWindow(id).catch(() => null)));
  return all.filter((w): w is XWindow => !!w && w.viewable && w.bounds.w > 1 && w.bounds.h > 1);
}

/** The window that has keyboard focus (0 when none). */
export async function activeWindow(): Promise<number> {
  await requireDisplay();
  const out = await tool('xdotool', ['getactivewindow']).catch(() => tool('xdotool', ['getwindowfocus', '-f']).catch(() => '0'));
  return Number(out.split('\n')[0]) || 0;
}

/** Raises and focuses a window, waiting until the window manager says it is active. */
export async function activate(id: number): Promise<void> {
  await tool('xdotool', ['windowactivate', '--sync', String(id)], id).catch(async (e) => {
    if (e instanceof Refusal) throw e;
    // Without a window manager there is no _NET_ACTIVE_WINDOW: raise and set the input focus directly.
    await tool('xdotool', ['windowraise', String(id), 'windowfocus', '--sync', String(id)], id);
  });
}

/**
 * The top-most client window whose area holds a screen point (the window manager's stacking order), or
 * null when there is no window manager to say what is on top.
 */
export async function topWindowAt(x: number, y: number): Promise<XWindow | null> {
  const root = await tool('xprop', ['-root', '-notype', '_NET_CLIENT_LIST_STACKING']);
  const listed = /#\s*(.+)$/m.exec(root)?.[1];
  if (!listed) return null;
  const ids = listed.split(',').map((s) => parseInt(s.trim(), 16)).filter((n) => n > 0).reverse();
  for (const id of ids) {
    const w = await describeWindow(id).catch(() => null);
    if (w?.viewable && x >= w.bounds.x && y >= w.bounds.y && x < w.bounds.x + w.bounds.w && y < w.bounds.y + w.bounds.h) return w;
  }
  return null;
}

/** Whether `pid` is `ancestor` or one of its descendants (Chromium's renderers and GPU process). */
export function descendsFrom(pid: number, ancestor: number): boolean {
  let current = pid;
  for (let i = 0; i < 16 && current > 1; i++) {
    if (current === ancestor) return true;
    try {
      const stat = readFileSync(`/proc/${current}/stat`, 'utf8');
      current = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch { return false; }
  }
  return false;
}

/** The executable name of a process (to tell browsers and Electron apps). */
export function processName(pid: number): string {
  try { return readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { return ''; }
}
