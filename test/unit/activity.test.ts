// The operators' action log (server/activity.ts) holds a bounded amount: at most 600 entries, and
// thumbnails up to THUMBNAIL_CHARS_KEPT characters in all, the oldest losing theirs first (the soak found
// 500 kept thumbnails to be most of the server's heap growth under load).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Activity, summarizeArgs, THUMBNAIL_CHARS_KEPT } from '../../server/activity.js';

const entry = (i: number) => ({
  sessionKey: `c/${i % 3}`,
  tool: 'click',
  summary: `element_token=s:${i}`,
  effect: 'confirmed',
  refusal: null,
  evidence: [],
  isError: false,
});

test('thumbnails are held up to a bound in all, the newest kept, the entries themselves all listed', () => {
  const activity = new Activity();
  const thumb = 'j'.repeat(40_000);
  const thumbnails: string[] = [];
  activity.on('thumbnail', (e) => thumbnails.push(e.thumbnail!));
  for (let i = 0; i < 700; i++) activity.attachThumbnail(activity.record(entry(i)), thumb + i);
  const listed = activity.list();
  assert.equal(listed.length, 200);
  const held = listed.reduce((n, e) => n + (e.thumbnail?.length ?? 0), 0);
  assert.ok(held <= THUMBNAIL_CHARS_KEPT, `thumbnails hold ${held} characters, over ${THUMBNAIL_CHARS_KEPT}`);
  assert.equal(activity.thumbnailsHeld, held, 'the count is what the entries hold');
  assert.equal(listed.at(-1)!.thumbnail, `${thumb}699`, 'the newest keeps its thumbnail');
  assert.equal(listed[0].thumbnail, undefined, 'an older one gave its up');
  assert.equal(thumbnails.length, 700, 'every thumbnail was still sent on as it came');
});

test('entries trimmed off the log take their thumbnails with them; a replaced thumbnail is counted once', () => {
  const activity = new Activity();
  const first = activity.record(entry(0));
  activity.attachThumbnail(first, 'a'.repeat(1000));
  activity.attachThumbnail(first, 'b'.repeat(500));
  assert.equal(activity.thumbnailsHeld, 500);
  for (let i = 1; i < 700; i++) activity.record(entry(i));
  assert.equal(activity.thumbnailsHeld, 0, 'the trimmed entry no longer counts');
});

test('the log line reads a menu path and a region as an operator says them, everything else as sent', () => {
  assert.equal(
    summarizeArgs({ target: { kind: 'window', pid: 7 }, path: ['Format', 'Character…'] }),
    'target={"kind":"window","pid":7} path=Format › Character…',
  );
  assert.equal(
    summarizeArgs({ region: { x: 10, y: 20, width: 300, height: 200 }, scale: 2 }),
    'region=10,20 300×200 scale=2',
  );
  // Not a plain rectangle (a field besides the four), not a path of names: shown as sent.
  assert.equal(
    summarizeArgs({ region: { x: 1, y: 2, width: 3, height: 4, z: 5 } }),
    'region={"x":1,"y":2,"width":3,"height":4,"z":5}',
  );
  assert.equal(summarizeArgs({ path: ['a', 1] }), 'path=["a",1]');
  assert.equal(
    summarizeArgs({ app: 'libreoffice', args: ['--calc'], session: 's' }),
    'app=libreoffice args=["--calc"]',
  );
  const cut = summarizeArgs({ path: ['x'.repeat(70)] }, 60);
  assert.ok(cut.endsWith('…') && cut.length <= 'path='.length + 60, `cut at the bound like any value: ${cut}`);
});
