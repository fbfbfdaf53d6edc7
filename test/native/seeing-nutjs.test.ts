// zoom and get_desktop_state through the nutjs backend (--native-backend nutjs) under Xvfb + openbox, with
// an app policy in force. zoom goes through nut-js's grab (as its screenshots do) and is resampled in its
// helper: the GTK app's red swatch (its frame from the AT-SPI route, which nut-js cannot read) at 1x and 2x,
// pixel for pixel. get_desktop_state is checked against openbox and the X server (xprop, xwininfo, xdotool).
// The blocked app's window is left out, a zoom on it refused, and black where it overlaps a zoomed region.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, until, type Desktop, type GtkApp } from './desktop.js';
import { geometry, rootWindows } from './desk-truth.js';

const missing = missingTools();
const tmp = mkdtempSync(join(tmpdir(), 'verity-seeing-nut-'));
let d: Desktop;
let atspi: Verity;
let nut: Verity;
let a: GtkApp;
let b: GtkApp;
let hidden: GtkApp;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  a = await startApp(d, 'Nut Seeing A');
  b = await startApp(d, 'Nut Seeing B');
  hidden = await startApp(d, 'Nut Seeing Hidden');
  d.x('xdotool', ['windowmove', '--sync', String(a.windowId()), '0', '0']);
  d.x('xdotool', ['windowmove', '--sync', String(b.windowId()), '640', '0']);
  d.x('xdotool', ['windowmove', '--sync', String(hidden.windowId()), '760', '200']);
  const policy = join(tmp, 'policy.json');
  writeFileSync(policy, JSON.stringify({ blocked_apps: ['*Nut Seeing Hidden'] }));
  atspi = await startVerity([], d.env);
  nut = await startVerity(['--native-backend', 'nutjs', '--caps', 'zoom,windows', '--policy', policy], d.env);
});
after(async () => {
  await nut?.close();
  await atspi?.close();
  await d?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const targetOf = (app: GtkApp) => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });
const pixel = (png: PNG, x: number, y: number) => {
  const i = 4 * (y * png.width + x);
  return [png.data[i], png.data[i + 1], png.data[i + 2]] as const;
};

async function zoomed(args: Record<string, unknown>) {
  const raw = (await nut.client.callTool({ name: 'zoom', arguments: args })) as {
    isError?: boolean;
    content: Array<{ type: string; data?: string; text?: string }>;
    structuredContent: any;
  };
  const text = raw.content.find((c) => c.type === 'text')?.text ?? '';
  assert.ok(!raw.isError, text);
  const image = raw.content.find((c) => c.type === 'image');
  assert.ok(image?.data, text);
  return { s: raw.structuredContent, png: PNG.sync.read(Buffer.from(image.data, 'base64')) };
}

describe('zoom and get_desktop_state through nut-js', { skip: missing ?? false }, () => {
  test('zoom on the swatch at 1x and 2x through nut-js grab [matrix nutjs gtk3 zoom confirmed]', async () => {
    const r = await atspi.call('get_window_state', { target: targetOf(a), format: 'full', include_screenshot: false });
    const f = r.structured.elements.find((e: any) => e.label === 'Swatch')?.frame;
    assert.ok(f, r.text);
    const region = { x: f.x, y: f.y, width: f.w, height: f.h };
    const one = await zoomed({ target: targetOf(a), region });
    assert.deepEqual([one.png.width, one.png.height], [f.w, f.h]);
    const [red, green, blue] = pixel(one.png, Math.floor(f.w / 2), Math.floor(f.h / 2));
    assert.ok(red > 180 && green < 90 && blue < 90, `the swatch's centre is rgb(${red}, ${green}, ${blue})`);
    const two = await zoomed({ target: targetOf(a), region, scale: 2 });
    assert.deepEqual([two.png.width, two.png.height], [2 * f.w, 2 * f.h]);
    for (let y = 0; y < f.h; y += 2)
      for (let x = 0; x < f.w; x += 2)
        assert.deepEqual(pixel(two.png, 2 * x + 1, 2 * y + 1), pixel(one.png, x, y), `pixel (${x}, ${y}) enlarged`);
    const g = geometry(d, a.windowId());
    const outside = await nut.call('zoom', { target: targetOf(a), region: { x: g.w, y: 0, width: 5, height: 5 } });
    assert.equal(outside.structured?.refusal?.code, 'invalid_arguments', outside.text);
    assert.match(outside.text, /region\.x: \d+ is past the right edge/);
  });

  test("the blocked app's window: zoom refused, black where it overlaps another window's region [matrix nutjs gtk3 zoom refused]", async () => {
    const refused = await nut.call('zoom', { target: targetOf(hidden), region: { x: 0, y: 0, width: 5, height: 5 } });
    assert.equal(refused.structured?.refusal?.code, 'target_not_found', refused.text);
    const gb = geometry(d, b.windowId());
    const gh = geometry(d, hidden.windowId());
    const { s, png } = await zoomed({ target: targetOf(b), region: { x: 0, y: 0, width: gb.w, height: gb.h } });
    assert.equal(s.blacked_out, 1, JSON.stringify(s));
    assert.deepEqual(pixel(png, gh.x - gb.x + 5, gh.y - gb.y + 5), [0, 0, 0], 'inside the blocked window (xwininfo)');
  });

  test('get_desktop_state: the stacking order, active window, frames and pointer openbox and X say [matrix nutjs gtk3 get_desktop_state confirmed]', async () => {
    d.x('xdotool', ['windowactivate', '--sync', String(a.windowId())]);
    d.x('xdotool', ['mousemove', '--sync', '321', '123']);
    await until(() => rootWindows(d, '_NET_ACTIVE_WINDOW')[0] === a.windowId(), 'A active per xprop', 5000);
    const r = await nut.call('get_desktop_state');
    assert.equal(r.isError, false, r.text);
    const st = r.structured;
    assert.deepEqual(st.screens, [{ x: 0, y: 0, width: 1280, height: 800 }]);
    assert.deepEqual(st.cursor, { x: 321, y: 123 });
    assert.equal(st.focused_window_id, a.windowId());
    const stacking = rootWindows(d, '_NET_CLIENT_LIST_STACKING').filter((id) => id !== hidden.windowId());
    assert.deepEqual(
      st.windows.map((w: any) => w.window_id),
      stacking,
      r.text,
    );
    for (const app of [a, b]) {
      const w = st.windows.find((x: any) => x.window_id === app.windowId());
      assert.equal(w.pid, app.pid);
      assert.equal(w.title, app.title);
      assert.deepEqual(w.frame, geometry(d, app.windowId()));
      assert.equal(w.focused, app === a);
    }
    assert.ok(!r.text.includes('Hidden'), r.text);
  });
});
