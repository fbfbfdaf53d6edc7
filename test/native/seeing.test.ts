// zoom and get_desktop_state on X11 (issue 44 item 6, --caps zoom,windows), against real GTK apps under
// Xvfb + openbox with an app policy in force. zoom's image is decoded and checked: its size is the region's
// times the scale, the GTK app's red swatch (#e01b24) is where its frame says, each pixel of a 3x zoom is the
// pixel of the 1x one it enlarges; a region outside the window is refused naming the field, one past an edge
// clamped and said. get_desktop_state is checked against openbox's and the X server's own state, read by
// xprop, xwininfo and xdotool on their own connections: the stacking order, the active window, each frame,
// the pointer. A window of a blocked app is left out of the state (as list_windows leaves it out), a zoom on
// it is refused as a window that does not exist, and where it overlaps a zoomed region it comes out black.
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
const tmp = mkdtempSync(join(tmpdir(), 'verity-seeing-'));
let d: Desktop;
let v: Verity;
let a: GtkApp;
let b: GtkApp;
let hidden: GtkApp;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  a = await startApp(d, 'Seeing A');
  b = await startApp(d, 'Seeing B');
  hidden = await startApp(d, 'Seeing Hidden');
  // A alone at the left; the blocked app's window overlapping B's lower part.
  d.x('xdotool', ['windowmove', '--sync', String(a.windowId()), '0', '0']);
  d.x('xdotool', ['windowmove', '--sync', String(b.windowId()), '640', '0']);
  d.x('xdotool', ['windowmove', '--sync', String(hidden.windowId()), '760', '200']);
  const policy = join(tmp, 'policy.json');
  writeFileSync(policy, JSON.stringify({ blocked_apps: ['*Seeing Hidden'] }));
  v = await startVerity(['--caps', 'zoom,windows', '--policy', policy], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const targetOf = (app: GtkApp) => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });

/** zoom's reply with its image decoded. */
async function zoomed(args: Record<string, unknown>) {
  const raw = (await v.client.callTool({ name: 'zoom', arguments: args })) as {
    isError?: boolean;
    content: Array<{ type: string; data?: string; text?: string }>;
    structuredContent: any;
  };
  const text = raw.content.find((c) => c.type === 'text')?.text ?? '';
  assert.ok(!raw.isError, text);
  const image = raw.content.find((c) => c.type === 'image');
  assert.ok(image?.data, `an image in the reply: ${text}`);
  return { s: raw.structuredContent, png: PNG.sync.read(Buffer.from(image.data, 'base64')), text };
}
const pixel = (png: PNG, x: number, y: number) => {
  const i = 4 * (y * png.width + x);
  return [png.data[i], png.data[i + 1], png.data[i + 2]] as const;
};
const isSwatchRed = ([r, g, bl]: readonly number[]) => r > 180 && g < 90 && bl < 90;

/** The swatch's frame in A's screenshot pixels (client area), as get_window_state lists it. */
async function swatchFrame(): Promise<{ x: number; y: number; w: number; h: number }> {
  const r = await v.call('get_window_state', { target: targetOf(a), format: 'full', include_screenshot: false });
  const e = r.structured.elements.find((x: any) => x.label === 'Swatch');
  assert.ok(e, r.text);
  return e.frame;
}

