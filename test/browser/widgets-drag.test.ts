// Drags proven by what moved, in the page: a SortableJS list reordered, a native range input and a
// noUiSlider slider moved. `confirmed` only when the order or value changed as the drag asked; a drag that
// moved nothing is `no_effect`, one that moved it elsewhere `mismatch`, each with what the page holds.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

type Box = { x: number; y: number; w: number; h: number };
const center = (b: Box) => ({ x: b.x + b.w / 2, y: b.y + b.h / 2 });

async function boxes() {
  const snap = await s.snapshot(s.v, { format: 'full' });
  const byLabel = (label: string) => snap.find((e) => e.label === label, label).frame as Box;
  return { snap, byLabel };
}

describe('a SortableJS list', () => {
  test('dragging "Alpha" onto "Charlie" puts it third: confirmed, and the page says so', async () => {
    const page = await s.open('drag-widgets.html');
    const { byLabel } = await boxes();
    const from = center(byLabel('Alpha')),
      to = center(byLabel('Charlie'));
    const r = await s.v.call('drag', {
      from_x: from.x,
      from_y: from.y,
      to_x: to.x,
      to_y: to.y + 4,
      steps: 20,
      duration_ms: 400,
    });
    const m = await s.model(page);
    assert.deepEqual(m.order, ['Bravo', 'Charlie', 'Alpha', 'Delta'], r.text);
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(m.sorted, 1);
  });

  test('a drag that ends where it started leaves the order: no_effect, naming the order', async () => {
    const page = await s.open('drag-widgets.html');
    const { byLabel } = await boxes();
    const from = center(byLabel('Bravo'));
    const r = await s.v.call('drag', {
      from_x: from.x,
      from_y: from.y,
      to_x: from.x + 2,
      to_y: from.y + 1,
      steps: 4,
      duration_ms: 100,
    });
    assert.deepEqual((await s.model(page)).order, ['Alpha', 'Bravo', 'Charlie', 'Delta']);
    assert.equal(r.structured.effect, 'no_effect', r.text);
    assert.match(r.text, /"Alpha", "Bravo", "Charlie", "Delta"/);
  });
});

describe('sliders', () => {
  test('a range input dragged right by half its width: confirmed, and the value is what the page holds', async () => {
    const page = await s.open('drag-widgets.html');
    const { byLabel } = await boxes();
    const range = byLabel('Level');
    const start = (await s.model(page)).range as number; // 10
    const from = { x: range.x + 8 + ((range.w - 16) * start) / 100, y: range.y + range.h / 2 };
    const r = await s.v.call('drag', {
      from_x: from.x,
      from_y: from.y,
      to_x: from.x + range.w / 2,
      to_y: from.y,
      steps: 16,
      duration_ms: 300,
    });
    const now = (await s.model(page)).range as number;
    assert.ok(now > 45 && now < 75, `range ${now}`);
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });

  test('a noUiSlider handle dragged right: confirmed, and noUiSlider reads the value the drag asked for', async () => {
    const page = await s.open('drag-widgets.html');
    const { snap } = await boxes();
    const handle = snap.find((e) => e.role === 'slider' && e.label === 'Volume', 'the noUiSlider handle').frame as Box;
    const from = center(handle);
    const track = (await page.evaluate(`document.getElementById('slider').getBoundingClientRect().width`)) as number;
    const scale = snap.result.structured.screenshot_width / ((await page.evaluate('innerWidth')) as number);
    const r = await s.v.call('drag', {
      from_x: from.x,
      from_y: from.y,
      to_x: from.x + track * 0.5 * scale,
      to_y: from.y,
      steps: 16,
      duration_ms: 300,
    });
    const now = (await s.model(page)).slider as number;
    assert.ok(Math.abs(now - 70) <= 6, `slider ${now}`);
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });

  test('a drag on a disabled slider moves nothing: no_effect, never confirmed', async () => {
    const page = await s.open('drag-widgets.html');
    await page.evaluate(`document.getElementById('slider').setAttribute('disabled', '')`);
    const { snap } = await boxes();
    const handle = snap.find((e) => e.role === 'slider' && e.label === 'Volume', 'the noUiSlider handle').frame as Box;
    const from = center(handle);
    const r = await s.v.call('drag', {
      from_x: from.x,
      from_y: from.y,
      to_x: from.x + 200,
      to_y: from.y,
      steps: 8,
      duration_ms: 100,
    });
    assert.equal((await s.model(page)).slider, 20);
    assert.equal(r.structured.effect, 'no_effect', r.text);
  });
});
