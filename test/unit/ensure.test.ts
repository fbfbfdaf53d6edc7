// scripts/ensure.mjs and .ci/run (issues #14 and #15): both install the same system packages (the native
// test matrix included: GTK 3, GTK 4, Qt 5, Firefox ESR, xdotool), and ensure.mjs hides no command's
// output: every step's command runs with its output let through, and the step says how long it took.
// Read from the scripts' text: running ensure.mjs here could rebuild dist/ under the running tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/fixtures.js';

const ensure = readFileSync(join(ROOT, 'scripts', 'ensure.mjs'), 'utf8');
const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');

/** The packages of .ci/run's `apt-get install` (its continued lines joined). */
function ciPackages(): string[] {
  const line = /apt-get install ((?:[^\n]*\\\n)*[^\n]*)/.exec(ci)?.[1] ?? '';
  return line
    .replace(/\\\n/g, ' ')
    .split(/\s+/)
    .filter((w) => w && !w.startsWith('-'));
}

/** The packages ensure.mjs checks for: chromium, and the --test list. */
function ensurePackages(): string[] {
  const list = /for \(const pkg of \[([\s\S]*?)\]\)/.exec(ensure)?.[1] ?? '';
  return ['chromium', ...[...list.matchAll(/'([^']+)'/g)].map((m) => m[1])];
}

test('.ci/run and ensure.mjs install the same system packages, the native toolkit matrix among them', () => {
  const fromCi = ciPackages().sort();
  const fromEnsure = ensurePackages().sort();
  assert.ok(fromCi.length > 5 && fromEnsure.length > 5, `${fromCi} / ${fromEnsure}`);
  assert.deepEqual(fromEnsure, fromCi);
  for (const pkg of ['gir1.2-gtk-3.0', 'gir1.2-gtk-4.0', 'python3-pyqt5', 'firefox-esr', 'xdotool'])
    assert.ok(fromCi.includes(pkg), `${pkg} is installed`);
});

test("ensure.mjs lets every command's output through and times each step", () => {
  assert.doesNotMatch(ensure, /\/dev\/null|2>&1|>\s*\S+\.log/, 'no output redirected away');
  assert.doesNotMatch(ensure, /apt-get[^\n]*-qq/, 'apt at -q (a line per package), not -qq (silent)');
  // The one spawn that runs the steps' commands lets stdout and stderr through.
  const runner = /const r = spawnSync\(command, \{([\s\S]*?)\}\);/.exec(ensure)?.[1] ?? '';
  assert.match(runner, /stdio: \['ignore', 'inherit', 'inherit'\]/, runner);
  // Each step says it starts, its commands, and how long it took (or that it had nothing to do).
  for (const said of [/\$\{what\}…/, /\$ \$\{command\}/, /\$\{what\}: done in \$\{seconds\(started\)\}/, /up to date/])
    assert.match(ensure, said);
  assert.match(ensure, /ready in \$\{seconds\(begun\)\}/);
});
