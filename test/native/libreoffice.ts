// LibreOffice on a test desktop (desktop.ts), for the native tests and the bench: one soffice per caller,
// with its own profile and a UNO pipe, and office.py beside it answering what the documents themselves
// hold (the truth Verity's read-back is checked against). Stopped by PID.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stop, until, type Desktop } from './desktop.js';

const SOFFICE = '/usr/lib/libreoffice/program/soffice.bin';
const OFFICE_PY = fileURLToPath(new URL('../../../test/native/office.py', import.meta.url));
/** LibreOffice's exit code when it wants to be started again (the first start of a fresh profile). */
const RESTART = 81;
/** A cold start under load (two cores shared by many tests) takes 10-40 s. */
const START_MS = 120_000;
/**
 * A new document takes 5-15 s here under load (measured: 5.3-13.6 s, 22 documents, load average 28 on two
 * cores); one unanswered for this long is taken as hung, and LibreOffice is started again, once. A bound
 * only: the two hangs gdb found, both with an AT-SPI client walking LibreOffice's tree meanwhile, are fixed
 * where they arose. (1) soffice's stderr was a pipe nobody read: the GLib warnings LibreOffice logs while
 * answering AT-SPI calls filled it, and its main thread blocked in write(2) holding the SolarMutex (the
 * desktop's spawn now reads every pipe). (2) loadComponentFromURL ran on a UNO bridge thread, which asked
 * GTK's clipboard whether Paste is possible and waited in gtk_clipboard_wait_for_targets' nested main loop
 * for good (office.py now runs every request on LibreOffice's main thread).
 */
const NEW_MS = 60_000;

/** Why LibreOffice cannot run here, or null. */
export function missingOffice(): string | null {
  if (!existsSync(SOFFICE)) return 'LibreOffice is missing (libreoffice-writer libreoffice-calc libreoffice-gtk3)';
  const r = spawnSync('/usr/bin/python3', ['-c', 'import uno'], { stdio: 'ignore' });
  if (r.status !== 0) return 'python3-uno is missing';
  if (!existsSync('/usr/lib/libreoffice/program/libvclplug_gtk3lo.so')) return 'libreoffice-gtk3 is missing';
  return null;
}

export interface Office {
  /** The pid of soffice.bin (the process that owns the windows). */
  pid(): number;
  /** How many times LibreOffice was started: open() starts it again when a document hangs (its documents go). */
  starts(): number;
  /**
   * Opens a new document titled `title` (its window: "<title> - LibreOffice Writer" etc.), optionally
   * pre-filled, and gives its X11 window id; null on a desktop with no X display (a Wayland window has none),
   * once the compositor shows it.
   */
  open(kind: 'writer' | 'calc' | 'impress', title: string, text?: string): Promise<number | null>;
  /** A Writer document's whole text, from its model (XText.String: paragraphs joined by "\n"). */
  text(title: string): Promise<string>;
  /** A Calc cell's content (first sheet), from its model. */
  cell(title: string, cell: string): Promise<string>;
  /** The texts of the shapes on an Impress document's first slide, from its model. */
  shapes(title: string): Promise<string[]>;
  /** Closes a document without saving (its window goes). */
  closeDoc(title: string): Promise<void>;
  close(): Promise<void>;
}

const APP_NAME = { writer: 'Writer', calc: 'Calc', impress: 'Impress' } as const;

/** An office.py request LibreOffice never answered (within its bound). */
class Unanswered extends Error {}
/** An office.py request LibreOffice could not answer: soffice.bin exited (crashed) before it did. */
class Exited extends Error {}

/** One soffice.bin on the desktop with office.py talking to it over a fresh UNO pipe. */
interface Running {
  pid(): number;
  ask(req: Record<string, unknown>, ms?: number): Promise<any>;
  stop(): Promise<void>;
}

