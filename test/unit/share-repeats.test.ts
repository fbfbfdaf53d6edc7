// Output schemas say a repeated shape once, in $defs (issue #28 item 4): the shared schema accepts and
// rejects exactly what the unshared one does, data keywords are never mistaken for schemas, and a shape is
// shared only where that is shorter. Checked with ajv, the validator the MCP SDK client uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { shareRepeats } from '../../server/tools/advertised.js';
import { allTools } from '../../server/tools/index.js';
import { outputSchemaOf } from '../../server/tools/advertised.js';

const anyJson = { anyOf: ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type })) };
const evidence = {
  type: 'object',
  properties: { kind: { type: 'string' }, expected: anyJson, observed: anyJson },
  required: ['kind'],
  additionalProperties: false,
};
const schema = {
  type: 'object',
  properties: { evidence: { type: 'array', items: evidence }, observed: anyJson, effect: { enum: ['a', 'b'] } },
  required: ['evidence'],
  additionalProperties: false,
};

test('a repeated shape is said once in $defs, and the schema accepts and rejects the same values', () => {
  const shared = shareRepeats(schema);
  assert.ok(JSON.stringify(shared).length < JSON.stringify(schema).length, 'shorter');
  assert.deepEqual(Object.values(shared.$defs as object), [anyJson], 'the any-JSON shape, once');
  const ajv = new Ajv({ strict: false });
  const plain = ajv.compile(schema);
  const refs = ajv.compile(shared);
  const samples = [
    { evidence: [{ kind: 'value', expected: 'x', observed: 3 }], observed: null },
    { evidence: [{ kind: 'value', expected: [1], observed: { a: 1 } }], effect: 'a' },
    { evidence: [{ kind: 'value', extra: 1 }] },
    { evidence: [{ expected: 'x' }] },
    { effect: 'a' },
    { evidence: [], effect: 'c' },
  ];
  for (const sample of samples) assert.equal(refs(sample), plain(sample), JSON.stringify(sample));
  assert.ok(samples.some((s) => !plain(s)) && samples.some((s) => plain(s)), 'the samples tell them apart');
});

test('data is never shared: enum, const and required lists, and the properties map itself, stay where they are', () => {
  const same = { enum: ['confirmed', 'partial', 'mismatch', 'no_effect', 'unverifiable'] };
  const big = { big: 'x'.repeat(80) };
  const s = shareRepeats({
    type: 'object',
    properties: { a: { const: big, title: 'a' }, b: { const: big, title: 'b' }, c: same, d: same },
    required: ['a', 'b', 'c', 'd'],
  });
  const props = s.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(props.a, { const: big, title: 'a' }, 'a const value is data, never a reference');
  assert.deepEqual(props.b, { const: big, title: 'b' });
  assert.equal(props.c.$ref, '#/$defs/d0', 'a repeated enum schema is a schema, and is shared');
  assert.deepEqual(s.required, ['a', 'b', 'c', 'd']);
  assert.deepEqual(Object.keys(props), ['a', 'b', 'c', 'd']);
});

test('a small shape is left where it is: sharing it would not be shorter', () => {
  const s = shareRepeats({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } });
  assert.equal(s.$defs, undefined);
});

test("every tool's advertised output schema compiles, and references only what its $defs hold", () => {
  const ajv = new Ajv({ strict: false });
  for (const t of allTools()) {
    const out = outputSchemaOf(t);
    assert.doesNotThrow(() => ajv.compile(out), t.name);
    for (const [, name] of JSON.stringify(out).matchAll(/"\$ref":"#\/\$defs\/(d\d+)"/g))
      assert.ok((out.$defs as Record<string, unknown>)?.[name!], `${t.name}: $defs.${name}`);
  }
});
