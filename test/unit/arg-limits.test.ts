// The one argument checker every entry point uses (server/arg-limits.ts): depth, string lengths, total size
// and node count, checked without recursion, naming the field; anything within the bounds passes as is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ARG_LIMITS, checkLimits, formatPath } from '../../server/arg-limits.js';

/** `{a: {a: ... leaf}}`, `levels` objects deep, built without recursion. */
function nested(levels: number, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

test('ordinary arguments pass, odd-but-valid values included', () => {
  for (const ok of [
    undefined,
    null,
    {},
    { text: 'héllo 👋', target: { kind: 'tab', tab_id: 'T1' } },
    { steps: [{ tool: 'click', args: { element_token: 'e1' } }] },
    { n: Number.NaN, i: Infinity, z: -0 },
    JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}}'),
    Object.create(null),
    { text: 'x'.repeat(200_000) },
    { s: '\ud800 lone surrogate' },
  ])
    assert.equal(checkLimits(ok), null, JSON.stringify(ok));
});

test('depth: the limit itself passes, one more is refused naming the field the caller wrote', () => {
  // The value is depth 0; `{a: 1}` reaches depth 1 with its member.
  assert.equal(checkLimits(nested(ARG_LIMITS.depth)), null);
  const over = checkLimits(nested(ARG_LIMITS.depth + 1));
  assert.ok(over);
  assert.equal(over.field, 'a.a.a');
  assert.equal(over.message, `a.a.a: nested deeper than ${ARG_LIMITS.depth} levels`);
});

test('the finding of issue 22: a run_actions step whose args nest 5,000 levels deep', () => {
  const args = { steps: [{ tool: 'click', args: nested(5000) }] };
  const breach = checkLimits(args);
  assert.deepEqual(breach, { field: 'steps[0].args', message: 'steps[0].args: nested deeper than 64 levels' });
  // Arrays count as levels too, and a million levels cost no stack.
  let deepArray: unknown = [];
  for (let i = 0; i < 1_000_000; i++) deepArray = [deepArray];
  assert.equal(checkLimits({ x: deepArray })?.field, 'x[0][0]');
});

test('a cycle (an in-process caller only) is refused, not walked forever', () => {
  const a: Record<string, unknown> = {};
  a.self = a;
  assert.match(checkLimits(a)!.message, /nested deeper than 64 levels/);
});

test('strings, keys, total size and node count each have a bound and a named refusal', () => {
  const long = checkLimits({ steps: [{ args: { text: 'x'.repeat(ARG_LIMITS.stringChars + 1) } }] });
  assert.equal(long?.field, 'steps[0].args.text');
  assert.match(long!.message, /string longer than 1000000 characters \(1000001\)$/);
  const key = checkLimits({ ['k'.repeat(ARG_LIMITS.stringChars + 1)]: 1 });
  assert.match(key!.message, /key longer than/);
  const total = checkLimits({ parts: Array.from({ length: 9 }, () => 'y'.repeat(ARG_LIMITS.stringChars)) });
  assert.match(total!.message, /^parts\[\d\]: arguments larger than 8000000 characters in all$/);
  const many = checkLimits({ list: new Array(ARG_LIMITS.nodes + 1).fill(0) });
  assert.match(many!.message, /more than 200000 values in all/);
  // Smaller bounds, for callers that hold less (a pairing request).
  assert.equal(checkLimits({ a: [1, 2] }, { ...ARG_LIMITS, nodes: 3 })?.field, 'a[1]');
});

test('values that are not JSON data are refused naming the field', () => {
  assert.match(checkLimits({ a: 1n })!.message, /^a: a bigint is not JSON data$/);
  assert.match(checkLimits({ f: () => 1 })!.message, /^f: a function is not JSON data$/);
  assert.match(checkLimits({ d: new Date() })!.message, /^d: not plain JSON data$/);
  assert.equal(checkLimits(Symbol('s'))?.field, 'arguments');
});

test('paths: identifiers with dots, others quoted, long ones cut', () => {
  assert.equal(formatPath([]), 'arguments');
  assert.equal(formatPath(['steps', 0, 'args']), 'steps[0].args');
  assert.equal(formatPath(['a b', '__proto__']), '["a b"].__proto__');
  assert.equal(formatPath(['x'.repeat(100)]), `["${'x'.repeat(40)}…"]`);
  assert.equal(formatPath(Array.from({ length: 20 }, () => 'a')), 'a.a.a.a.a.a.a.a…');
});
