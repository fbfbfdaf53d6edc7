// invoke_menu through the nutjs backend (--native-backend nutjs, issue 44 item 5): refused before anything is
// sent (it reads no tree to find an item's name in), pointing to clicks at pixels; the GTK 3 test app's own
// state shows nothing happened.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, type Desktop, type GtkApp } from './desktop.js';

const missing = missingTools();

describe('invoke_menu on the nutjs backend', { skip: missing ?? false }, () => {
  let d: Desktop;
  let v: Verity;
  let app: GtkApp;
  before(async () => {
    d = await startDesktop();
    app = await startApp(d, 'Nut Menus', ['--menus']);
    v = await startVerity(['--native-backend', 'nutjs', '--caps', 'menus'], d.env);
  });
  after(async () => {
    await v?.close();
    await d?.close();
  });

  test('refused not_supported, pointing to pixels; the app reports no change [matrix nutjs gtk3 invoke_menu refused]', async () => {
    const was = JSON.stringify(app.state());
    const r = await v.call('invoke_menu', {
      target: { kind: 'window', pid: app.pid, window_id: app.windowId() },
      path: ['Format', 'Bold'],
    });
    assert.equal(r.structured.refusal?.code, 'not_supported', r.text);
    assert.match(r.text, /nutjs backend .* does not read/);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(JSON.stringify(app.state()), was, 'the app reports no change');
  });
});
