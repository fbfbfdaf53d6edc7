// The Tk cases (no AT-SPI tree: pixels and keys, unverifiable and saying why), shared by the X11 desktop
// (toolkits.test.ts) and the mixed Wayland one (wayland.test.ts: Tk runs on XWayland there, as it does on
// GNOME and KDE). Registered inside the caller's describe; `desktop` gives its desktop and Verity.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Verity } from '../helpers/mcp.js';
import { startApp, type Desktop, type GtkApp } from './desktop.js';

export function tkCases(desktop: () => { d: Desktop; v: Verity }): void {
  let d: Desktop;
  let v: Verity;
  let tk: GtkApp;
  before(async () => {
    ({ d, v } = desktop());
    // On a Wayland desktop Tk is an X11 client: XWayland's.
    tk = await startApp(d, 'Verity tk', [], 'tk', 'x11');
  });
  after(async () => {
    await tk?.kill();
  });
  const evidenceText = (r: { structured: { evidence?: Array<{ detail?: string }> } }) =>
    (r.structured.evidence ?? []).map((e) => e.detail ?? '').join(' | ');

  test('list_windows gives its pid (from the X client: Tk sets no _NET_WM_PID), and the window form takes it', async () => {
    assert.equal(d.x('xprop', ['-id', String(tk.windowId()), '_NET_WM_PID']).includes('not found'), true);
    const r = await v.call('list_windows', {});
    const w = (r.structured.windows as Array<{ window_id: number; pid: number | null }>).find(
      (x) => x.window_id === tk.windowId(),
    );
    assert.equal(w?.pid, tk.pid, r.text);
    const s = await v.call('get_window_state', {
      target: { kind: 'window', pid: tk.pid, window_id: tk.windowId() },
      include_screenshot: false,
    });
    assert.equal(s.isError, false, s.text);
    assert.match(s.text, /exposes no AT-SPI tree/);
  });

  test('type_text by pixels: checked before the click, then clicked and typed, unverifiable and saying why', async () => {
    const target = { kind: 'window', pid: tk.pid, window_id: tk.windowId() };
    const was = tk.state().entry;
    // Too long for one call's keystroke budget: refused before anything is sent, so the entry (not
    // focused since the app started) is not clicked into.
    assert.notEqual(tk.state().focus, 'Entry');
    const big = await v.call('type_text', { target, x: 200, y: 20, text: 'x'.repeat(1000) });
    assert.equal(big.structured.refusal?.code, 'type_text_synthesis_budget_exceeded', big.text);
    await new Promise((r) => setTimeout(r, 200));
    assert.notEqual(tk.state().focus, 'Entry', 'a refused call clicked the entry anyway');
    const r = await v.call('type_text', { target, x: 200, y: 20, text: 'Tk é' });
    const held = await tk.waitFor((st) => st.entry === `${was}Tk é`, 'the typed text');
    assert.equal(held.focus, 'Entry');
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.equal(r.structured.route, 'synthetic_events');
    assert.equal(r.structured.escalation?.target, 'verify', r.text);
    assert.match(evidenceText(r), /exposes no AT-SPI tree.*cannot be read back/, r.text);
  });

  test('type_text to the window (focus in the entry, no pid given): delivered, unverifiable', async () => {
    const was = tk.state().entry;
    assert.equal(tk.state().focus, 'Entry');
    const r = await v.call('type_text', { target: { kind: 'window', window_id: tk.windowId() }, text: ' 世界' });
    await tk.waitFor((st) => st.entry === `${was} 世界`, 'the typed text');
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.match(evidenceText(r), /cannot be read back/, r.text);
    const k = await v.call('press_key', { target: { kind: 'window', window_id: tk.windowId() }, key: 'BackSpace' });
    await tk.waitFor((st) => st.entry === `${was} 世`, 'the key press');
    assert.equal(k.structured.effect, 'unverifiable', k.text);
  });
}
