// The nutjs backend's pure parts (#27): which backend a --native-backend choice means per platform, the
// characters it refuses to type before sending any, and the key names it takes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nutKey, nutUntypable } from '../../server/native/nutjs.js';
import { nativeBackendOf } from '../../server/routing/native-backend.js';

test('auto is the platform own backend; nutjs is forced anywhere', () => {
  assert.equal(nativeBackendOf('auto', 'linux').backend, 'atspi');
  assert.equal(nativeBackendOf('auto', 'darwin').backend, 'nutjs');
  assert.equal(nativeBackendOf('auto', 'win32').backend, 'nutjs');
  assert.equal(nativeBackendOf('auto', 'freebsd').backend, 'none');
  assert.equal(nativeBackendOf('nutjs', 'linux').backend, 'nutjs');
  assert.match(nativeBackendOf('nutjs', 'linux').why, /--native-backend nutjs/);
  assert.match(nativeBackendOf(undefined, 'darwin').why, /auto on darwin.*unverifiable/);
});

test('what nut-js cannot type is named, each character once', () => {
  assert.deepEqual(nutUntypable('Hello, World! ~{}[]\n\t42'), []);
  assert.deepEqual(nutUntypable('Grüße ü'), ['U+00FC', 'U+00DF']);
  assert.deepEqual(nutUntypable('a😀\u0007'), ['U+1F600', 'U+0007']);
  assert.deepEqual(nutUntypable('x\r'), ['U+000D']);
});

test('key names map to nut-js keys; an unknown one is refused naming the field', () => {
  assert.equal(nutKey('Enter'), 'Enter');
  assert.equal(nutKey('backspace'), 'Backspace');
  assert.equal(nutKey('ctrl', 'modifiers'), 'LeftControl');
  assert.equal(nutKey('cmd'), 'LeftSuper');
  assert.equal(nutKey('F12'), 'F12');
  assert.equal(nutKey('a'), 'A');
  assert.equal(nutKey('7'), 'Num7');
  assert.throws(
    () => nutKey('Hyper', 'modifiers'),
    (e: any) => e.code === 'invalid_arguments' && /modifiers: "Hyper"/.test(e.message),
  );
  assert.throws(
    () => nutKey('F25'),
    (e: any) => e.code === 'invalid_arguments' && /^key:/.test(e.message),
  );
});
