// The portable native backend (--native-backend nutjs, #27) under Xvfb with openbox and the real GTK app:
// windows listed from X11, a screenshot and no elements, a click at screenshot pixels that lands exactly
// once and typed text that lands exactly (the app's own state is the truth), every verdict unverifiable
// with an escalation, a character nut-js cannot type refused before anything is sent, and a server whose
// X server goes away keeps serving (nut-js runs in a child process). Element frames for aiming come from a
// second server on the default (AT-SPI) backend, which is also checked to be unchanged.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, stop, until, type Desktop, type GtkApp } from './desktop.js';

const missing = missingTools();
let d: Desktop;
let app: GtkApp;
let nut: Verity;
let atspi: Verity;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  app = await startApp(d, 'Verity Nut');
  nut = await startVerity(['--native-backend', 'nutjs'], d.env);
  atspi = await startVerity([], d.env);
});
after(async () => {
  await nut?.close();
  await atspi?.close();
  await d?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const target = () => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });

/** The centre of an element, in the window's screenshot pixels, as the AT-SPI backend frames it. */
async function centreOf(label: string): Promise<{ x: number; y: number }> {
  const snap = await atspi.call('get_window_state', { format: 'full', target: target(), include_screenshot: false });
  assert.equal(snap.isError, false, snap.text);
  const el = snap.structured.elements.find((e: any) => e.label === label);
  assert.ok(el, `no "${label}" in ${snap.text}`);
  return { x: Math.round(el.frame.x + el.frame.w / 2), y: Math.round(el.frame.y + el.frame.h / 2) };
}

function assertUnverifiable(r: { structured: any; text: string }) {
  assert.equal(r.structured.effect, 'unverifiable', r.text);
  assert.equal(r.structured.escalation?.target, 'verify', r.text);
  assert.match(r.structured.escalation.reason, /get_window_state/, r.text);
  assert.equal(r.structured.route, 'pixel', r.text);
}

