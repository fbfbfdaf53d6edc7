// The compact get_window_state on a native window (a real GTK app under Xvfb + AT-SPI): the same tool
// handler serves it, so it must decode to the full form's elements there too (roles with spaces, parents,
// in_web_content false by default), and a token_prefix + index token must act through AT-SPI.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeOutline, webNormOf } from '../../server/tools/outline.js';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, type Desktop, type GtkApp } from './desktop.js';

const missing = missingTools();
let d: Desktop;
let v: Verity;
let app: GtkApp;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  app = await startApp(d, 'Verity Compact');
  v = await startVerity([], d.env);
  await v.client.listTools(); // so the SDK client validates structuredContent against the outputSchema
});
after(async () => {
  await v?.close();
  await d?.close();
});

describe('native route: get_window_state format "compact"', { skip: missing ?? false }, () => {
  test('decodes to the full form\'s elements, and token_prefix + index clicks through AT-SPI', async () => {
    const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
    const full = await v.call('get_window_state', { target, include_screenshot: false });
    assert.equal(full.isError, false, full.text);
    const compact = await v.call('get_window_state', { target, include_screenshot: false, format: 'compact' });
    assert.equal(compact.isError, false, compact.text);
    const st = compact.structured;
    assert.equal(webNormOf(st.target.kind), false);
    const elements = decodeOutline(st.outline, st.roles, false);
    assert.deepEqual(elements, full.structured.elements.map(({ element_token: _t, ...e }: any) => e));
    assert.ok(Object.values(st.roles).includes('push button'), JSON.stringify(st.roles));
    assert.ok(elements.some((e) => e.parent_index !== null));

    const was = app.state().checked;
    const subscribe = elements.find((e) => e.label === 'Subscribe')!;
    const r = await v.call('click', { element_token: st.token_prefix + subscribe.element_index });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.route, 'accessibility');
    await app.waitFor((s) => s.checked === !was, 'the toggled check box');
  });
});
