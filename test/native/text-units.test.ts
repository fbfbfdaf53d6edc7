// Pure logic of the native typing verdicts, in process: positions in each toolkit's unit, a read-back that
// is not whole, what accepts edits, and the bench's count of lost characters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acceptsEdits } from '../../server/native/typing.js';
import { judgeTextRead as judgeRead, judgeTextAt as judgeText } from '../../server/routing/verdicts.js';
import { codePoints } from '../../server/native/atspi.js';
import { STATE } from '../../server/native/roles.js';
import { charactersLost } from '../../bench/sections/native.js';

const bit = (...bits: number[]): [number, number] => {
  const s: [number, number] = [0, 0];
  for (const b of bits) s[b < 32 ? 0 : 1] |= 1 << (b % 32);
  return s;
};

test('positions count code points (GTK) or UTF-16 units (Qt): after an emoji they differ by one', () => {
  const before = 'a😀b';
  assert.equal(codePoints(before), 3);
  // Caret after the emoji: code point 2, UTF-16 unit 3.
  assert.equal(judgeText(before, 'a😀Xb', 2, 'X').effect, 'confirmed');
  assert.equal(judgeText(before, 'a😀Xb', 3, 'X', true).effect, 'confirmed');
  assert.equal(judgeText(before, 'a😀Xb', 2, 'X', true).effect, 'mismatch', 'a UTF-16 offset taken as code points points into the emoji');
  assert.equal(judgeText(before, before, 3, 'X').effect, 'no_effect');
  assert.deepEqual(judgeText('', 'Grü', 0, 'Grüße'), { effect: 'partial', delivered: 3, expected: 'Grüße' });
});

test('a read-back that is not all the field holds: never confirmed, never no_effect', () => {
  // Qt padded the text with NULs: the text reads back exactly, the count says more is there.
  assert.equal(judgeRead('', { text: 'café', whole: false }, 0, 'café', true).effect, 'mismatch');
  assert.equal(judgeRead('', { text: 'café', whole: true }, 0, 'café', true).effect, 'confirmed');
  // A read that shows nothing changed but cannot be whole proves nothing.
  assert.equal(judgeRead('x', { text: 'x', whole: false }, 1, 'y').effect, 'unverifiable');
  assert.equal(judgeRead('x', { text: 'x', whole: true }, 1, 'y').effect, 'no_effect');
});

test('EditableText accepts edits unless read only; ATK toolkits also need `editable`', () => {
  assert.equal(acceptsEdits(false, bit(STATE.focusable)), true, 'a Qt spin box: no `editable` state');
  assert.equal(acceptsEdits(false, bit(STATE.readOnly)), false);
  assert.equal(acceptsEdits(true, bit(STATE.focusable)), false, 'a GTK 3 entry set not editable');
  assert.equal(acceptsEdits(true, bit(STATE.editable)), true);
  assert.equal(acceptsEdits(true, bit(STATE.editable, STATE.readOnly)), false);
});

test('the bench counts lost characters by code point, wherever they went missing', () => {
  assert.equal(charactersLost('a😀\nb', 'a😀\nb'), 0);
  assert.equal(charactersLost('a😀\nb', 'ab'), 2);
  assert.equal(charactersLost('Grüße', 'Grße\u0000'), 1);
});
