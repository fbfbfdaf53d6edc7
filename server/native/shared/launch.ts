// launch_app and kill_app on the desktop, the one home of both for every native backend: what an agent asked
// to start (a desktop file's Exec line, an executable on PATH, an absolute path), refused before anything
// starts unless the operator named it (--allow-launch) and the app policy allows it; started apart from
// Verity (no stdio: Verity's stdout is MCP's stdio; its own process group; only the ordinary environment,
// none of Verity's credentials or the operator's other secrets); its first window waited for, bounded, in the
// backend's own window listing (list_windows'), matched by process tree (LibreOffice's soffice forks
// soffice.bin, which owns the windows). Ending one: its windows closed through the window manager first (as
// set_window_state closed does), then SIGTERM, then SIGKILL, each after a bound; confirmed once no process of
// it is left. The backends hand in their listing and their window manager's close; nothing here knows MCP.
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync, realpathSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { ActionResult, Evidence } from '../../contract/driver.js';
import { machineEnv } from '../../contract/machine-env.js';
import type { LaunchRequest, LaunchResult, NativeWindow, WaitHooks } from '../../contract/native-host.js';
import { programKind } from '../../contract/programs.js';
import { Refusal } from '../../contract/refusal.js';
import { processTable } from './processes.js';

/** What a backend gives the launcher: its windows (as list_windows has them) and its window manager's close. */
export interface LaunchDesktop {
  /** The route its results name (the same as its window tools'). */
  route: ActionResult['route'];
  /** The windows agents may see (list_windows' own listing). */
  windows(): Promise<NativeWindow[]>;
  /** Asks the window manager to close a window as its close button does; how it asked, or null where it cannot. */
  closeWindow(id: number): Promise<string | null>;
  /** The operator's app policy (null: agents may), asked of what would start before it starts. */
  appRefusal?(app: { pid: null; names: string[]; exe: string; comm: string; argv: string[] }): string | null;
}

/** What a request names, resolved: the program that would run and its arguments. */
interface Resolved {
  kind: 'desktop' | 'name' | 'path';
  /** The desktop file (kind desktop). */
  file?: string;
  /** The executable as found (a path), its real path (symlinks resolved: what two names are compared by), argv[0]. */
  exe: string;
  real: string;
  argv0: string;
  args: string[];
}

/** How often the window listing is read while waiting, at first and later (a listing walks AT-SPI). */
const POLL_FIRST_MS = 250;
const POLL_LATER_MS = 500;
/** kill_app's bounds: its windows closed (an app may take a while to save its state), then SIGTERM, then SIGKILL. */
export const CLOSE_BOUND_MS = 5000;
export const TERM_BOUND_MS = 3000;
export const KILL_BOUND_MS = 2000;

/**
 * The ordinary environment an app gets: who and where the user is, the desktop's display, buses and
 * toolkit settings. Nothing else of Verity's environment (its VERITY_* credentials, tokens or keys the
 * operator's shell holds, Node's own variables) reaches it.
 */
const ORDINARY_NAMES = new Set([
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'PATH',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'XAUTHORITY',
  'XMODIFIERS',
  'DBUS_SESSION_BUS_ADDRESS',
  'AT_SPI_BUS_ADDRESS',
  'ACCESSIBILITY_ENABLED',
  'GNOME_ACCESSIBILITY',
  'NO_AT_BRIDGE',
  'SWAYSOCK',
  'I3SOCK',
  'DESKTOP_SESSION',
  'SAL_USE_VCLPLUGIN',
  'MOZ_ENABLE_WAYLAND',
  'SDL_VIDEODRIVER',
  'CLUTTER_BACKEND',
  'ELECTRON_OZONE_PLATFORM_HINT',
  '_JAVA_AWT_WM_NONREPARENTING',
]);
const ORDINARY_PREFIXES = ['LC_', 'XDG_', 'GTK_', 'GDK_', 'QT_', 'XCURSOR_'];

