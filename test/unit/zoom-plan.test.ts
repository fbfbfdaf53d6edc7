// zoom's plan (server/contract/zoom.ts), in-process: a region checked against the target's area (refused
// naming the field when wholly outside, clamped and said when partly), the output's pixels bounded (an
// asked scale over the bound refused with the largest that fits; no scale: one chosen to fit), and the
// resampling every native route shares (nearest pixel up, the mean down).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Refusal } from '../../server/contract/refusal.js';
import { ZOOM_MAX_PIXELS, planZoom, resampleRgba } from '../../server/contract/zoom.js';

const area = { width: 800, height: 600 };
const refusedWith = (fn: () => unknown, field: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof Refusal && e.code === 'invalid_arguments' && field.test(e.message));

test('a region inside the area is taken as asked, at scale 1 by default', () => {
  const plan = planZoom({ region: { x: 10, y: 20, width: 30, height: 40 } }, area, 'window 1');
  assert.deepEqual(plan, { region: { x: 10, y: 20, width: 30, height: 40 }, scale: 1, notes: [] });
});

test('a region wholly outside is refused naming the field', () => {
  refusedWith(() => planZoom({ region: { x: 800, y: 0, width: 5, height: 5 } }, area, 'window 1'), /^region\.x: 800/);
  refusedWith(() => planZoom({ region: { x: 0, y: 900, width: 5, height: 5 } }, area, 'window 1'), /^region\.y: 900/);
  refusedWith(() => planZoom({ region: { x: -10, y: 0, width: 10, height: 5 } }, area, 'window 1'), /^region\.x: -10/);
});

test('a region reaching past an edge is clamped, and the note names the field', () => {
  const plan = planZoom({ region: { x: 700, y: -5, width: 200, height: 50 } }, area, 'window 1');
  assert.deepEqual(plan.region, { x: 700, y: 0, width: 100, height: 45 });
  assert.match(plan.notes.join(), /region\.y -5 is above it.*region\.width reaches past its right edge \(800\)/);
});

test('an asked scale over the pixel bound is refused naming scale and the largest that fits', () => {
  refusedWith(
    () => planZoom({ region: { x: 0, y: 0, width: 800, height: 600 }, scale: 4 }, area, 'window 1'),
    /^scale: 4 makes a 3200x2400 image .* at most scale 1\.58/,
  );
  const ok = planZoom({ region: { x: 0, y: 0, width: 800, height: 600 }, scale: 1.58 }, area, 'window 1');
  assert.ok(800 * 1.58 * 600 * 1.58 <= ZOOM_MAX_PIXELS && ok.scale === 1.58);
});

test('no scale over the bound: one that fits is chosen, and said', () => {
  const big = { width: 4000, height: 3000 };
  const plan = planZoom({ region: { x: 0, y: 0, width: 4000, height: 3000 } }, big, 'the screen');
  assert.ok(plan.scale < 1 && 4000 * plan.scale * 3000 * plan.scale <= ZOOM_MAX_PIXELS, String(plan.scale));
  assert.match(plan.notes.join(), /scale 0\.\d+ \(not 1\)/);
});

test('the density counts: a tab at devicePixelRatio 2 has four times the pixels', () => {
  refusedWith(
    () => planZoom({ region: { x: 0, y: 0, width: 800, height: 600 }, scale: 1.5 }, area, 'tab', 2),
    /^scale: 1\.5 makes a 2400x1800 image/,
  );
});

test('resampling: nearest pixel up (colours kept), the mean down', () => {
  // 2x1: red, blue.
  const src = Uint8Array.from([255, 0, 0, 255, 0, 0, 255, 255]);
  const up = resampleRgba(src, 2, 1, 4, 2);
  assert.deepEqual([...up.slice(0, 8)], [255, 0, 0, 255, 255, 0, 0, 255]);
  assert.deepEqual([...up.slice(8, 16)], [0, 0, 255, 255, 0, 0, 255, 255]);
  const down = resampleRgba(src, 2, 1, 1, 1);
  assert.deepEqual([...down], [128, 0, 128, 255]);
});
