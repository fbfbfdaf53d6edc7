#!/usr/bin/env node
// Readies the unpacked extension (extension/): the built Control UI (control-ui/dist → extension/ui/) and
// webextension-polyfill's browser-polyfill.min.js. Both are build outputs (git-ignored). Run after
// `npx vite build control-ui`; `node scripts/ensure.mjs` does it.
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const ext = join(root, 'extension');
const ui = join(root, 'control-ui', 'dist');
const polyfill = join(root, 'node_modules', 'webextension-polyfill', 'dist', 'browser-polyfill.min.js');

if (!existsSync(join(ui, 'index.html'))) { process.stderr.write('build-extension: control-ui/dist is not built; run `npx vite build control-ui` first\n'); process.exit(1); }
if (!existsSync(polyfill)) { process.stderr.write('build-extension: webextension-polyfill is not installed; run `npm ci`\n'); process.exit(1); }
rmSync(join(ext, 'ui'), { recursive: true, force: true });
cpSync(ui, join(ext, 'ui'), { recursive: true });
cpSync(polyfill, join(ext, 'browser-polyfill.min.js'));
if (!process.argv.includes('--quiet')) process.stderr.write(`build-extension: ${ext} is ready (load it unpacked)\n`);
