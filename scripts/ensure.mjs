#!/usr/bin/env node
// Makes a fresh Debian machine ready, then gets out of the way: system packages (as root, via apt),
// npm dependencies, the TypeScript build and the test fixtures. Each step is skipped when already done.
//   node scripts/ensure.mjs          what `npm start` needs (Chromium, deps, build)
//   node scripts/ensure.mjs --test   also what the test suite needs (Xvfb, D-Bus, AT-SPI, a WM, GTK)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const forTests = process.argv.includes('--test');
const say = (line) => process.stderr.write(`ensure: ${line}\n`);

function run(command, what) {
  say(`${what}: ${command}`);
  const r = spawnSync(command, { shell: true, stdio: ['ignore', 'inherit', 'inherit'], cwd: root, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.status !== 0) { say(`failed (${r.status}): ${what}`); process.exit(r.status ?? 1); }
}

const has = (bin) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
const dpkgHas = (pkg) => spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed');

// 1. System packages: Chromium always; the native test stack for tests.
const wanted = [['chromium', () => has('chromium') || has('chromium-browser') || has('google-chrome') || !!process.env.VERITY_CHROMIUM]];
if (forTests) {
  for (const pkg of ['xvfb', 'dbus', 'dbus-x11', 'at-spi2-core', 'libxtst6', 'openbox', 'python3-gi', 'gir1.2-gtk-3.0', 'gir1.2-gtk-4.0', 'python3-pyqt5', 'firefox-esr', 'xdotool', 'x11-utils', 'fonts-noto-color-emoji', 'fonts-noto-cjk']) {
    wanted.push([pkg, () => dpkgHas(pkg)]);
  }
}
const missing = wanted.filter(([, present]) => !present()).map(([pkg]) => pkg);
if (missing.length) {
  if (process.getuid?.() !== 0 || !has('apt-get')) {
    say(`missing system packages: ${missing.join(' ')}; install them (apt-get install ${missing.join(' ')}) and run again`);
    process.exit(1);
  }
  run('apt-get update -qq', 'refreshing the package lists');
  run(`apt-get install -y -qq --no-install-recommends ${missing.join(' ')} >/dev/null`, `installing ${missing.join(' ')}`);
}

// 2. npm dependencies, when absent or older than the lock file.
const stamp = join(root, 'node_modules', '.package-lock.json');
if (!existsSync(stamp) || statSync(stamp).mtimeMs < statSync(join(root, 'package-lock.json')).mtimeMs) {
  run('npm ci --no-audit --no-fund', 'installing npm dependencies');
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
const sources = Math.max(...['server', 'test', 'bench'].map((d) => newest(join(root, d))), statSync(join(root, 'tsconfig.json')).mtimeMs);
if (!existsSync(built) || statSync(built).mtimeMs < sources) {
  run('npx tsc -p tsconfig.json && touch dist/.built', 'building');
}

// 4. The Control UI (Vite), when its sources changed since the last build.
const uiBuilt = join(root, 'control-ui', 'dist', 'index.html');
const uiSources = Math.max(newest(join(root, 'control-ui', 'src')), statSync(join(root, 'control-ui', 'index.html')).mtimeMs);
if (!existsSync(uiBuilt) || statSync(uiBuilt).mtimeMs < uiSources) {
  run('npx vite build control-ui', 'building the Control UI');
}

// 4b. The extension: the Control UI and webextension-polyfill copied in, when older than the UI build.
const extBuilt = join(root, 'extension', 'ui', 'index.html');
if (!existsSync(extBuilt) || !existsSync(join(root, 'extension', 'browser-polyfill.min.js')) || statSync(extBuilt).mtimeMs < statSync(uiBuilt).mtimeMs) {
  run('node scripts/build-extension.mjs --quiet', 'readying the extension');
}

// 5. Test fixtures (the real editor libraries, bundled).
if (forTests) run('node scripts/build-fixtures.mjs --quiet', 'bundling the test fixtures');
