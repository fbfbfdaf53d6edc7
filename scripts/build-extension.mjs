#!/usr/bin/env node
// Builds the unpacked extension (extension/): its TypeScript (extension/src: the service worker, the
// pairing page, the page that opens the Control UI) bundled by esbuild with webextension-polyfill, the
// shared gateway client and the protocol types, into extension/*.js; and the built Control UI
// (control-ui/dist → extension/ui/). All are build outputs (git-ignored). Run after
// `npx vite build control-ui`; `node scripts/ensure.mjs` and `npm run build` do it. Type-checking is
// `tsc --noEmit -p extension` (esbuild only strips types).
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ext = join(root, 'extension');
const ui = join(root, 'control-ui', 'dist');

if (!existsSync(join(ui, 'index.html'))) {
  process.stderr.write('build-extension: control-ui/dist is not built; run `npx vite build control-ui` first\n');
  process.exit(1);
}

// One classic script per entry (the manifest's service worker and the pages' <script> tags): no module
// loading at run time, everything each needs inside it.
await build({
  entryPoints: ['background', 'pair', 'open-ui'].map((name) => join(ext, 'src', `${name}.ts`)),
  outdir: ext,
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'chrome116',
  legalComments: 'none',
  logLevel: 'warning',
});
// Made by builds before the polyfill was bundled: not part of the extension any more.
rmSync(join(ext, 'browser-polyfill.min.js'), { force: true });
rmSync(join(ext, 'ui'), { recursive: true, force: true });
cpSync(ui, join(ext, 'ui'), { recursive: true });
if (!process.argv.includes('--quiet')) process.stderr.write(`build-extension: ${ext} is ready (load it unpacked)\n`);
