// The fast tier's module hooks (scripts/from-source.mjs, `npm run test:unit`): TypeScript loaded from source
// resolves `./x.js` to `./x.ts` as tsc does, and reads files relative to its compiled place under dist/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/fixtures.js';

/** Runs `code` (an ES module) in a Node with the hooks, from the repository's root; its stdout, trimmed. */
function fromSource(code: string): string {
  const r = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(join(ROOT, 'scripts', 'from-source.mjs')).href, '--input-type=module', '-e', code],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(r.status, 0, `node exited ${r.status ?? r.signal}: ${r.stderr}`);
  return r.stdout.trim();
}

test('a source file reads package.json as its compiled twin does, and its ./x.js imports load ./x.ts', () => {
  const src = (file: string) => JSON.stringify(pathToFileURL(join(ROOT, 'server', file)).href);
  const out = fromSource(
    `const v = await import(${src('version.ts')}); const a = await import(${src('approvals.ts')});` +
      `console.log(JSON.stringify({ name: v.PACKAGE_NAME, approvals: typeof a.Approvals }));`,
  );
  // server/version.ts reads new URL('../../package.json', import.meta.url): right only from dist/server/.
  assert.deepEqual(JSON.parse(out), { name: 'verity-mcp', approvals: 'function' });
});
