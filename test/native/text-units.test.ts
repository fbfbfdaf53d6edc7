// Pure logic of native typing, in process: what accepts edits (each toolkit's profile), and the bench's count of lost characters.
// The native text verdicts (positions in each toolkit's unit, a read-back that is not whole) are tested
// with the browser route's in test/unit/verdicts.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gtk3 } from '../../server/native/linux/toolkits/gtk3.js';
import { qt } from '../../server/native/linux/toolkits/qt.js';
import { codePoints } from '../../server/native/linux/atspi/model.js';
import { STATE } from '../../server/native/linux/atspi/roles.js';
import { charactersLost } from '../../bench/sections/native.js';

const bit = (...bits: number[]): [number, number] => {
  const s: [number, number] = [0, 0];
  for (const b of bits) s[b < 32 ? 0 : 1] |= 1 << (b % 32);
  return s;
};

test("codePoints counts code points (GTK's unit), not UTF-16 units", () => {
  assert.equal(codePoints('a😀b'), 3);
  assert.equal(codePoints('abc'), 3);
});

test('EditableText accepts edits unless read only; ATK toolkits also need `editable`', () => {
  assert.equal(qt.acceptsEdits(bit(STATE.focusable)), true, 'a Qt spin box: no `editable` state');
  assert.equal(qt.acceptsEdits(bit(STATE.readOnly)), false);
  assert.equal(gtk3.acceptsEdits(bit(STATE.focusable)), false, 'a GTK 3 entry set not editable');
  assert.equal(gtk3.acceptsEdits(bit(STATE.editable)), true);
  assert.equal(gtk3.acceptsEdits(bit(STATE.editable, STATE.readOnly)), false);
});

test('the bench counts lost characters by code point, wherever they went missing', () => {
  assert.equal(charactersLost('a😀\nb', 'a😀\nb'), 0);
  assert.equal(charactersLost('a😀\nb', 'ab'), 2);
  assert.equal(charactersLost('Grüße', 'Grße\u0000'), 1);
});
