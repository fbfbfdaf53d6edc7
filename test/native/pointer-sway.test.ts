// The pointer on sway (issue 44 items 4 and 8): move_cursor and hover move Verity's virtual pointer onto a GTK
// (Wayland) window. Sway tells no client where the pointer is, so neither can be `confirmed` by a read-back:
// each is `unverifiable`, and the truth is the app's own: GTK tells the button when the pointer enters and
// leaves it (app.py's `hovered`).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingWaylandTools, startApp, startWaylandDesktop, until, type Desktop, type GtkApp } from './desktop.js';

const missing = missingWaylandTools();

describe('the pointer on sway: move_cursor and hover reach the app, and say they are unverifiable', {
  skip: missing ?? false,
}, () => {
  let d: Desktop;
  let v: Verity;
  let a: GtkApp;
  let target: { kind: string; pid: number; window_id: number };
  let button: { element_token: string; frame: { x: number; y: number; w: number; h: number } };

  before(async () => {
    d = await startWaylandDesktop();
    a = await startApp(d, 'Sway Pointer');
    v = await startVerity(['--caps', 'cursor'], d.env);
    const w = await until(
      async () => (await v.call('list_windows')).structured?.windows?.find((x: any) => x.pid === a.pid),
      'the app in list_windows',
      15_000,
      200,
    );
    target = { kind: 'window', pid: a.pid, window_id: w.window_id };
    const snap = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
    button = snap.structured.elements.find((e: any) => e.label === 'Press me');
    assert.ok(button, snap.text);
  });
  after(async () => {
    await v?.close();
    await d?.close();
  });

  test('move_cursor onto an element: the button feels the pointer enter; unverifiable, since sway does not say where it is [matrix sway gtk3 move_cursor unverifiable]', async () => {
    assert.equal(a.state().hovered, false, 'the pointer starts off the button');
    const r = await v.call('move_cursor', { element_token: button.element_token });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    await a.waitFor((s) => s.hovered === true, 'the button to report the pointer over it');
  });

  test('move_cursor to a point of the window off the button: the button feels it leave [matrix sway any move_cursor unverifiable]', async () => {
    await a.waitFor((s) => s.hovered === true, 'the pointer still over the button from the test before');
    // Beside the button in the window (above it, or below where it sits at the top): its x, off its rows.
    const f = button.frame;
    const off = { x: f.x + Math.round(f.w / 2), y: f.y > 20 ? f.y - 10 : f.y + f.h + 10 };
    const r = await v.call('move_cursor', { target, ...off });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    await a.waitFor((s) => s.hovered === false, 'the button to report the pointer gone');
  });

  test('hover onto the button: the app sees the pointer over it, nothing pressed; unverifiable [matrix sway gtk3 hover unverifiable]', async () => {
    const clicks = a.state().clicks;
    const r = await v.call('hover', { element_token: button.element_token });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    const s = await a.waitFor((st) => st.hovered === true, 'the button to report the pointer over it');
    assert.equal(s.clicks, clicks, 'a hover presses nothing');
  });
});
