// docs/tools.md is generated from the tools' schemas (npm run docs:tools): this fails when the file and the
// code disagree, and checks the file against what a real MCP client gets from tools/list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allTools } from '../../server/tools/index.js';
import { toolReference, typeOf } from '../../server/tools/reference.js';
import { REFUSAL_CODES } from '../../server/contract/refusal.js';
import { ROOT } from '../helpers/fixtures.js';
import { inMemoryVerity } from '../helpers/in-memory.js';

const doc = readFileSync(join(ROOT, 'docs', 'tools.md'), 'utf8');

test('docs/tools.md is what the schemas generate (run `npm run docs:tools` after changing a tool)', () => {
  assert.equal(doc, toolReference(allTools()));
});

test('every tool, argument and refusal code that tools/list and the server use is in docs/tools.md', async () => {
  for (const surface of ['full', 'default'] as const) {
    const v = await inMemoryVerity({ tools: surface });
    try {
      const agent = await v.connect();
      for (const tool of agent.tools) {
        const section = doc.split(`\n## ${tool.name}\n`)[1]?.split('\n## ')[0];
        assert.ok(section, `docs/tools.md has a section for ${tool.name}`);
        for (const name of Object.keys(tool.inputSchema.properties ?? {})) {
          const row = section.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
          assert.ok(row, `${tool.name}: ${name} is documented`);
          if (surface === 'default')
            assert.match(row, /\| yes \|/, `${tool.name}: ${name} is marked listed by default`);
        }
      }
    } finally {
      await v.close();
    }
  }
  for (const code of Object.keys(REFUSAL_CODES)) assert.ok(doc.includes(`| \`${code}\` |`), `${code} is documented`);
});

test('types read as a model would write them', () => {
  assert.equal(typeOf({ enum: ['a', 'b'] }), '"a" \\| "b"');
  assert.equal(typeOf({ type: 'array', items: { type: 'integer' } }), 'integer[]');
  assert.equal(
    typeOf({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }),
    'string \\| string[]',
  );
  assert.equal(typeOf(undefined), 'any');
});

test('output schemas say "more fields allowed" as true, never the bare {} that strict checkers flag', async () => {
  const v = await inMemoryVerity({ tools: 'full' });
  try {
    const agent = await v.connect();
    const bare: string[] = [];
    const walk = (node: unknown, path: string) => {
      if (!node || typeof node !== 'object') return;
      for (const [k, child] of Object.entries(node)) {
        if (k === 'additionalProperties' && child && typeof child === 'object' && !Object.keys(child).length)
          bare.push(path);
        walk(child, `${path}.${k}`);
      }
    };
    for (const tool of agent.tools) walk(tool.outputSchema, tool.name);
    assert.deepEqual(bare, []);
  } finally {
    await v.close();
  }
});
