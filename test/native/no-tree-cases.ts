// The cases of a toolkit with no AT-SPI tree (pixels and keys, unverifiable and saying why): Tk (no bridge)
// and Java Swing without its ATK bridge, the same family. Shared by the X11 desktop (toolkits.test.ts) and
// the mixed Wayland one (wayland.test.ts: both run on XWayland there, as they do on GNOME and KDE).
// Registered inside the caller's describe; `desktop` gives its desktop and Verity.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Verity } from '../helpers/mcp.js';
import { startApp, type Desktop, type GtkApp } from './desktop.js';

/** Each app of the family: what its entry is called when focused, and how its window gives its pid. */
const FAMILY = {
  tk: { entry: 'Entry', pid: 'from the X client: Tk sets no _NET_WM_PID' },
  swing: { entry: 'JTextField', pid: "from the window's _NET_WM_PID" },
} as const;

export function noTreeCases(toolkit: keyof typeof FAMILY, desktop: () => { d: Desktop; v: Verity }): void {
  const { entry, pid } = FAMILY[toolkit];
  let d: Desktop;
  let v: Verity;
  let app: GtkApp;
  before(async () => {
    ({ d, v } = desktop());
    // On a Wayland desktop both are X11 clients: XWayland's.
    app = await startApp(d, `Verity ${toolkit}`, [], toolkit, 'x11');
  });
  after(async () => {
    await app?.kill();
  });
  const evidenceText = (r: { structured: { evidence?: Array<{ detail?: string }> } }) =>
    (r.structured.evidence ?? []).map((e) => e.detail ?? '').join(' | ');

  test(`list_windows gives its pid (${pid}), and the window form takes it`, async () => {
    const netWmPid = d.x('xprop', ['-id', String(app.windowId()), '_NET_WM_PID']);
    if (toolkit === 'tk') assert.match(netWmPid, /not found/);
    else assert.match(netWmPid, new RegExp(`= ${app.pid}$`));
    const r = await v.call('list_windows', {});
    const w = (r.structured.windows as Array<{ window_id: number; pid: number | null }>).find(
      (x) => x.window_id === app.windowId(),
    );
    assert.equal(w?.pid, app.pid, r.text);
    const s = await v.call('get_window_state', {
      target: { kind: 'window', pid: app.pid, window_id: app.windowId() },
      include_screenshot: false,
    });
    assert.equal(s.isError, false, s.text);
    assert.match(s.text, /exposes no AT-SPI tree/);
  });

  test('type_text by pixels: checked before the click, then clicked and typed, unverifiable and saying why', async () => {
    const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
    const was = app.state().entry;
    // Too long for one call's keystroke budget: refused before anything is sent, so the entry (not
    // focused since the app started) is not clicked into.
    assert.notEqual(app.state().focus, entry);
    const big = await v.call('type_text', { target, x: 200, y: 20, text: 'x'.repeat(1000) });
    assert.equal(big.structured.refusal?.code, 'type_text_synthesis_budget_exceeded', big.text);
    await new Promise((r) => setTimeout(r, 200));
    assert.notEqual(app.state().focus, entry, 'a refused call clicked the entry anyway');
    const r = await v.call('type_text', { target, x: 200, y: 20, text: `${toolkit} é` });
    const held = await app.waitFor((st) => st.entry === `${was}${toolkit} é`, 'the typed text');
    assert.equal(held.focus, entry);
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.equal(r.structured.route, 'synthetic_events');
    assert.equal(r.structured.escalation?.target, 'verify', r.text);
    assert.match(evidenceText(r), /exposes no AT-SPI tree.*cannot be read back/, r.text);
  });

  test('type_text to the window (focus in the entry, no pid given): delivered, unverifiable', async () => {
    const was = app.state().entry;
    assert.equal(app.state().focus, entry);
    const r = await v.call('type_text', { target: { kind: 'window', window_id: app.windowId() }, text: ' 世界' });
    await app.waitFor((st) => st.entry === `${was} 世界`, 'the typed text');
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.match(evidenceText(r), /cannot be read back/, r.text);
    const k = await v.call('press_key', { target: { kind: 'window', window_id: app.windowId() }, key: 'BackSpace' });
    await app.waitFor((st) => st.entry === `${was} 世`, 'the key press');
    assert.equal(k.structured.effect, 'unverifiable', k.text);
  });
}
