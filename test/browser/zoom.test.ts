// zoom on a tab (issue 44 item 6, --caps zoom): a region of the viewport in CSS pixels through the tab's one
// capture (CDP Page.captureScreenshot with a clip and a scale). The page draws boxes of known colours where
// its own style puts them; the image is decoded: its size is the region's times the scale (and the device
// pixel ratio the page reports), the boxes' colours and edges are where the page's layout has them, a
// scrolled page's region is the viewport's (not the document's top), and bounds are refused naming the field.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PNG } from 'pngjs';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
before(async () => {
  s = await browserSuite(['--caps', 'zoom']);
});
after(async () => {
  await s?.close();
});

const PAGE = `<style>body { margin: 0; height: 3000px; background: #ffffff }</style>
<div id="green" style="position: absolute; left: 10px; top: 20px; width: 50px; height: 30px; background: #00c000"></div>
<div id="blue" style="position: absolute; left: 100px; top: 1020px; width: 40px; height: 20px; background: #0000e0"></div>`;

async function tabTarget() {
  const listed = await s.v.call('page', { action: 'list_tabs' });
  return { kind: 'tab', tab_id: listed.structured.current_tab_id as string };
}

async function zoomed(args: Record<string, unknown>) {
  const raw = (await s.v.client.callTool({ name: 'zoom', arguments: args })) as {
    isError?: boolean;
    content: Array<{ type: string; data?: string; text?: string }>;
    structuredContent: any;
  };
  const text = raw.content.find((c) => c.type === 'text')?.text ?? '';
  assert.ok(!raw.isError, text);
  const image = raw.content.find((c) => c.type === 'image');
  assert.ok(image?.data, text);
  return { s: raw.structuredContent, png: PNG.sync.read(Buffer.from(image.data, 'base64')) };
}
const pixel = (png: PNG, x: number, y: number) => {
  const i = 4 * (y * png.width + x);
  return [png.data[i], png.data[i + 1], png.data[i + 2]];
};
const near = (got: number[], want: number[]) => got.every((c, i) => Math.abs(c - want[i]) <= 8);
const GREEN = [0, 192, 0];
const WHITE = [255, 255, 255];

test('zoom on a tab at scale 1 and 2: the region in CSS pixels, the box where the page put it', async () => {
  const page = await s.open('hover.html');
  await page.setContent(PAGE);
  const dpr = (await page.evaluate('devicePixelRatio')) as number;
  const target = await tabTarget();
  const one = await zoomed({ target, region: { x: 0, y: 0, width: 80, height: 60 } });
  assert.deepEqual([one.png.width, one.png.height], [80 * dpr, 60 * dpr]);
  assert.deepEqual(one.s.region, { x: 0, y: 0, width: 80, height: 60 });
  assert.ok(near(pixel(one.png, 35 * dpr, 35 * dpr), GREEN), `inside the box: ${pixel(one.png, 35 * dpr, 35 * dpr)}`);
  assert.ok(near(pixel(one.png, 5 * dpr, 5 * dpr), WHITE), 'outside it');
  const two = await zoomed({ target, region: { x: 0, y: 0, width: 80, height: 60 }, scale: 2 });
  assert.deepEqual([two.png.width, two.png.height], [160 * dpr, 120 * dpr]);
  assert.equal(two.s.scale, 2);
  // The box's left edge at CSS x 10 is at image x 20 (per device pixel) at scale 2: drawn at that scale, not blurred.
  const row = 70 * dpr;
  assert.ok(near(pixel(two.png, 19 * dpr, row), WHITE), `left of the edge: ${pixel(two.png, 19 * dpr, row)}`);
  assert.ok(near(pixel(two.png, 20 * dpr, row), GREEN), `right of the edge: ${pixel(two.png, 20 * dpr, row)}`);
});

test("a scrolled page: the region is the viewport's, where the tab's screenshot shows it", async () => {
  const page = await s.open('hover.html');
  await page.setContent(PAGE);
  await page.evaluate('window.scrollTo(0, 1000)');
  await page.waitForFunction('window.scrollY === 1000');
  // The blue box is at document y 1020: viewport y 20 now.
  const { png } = await zoomed({ target: await tabTarget(), region: { x: 100, y: 20, width: 40, height: 20 } });
  for (const [x, y] of [
    [1, 1],
    [20, 10],
    [38, 18],
  ])
    assert.ok(near(pixel(png, x, y), [0, 0, 224]), `(${x}, ${y}) is the blue box: ${pixel(png, x, y)}`);
});

test('bounds: a region past the viewport and a scale over the pixel bound are refused naming the field', async () => {
  const page = await s.open('hover.html');
  await page.setContent(PAGE);
  const width = (await page.evaluate('document.documentElement.clientWidth')) as number;
  const target = await tabTarget();
  const outside = await s.v.call('zoom', { target, region: { x: width + 1, y: 0, width: 10, height: 10 } });
  assert.equal(outside.structured?.refusal?.code, 'invalid_arguments', outside.text);
  assert.match(outside.text, /region\.x: \d+ is past the right edge of tab .*'s viewport/);
  const big = await s.v.call('zoom', { target, region: { x: 0, y: 0, width: 600, height: 500 }, scale: 8 });
  assert.equal(big.structured?.refusal?.code, 'invalid_arguments', big.text);
  assert.match(big.text, /scale: 8 makes a \d+x\d+ image/);
  const clamped = await zoomed({ target, region: { x: width - 10, y: 0, width: 100, height: 10 } });
  assert.equal(clamped.s.region.width, 10);
  assert.match(clamped.s.notes.join(' '), /region\.width reaches past its right edge/);
});
