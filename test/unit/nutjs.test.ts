// The nutjs backend's pure parts (#27): which backend a --native-backend choice means per platform, the
// characters it refuses to type before sending any, the key names it takes, pixel mapping, and a missing nut-js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NutProcess, nutKey, nutUntypable, screenPoint } from '../../server/native/nutjs/driver.js';
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

test('screenshot pixels map to the screen through the window origin and the scale (HiDPI)', () => {
  const retina = { origin: { x: 100, y: 40 }, scale: 2, width: 800, height: 600 };
  assert.deepEqual(screenPoint(retina, { x: 0, y: 0 }), { x: 100, y: 40 });
  assert.deepEqual(screenPoint(retina, { x: 200, y: 101 }), { x: 200, y: 91 });
  assert.deepEqual(screenPoint({ ...retina, scale: 1.5 }, { x: 300, y: 300 }), { x: 300, y: 240 });
  assert.throws(
    () => screenPoint(retina, { x: 800, y: 10 }, 'to'),
    (e: any) => e.code === 'invalid_arguments' && /^to: .*800x600/.test(e.message),
  );
});

test('where nut-js does not load, its helper says the backend is off, and the server process is untouched', async () => {
  // The helper copied where no node_modules is found: its imports fail as on a machine without nut-js.
  const dir = mkdtempSync(join(tmpdir(), 'verity-nutjs-'));
  const copy = join(dir, 'nutjs-worker.mjs');
  copyFileSync(fileURLToPath(new URL('../../server/native/nutjs/worker.js', import.meta.url)), copy);
  const nut = new NutProcess(copy);
  try {
    await assert.rejects(
      nut.request('screen', {}, 30_000),
      (e: any) => e.code === 'unavailable' && /nutjs native backend is off: .*does not load/.test(e.message),
    );
  } finally {
    nut.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
