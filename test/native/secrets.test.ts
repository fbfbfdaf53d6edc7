// Issue #22 item 8 on the native route: a GTK password entry (AT-SPI role "password text") under Xvfb +
// openbox + AT-SPI. Text typed or set into it lands (the app's own state says so) and is masked in the
// result; the snapshot shows no value for it; a field that is no secret keeps its text in the result.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, type Desktop, type GtkApp } from './desktop.js';

const missing = missingTools();
let d: Desktop;
let v: Verity;
let app: GtkApp;
const SECRET = 'hunter2#pw';

before(async () => {
  if (missing) return;
  d = await startDesktop();
  app = await startApp(d, 'Verity Secret Form', ['--password']);
  v = await startVerity([], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

async function token(label: string): Promise<string> {
  const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
  const r = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
  assert.equal(r.isError, false, r.text);
  assert.ok(!(JSON.stringify(r.structured) + r.text).includes(SECRET), `the snapshot shows the secret: ${r.text}`);
  const el = r.structured.elements.find((e: any) => e.label === label);
  assert.ok(el, `no "${label}" in ${r.text}`);
  return el.element_token;
}

describe('native route: a password text is masked', { skip: missing ?? false }, () => {
  test('type_text into it: the app holds the text, the result masks it', async () => {
    const r = await v.call('type_text', { element_token: await token('Secret'), text: SECRET });
    await app.waitFor((s) => s.secret === SECRET, 'the typed secret');
    assert.ok(!(JSON.stringify(r.structured) + r.text).includes(SECRET), r.text);
    assert.match(r.structured.masked ?? '', /password text/, r.text);
    assert.ok(
      r.structured.evidence.some((e: any) => e.kind === 'masked'),
      r.text,
    );
  });

  test('set_value on it: the app holds the new text, neither text shows in the result', async () => {
    const r = await v.call('set_value', { element_token: await token('Secret'), value: 'other#Pw9' });
    await app.waitFor((s) => s.secret === 'other#Pw9', 'the new secret');
    const all = JSON.stringify(r.structured) + r.text;
    assert.ok(!all.includes('other#Pw9') && !all.includes(SECRET), r.text);
    assert.match(r.structured.masked ?? '', /password text/, r.text);
  });

  test('an ordinary entry keeps its text in the result', async () => {
    const r = await v.call('type_text', { element_token: await token('Name'), text: 'Robin' });
    await app.waitFor((s) => s.entry.includes('Robin'), 'the name');
    assert.equal(r.structured.masked, undefined, r.text);
    assert.match(r.text, /Robin/);
  });
});
