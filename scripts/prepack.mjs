#!/usr/bin/env node
// `npm pack` and `npm publish` run this first (prepack): it builds what the package ships, from the
// sources as they are: the server (tsconfig.build.json: server/ only, into dist/server; the package's
// `files` take nothing else from dist/) with the page agent bundled into it (scripts/build-page-agent.mjs),
// the Control UI (control-ui/dist) and the extension (its bundled scripts and extension/ui). Modules in
// dist/server whose source is gone are deleted, so no stale one is shipped.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (line) => process.stderr.write(`prepack: ${line}\n`);

function run(what, command, args) {
  const started = Date.now();
  say(`${what}…`);
  const r = spawnSync(command, args, {
    cwd: root,
    stdio: ['ignore', process.stderr, 'inherit'],
    shell: process.platform === 'win32',
  });
  if (r.status !== 0) {
    say(`${what} failed (exit ${r.status ?? r.signal})`);
    process.exit(1);
  }
  say(`${what}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

run('building the server (tsconfig.build.json)', process.execPath, [
  join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
  '-p',
  'tsconfig.build.json',
]);

// dist/server/x.js without server/x.ts: a module whose source was deleted or renamed since the last build.
const prune = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(path);
      continue;
    }
    const source = join(root, relative(join(root, 'dist'), path)).replace(/\.js(\.map)?$/, '.ts');
    if (!existsSync(source)) {
      rmSync(path);
      say(`removed ${relative(root, path)} (its source is gone)`);
    }
  }
};
prune(join(root, 'dist', 'server'));
// After the prune: the bundle has no .ts of its own (its source is server/cdp/page-agent/).
run('bundling the page agent (esbuild)', process.execPath, [join(root, 'scripts', 'build-page-agent.mjs')]);

run('building the Control UI (vite)', process.execPath, [
  join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
  'build',
  'control-ui',
]);
run('readying the extension', process.execPath, [join(root, 'scripts', 'build-extension.mjs'), '--quiet']);
