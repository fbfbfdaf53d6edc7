// hover on a native window (#24 item 4): XTest pointer motion onto a GTK app's element, checked against the
// X server's own pointer position (xdotool). What a native hover opens is not read back, so the verdict is
// unverifiable with an escalation, never confirmed. A list for set_value is refused there, naming value.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, type Desktop, type GtkApp } from './desktop.js';

const missing = missingTools();
let d: Desktop;
let v: Verity;
let app: GtkApp;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  app = await startApp(d, 'Verity Hover');
  v = await startVerity([], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

describe('native route: hover', { skip: missing ?? false }, () => {
  test('the pointer moves onto the element; the verdict is unverifiable with an escalation [matrix x11 gtk3 hover unverifiable]', async () => {
    const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
    const snap = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
    assert.equal(snap.isError, false, snap.text);
    const button = snap.structured.elements.find((e: any) => e.label === 'Press me');
    assert.ok(button, snap.text);
    const clicks = app.state().clicks;
    const r = await v.call('hover', { element_token: button.element_token });
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.equal(r.structured.escalation?.target, 'verify', r.text);
    assert.equal(r.structured.method, 'pointer_motion', r.text);
    // The X server's pointer is now over the button (window origin + the element's frame).
    const windows = await v.call('list_windows');
    const w = windows.structured.windows.find((x: any) => x.window_id === app.windowId());
    const at = d.x('xdotool', ['getmouselocation']);
    const px = Number(/x:(-?\d+)/.exec(at)?.[1]);
    const py = Number(/y:(-?\d+)/.exec(at)?.[1]);
    const f = button.frame;
    assert.ok(
      px >= w.bounds.x + f.x && px <= w.bounds.x + f.x + f.w && py >= w.bounds.y + f.y && py <= w.bounds.y + f.y + f.h,
      `pointer at ${px},${py}; button at ${JSON.stringify(f)} in window ${JSON.stringify(w.bounds)}`,
    );
    assert.equal(app.state().clicks, clicks, 'a hover presses nothing');
  });

  test('set_value with a list is refused on a native window, naming value', async () => {
    const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
    const snap = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
    const entry = snap.structured.elements.find((e: any) => e.role.includes('text'));
    assert.ok(entry, snap.text);
    const r = await v.call('set_value', { element_token: entry.element_token, value: ['a', 'b'] });
    assert.equal(r.structured.refusal?.code, 'invalid_arguments', r.text);
    assert.match(r.text, /value/);
  });
});
