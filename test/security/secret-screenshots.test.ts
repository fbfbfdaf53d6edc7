// Secrets stay secret in screenshots too (issue #22 item 8): Chromium draws a password field's text as
// discs, but not a field marked autocomplete="one-time-code", "cc-number" or "cc-csc". Every capture Verity
// takes (get_window_state, page screenshot, recordings, the action log's thumbnails) draws those as discs
// as well, and puts the page back after. Proved without OCR, in a real Chromium: two pages whose secret
// fields hold different text give the very same pixels, while a difference in an ordinary field shows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';

const FIELD = 'style="font: 40px monospace; width: 700px; display: block; margin: 8px"';
/** The page: three secret fields and one ordinary one; its title says how the card field is drawn now. */
function form(code: string, card: string, csc: string, name: string): string {
  return `data:text/html,${encodeURIComponent(
    `<title>-</title><input ${FIELD} autocomplete="one-time-code" value="${code}"><input ${FIELD} autocomplete="cc-number" value="${card}">` +
      `<input ${FIELD} autocomplete="cc-csc" value="${csc}"><input ${FIELD} value="${name}">` +
      `<script>setInterval(() => { document.title = getComputedStyle(document.querySelectorAll('input')[1]).webkitTextSecurity; }, 20);</script>`,
  )}`;
}

let v: Verity;
before(async () => {
  v = await startVerity();
});
after(async () => {
  await v?.close();
});

/** The PNG (base64) of `how` after navigating to `url`. */
async function capture(url: string, how: 'page' | 'get_window_state'): Promise<string> {
  const opened = await v.call('page', { action: 'navigate', url });
  assert.equal(opened.isError, false, opened.text);
  const r = await v.client.callTool(
    how === 'page'
      ? { name: 'page', arguments: { action: 'screenshot' } }
      : { name: 'get_window_state', arguments: { include_screenshot: true } },
  );
  assert.notEqual(r.isError, true, JSON.stringify(r.content).slice(0, 300));
  const image = (r.content as Array<{ type: string; data?: string }>).find((c) => c.type === 'image');
  assert.ok(image?.data, `${how} returned an image`);
  return image.data;
}

for (const how of ['page', 'get_window_state'] as const) {
  test(`${how}: one-time code, card number and security code fields are drawn as discs`, async () => {
    const a = await capture(form('424242', '4111111111111111', '937', 'Ada'), how);
    const b = await capture(form('000111', '5555123412341234', '120', 'Ada'), how);
    assert.equal(a === b, true, 'the secret fields show nothing of their text: the pixels are the same');
    // The same comparison can fail: a different ordinary field is seen.
    const c = await capture(form('424242', '4111111111111111', '937', 'Bob'), how);
    assert.notEqual(a, c, 'an ordinary field is drawn as it is');
  });
}

test('the page is put back after the capture', async () => {
  await capture(form('424242', '4111111111111111', '937', 'Ada'), 'page');
  const deadline = Date.now() + 10_000;
  let title = '';
  while (Date.now() < deadline) {
    const tabs = await v.call('page', { action: 'list_tabs' });
    title = tabs.structured.tabs.find((t: any) => t.tab_id === tabs.structured.current_tab_id)?.title;
    if (title === 'none') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(title, 'none', 'the card field is drawn as the page drew it once the capture is done');
});
