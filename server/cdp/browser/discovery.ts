// Where a Chromium-family browser is looked for, per OS and channel. The candidate list is pure (platform,
// environment in, places out) so each OS's list is unit-tested here; only findBrowser() touches the disk.
import { accessSync, constants, statSync } from 'node:fs';
import { posix, win32 } from 'node:path';
import { Refusal } from '../../contract/refusal.js';

export const CHANNELS = [
  'chromium',
  'chrome',
  'chrome-beta',
  'chrome-dev',
  'chrome-canary',
  'msedge',
  'msedge-beta',
  'msedge-dev',
  'msedge-canary',
] as const;
export type Channel = (typeof CHANNELS)[number];

/** Without --channel: the open-source build first (what the machine's package manager installs), then stable releases, then previews. */
const DEFAULT_ORDER: Channel[] = [
  'chromium',
  'chrome',
  'msedge',
  'chrome-beta',
  'chrome-dev',
  'chrome-canary',
  'msedge-beta',
  'msedge-dev',
  'msedge-canary',
];

export function isChannel(name: string): name is Channel {
  return (CHANNELS as readonly string[]).includes(name);
}

/** One place to look: a fixed path, or a command name searched on PATH. */
export type Candidate = { channel: Channel; path: string } | { channel: Channel; command: string };

interface Names {
  linux: { paths: string[]; commands: string[] };
  mac: string | null;
  win: { dir: string; exe: string; roots: Array<'PROGRAMFILES' | 'PROGRAMFILES(X86)' | 'LOCALAPPDATA'> } | null;
}

const ALL_ROOTS = ['PROGRAMFILES', 'PROGRAMFILES(X86)', 'LOCALAPPDATA'] as const;
/** Install locations as each vendor's installer lays them out (Linux packages, macOS app bundles, Windows per-machine and per-user). */
const NAMES: Record<Channel, Names> = {
  chromium: {
    linux: { paths: ['/snap/bin/chromium'], commands: ['chromium', 'chromium-browser'] },
    mac: 'Chromium',
    win: { dir: 'Chromium\\Application', exe: 'chrome.exe', roots: [...ALL_ROOTS] },
  },
  chrome: {
    linux: { paths: ['/opt/google/chrome/chrome'], commands: ['google-chrome', 'google-chrome-stable'] },
    mac: 'Google Chrome',
    win: { dir: 'Google\\Chrome\\Application', exe: 'chrome.exe', roots: [...ALL_ROOTS] },
  },
  'chrome-beta': {
    linux: { paths: ['/opt/google/chrome-beta/chrome'], commands: ['google-chrome-beta'] },
    mac: 'Google Chrome Beta',
    win: { dir: 'Google\\Chrome Beta\\Application', exe: 'chrome.exe', roots: [...ALL_ROOTS] },
  },
  'chrome-dev': {
    linux: { paths: ['/opt/google/chrome-unstable/chrome'], commands: ['google-chrome-unstable'] },
    mac: 'Google Chrome Dev',
    win: { dir: 'Google\\Chrome Dev\\Application', exe: 'chrome.exe', roots: [...ALL_ROOTS] },
  },
  'chrome-canary': {
    linux: { paths: ['/opt/google/chrome-canary/chrome'], commands: ['google-chrome-canary'] },
    mac: 'Google Chrome Canary',
    win: { dir: 'Google\\Chrome SxS\\Application', exe: 'chrome.exe', roots: ['LOCALAPPDATA'] },
  },
  msedge: {
    linux: { paths: ['/opt/microsoft/msedge/msedge'], commands: ['microsoft-edge', 'microsoft-edge-stable'] },
    mac: 'Microsoft Edge',
    win: { dir: 'Microsoft\\Edge\\Application', exe: 'msedge.exe', roots: [...ALL_ROOTS] },
  },
  'msedge-beta': {
    linux: { paths: ['/opt/microsoft/msedge-beta/msedge'], commands: ['microsoft-edge-beta'] },
    mac: 'Microsoft Edge Beta',
    win: { dir: 'Microsoft\\Edge Beta\\Application', exe: 'msedge.exe', roots: [...ALL_ROOTS] },
  },
  'msedge-dev': {
    linux: { paths: ['/opt/microsoft/msedge-dev/msedge'], commands: ['microsoft-edge-dev'] },
    mac: 'Microsoft Edge Dev',
    win: { dir: 'Microsoft\\Edge Dev\\Application', exe: 'msedge.exe', roots: [...ALL_ROOTS] },
  },
  // Edge Canary has no Linux build.
  'msedge-canary': {
    linux: { paths: [], commands: [] },
    mac: 'Microsoft Edge Canary',
    win: { dir: 'Microsoft\\Edge SxS\\Application', exe: 'msedge.exe', roots: ['LOCALAPPDATA'] },
  },
};