async function launchOffice(d: Desktop, userInstallation: string): Promise<Running> {
  const pipe = `verity${process.pid}x${Date.now()}`;
  const args = [
    '--norestore',
    '--nologo',
    '--nolockcheck',
    '--nodefault',
    userInstallation,
    `--accept=pipe,name=${pipe};urp;`,
  ];
  let soffice: ChildProcess | null = null;
  /** How soffice.bin ended, when it did on its own (not stopped here, not the profile's restart). */
  let exited: string | null = null;
  const waiting = new Set<(e: Error) => void>();
  const launch = () => {
    const child = d.spawn(SOFFICE, args, { SAL_USE_VCLPLUGIN: 'gtk3' });
    child.on('exit', (code, signal) => {
      if (soffice !== child) return;
      // A fresh profile's first start exits 81 once it has written the profile: start it again.
      if (code === RESTART) {
        soffice = launch();
        return;
      }
      // Anything else is a crash (seen: SIGABRT in atk-bridge with documents closed during AT-SPI walks):
      // what was asked fails now, naming it, rather than at its bound as if LibreOffice hung.
      exited = `soffice.bin (pid ${child.pid}) exited ${signal ? `on ${signal}` : `with code ${code}`}`;
      for (const fail of waiting) fail(new Exited(exited));
      waiting.clear();
    });
    return child;
  };
  soffice = launch();
  // Its own spawn (the desktop's gives no stdin), on the desktop's environment; stopped by PID below.
  const py = spawn('/usr/bin/python3', [OFFICE_PY, pipe], {
    env: { ...process.env, ...d.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  py.stderr!.on('data', (c) => {
    stderr += String(c);
  });
  const lines = createInterface({ input: py.stdout! });
  const answers: Array<(line: string) => void> = [];
  const early: string[] = [];
  lines.on('line', (line) => {
    const next = answers.shift();
    if (next) next(line);
    else early.push(line);
  });
  const ask = (req: Record<string, unknown>, ms = START_MS): Promise<any> =>
    new Promise((resolve, reject) => {
      if (exited) {
        reject(new Exited(`${exited} before ${JSON.stringify(req)}`));
        return;
      }
      const fail = (e: Error) => {
        clearTimeout(timer);
        reject(new Exited(`${e.message} before it answered ${JSON.stringify(req)}`));
      };
      const timer = setTimeout(() => {
        waiting.delete(fail);
        reject(new Unanswered(`office.py did not answer ${JSON.stringify(req)} within ${ms} ms (${stderr.trim()})`));
      }, ms);
      waiting.add(fail);
      answers.push((line) => {
        clearTimeout(timer);
        waiting.delete(fail);
        const out = JSON.parse(line);
        if (out.error) reject(new Error(`office.py: ${out.error}`));
        else resolve(out);
      });
      py.stdin!.write(`${JSON.stringify(req)}\n`);
    });
  const stopBoth = async () => {
    const s = soffice;
    soffice = null;
    await stop(py.pid);
    await stop(s?.pid);
  };
  try {
    // office.py says "ready" once it reached soffice over the pipe.
    await until(() => early.length > 0 || null, `LibreOffice's UNO pipe (office.py: ${stderr.trim()})`, START_MS, 200);
    if (!JSON.parse(early.shift()!).ready) throw new Error('office.py did not say ready');
  } catch (e) {
    await stopBoth();
    throw e;
  }
  return { pid: () => soffice!.pid!, ask, stop: stopBoth };
}

/** Where a hung soffice.bin waits: its threads' stacks (gdb, where installed), written to a file beside the profiles. */
function stacks(pid: number): string {
  if (!existsSync('/usr/bin/gdb')) return '';
  const r = spawnSync('/usr/bin/gdb', ['-p', String(pid), '-batch', '-ex', 'thread apply all bt'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  const file = join(tmpdir(), `verity-office-hang-${pid}.txt`);
  writeFileSync(file, `${r.stdout}${r.stderr}`);
  return ` (its threads' stacks: ${file})`;
}

export async function startOffice(d: Desktop): Promise<Office> {
  const profile = mkdtempSync(join(tmpdir(), 'verity-office-'));
  const userInstallation = `-env:UserInstallation=file://${profile}`;
  // A fresh profile's first start writes the profile and exits 81 to be started again, and a UNO client
  // that reached it before then talks to a process on its way out. So the profile is made first, by a
  // start that ends once initialised.
  const init = spawnSync(SOFFICE, ['--headless', '--terminate_after_init', '--norestore', userInstallation], {
    env: { ...process.env, ...d.env, SAL_USE_VCLPLUGIN: 'gtk3' },
    stdio: 'ignore',
    timeout: START_MS,
  });
  if (init.error || (init.status !== 0 && init.status !== RESTART)) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(`LibreOffice could not make its profile: ${init.error?.message ?? `exit ${init.status}`}`);
  }
  let running: Running;
  let starts = 1;
  try {
    running = await launchOffice(d, userInstallation);
  } catch (e) {
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  const stopAll = async () => {
    await running.stop();
    rmSync(profile, { recursive: true, force: true });
  };
  return {
    pid: () => running.pid(),
    starts: () => starts,
    async open(kind, title, text) {
      const req = { op: 'new', kind, title, ...(text !== undefined ? { text } : {}) };
      try {
        await running.ask(req, NEW_MS);
      } catch (e) {
        // A bound, not the fix (see NEW_MS): the documents of the LibreOffice that hung go with it, so
        // callers open documents per case group and lose one group, not the file.
        if (!(e instanceof Unanswered) && !(e instanceof Exited)) throw e;
        process.stderr.write(
          e instanceof Exited
            ? `office: LibreOffice exited making a document (${e.message}); starting LibreOffice again and trying once more\n`
            : `office: LibreOffice hung making a document (${e.message})${stacks(running.pid())}; starting LibreOffice again and trying once more\n`,
        );
        await running.stop();
        running = await launchOffice(d, userInstallation);
        starts++;
        await running.ask(req, NEW_MS);
      }
      const name = `^${title} - LibreOffice ${APP_NAME[kind]}$`;
      if (!d.display) {
        await until(
          () => d.x('swaymsg', ['-t', 'get_tree']).includes(`${title} - LibreOffice ${APP_NAME[kind]}`),
          `sway to show "${title} - LibreOffice ${APP_NAME[kind]}"`,
          60_000,
          100,
        );
        return null;
      }
      return until(
        () => {
          try {
            return Number(d.x('xdotool', ['search', '--onlyvisible', '--name', name]).split('\n')[0]) || null;
          } catch {
            return null;
          }
        },
        `the window "${title} - LibreOffice ${APP_NAME[kind]}"`,
        60_000,
        100,
      );
    },
    text: async (title) => (await running.ask({ op: 'text', title })).text,
    cell: async (title, cell) => (await running.ask({ op: 'cell', title, cell })).text,
    shapes: async (title) => (await running.ask({ op: 'shapes', title })).texts,
    closeDoc: async (title) => {
      await running.ask({ op: 'close', title });
    },
    close: stopAll,
  };
}

/**
 * A fresh profile, made by a start that ends once initialised (a first start exits 81 to be started again),
 * for a LibreOffice started elsewhere (launch_app), as its -env:UserInstallation argument.
 */
export function officeProfile(d: Desktop): { userInstallation: string; remove(): void } {
  const profile = mkdtempSync(join(tmpdir(), 'verity-office-'));
  const userInstallation = `-env:UserInstallation=file://${profile}`;
  const init = spawnSync(SOFFICE, ['--headless', '--terminate_after_init', '--norestore', userInstallation], {
    env: { ...process.env, ...d.env, SAL_USE_VCLPLUGIN: 'gtk3' },
    stdio: 'ignore',
    timeout: START_MS,
  });
  if (init.error || (init.status !== 0 && init.status !== RESTART)) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(`LibreOffice could not make its profile: ${init.error?.message ?? `exit ${init.status}`}`);
  }
  return { userInstallation, remove: () => rmSync(profile, { recursive: true, force: true }) };
}

/** office.py answering for a LibreOffice started elsewhere (launch_app), over its UNO pipe; stopped by PID. */
export async function unoTruth(
  d: Desktop,
  pipe: string,
): Promise<{ ask(req: Record<string, unknown>, ms?: number): Promise<any>; stop(): Promise<void> }> {
  const py = spawn('/usr/bin/python3', [OFFICE_PY, pipe], {
    env: { ...process.env, ...d.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  py.stderr!.on('data', (c) => {
    stderr += String(c);
  });
  const lines: string[] = [];
  createInterface({ input: py.stdout! }).on('line', (line) => lines.push(line));
  const next = (what: string, ms: number) =>
    until(() => (lines.length ? lines.shift() : null), `office.py to answer ${what} (${stderr.trim()})`, ms, 50);
  try {
    if (!JSON.parse(await next("that it reached LibreOffice's UNO pipe", START_MS)).ready)
      throw new Error('office.py did not say ready');
  } catch (e) {
    await stop(py.pid);
    throw e;
  }
  return {
    async ask(req, ms = NEW_MS) {
      py.stdin!.write(`${JSON.stringify(req)}\n`);
      const out = JSON.parse(await next(JSON.stringify(req), ms));
      if (out.error) throw new Error(`office.py: ${out.error}`);
      return out;
    },
    stop: () => stop(py.pid),
  };
}