export function ordinaryEnvironment(env: Readonly<NodeJS.ProcessEnv>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && (ORDINARY_NAMES.has(name) || ORDINARY_PREFIXES.some((p) => name.startsWith(p))))
      out[name] = value;
  return out;
}

const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function realOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The executable `name` finds on PATH, or null. */
function onPath(name: string, env: Readonly<NodeJS.ProcessEnv>): string | null {
  for (const dir of (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** Where desktop files are looked up: the XDG data dirs' applications/ folders, the user's first. */
function applicationDirs(env: Readonly<NodeJS.ProcessEnv>): string[] {
  const home = env.XDG_DATA_HOME || (env.HOME ? join(env.HOME, '.local/share') : '');
  const dirs = [home, ...(env.XDG_DATA_DIRS || '/usr/local/share:/usr/share').split(':')].filter(Boolean);
  return dirs.map((d) => join(d, 'applications'));
}

/** The keys of a desktop file's [Desktop Entry] group (not its actions', not the localized ones). */
function desktopEntry(text: string): Map<string, string> {
  const keys = new Map<string, string>();
  let inEntry = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      inEntry = line === '[Desktop Entry]';
      continue;
    }
    const eq = line.indexOf('=');
    if (!inEntry || eq < 0) continue;
    const key = line.slice(0, eq).trim();
    if (!keys.has(key)) keys.set(key, line.slice(eq + 1).trim());
  }
  return keys;
}

/**
 * An Exec line's words as the Desktop Entry spec reads them: the string value's escapes (\s \n \t \r \\),
 * then double-quoted words (\" \` \$ \\ inside), field codes (%f %F %u %U %i %c %k ...) removed, "%%" a "%".
 * `args` stand where its file or URL field code was, else after its words.
 */
export function execWords(exec: string, args: readonly string[]): string[] {
  const value = exec.replace(
    /\\([sntr\\])/g,
    (_, c: string) => ({ s: ' ', n: '\n', t: '\t', r: '\r', '\\': '\\' })[c]!,
  );
  const words: Array<{ text: string; quoted: boolean }> = [];
  let i = 0;
  while (i < value.length) {
    if (value[i] === ' ' || value[i] === '\t') {
      i++;
      continue;
    }
    let text = '';
    let quoted = false;
    while (i < value.length && value[i] !== ' ' && value[i] !== '\t') {
      if (value[i] === '"') {
        quoted = true;
        i++;
        while (i < value.length && value[i] !== '"') {
          if (value[i] === '\\' && i + 1 < value.length) i++;
          text += value[i++];
        }
        i++;
      } else text += value[i++];
    }
    words.push({ text, quoted });
  }
  const out: string[] = [];
  let placed = false;
  for (const word of words) {
    if (!word.quoted && /^%[fFuU]$/.test(word.text)) {
      if (!placed) out.push(...args);
      placed = true;
      continue;
    }
    if (!word.quoted && /^%[a-zA-Z]$/.test(word.text)) continue;
    const text = word.quoted ? word.text : word.text.replace(/%([a-zA-Z%])/g, (_, c: string) => (c === '%' ? '%' : ''));
    out.push(text);
  }
  if (!placed) out.push(...args);
  return out;
}

/** What `app` names and what would run: a desktop file, an executable on PATH, or an absolute path. */
function resolveApp(app: string, args: readonly string[], env: Readonly<NodeJS.ProcessEnv>): Resolved {
  if (app.includes('/')) {
    if (!app.startsWith('/'))
      throw new Refusal(
        'invalid_arguments',
        `app: "${app}" is a relative path; give a desktop-file id, an executable name or an absolute path`,
      );
    if (!isExecutableFile(app)) throw new Refusal('target_not_found', `app: ${app} is not an executable file`);
    return { kind: 'path', exe: app, real: realOf(app), argv0: app, args: [...args] };
  }
  const id = app.replace(/\.desktop$/, '');
  const dirs = applicationDirs(env);
  const file = id
    ? dirs.map((d) => join(d, `${id}.desktop`)).find((f) => statSync(f, { throwIfNoEntry: false }))
    : null;
  if (file) {
    const entry = desktopEntry(readFileSync(file, 'utf8'));
    const exec = entry.get('Exec');
    if ((entry.get('Type') ?? 'Application') !== 'Application' || !exec)
      throw new Refusal('target_not_found', `app: the desktop file ${file} starts no application (no Exec line)`);
    if (entry.get('Terminal') === 'true')
      throw new Refusal(
        'not_permitted',
        `app: the desktop file ${file} runs its program in a terminal (Terminal=true), and launch_app starts no terminal; nothing was started`,
      );
    const words = execWords(exec, args);
    const first = words[0] ?? '';
    const exe = first.includes('/') ? (isExecutableFile(first) ? first : null) : onPath(first, env);
    if (!exe)
      throw new Refusal(
        'target_not_found',
        `app: the desktop file ${file} runs "${first}", which is not an executable here (not on PATH)`,
      );
    return { kind: 'desktop', file, exe, real: realOf(exe), argv0: first, args: words.slice(1) };
  }
  const exe = app.endsWith('.desktop') ? null : onPath(app, env);
  if (!exe)
    throw new Refusal(
      'target_not_found',
      `app: "${app}" is neither a desktop-file id (no ${id}.desktop in ${dirs.join(', ')}) nor an executable on PATH`,
    );
  return { kind: 'name', exe, real: realOf(exe), argv0: app, args: [...args] };
}

const OFF = 'launch_app starts only what the operator names with --allow-launch LIST (env VERITY_ALLOW_LAUNCH)';

/**
 * Refuses, before anything starts, what the operator did not name: the same desktop file, or the same
 * program (its real path) as an entry of --allow-launch. A terminal, shell or interpreter must be named
 * itself: a desktop file whose Exec line runs one does not name it.
 */
function checkAllowed(app: string, resolved: Resolved, allowed: readonly string[], env: Readonly<NodeJS.ProcessEnv>) {
  if (!allowed.length) throw new Refusal('not_permitted', `launch_app is off: ${OFF}; nothing was started`);
  const entries = allowed.map((entry) => {
    try {
      return resolveApp(entry.trim(), [], env);
    } catch {
      return null; // an entry naming nothing here names nothing
    }
  });
  const program = (e: Resolved | null) => !!e && e.kind !== 'desktop' && e.real === resolved.real;
  const same = (e: Resolved | null) =>
    !!e && (resolved.kind === 'desktop' ? e.kind === 'desktop' && e.file === resolved.file : program(e));
  if (!entries.some(same))
    throw new Refusal(
      'not_permitted',
      `launch_app: "${app}" is not named by --allow-launch (env VERITY_ALLOW_LAUNCH), which lets agents start ${allowed.join(', ')}; ${OFF}; nothing was started`,
    );
  const kind = programKind(resolved.real) ?? programKind(resolved.exe) ?? programKind(resolved.argv0);
  if (kind && !entries.some(program))
    throw new Refusal(
      'not_permitted',
      `launch_app: "${app}" runs ${basename(resolved.exe)}, a ${kind}; agents start a terminal, shell or interpreter only when --allow-launch (env VERITY_ALLOW_LAUNCH) names that program itself, by name or path; nothing was started`,
    );
}

/** One app this server started: who launched it, and how it ended when it did. */
interface Launched {
  owner: string;
  command: string;
  exited: string | null;
  /** Every process seen below it (kept as they are reparented when their parent ends). */
  tree: Set<number>;
}

/** The launcher of one native host: the apps it started, by pid. */
export class Launcher {
  private readonly launched = new Map<number, Launched>();

  constructor(private readonly desktop: LaunchDesktop) {}

  async launch(request: LaunchRequest, hooks: WaitHooks): Promise<LaunchResult> {
    const started = performance.now();
    const env = machineEnv();
    const resolved = resolveApp(request.app, request.args, env);
    checkAllowed(request.app, resolved, request.allowed, env);
    const argv = [resolved.argv0, ...resolved.args];
    const why = this.desktop.appRefusal?.({
      pid: null,
      names: resolved.kind === 'desktop' ? [request.app.replace(/\.desktop$/, '')] : [],
      exe: resolved.real,
      comm: basename(resolved.real).slice(0, 15),
      argv,
    });
    if (why)
      throw new Refusal(
        'not_permitted',
        `launch_app: agents may not use "${request.app}": ${why}; nothing was started`,
      );
    const command = argv.map((a) => (/[\s"'\\]/.test(a) ? JSON.stringify(a) : a)).join(' ');
    const resolveMs = performance.now() - started;
    const child = spawn(resolved.exe, resolved.args, {
      argv0: resolved.argv0,
      env: ordinaryEnvironment(env),
      cwd: env.HOME && statSync(env.HOME, { throwIfNoEntry: false })?.isDirectory() ? env.HOME : '/',
      // Verity's stdout is the MCP stdio: an app's output goes nowhere near it.
      stdio: 'ignore',
      // Its own process group: a signal to Verity's group (a Ctrl-C) does not end it, and kill_app reaches its children.
      detached: true,
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    }).catch((e: Error) => {
      throw new Refusal('unavailable', `launch_app: ${command} could not be started: ${e.message}`);
    });
    child.unref();
    const pid = child.pid!;
    const entry: Launched = { owner: request.owner, command, exited: null, tree: new Set([pid]) };
    this.launched.set(pid, entry);
    child.once('exit', (code, signal) => {
      entry.exited = signal ? `ended by ${signal}` : `exited with code ${code}`;
    });
    const delivered = performance.now();
    const what = `a window of pid ${pid} (${basename(resolved.exe)}) or of a process it started, in list_windows`;
    const { window, listingError, waitedMs } = await this.waitForWindow(pid, entry, request.timeoutMs, what, hooks);
    const timings = {
      resolve: Math.round(resolveMs * 10) / 10,
      deliver: Math.round((delivered - started - resolveMs) * 10) / 10,
      verify: Math.round((performance.now() - delivered) * 10) / 10,
    };
    const evidence: Evidence[] = [
      {
        kind: 'process',
        detail: `started ${command} as pid ${pid}${resolved.file ? ` (from ${resolved.file})` : ''}, in a process group of its own, with no stdio and the ordinary environment`,
      },
    ];
    const base = {
      route: this.desktop.route,
      delivery: { mode: 'not_applicable' as const },
      timings_ms: timings,
      method: 'spawn',
      target: request.app,
      pid,
    };
    if (window) {
      evidence.push({
        kind: 'window_list',
        expected: what,
        observed: `window ${window.id} "${window.title}" of pid ${window.pid}${window.pid !== pid ? ` (a process pid ${pid} started)` : ''}`,
        detail: `listed after ${waitedMs} ms`,
      });
      return {
        ...base,
        effect: 'confirmed',
        evidence,
        window: { kind: 'window', pid: window.pid!, window_id: window.id, title: window.title },
      };
    }
    const gone = entry.exited !== null && this.live(pid, entry).length === 0;
    const observed = gone
      ? `pid ${pid} ${entry.exited} before any window of it was listed, and no process it started is left`
      : `pid ${pid} is running (${entry.exited ? `it ${entry.exited}, its processes are not` : 'not exited'}), and no window of it was listed${listingError ? ` (the last listing failed: ${listingError})` : ''}`;
    evidence.push({ kind: 'window_list', expected: what, observed, detail: `waited ${waitedMs} ms` });
    if (gone)
      return {
        ...base,
        effect: 'no_effect',
        evidence,
        escalation: {
          target: 'verify',
          reason: `${observed}: it failed, or it handed its start to an instance already running (LibreOffice and Firefox do), whose window belongs to that instance; call list_windows`,
        },
      };
    return {
      ...base,
      effect: 'unverifiable',
      evidence,
      escalation: {
        target: 'verify',
        reason: hooks.signal?.aborted
          ? `the wait for ${what} was cut short after ${waitedMs} ms (the call was stopped); the app is running: call list_windows`
          : `timed out after ${waitedMs} ms waiting for ${what}; the app is running: call list_windows, or launch_app again with a longer timeout_ms`,
      },
    };
  }

  /** Polls the backend's window listing for a window of the app's process tree, bounded. */
  private async waitForWindow(pid: number, entry: Launched, boundMs: number, what: string, hooks: WaitHooks) {
    const began = Date.now();
    let listingError: string | null = null;
    for (let poll = 0; ; poll++) {
      const windows = await this.desktop.windows().then(
        (w) => {
          listingError = null;
          return w;
        },
        (e: Error) => {
          listingError = e.message;
          return [] as NativeWindow[];
        },
      );
      this.live(pid, entry); // records the processes it started while they are still below it
      const mine = windows.filter((w) => w.pid !== null && entry.tree.has(w.pid));
      const waitedMs = Date.now() - began;
      if (mine.length) return { window: mine.find((w) => w.title) ?? mine[0], listingError, waitedMs };
      if (entry.exited !== null && this.live(pid, entry).length === 0) return { window: null, listingError, waitedMs };
      if (waitedMs >= boundMs || hooks.signal?.aborted) return { window: null, listingError, waitedMs };
      hooks.progress?.(`waiting for ${what}: ${Math.round(waitedMs / 1000)} s of at most ${boundMs / 1000} s`);
      await sleep(Math.min(poll < 8 ? POLL_FIRST_MS : POLL_LATER_MS, Math.max(0, boundMs - waitedMs)));
    }
  }

  /**
   * The app's processes that are still running: the one started, every process seen below it (a child
   * outlives its parent, reparented), and any in its process group. New ones below are added as seen.
   */
  private live(pid: number, entry: Launched): number[] {
    const table = processTable();
    const byPid = new Map(table.map((p) => [p.pid, p]));
    let grew = true;
    while (grew) {
      grew = false;
      for (const p of table)
        if (!entry.tree.has(p.pid) && (entry.tree.has(p.ppid) || p.pgrp === pid) && p.state !== 'Z') {
          entry.tree.add(p.pid);
          grew = true;
        }
    }
    // The one started is Verity's own child: gone once Node reaped it (its exit event), not while it is a zombie
    // (kill -0 still finds one). The others are init's to reap: a zombie of them has ended.
    return [...entry.tree].filter((p) => {
      if (p === pid) return entry.exited === null;
      const row = byPid.get(p);
      return row !== undefined && row.state !== 'Z';
    });
  }

  /** Ends an app `owner` launched: its windows closed, then SIGTERM, then SIGKILL, each bounded. */
  async kill(pid: number, owner: string, hooks: WaitHooks): Promise<ActionResult> {
    const started = performance.now();
    const entry = this.launched.get(pid);
    if (!entry)
      throw new Refusal(
        'not_permitted',
        `kill_app: pid ${pid} was not started by launch_app on this server; kill_app ends only apps its own session launched; nothing was sent`,
        { pid },
      );
    if (entry.owner !== owner)
      throw new Refusal(
        'not_permitted',
        `kill_app: pid ${pid} was launched by another session; only the session that launched an app may end it; nothing was sent`,
        { pid },
      );
    const evidence: Evidence[] = [];
    const base = { route: this.desktop.route, delivery: { mode: 'not_applicable' as const }, target: entry.command };
    const timings = { resolve: Math.round((performance.now() - started) * 10) / 10, deliver: 0, verify: 0 };
    const finish = (
      effect: ActionResult['effect'],
      method: string,
      extra: Partial<ActionResult> = {},
    ): ActionResult => {
      timings.verify = Math.round((performance.now() - started - timings.resolve - timings.deliver) * 10) / 10;
      if (effect === 'confirmed') this.launched.delete(pid);
      return { ...base, effect, evidence, timings_ms: timings, method, ...extra };
    };
    const waitGone = async (boundMs: number, stage: string) => {
      const began = Date.now();
      for (;;) {
        const left = this.live(pid, entry);
        if (!left.length) return { left, ms: Date.now() - began };
        if (Date.now() - began >= boundMs || hooks.signal?.aborted) return { left, ms: Date.now() - began };
        hooks.progress?.(`waiting for pid ${pid} to end after ${stage}: ${left.length} process(es) left`);
        await sleep(100);
      }
    };
    if (!this.live(pid, entry).length) {
      evidence.push({
        kind: 'process',
        expected: `pid ${pid} and every process it started gone`,
        observed: `gone already (pid ${pid} ${entry.exited ?? 'ended'})`,
        detail: 'nothing was sent',
      });
      return finish('confirmed', 'none');
    }
    // 1. Gracefully: its windows closed as their close buttons would (the app may save or ask first).
    const tree = new Set(this.live(pid, entry));
    const windows = (await this.desktop.windows().catch(() => [] as NativeWindow[])).filter(
      (w) => w.pid !== null && tree.has(w.pid),
    );
    const asked: string[] = [];
    for (const w of windows) {
      const how = await this.desktop.closeWindow(w.id).catch(() => null);
      if (how) asked.push(`window ${w.id} "${w.title}" (${how})`);
    }
    const deliveredAt = performance.now();
    if (asked.length) {
      const { left, ms } = await waitGone(CLOSE_BOUND_MS, 'its windows were closed');
      evidence.push({
        kind: 'process',
        expected: `pid ${pid} and every process it started gone`,
        observed: left.length ? `${left.length} process(es) still running (${left.join(', ')})` : 'all gone',
        detail: `asked the window manager to close ${asked.join(', ')}; read back after ${ms} ms`,
      });
      if (!left.length) {
        timings.deliver = Math.round((deliveredAt - started - timings.resolve) * 10) / 10;
        return finish('confirmed', 'close_windows');
      }
    } else
      evidence.push({
        kind: 'process',
        detail: windows.length
          ? `no window manager here closes windows (${windows.length} window(s) of it listed): signals only`
          : 'no window of it is listed: signals only',
      });
    // 2. and 3. SIGTERM, then SIGKILL: to its process group and to each process of it (one may have left the group).
    for (const [signal, bound] of [
      ['SIGTERM', TERM_BOUND_MS],
      ['SIGKILL', KILL_BOUND_MS],
    ] as const) {
      const targets = this.live(pid, entry);
      try {
        process.kill(-pid, signal);
      } catch {
        /* the group is empty or gone */
      }
      for (const p of targets)
        try {
          process.kill(p, signal);
        } catch {
          /* gone meanwhile */
        }
      const { left, ms } = await waitGone(bound, signal);
      evidence.push({
        kind: 'process',
        expected: `pid ${pid} and every process it started gone`,
        observed: left.length ? `${left.length} process(es) still running (${left.join(', ')})` : 'all gone',
        detail: `sent ${signal} to ${targets.join(', ')} and process group ${pid}; read back after ${ms} ms`,
      });
      if (!left.length) {
        timings.deliver = Math.round((deliveredAt - started - timings.resolve) * 10) / 10;
        return finish('confirmed', signal === 'SIGTERM' ? 'sigterm' : 'sigkill');
      }
    }
    return finish('no_effect', 'sigkill', {
      escalation: {
        target: 'verify',
        reason: `pid ${pid}'s processes ${this.live(pid, entry).join(', ')} are still running after SIGKILL (a process stuck in the kernel, or ${hooks.signal?.aborted ? 'the call was stopped' : 'not ours to end'}); call kill_app again`,
      },
    });
  }
}