describe('zoom and get_desktop_state on X11 (openbox), with a blocked app', { skip: missing ?? false }, () => {
  test('zoom on the swatch at scale 1: its size, its colour, where xwininfo puts the window [matrix x11 gtk3 zoom confirmed]', async () => {
    const f = await swatchFrame();
    const { s, png } = await zoomed({ target: targetOf(a), region: { x: f.x, y: f.y, width: f.w, height: f.h } });
    assert.deepEqual([png.width, png.height], [f.w, f.h], 'the PNG is the region, at full resolution');
    assert.deepEqual([s.width, s.height, s.scale], [f.w, f.h, 1]);
    assert.ok(isSwatchRed(pixel(png, Math.floor(f.w / 2), Math.floor(f.h / 2))), `centre ${pixel(png, 2, 2)}`);
    const g = geometry(d, a.windowId());
    assert.deepEqual(s.screen_region, { x: g.x + f.x, y: g.y + f.y, width: f.w, height: f.h }, 'per xwininfo');
  });

  test('zoom at scale 3: three times the size, each pixel the 1x pixel it enlarges [matrix x11 gtk3 zoom confirmed]', async () => {
    const f = await swatchFrame();
    // A region around the swatch's corner: the swatch's red and the window's background, edges between them.
    const region = { x: Math.max(0, f.x - 6), y: Math.max(0, f.y - 6), width: 20, height: 16 };
    const one = await zoomed({ target: targetOf(a), region });
    const three = await zoomed({ target: targetOf(a), region, scale: 3 });
    assert.deepEqual([three.png.width, three.png.height], [60, 48]);
    assert.equal(three.s.scale, 3);
    let reds = 0;
    for (let y = 0; y < 16; y++)
      for (let x = 0; x < 20; x++) {
        const want = pixel(one.png, x, y);
        assert.deepEqual(pixel(three.png, 3 * x + 1, 3 * y + 1), want, `pixel (${x}, ${y}) enlarged`);
        if (isSwatchRed(want)) reds++;
      }
    assert.ok(reds > 0 && reds < 320, `the region holds the swatch's corner (${reds} red pixels of 320)`);
  });

  test('a region outside the window is refused naming the field; past an edge, clamped and said [matrix x11 gtk3 zoom refused]', async () => {
    const g = geometry(d, a.windowId());
    const outside = await v.call('zoom', { target: targetOf(a), region: { x: g.w + 5, y: 0, width: 10, height: 10 } });
    assert.equal(outside.structured?.refusal?.code, 'invalid_arguments', outside.text);
    assert.match(outside.text, /region\.x: \d+ is past the right edge of window \d+'s client area/);
    const zero = await v.call('zoom', { target: targetOf(a), region: { x: 0, y: 0, width: 0, height: 10 } });
    assert.equal(zero.structured?.refusal?.code, 'invalid_arguments', zero.text);
    assert.match(zero.text, /region\.width/);
    const big = await v.call('zoom', {
      target: targetOf(a),
      region: { x: 0, y: 0, width: g.w, height: g.h },
      scale: 8,
    });
    assert.equal(big.structured?.refusal?.code, 'invalid_arguments', big.text);
    assert.match(big.text, /^.*scale: 8 makes a \d+x\d+ image .*at most scale \d/);
    const { s, png } = await zoomed({ target: targetOf(a), region: { x: g.w - 10, y: -5, width: 50, height: 20 } });
    assert.deepEqual(s.region, { x: g.w - 10, y: 0, width: 10, height: 15 });
    assert.deepEqual([png.width, png.height], [10, 15]);
    assert.match(
      s.notes.join(' '),
      /region clamped .*region\.y -5 is above it.*region\.width reaches past its right edge/,
    );
  });

  test("the blocked app's window: zoom refused as a window that does not exist, and black where it overlaps a region [matrix x11 gtk3 zoom refused]", async () => {
    const refused = await v.call('zoom', {
      target: targetOf(hidden),
      region: { x: 0, y: 0, width: 10, height: 10 },
    });
    assert.equal(refused.structured?.refusal?.code, 'target_not_found', refused.text);
    // B's client area, where the blocked window covers part of it (per xwininfo): black there, B's pixels elsewhere.
    const gb = geometry(d, b.windowId());
    const gh = geometry(d, hidden.windowId());
    const { s, png } = await zoomed({ target: targetOf(b), region: { x: 0, y: 0, width: gb.w, height: gb.h } });
    assert.equal(s.blacked_out, 1, JSON.stringify(s));
    const inside = { x: gh.x - gb.x + 5, y: gh.y - gb.y + 5 };
    assert.ok(inside.x < gb.w && inside.y < gb.h, `the blocked window overlaps B: ${JSON.stringify({ gb, gh })}`);
    for (const [x, y] of [
      [inside.x, inside.y],
      [Math.min(gb.w, gh.x - gb.x + gh.w) - 2, Math.min(gb.h, gh.y - gb.y + gh.h) - 2],
    ])
      assert.deepEqual(pixel(png, x, y), [0, 0, 0], `(${x}, ${y}) inside the blocked window is black`);
    const colours = new Set<string>();
    for (let y = 0; y < gh.y - gb.y; y += 7) for (let x = 0; x < gb.w; x += 7) colours.add(pixel(png, x, y).join());
    assert.ok(colours.size > 2, `B's own pixels above the blocked window are shown (${colours.size} colours)`);
    // The desktop's view of the same place: black too.
    const desk = await zoomed({
      target: { kind: 'desktop' },
      region: { x: gh.x, y: gh.y, width: 40, height: 30 },
    });
    assert.equal(desk.s.blacked_out, 1);
    assert.deepEqual(pixel(desk.png, 20, 15), [0, 0, 0]);
  });

  test("get_desktop_state: openbox's stacking order, active window, frames and the pointer, the blocked app left out [matrix x11 gtk3 get_desktop_state confirmed]", async () => {
    d.x('xdotool', ['windowactivate', '--sync', String(b.windowId())]);
    d.x('xdotool', ['mousemove', '--sync', '123', '456']);
    await until(() => rootWindows(d, '_NET_ACTIVE_WINDOW')[0] === b.windowId(), 'B active per xprop', 5000);
    const r = await v.call('get_desktop_state');
    assert.equal(r.isError, false, r.text);
    const st = r.structured;
    assert.deepEqual(st.screens, [{ x: 0, y: 0, width: 1280, height: 800 }], 'Xvfb -screen 0 1280x800x24');
    const at = d.x('xdotool', ['getmouselocation', '--shell']);
    assert.deepEqual(st.cursor, { x: Number(/^X=(\d+)/m.exec(at)?.[1]), y: Number(/^Y=(\d+)/m.exec(at)?.[1]) });
    assert.deepEqual(st.cursor, { x: 123, y: 456 });
    assert.equal(st.focused_window_id, b.windowId());
    // Bottom to top as _NET_CLIENT_LIST_STACKING says, the blocked window left out.
    const stacking = rootWindows(d, '_NET_CLIENT_LIST_STACKING').filter((id) => id !== hidden.windowId());
    assert.deepEqual(
      st.windows.map((w: any) => w.window_id),
      stacking,
      `per xprop: ${stacking.join(', ')}\n${r.text}`,
    );
    assert.deepEqual(
      st.windows.map((w: any) => w.z),
      stacking.map((_, i) => i),
    );
    assert.ok(!r.text.includes('Seeing Hidden'), 'no trace of the blocked window');
    assert.match(st.policy, /not listed/);
    for (const app of [a, b]) {
      const w = st.windows.find((x: any) => x.window_id === app.windowId());
      assert.ok(w, `${app.title} listed: ${r.text}`);
      assert.equal(w.pid, app.pid);
      assert.equal(w.title, app.title);
      assert.ok(w.app.length > 0, `an app name for ${app.title}`);
      assert.deepEqual(w.frame, geometry(d, app.windowId()), `${app.title}'s frame per xwininfo`);
      assert.equal(w.focused, app === b);
    }
    // The blocked window focused: no window is said to be.
    d.x('xdotool', ['windowactivate', '--sync', String(hidden.windowId())]);
    await until(() => rootWindows(d, '_NET_ACTIVE_WINDOW')[0] === hidden.windowId(), 'the blocked window active', 5000);
    const again = await v.call('get_desktop_state');
    assert.equal(again.structured.focused_window_id, null, again.text);
    assert.ok(
      again.structured.windows.every((w: any) => !w.focused),
      again.text,
    );
  });
});
