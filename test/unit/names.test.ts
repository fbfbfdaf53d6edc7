// Names an agent chooses are plain text (contract/names.ts): which characters are refused, how the refusal
// reads, and how a shown-but-not-refused name (an MCP client's own name) is made plain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { notPlain, plainOf } from '../../server/contract/names.js';

test('plain names pass: letters of any script, digits, punctuation, spaces, emoji', () => {
  for (const name of ['checkout-run 3', 'Grüße', 'данные', '注文', 'a/b.c', '🚀 launch', 'tab (2)'])
    assert.equal(notPlain(name), null, name);
});

test('controls, bidi and zero-width characters, line separators are refused with their code point and place', () => {
  const cases: Array<[string, RegExp]> = [
    ['ok\u202Eexe.txt', /U\+202E \(a format \(bidi or zero-width\) character\) at position 2/],
    ['a\u0000b', /U\+0000 \(a control character\) at position 1/],
    ['\nx', /U\+000A .* at position 0/],
    ['x\u200By', /U\+200B/],
    ['x\u200Dy', /U\+200D/],
    ['\uFEFFlabel', /U\+FEFF/],
    ['l\u2066r\u2069', /U\+2066/],
    ['a\u2028b', /U\+2028 \(a line or paragraph separator\)/],
    ['soft\u00ADhyphen', /U\+00AD/],
    ['del\u007F', /U\+007F/],
  ];
  for (const [name, why] of cases) assert.match(String(notPlain(name)), why, JSON.stringify(name));
});

test('plainOf replaces each such character and keeps the rest', () => {
  assert.equal(plainOf('bot\u202E\u0000 1.0'), 'bot\uFFFD\uFFFD 1.0');
  assert.equal(plainOf('plain'), 'plain');
});
