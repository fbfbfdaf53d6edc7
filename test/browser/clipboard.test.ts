// A tab's clipboard and move_cursor on a tab (issue 44 items 3 and 4), on a real Chromium page: the page's
// clipboard (navigator.clipboard, the permission granted to the tab's origin only) written and confirmed,
// then read by the page itself; what the page copies read back by clipboard_read; move_cursor at a point of
// the tab is a hover there (the menu under it opens, checked against the page).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
before(async () => {
  s = await browserSuite(['--caps', 'clipboard,cursor', '--allow-clipboard-read']);
});
after(async () => {
  await s?.close();
});

async function currentTab(): Promise<{ kind: 'tab'; tab_id: string }> {
  const listed = await s.v.call('page', { action: 'list_tabs' });
  return { kind: 'tab', tab_id: listed.structured.current_tab_id as string };
}

test("clipboard_write to a tab: confirmed, and the page's own navigator.clipboard reads that text", async () => {
  const page = await s.open('hover.html');
  const target = await currentTab();
  const text = 'tab clipboard ✓ 7';
  const r = await s.v.call('clipboard_write', { text, target });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal(r.structured.route, 'dom', r.text);
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), text);
});

test('clipboard_read of a tab returns what the page copied, with its types', async () => {
  const page = await s.open('hover.html');
  const target = await currentTab();
  await s.v.call('clipboard_write', { text: 'placeholder', target }); // grants the origin its permission
  await page.evaluate(() => navigator.clipboard.writeText('the page copied this'));
  const r = await s.v.call('clipboard_read', { target });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.structured.text, 'the page copied this', r.text);
  assert.ok(r.structured.types.includes('text/plain'), r.text);
});

test('move_cursor at a point of a tab is a hover there: the menu under it opens', async () => {
  const page = await s.open('hover.html');
  const snap = await s.snapshot(s.v, { format: 'full' });
  const f = snap.find((e) => e.label === 'Products', 'Products').frame;
  const r = await s.v.call('move_cursor', { x: f.x + f.w / 2, y: f.y + f.h / 2 });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal((await s.model(page)).cssMenuOpen, true, 'the page shows the menu open');
});
