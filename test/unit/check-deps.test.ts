// scripts/check-deps.mjs, the layering check `npm test` runs: this repository passes it, and on a small
// tree made to break each rule it names the file, the import and the rule (and every cycle, type imports too).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/fixtures.js';

type Check = (root?: string, pending?: string[][]) => { files: number; problems: string[]; notes: string[] };
const load = async () =>
  ((await import(pathToFileURL(join(ROOT, 'scripts', 'check-deps.mjs')).href)) as { checkDeps: Check }).checkDeps;

test('this repository keeps its layers and has no import cycle', async () => {
  const { files, problems } = (await load())();
  assert.ok(files > 50, `scanned ${files} files`);
  assert.deepEqual(problems, []);
});

test('each broken rule is named with its file and import', async () => {
  const checkDeps = await load();
  const root = mkdtempSync(join(tmpdir(), 'verity-deps-'));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  try {
    write(
      'server/tools/bad.ts',
      "import puppeteer from 'puppeteer-core';\nexport async function f(tab: any) { await tab.session.send('Page.reload'); }\n",
    );
    write('server/tools/fine.ts', "export async function g(x: any) { await x.send('not a CDP method'); }\n");
    write('server/cdp/backend.ts', "import { pipeline } from '../mcp/pipeline.js';\nexport const b = pipeline;\n");
    write('server/mcp/pipeline.ts', 'export const pipeline = 1;\n');
    write('server/sessions/a.ts', "import type { B } from './b.js';\nexport type A = { b?: B };\n");
    write('server/sessions/b.ts', "export type B = { a?: import('./a.js').A };\n");
    write(
      'control-ui/src/ui.ts',
      "import { Router } from '../../server/routing/router.js';\nimport { frame } from '../../server/gateway/protocol.js';\nexport const u = [Router, frame];\n",
    );
    write('server/routing/router.ts', 'export class Router {}\n');
    write('server/gateway/protocol.ts', 'export const frame = 1;\n');
    const { problems, notes } = checkDeps(root, [['server/x.ts', 'server/y.ts']]);
    const has = (pattern: RegExp) =>
      assert.ok(
        problems.some((p) => pattern.test(p)),
        `expected ${pattern} in:\n${problems.join('\n')}`,
      );
    has(/^server\/tools\/bad\.ts:1: imports puppeteer-core; rule: tools see only ToolContext/);
    has(/^server\/tools\/bad\.ts:2: sends the CDP command Page\.reload; rule: tools see only ToolContext/);
    has(/^server\/cdp\/backend\.ts:1: imports \.\.\/mcp\/pipeline\.js; rule: the CDP route is a backend/);
    has(/^import cycle \(type imports count\): server\/sessions\/(a|b)\.ts -> server\/sessions\/(a|b)\.ts -> /);
    has(
      /^control-ui\/src\/ui\.ts:1: imports \.\.\/\.\.\/server\/routing\/router\.js; rule: the Control UI and the extension share only the gateway protocol/,
    );
    assert.equal(problems.length, 5, problems.join('\n'));
    assert.ok(
      notes.some((n) => /server\/x\.ts <-> server\/y\.ts is gone/.test(n)),
      notes.join('\n'),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
