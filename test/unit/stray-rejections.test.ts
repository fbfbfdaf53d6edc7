// A promise rejected with no handler must not end the server (issue 42 item 3: `verity mcp` went away in
// the middle of a call, every client told only "Connection closed"). Provoked in a process of its own: with
// the server's handler (installed by startCore for `verity mcp` and `verity start`) it is logged with its
// stack and the process goes on; without it Node ends the process, as the server did.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ROOT } from '../helpers/fixtures.js';

/** Runs a module with a stray rejection, the server's handler installed or not: its status and output. */
function strayRejection(contained: boolean) {
  const script = [
    "import { containStrayRejections } from './server/cli/stray-rejections.ts';",
    contained ? 'containStrayRejections();' : '',
    "Promise.reject(new Error('a D-Bus read started ahead and never awaited'));",
    "setTimeout(() => process.stdout.write('still serving'), 200);",
  ].join('\n');
  return spawnSync(process.execPath, ['--import', './scripts/from-source.mjs', '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  });
}

test('a stray rejection is logged with its stack and the server goes on', () => {
  const run = strayRejection(true);
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, 'still serving');
  assert.match(
    run.stderr,
    /verity: internal error: a promise rejected with no handler; the server goes on: Error: a D-Bus read started ahead/,
  );
  assert.match(run.stderr, /at file:/, 'its stack');
});

test('without the handler, Node ends the process on it (the path the test provokes is the one that ended the server)', () => {
  const run = strayRejection(false);
  assert.equal(run.status, 1, run.stderr);
  assert.equal(run.stdout, '');
});
