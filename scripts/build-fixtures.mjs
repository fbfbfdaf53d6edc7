#!/usr/bin/env node
// Bundles the editor/framework fixture scripts test/fixtures/src/*.js into
// test/fixtures/dist/*.js (IIFE, browser) with esbuild.
//
// Idempotent and fast: after a build it records the inputs esbuild read
// (metafile) in dist/.build-stamp.json; a later run skips the build when the
// set of entry points, this script and every recorded input are unchanged
// (mtime + size). Pass --force (or set VERITY_FIXTURES_FORCE=1) to rebuild.
//
// Usage: node scripts/build-fixtures.mjs [--force] [--quiet]
import { build } from 'esbuild';
import { readdir, readFile, writeFile, stat, mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = path.join(root, 'test', 'fixtures', 'src');
const outDir = path.join(root, 'test', 'fixtures', 'dist');
const stampFile = path.join(outDir, '.build-stamp.json');
const STAMP_VERSION = 1;

const args = new Set(process.argv.slice(2));
const force = args.has('--force') || process.env.VERITY_FIXTURES_FORCE === '1';
const quiet = args.has('--quiet');
const log = (...a) => {
  if (!quiet) console.log('[build-fixtures]', ...a);
};

async function fileSig(abs) {
  try {
    const s = await stat(abs);
    return `${s.size}:${Math.trunc(s.mtimeMs)}`;
  } catch {
    return null;
  }
}

async function listEntries() {
  const names = (await readdir(srcDir)).filter((n) => n.endsWith('.js')).sort();
  return names.map((n) => path.join(srcDir, n));
}

/** Signature of everything that can change the output, keyed by path relative to root. */
async function signatures(files) {
  const out = {};
  await Promise.all(
    files.map(async (rel) => {
      out[rel] = await fileSig(path.join(root, rel));
    }),
  );
  return out;
}

async function readStamp() {
  try {
    return JSON.parse(await readFile(stampFile, 'utf8'));
  } catch {
    return null;
  }
}

async function upToDate(entries, stamp) {
  if (!stamp) return false;
  if (stamp.version !== STAMP_VERSION) return false;
  const entryRels = entries.map((e) => path.relative(root, e));
  if (JSON.stringify(entryRels) !== JSON.stringify(stamp.entries)) return false;
  for (const out of stamp.outputs) {
    if ((await fileSig(path.join(root, out))) === null) return false;
  }
  const now = await signatures(Object.keys(stamp.inputs));
  for (const [rel, sig] of Object.entries(stamp.inputs)) {
    if (now[rel] !== sig) return false;
  }
  return true;
}

async function main() {
  const t0 = Date.now();
  const entries = await listEntries();
  const prev = await readStamp();
  if (!force && (await upToDate(entries, prev))) {
    log(`up to date (${entries.length} bundles, ${Date.now() - t0} ms)`);
    return;
  }
  await rm(stampFile, { force: true });
  await mkdir(outDir, { recursive: true });

  const result = await build({
    absWorkingDir: root,
    entryPoints: entries,
    outdir: outDir,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['chrome110'],
    minify: false,
    sourcemap: false,
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
    // Icon fonts and theme images referenced by a bundled stylesheet (Font Awesome, jQuery UI) are copied beside it.
    loader: { '.woff2': 'file', '.ttf': 'file', '.png': 'file', '.gif': 'file' },
    define: {
      'process.env.NODE_ENV': '"production"',
      // Vue esm-bundler feature flags (full build with template compiler).
      __VUE_OPTIONS_API__: 'true',
      __VUE_PROD_DEVTOOLS__: 'false',
      __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
      // draft-js (through fbjs) reads Node's `global`.
      global: 'globalThis',
    },
  });

  // Drop bundles whose entry point no longer exists.
  const outputs = Object.keys(result.metafile.outputs);
  for (const old of prev?.outputs ?? []) {
    if (!outputs.includes(old) && old.startsWith(path.relative(root, outDir) + path.sep)) {
      await rm(path.join(root, old), { force: true });
    }
  }

  const inputs = new Set(Object.keys(result.metafile.inputs));
  inputs.add(path.relative(root, fileURLToPath(import.meta.url)));
  for (const lock of ['package-lock.json', 'package.json']) inputs.add(lock);
  const stamp = {
    version: STAMP_VERSION,
    entries: entries.map((e) => path.relative(root, e)),
    outputs,
    inputs: await signatures([...inputs].sort()),
  };
  await writeFile(stampFile, JSON.stringify(stamp, null, 1) + '\n');
  log(`built ${entries.length} bundles -> ${path.relative(root, outDir)} in ${Date.now() - t0} ms`);
}

main().catch((err) => {
  console.error('[build-fixtures] failed:', err?.message ?? err);
  process.exit(1);
});
