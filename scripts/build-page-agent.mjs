#!/usr/bin/env node
// Bundles the page agent (server/cdp/page-agent/index.ts, a typed module written against the DOM, with the
// actions' page parts, server/cdp/actions/*.page.ts, that it imports) into
// one self-contained script, dist/server/cdp/page-agent.bundle.js, which cdp/tab/tab.ts evaluates in
// Verity's isolated world of every frame; and its main-world part (page-agent/main-world.ts: what only the
// page's own world can answer, a code editor's model) into dist/server/cdp/main-world.bundle.js, which
// cdp/tab/tab.ts has evaluated in the page's world of every document. Run by `npm run build`, scripts/ensure.mjs and
// scripts/prepack.mjs after tsc; esbuild is a build-time dependency only, so the package ships the bundle.
//   node scripts/build-page-agent.mjs [--quiet]
import { build } from 'esbuild';
import { statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BUNDLES = [
  ['index.ts', 'page-agent.bundle.js'],
  ['main-world.ts', 'main-world.bundle.js'],
];

for (const [entry, out] of BUNDLES) {
  const outfile = join(root, 'dist', 'server', 'cdp', out);
  await build({
    entryPoints: [join(root, 'server', 'cdp', 'page-agent', entry)],
    tsconfig: join(root, 'server', 'cdp', 'page-agent', 'tsconfig.json'),
    outfile,
    bundle: true,
    format: 'iife', // one expression, no module syntax: Runtime.evaluate runs it as a classic script
    platform: 'browser',
    target: 'es2022', // what the tsc build of the agent produced before, run by the same Chromium
    legalComments: 'none',
    logLevel: 'warning',
  });
  if (!process.argv.includes('--quiet')) {
    process.stderr.write(`page agent: ${relative(root, outfile)} (${(statSync(outfile).size / 1024).toFixed(1)} kB)\n`);
  }
}
