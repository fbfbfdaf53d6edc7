// scripts/check-deps.mjs, the layering check `npm test` runs: this repository passes it, and on a small
// tree made to break each rule it names the file, the import and the rule (and every cycle, type imports too):
// a folder without rules, an import outside its layer's allow-list, CDP used however it is spelled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/fixtures.js';

type Check = (
  root?: string,
  pending?: string[][],
  generated?: string[],
) => { files: number; problems: string[]; notes: string[] };
const load = async () =>
  ((await import(pathToFileURL(join(ROOT, 'scripts', 'check-deps.mjs')).href)) as { checkDeps: Check }).checkDeps;

/** Checks a tree of the given files; returns its problems and notes, and `has` to look for one. */
async function checkTree(files: Record<string, string>, pending: string[][] = [], generated?: string[]) {
  const checkDeps = await load();
  const root = mkdtempSync(join(tmpdir(), 'verity-deps-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const { problems, notes } = checkDeps(root, pending, generated);
    const has = (pattern: RegExp) =>
      assert.ok(
        problems.some((p) => pattern.test(p)),
        `expected ${pattern} in:\n${problems.join('\n')}`,
      );
    return { problems, notes, has };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test('this repository keeps its layers and has no import cycle', async () => {
  const { files, problems } = (await load())();
  assert.ok(files > 50, `scanned ${files} files`);
  assert.deepEqual(problems, []);
});

test('each broken rule is named with its file and import', async () => {
  const { problems, notes, has } = await checkTree(
    {
      'server/tools/bad.ts':
        "import puppeteer from 'puppeteer-core';\nexport async function f(tab: any) { await tab.session.send('Page.reload'); }\n",
      'server/tools/fine.ts': "export async function g(x: any) { await x.send('not a CDP method'); }\n",
      'server/cdp/backend.ts': "import { pipeline } from '../mcp/pipeline.js';\nexport const b = pipeline;\n",
      'server/mcp/pipeline.ts': 'export const pipeline = 1;\n',
      'server/sessions/a.ts': "import type { B } from './b.js';\nexport type A = { b?: B };\n",
      'server/sessions/b.ts': "export type B = { a?: import('./a.js').A };\n",
      'control-ui/src/ui.ts':
        "import { Router } from '../../server/routing/router.js';\nimport { frame } from '../../server/gateway/protocol.js';\nexport const u = [Router, frame];\n",
      'server/routing/router.ts': 'export class Router {}\n',
      'server/gateway/protocol.ts': 'export const frame = 1;\n',
    },
    [['server/x.ts', 'server/y.ts']],
  );
  has(/^server\/tools\/bad\.ts:1: imports puppeteer-core: CDP .*; rule: tools see only ToolContext/);
  has(/^server\/tools\/bad\.ts:2: sends the CDP command Page\.reload; rule: tools see only ToolContext/);
  has(
    /^server\/cdp\/backend\.ts:1: imports \.\.\/mcp\/pipeline\.js: not in its layer's allow-list; rule: the CDP route is a backend/,
  );
  has(/^import cycle \(type imports count\): server\/sessions\/(a|b)\.ts -> server\/sessions\/(a|b)\.ts -> /);
  has(
    /^control-ui\/src\/ui\.ts:1: imports \.\.\/\.\.\/server\/routing\/router\.js: not in its layer's allow-list; rule: the Control UI shares only the gateway protocol/,
  );
  assert.equal(problems.length, 5, problems.join('\n'));
  assert.ok(
    notes.some((n) => /server\/x\.ts <-> server\/y\.ts is gone/.test(n)),
    notes.join('\n'),
  );
});

test('only the command line reads process.env: any other server file that does is named', async () => {
  const { problems, has } = await checkTree({
    'server/sessions/idle.ts':
      "export const idle = Number(process.env.VERITY_IDLE);\nexport const x = process['env'].X;\n",
    'server/cli/main.ts': 'export const env = process.env;\n',
    'server/cli/parse.ts': 'export const home = process.env.HOME;\n',
    'bench/run.ts': 'export const display = process.env.DISPLAY;\n',
    'server/sessions/said.ts': '// process.env in a comment is no read\nexport const s = 1;\n',
  });
  has(
    /^server\/sessions\/idle\.ts:1: reads process\.env; only the command line \(server\/cli\/main\.ts\) reads the environment/,
  );
  has(/^server\/sessions\/idle\.ts:2: reads process\.env/);
  has(/^server\/cli\/parse\.ts:1: reads process\.env/);
  assert.equal(problems.length, 3, problems.join('\n'));
});

test('a hand-written server file over 600 lines fails, named with its count; a generated one named as such does not', async () => {
  const lines = (n: number) => 'export const x = 1;\n'.repeat(n);
  const { problems, has } = await checkTree(
    {
      'server/sessions/long.ts': lines(601),
      'server/sessions/unended.ts': `${lines(600)}export const y = 2;`,
      'server/sessions/full.ts': lines(600),
      'server/sessions/made.ts': lines(900),
      'bench/long.ts': lines(700),
    },
    [],
    ['server/sessions/made.ts'],
  );
  has(/^server\/sessions\/long\.ts: 601 lines, over the bound of 600 for a hand-written server file/);
  has(/^server\/sessions\/unended\.ts: 601 lines/);
  assert.equal(problems.length, 2, problems.join('\n'));
});

test('a folder without rules fails, and audit/, bench/ and scripts/ are checked', async () => {
  const { problems, has } = await checkTree({
    'server/newfolder/thing.ts': 'export const thing = 1;\n',
    'server/newleaf.ts': 'export const leaf = 1;\n',
    'server/audit/trail.ts': "import { CdpDriver } from '../cdp/driver.js';\nexport const t = CdpDriver;\n",
    'server/cdp/driver.ts': 'export class CdpDriver {}\n',
    'bench/run.ts': "import { Router } from '../server/routing/router.js';\nexport const r = Router;\n",
    'server/routing/router.ts': 'export class Router {}\n',
    'scripts/build.mjs': "import { CdpDriver } from '../server/cdp/driver.js';\nexport const d = CdpDriver;\n",
  });
  has(/^server\/newfolder\/thing\.ts: belongs to no layer; give its folder its rules/);
  has(/^server\/newleaf\.ts: belongs to no layer/);
  has(
    /^server\/audit\/trail\.ts:1: imports \.\.\/cdp\/driver\.js: not in its layer's allow-list; rule: the audit trail/,
  );
  has(
    /^bench\/run\.ts:1: imports \.\.\/server\/routing\/router\.js: not in its layer's allow-list; rule: the benchmarks/,
  );
  has(/^scripts\/build\.mjs:1: imports \.\.\/server\/cdp\/driver\.js: not in its layer's allow-list; rule: the build/);
  assert.equal(problems.length, 5, problems.join('\n'));
});

test('CDP is found however it is spelled, and puppeteer types are CDP', async () => {
  const { problems, has } = await checkTree({
    'server/mcp/spelled.ts': [
      "import type { Page } from 'puppeteer-core';",
      'export async function f(page: Page, s: any, name: string) {',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template, written into a file
      '  await s.send(`Page.${name}`);',
      "  s.on('Network.requestWillBeSent', () => {});",
      "  await s['send']('Runtime.evaluate', {});",
      '  const own = await page.createCDPSession();',
      '  return [own, (page as any)._client()];',
      '}',
    ].join('\n'),
    'server/tools/context.ts':
      "import type { Tab } from '../cdp/tab.js';\nimport { TAB } from '../cdp/tab.js';\nexport type C = { tab: Tab; t: typeof TAB };\n",
    'server/cdp/tab.ts':
      "export class Tab {}\nexport const TAB = 1;\nexport const ok = (s: any) => s.send('Page.reload');\n",
    'server/gateway/screencast.ts':
      "import type { Page } from 'puppeteer-core';\nexport const f = (p: Page) => p.createCDPSession();\n",
  });
  has(/^server\/mcp\/spelled\.ts:1: imports puppeteer-core \(types\): CDP \(its types too\) only where CDP is spoken/);
  has(/^server\/mcp\/spelled\.ts:3: sends the CDP command Page\.\$\{…\}/);
  has(/^server\/mcp\/spelled\.ts:4: listens to the CDP event Network\.requestWillBeSent/);
  has(/^server\/mcp\/spelled\.ts:5: sends the CDP command Runtime\.evaluate/);
  has(/^server\/mcp\/spelled\.ts:6: opens a CDP session \(createCDPSession\)/);
  has(/^server\/mcp\/spelled\.ts:7: opens a CDP session \(_client\)/);
  // Tools never see Tab, not even its type (issue #25 item 3: no exception for tools/context.ts).
  has(
    /^server\/tools\/context\.ts:1: imports \.\.\/cdp\/tab\.js \(types\): not in its layer's allow-list; rule: tools see only/,
  );
  has(/^server\/tools\/context\.ts:2: imports \.\.\/cdp\/tab\.js: not in its layer's allow-list; rule: tools see only/);
  assert.equal(problems.length, 8, problems.join('\n'));
});

test('the page agent carries only DOM-safe code: what the shared verdicts import at run time is checked too', async () => {
  const { problems, has } = await checkTree({
    'server/cdp/page-agent/index.ts': "import { judge } from '../../contract/verdicts.js';\nexport const a = judge;\n",
    'server/contract/verdicts.ts':
      "import { readFileSync } from 'node:fs';\nimport { Refusal } from './refusal.js';\nimport type { Driver } from './driver.js';\nexport const judge = [readFileSync, Refusal];\nexport type D = Driver;\n",
    'server/contract/refusal.ts': 'export class Refusal {}\n',
    'server/contract/driver.ts': 'export type Driver = {};\n',
  });
  has(/^server\/contract\/verdicts\.ts:1: imports node:fs at run time: the page cannot load it/);
  has(/^server\/contract\/verdicts\.ts:2: imports \.\/refusal\.js at run time: outside what the page agent may carry/);
  // Types are erased from the bundle: verdicts' type import of the driver contract is fine.
  assert.ok(!problems.some((p) => /driver\.js/.test(p)), problems.join('\n'));
});

test('the contract is the bottom floor: backends import it and never routing/, and it imports nothing above it', async () => {
  const { problems, has } = await checkTree({
    'server/contract/refusal.ts': 'export class Refusal extends Error {}\n',
    'server/contract/driver.ts': "import { Router } from '../routing/router.js';\nexport const d = Router;\n",
    'server/cdp/click.ts': "import { Refusal } from '../contract/refusal.js';\nexport const c = Refusal;\n",
    'server/cdp/driver.ts': "import { Router } from '../routing/router.js';\nexport const d = Router;\n",
    'server/native/driver.ts': "import { queue } from '../routing/queue.js';\nexport const n = queue;\n",
    'server/routing/router.ts':
      "import { Refusal } from '../contract/refusal.js';\nexport class Router { r = Refusal; }\n",
    'server/routing/queue.ts': 'export const queue = 1;\n',
  });
  has(
    /^server\/contract\/driver\.ts:1: imports \.\.\/routing\/router\.js: not in its layer's allow-list; rule: the contract/,
  );
  has(
    /^server\/cdp\/driver\.ts:1: imports \.\.\/routing\/router\.js: not in its layer's allow-list; rule: the CDP route/,
  );
  has(
    /^server\/native\/driver\.ts:1: imports \.\.\/routing\/queue\.js: not in its layer's allow-list; rule: the native route/,
  );
  assert.equal(problems.length, 3, problems.join('\n'));
});

test("an action's page part (actions/<name>.page.ts) is page agent code: DOM-safe, and the server imports only its types", async () => {
  const { problems, has } = await checkTree({
    'server/cdp/page-agent/index.ts': "import { seen } from '../actions/hover.page.js';\nexport const a = seen;\n",
    'server/cdp/actions/hover.page.ts':
      "import { readFileSync } from 'node:fs';\nimport type { X } from './aim.js';\nexport const seen = readFileSync;\nexport type Y = X;\n",
    'server/cdp/actions/aim.ts': 'export type X = 1;\n',
    'server/cdp/actions/hover.ts':
      "import type { Y } from './hover.page.js';\nimport { seen } from './hover.page.js';\nexport const h: [Y?, unknown?] = [undefined, seen];\n",
  });
  has(/^server\/cdp\/actions\/hover\.page\.ts:1: imports node:fs at run time: the page cannot load it/);
  has(
    /^server\/cdp\/actions\/hover\.page\.ts:2: imports \.\/aim\.js \(types\): not in its layer's allow-list; rule: the page agent runs in the page/,
  );
  has(/^server\/cdp\/actions\/hover\.page\.ts:1: imports node:fs: not in its layer's allow-list/);
  has(/^server\/cdp\/actions\/hover\.ts:2: imports \.\/hover\.page\.js at run time: an action's page part/);
  assert.equal(problems.length, 4, problems.join('\n'));
});

test('the CDP layers: a tab knows no browser, a browser no action, an action never the driver', async () => {
  const { problems, has } = await checkTree({
    'server/cdp/driver.ts': "import { click } from './actions/click.js';\nexport const d = click;\n",
    'server/cdp/actions/click.ts': "import { CdpDriver } from '../driver.js';\nexport const click = CdpDriver;\n",
    'server/cdp/browser/browser.ts': "import { click } from '../actions/click.js';\nexport const b = click;\n",
    'server/cdp/tab/tab.ts': "import { b } from '../browser/browser.js';\nexport const t = b;\n",
  });
  has(
    /^server\/cdp\/actions\/click\.ts:1: imports \.\.\/driver\.js: not in its layer's allow-list; rule: the CDP actions/,
  );
  has(
    /^server\/cdp\/browser\/browser\.ts:1: imports \.\.\/actions\/click\.js: not in its layer's allow-list; rule: a CDP browser/,
  );
  has(
    /^server\/cdp\/tab\/tab\.ts:1: imports \.\.\/browser\/browser\.js: not in its layer's allow-list; rule: a CDP tab/,
  );
  // The driver <-> action import above is also a cycle.
  has(/^import cycle/);
  assert.equal(problems.length, 4, problems.join('\n'));
});