describe('native backend nutjs', { skip: missing ?? false }, () => {
  test('list_windows lists the app window with its title and pid (from X11) [matrix nutjs any list_windows confirmed]', async () => {
    const r = await nut.call('list_windows');
    assert.equal(r.isError, false, r.text);
    const w = r.structured.windows.find((x: any) => x.window_id === app.windowId());
    assert.ok(w, r.text);
    assert.equal(w.title, 'Verity Nut');
    assert.equal(w.pid, app.pid);
    const apps = await nut.call('list_apps');
    const entry = apps.structured.apps.find((a: any) => a.pid === app.pid);
    assert.ok(entry, apps.text);
    assert.equal(entry.accessibility, false, 'the nutjs backend reads no accessibility tree');
  });

  test('get_window_state: a screenshot of the window and no element tokens, saying why', async () => {
    const r = await nut.call('get_window_state', { format: 'full', target: target() });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.images, 1, r.text);
    assert.equal(r.structured.elements.length, 0, r.text);
    assert.equal(r.structured.elements_complete, false, r.text);
    assert.match(r.structured.incomplete, /nutjs .*pixels only/, r.text);
    const w = (await nut.call('list_windows')).structured.windows.find((x: any) => x.window_id === app.windowId());
    assert.equal(r.structured.screenshot_width, w.bounds.w, 'Xvfb has scale 1: the window at its own size');
    assert.equal(r.structured.screenshot_height, w.bounds.h);
  });

  test("the screenshot's colours are in order (nut-js gives BGRA): a red window is red", async () => {
    // A Tk window of one colour (python3-tk is part of the native test stack; ImageMagick's display is not).
    const red = d.spawn('/usr/bin/python3', [
      '-c',
      "import tkinter as t; r = t.Tk(); r.title('Nut Red'); r.geometry('120x90'); r.configure(bg='#ff0000'); r.mainloop()",
    ]);
    try {
      const id = await until(() => {
        try {
          return Number(d.x('xdotool', ['search', '--onlyvisible', '--name', '^Nut Red$']).split('\n')[0]);
        } catch {
          return 0;
        }
      }, 'the red Tk window');
      const shot = (await nut.client.callTool({
        name: 'get_window_state',
        arguments: { target: { kind: 'window', pid: red.pid, window_id: id }, include_screenshot: true },
      })) as { content: Array<{ type: string; data?: string }>; structuredContent?: any };
      const image = shot.content.find((c) => c.type === 'image');
      assert.ok(image?.data, JSON.stringify(shot.structuredContent));
      const png = PNG.sync.read(Buffer.from(image.data, 'base64'));
      const at = (Math.floor(png.height / 2) * png.width + Math.floor(png.width / 2)) * 4;
      assert.deepEqual([...png.data.subarray(at, at + 4)], [255, 0, 0, 255]);
    } finally {
      await stop(red.pid);
    }
  });

  test('a click at screenshot pixels lands on the button exactly once; the verdict is unverifiable [matrix nutjs any click unverifiable]', async () => {
    await nut.call('get_window_state', { format: 'full', target: target(), include_screenshot: true });
    const at = await centreOf('Press me');
    const clicks = app.state().clicks;
    const r = await nut.call('click', { target: target(), ...at });
    assertUnverifiable(r);
    assert.match(JSON.stringify(r.structured.evidence), /window origin/, r.text);
    await app.waitFor((s) => s.clicks === clicks + 1, 'one click', 5000);
    await sleep(300);
    assert.equal(app.state().clicks, clicks + 1, 'exactly one click landed');
  });

  test('typed text lands exactly in the focused field; press_key too; both unverifiable [matrix nutjs any type_text unverifiable] [matrix nutjs any press_key unverifiable] [matrix nutjs any hotkey unverifiable]', async () => {
    const field = await centreOf('Name');
    await nut.call('get_window_state', { format: 'full', target: target(), include_screenshot: false });
    const click = await nut.call('click', { target: target(), ...field });
    assertUnverifiable(click);
    await app.waitFor((s) => s.focus === 'Name', 'the Name field focused', 5000);
    const before = app.state().entry;
    const text = 'Hello, nut 42! ~{x}';
    const r = await nut.call('type_text', { target: target(), text, delay_ms: 0 });
    assertUnverifiable(r);
    assert.equal(r.structured.delivery.delivered_count, text.length, r.text);
    await app.waitFor((s) => s.entry === before + text, `the entry to hold ${JSON.stringify(before + text)}`, 10_000);
    const back = await nut.call('press_key', { target: target(), key: 'Backspace' });
    assertUnverifiable(back);
    await app.waitFor((s) => s.entry === (before + text).slice(0, -1), 'one character erased', 5000);
    // A hotkey holds its modifiers: ctrl+a selects the entry's text, and what is typed next replaces it.
    const all = await nut.call('hotkey', { target: target(), keys: ['ctrl', 'a'] });
    assertUnverifiable(all);
    assertUnverifiable(await nut.call('type_text', { target: target(), text: 'Z', delay_ms: 0 }));
    await app.waitFor((s) => s.entry === 'Z', 'the entry replaced by "Z"', 5000);
    // The px form of type_text clicks the field first: the Notes view takes the text, the entry keeps its own.
    const entry = app.state().entry;
    const notes = await centreOf('Notes');
    const px = await nut.call('type_text', { target: target(), ...notes, text: 'in notes', delay_ms: 0 });
    assertUnverifiable(px);
    assert.match(JSON.stringify(px.structured.evidence), /clicked at screen/, px.text);
    await app.waitFor((s) => s.notes.endsWith('in notes'), 'the notes to end with the text', 10_000);
    assert.equal(app.state().entry, entry);
  });

  test('a character nut-js cannot type is refused before the first one is sent [matrix nutjs any type_text refused]', async () => {
    const before = app.state().entry;
    const r = await nut.call('type_text', { target: target(), text: 'abc Grüße' });
    assert.equal(r.structured.refusal?.code, 'text_not_deliverable', r.text);
    assert.match(r.text, /U\+00FC/);
    assert.match(r.text, /nothing was typed/);
    await sleep(300);
    assert.equal(app.state().entry, before, 'not even "abc" was sent');
  });

  test('a point outside the screenshot and set_value are refused, naming the field', async () => {
    await nut.call('get_window_state', { format: 'full', target: target(), include_screenshot: false });
    const r = await nut.call('click', { target: target(), x: 50_000, y: 5 });
    assert.equal(r.structured.refusal?.code, 'invalid_arguments', r.text);
    assert.match(r.text, /x, y/);
    const hover = await nut.call('hover', { target: target(), ...(await centreOf('Subscribe')) });
    assertUnverifiable(hover);
  });

  test('the default backend on the same desktop still lists elements', async () => {
    const snap = await atspi.call('get_window_state', { format: 'full', target: target(), include_screenshot: false });
    assert.ok(snap.structured.elements.length > 3, snap.text);
  });

  test('the X server going away under a running server: calls are refused, the server keeps serving', async () => {
    const doomed = await startDesktop();
    let v: Verity | undefined;
    try {
      const doomedApp = await startApp(doomed, 'Doomed Nut');
      v = await startVerity(['--native-backend', 'nutjs'], doomed.env);
      const t = { kind: 'window', pid: doomedApp.pid, window_id: doomedApp.windowId() };
      const shot = await v.call('get_window_state', { format: 'full', target: t });
      assert.equal(shot.images, 1, shot.text); // nut-js's helper now holds an X connection
      await doomed.close();
      for (const [tool, args] of [
        ['get_window_state', { format: 'full', target: { kind: 'desktop' } }],
        ['click', { target: { kind: 'desktop' }, x: 5, y: 5 }],
        ['type_text', { target: { kind: 'desktop' }, text: 'x' }],
      ] as const) {
        const r = await v.call(tool, args);
        assert.equal(r.structured.refusal?.code, 'unavailable', `${tool}: ${r.text}`);
      }
      process.kill(v.pid, 0); // still running
      const alive = await v.call('get_session', {});
      assert.equal(alive.isError, false, alive.text);
    } finally {
      await v?.close();
      await doomed.close();
    }
  });

  test("the operator's app policy holds: a refused app's window is not listed, not shot, not clicked", async () => {
    const refusedApp = await startApp(d, 'Nut Refused');
    const dir = mkdtempSync(join(tmpdir(), 'verity-nutjs-policy-'));
    let v: Verity | undefined;
    try {
      d.x('xdotool', ['windowmove', '--sync', String(app.windowId()), '0', '0']);
      d.x('xdotool', ['windowmove', '--sync', String(refusedApp.windowId()), '640', '0']);
      const policy = join(dir, 'policy.json');
      writeFileSync(policy, JSON.stringify({ allowed_apps: ['*Verity Nut'] }));
      v = await startVerity(['--native-backend', 'nutjs', '--policy', policy], d.env);
      const listed = await v.call('list_windows');
      const ids = listed.structured.windows.map((w: any) => w.window_id);
      assert.ok(ids.includes(app.windowId()), listed.text);
      assert.ok(!ids.includes(refusedApp.windowId()), listed.text);
      const shot = await v.call('get_window_state', {
        target: { kind: 'window', pid: refusedApp.pid, window_id: refusedApp.windowId() },
      });
      assert.equal(shot.structured.refusal?.code, 'target_not_found', shot.text);
      const all = (await nut.call('list_windows')).structured.windows;
      const w = all.find((x: any) => x.window_id === refusedApp.windowId());
      const own = all.find((x: any) => x.window_id === app.windowId());
      // The desktop's screenshot shows the allowed window and a black rectangle where the refused one is.
      const desktop = (await v.client.callTool({
        name: 'get_window_state',
        arguments: { target: { kind: 'desktop' }, include_screenshot: true },
      })) as { content: Array<{ type: string; data?: string }> };
      const image = desktop.content.find((c) => c.type === 'image');
      assert.ok(image?.data, 'a desktop screenshot');
      const png = PNG.sync.read(Buffer.from(image.data, 'base64'));
      const pixel = (x: number, y: number) => [
        ...png.data.subarray((y * png.width + x) * 4, (y * png.width + x) * 4 + 4),
      ];
      const mid = (b: any) => [b.x + Math.round(b.w / 2), b.y + Math.round(b.h / 2)] as const;
      assert.deepEqual(pixel(...mid(w.bounds)), [0, 0, 0, 255], 'the refused window is blacked out');
      assert.notDeepEqual(pixel(...mid(own.bounds)), [0, 0, 0, 255], 'the allowed window shows');
      // GTK's default window background is light grey: red, green and blue close together, not swapped noise.
      const [r, g, b] = pixel(own.bounds.x + 3, own.bounds.y + own.bounds.h - 3);
      assert.ok(
        r > 150 && Math.abs(r - g) < 20 && Math.abs(g - b) < 20,
        `a light grey window corner, got ${[r, g, b]}`,
      );
      const click = await v.call('click', {
        target: { kind: 'desktop' },
        x: w.bounds.x + Math.round(w.bounds.w / 2),
        y: w.bounds.y + Math.round(w.bounds.h / 2),
      });
      assert.equal(click.structured.refusal?.code, 'not_permitted', click.text);
      await sleep(300);
      assert.equal(refusedApp.state().clicks, 0, 'nothing reached the refused app');
    } finally {
      await v?.close();
      await refusedApp.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
