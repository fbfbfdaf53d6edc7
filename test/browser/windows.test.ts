// The window tools on a tab (issue 44 item 2, --caps windows): its browser window through CDP's Browser
// domain, each verdict checked against the browser's own read-back (Browser.getWindowBounds, asked over the
// test's own connection) and the page (document.visibilityState). Headless: the bounds are the browser's own
// record of a window on no screen, which the results say. Closing is refused, pointing to page close_tab.
// The file's own Chromium: its window is resized, which no other file's pages should see.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium } from '../helpers/chromium.js';
import { browserSuiteOverStdio, type Suite } from '../helpers/suite.js';
import type { Verity } from '../helpers/mcp.js';

let s: Suite<Verity>;
before(async () => {
  s = await browserSuiteOverStdio(['--caps', 'windows'], launchChromium);
});
after(async () => {
  await s?.close();
});

async function tabTarget() {
  const listed = await s.v.call('page', { action: 'list_tabs' });
  return { kind: 'tab', tab_id: listed.structured.current_tab_id as string };
}

/** The browser's own bounds of the page's window, read over the test's own CDP connection. */
async function boundsOf(page: Awaited<ReturnType<Suite['open']>>) {
  const cdp = await page.createCDPSession();
  try {
    const { windowId } = await cdp.send('Browser.getWindowForTarget');
    return (await cdp.send('Browser.getWindowBounds', { windowId })).bounds;
  } finally {
    await cdp.detach();
  }
}

test('set_window_frame on a tab: confirmed, as Browser.getWindowBounds reads, the headless read-back said', async () => {
  const page = await s.open('hover.html');
  const r = await s.v.call('set_window_frame', { target: await tabTarget(), x: 30, y: 40, width: 900, height: 700 });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  const b = await boundsOf(page);
  assert.deepEqual([b.left, b.top, b.width, b.height], [30, 40, 900, 700], JSON.stringify(b));
  assert.match(JSON.stringify(r.structured.evidence), /headless/, `a headless read-back is said to be one: ${r.text}`);
});

test('set_window_state maximized, then normal, on a tab: each confirmed by the window state read back', async () => {
  const page = await s.open('hover.html');
  const target = await tabTarget();
  const max = await s.v.call('set_window_state', { target, state: 'maximized' });
  assert.equal(max.structured.effect, 'confirmed', max.text);
  assert.equal((await boundsOf(page)).windowState, 'maximized');
  const normal = await s.v.call('set_window_state', { target, state: 'normal' });
  assert.equal(normal.structured.effect, 'confirmed', normal.text);
  assert.equal((await boundsOf(page)).windowState, 'normal');
});

test('bring_to_front on a tab: its verdict matches what the page reads', async () => {
  const page = await s.open('hover.html');
  const r = await s.v.call('bring_to_front', { target: await tabTarget() });
  const [visible, focused] = await page.evaluate(() => [document.visibilityState === 'visible', document.hasFocus()]);
  const expected = visible && focused ? 'confirmed' : visible ? 'partial' : 'no_effect';
  assert.equal(r.structured.effect, expected, r.text);
});

test('set_window_state closed on a tab: refused, pointing to page close_tab', async () => {
  await s.open('hover.html');
  const r = await s.v.call('set_window_state', { target: await tabTarget(), state: 'closed' });
  assert.equal(r.structured.refusal?.code, 'invalid_arguments', r.text);
  assert.match(r.text, /close_tab/);
});