/** Every place to look, in order, for one channel (or, without one, every channel in the default order). */
export function candidates(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, channel?: Channel): Candidate[] {
  const out: Candidate[] = [];
  for (const ch of channel ? [channel] : DEFAULT_ORDER) {
    const n = NAMES[ch];
    if (platform === 'darwin') {
      if (!n.mac) continue;
      const inApp = `${n.mac}.app/Contents/MacOS/${n.mac}`;
      out.push({ channel: ch, path: `/Applications/${inApp}` });
      if (env.HOME) out.push({ channel: ch, path: posix.join(env.HOME, 'Applications', inApp) });
      // Homebrew's cask links a `chromium` command.
      if (ch === 'chromium') out.push({ channel: ch, command: 'chromium' });
    } else if (platform === 'win32') {
      if (!n.win) continue;
      for (const root of n.win.roots) {
        const base = env[root];
        if (base) out.push({ channel: ch, path: win32.join(base, n.win.dir, n.win.exe) });
      }
    } else {
      // Linux and the other Unixes: the package's command on PATH first, then the vendor's fixed path.
      for (const command of n.linux.commands) out.push({ channel: ch, command });
      for (const path of n.linux.paths) out.push({ channel: ch, path });
    }
  }
  return out;
}

/** The PATH directories, split the way this platform splits them. */
export function pathDirs(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string[] {
  const raw = platform === 'win32' ? (env.PATH ?? env.Path ?? '') : (env.PATH ?? '');
  return raw.split(platform === 'win32' ? ';' : ':').filter((d) => d.length > 0);
}

function installHint(platform: NodeJS.Platform): string {
  if (platform === 'darwin')
    return 'install Google Chrome (https://www.google.com/chrome/) or Chromium (`brew install --cask chromium`)';
  if (platform === 'win32') return 'install Google Chrome (https://www.google.com/chrome/) or Microsoft Edge';
  return 'install Chromium (e.g. `apt-get install chromium`) or Google Chrome';
}

export interface Probe {
  isExecutable(path: string): boolean;
}

export const diskProbe: Probe = {
  isExecutable(path: string): boolean {
    try {
      if (!statSync(path).isFile()) return false;
      if (process.platform !== 'win32') accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
};

export interface FindOptions {
  explicit?: string;
  channel?: Channel;
  platform?: NodeJS.Platform;
  /** Where PATH and the install folders are read (the CLI hands down its environment; absent: none). */
  env?: Readonly<NodeJS.ProcessEnv>;
  probe?: Probe;
}

/**
 * The browser executable to launch: --chromium (a path, or a command on PATH) wins; else the first
 * candidate present. Refuses with every place it looked, so the user can see what is missing.
 */
export function findBrowser(opts: FindOptions = {}): string {
  const platform = opts.platform ?? process.platform;
  const env = opts.env ?? {};
  const probe = opts.probe ?? diskProbe;
  const p = platform === 'win32' ? win32 : posix;
  const dirs = pathDirs(platform, env);
  const exts =
    platform === 'win32'
      ? [
          '',
          ...(env.PATHEXT ?? '.EXE')
            .split(';')
            .filter(Boolean)
            .map((e) => e.toLowerCase()),
        ]
      : [''];
  const onPath = (command: string): string | null => {
    for (const dir of dirs)
      for (const ext of exts) {
        const full = p.join(dir, command + ext);
        if (probe.isExecutable(full)) return full;
      }
    return null;
  };
  const pathText = dirs.length ? `PATH (${dirs.join(platform === 'win32' ? ';' : ':')})` : 'PATH (empty)';
  if (opts.explicit) {
    const isPath = opts.explicit.includes('/') || (platform === 'win32' && opts.explicit.includes('\\'));
    const found = isPath ? (probe.isExecutable(opts.explicit) ? opts.explicit : null) : onPath(opts.explicit);
    if (found) return found;
    throw new Refusal(
      'unavailable',
      `no browser at --chromium ${opts.explicit}: ${isPath ? 'no executable file there' : `not found on ${pathText}`}`,
    );
  }
  const looked: string[] = [];
  const commands: string[] = [];
  for (const c of candidates(platform, env, opts.channel)) {
    if ('path' in c) {
      if (probe.isExecutable(c.path)) return c.path;
      looked.push(c.path);
    } else {
      const found = onPath(c.command);
      if (found) return found;
      commands.push(c.command);
    }
  }
  const what = opts.channel ? `no ${opts.channel} browser found` : 'no Chromium-family browser found';
  const places = [
    commands.length ? `on ${pathText} for ${commands.join(', ')}` : '',
    looked.length ? `at ${looked.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
  const where = places ? `looked ${places}` : `there is no ${opts.channel} build for ${platform}`;
  throw new Refusal(
    'unavailable',
    `${what}: ${where}. ${installHint(platform)[0].toUpperCase()}${installHint(platform).slice(1)}, pass --channel NAME (${CHANNELS.join(', ')}), or --chromium PATH (VERITY_CHROMIUM)`,
  );
}
