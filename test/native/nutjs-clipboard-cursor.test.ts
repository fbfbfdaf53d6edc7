// The clipboard and the pointer through the nutjs backend (--native-backend nutjs) under Xvfb: move_cursor
// confirmed by nut-js's mouse position and checked against xdotool's XQueryPointer, get_cursor_position
// likewise, and nut-js's own clipboard written (confirmed, pasted exactly by xclip) and read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, type Desktop, type GtkApp } from './desktop.js';

const missing = missingTools() ?? (existsSync('/usr/bin/xclip') ? null : '/usr/bin/xclip is missing');
let d: Desktop;
let app: GtkApp;
let nut: Verity;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  app = await startApp(d, 'Verity Nut Pointer');
  nut = await startVerity(['--native-backend', 'nutjs', '--caps', 'clipboard,cursor', '--allow-clipboard-read'], d.env);
});
after(async () => {
  await nut?.close();
  await d?.close();
});

function xdotoolPointer(): { x: number; y: number } {
  const at = d.x('xdotool', ['getmouselocation']);
  return { x: Number(/x:(-?\d+)/.exec(at)?.[1]), y: Number(/y:(-?\d+)/.exec(at)?.[1]) };
}

describe('nutjs backend: pointer and clipboard', { skip: missing ?? false }, () => {
  test('move_cursor to a point of a window: confirmed by the pointer read back, where xdotool finds it [matrix nutjs any move_cursor confirmed]', async () => {
    const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
    const r = await nut.call('move_cursor', { target, x: 31, y: 19 });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const read = r.structured.evidence.find((e: any) => e.kind === 'pointer_position');
    assert.deepEqual(read?.observed, xdotoolPointer(), r.text);
  });

  test('get_cursor_position says where xdotool put the pointer [matrix nutjs any get_cursor_position confirmed]', async () => {
    d.x('xdotool', ['mousemove', '77', '88']);
    const r = await nut.call('get_cursor_position', {});
    assert.deepEqual(r.structured, { x: 77, y: 88 }, r.text);
  });

  test("clipboard_write through nut-js is confirmed and xclip pastes it; clipboard_read reads another client's copy [matrix nutjs any clipboard_write confirmed] [matrix nutjs any clipboard_read confirmed]", async () => {
    const r = await nut.call('clipboard_write', { text: 'nut clipboard 5' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(d.x('xclip', ['-selection', 'clipboard', '-o']), 'nut clipboard 5');
    d.x('sh', ['-c', 'printf %s "$1" | xclip -selection clipboard -i >/dev/null 2>&1', 'sh', 'from xclip 6']);
    const read = await nut.call('clipboard_read', {});
    assert.equal(read.structured.text, 'from xclip 6', read.text);
  });
});
