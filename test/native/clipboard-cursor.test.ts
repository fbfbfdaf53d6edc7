// The clipboard and the pointer on X11 (issue 44 items 3 and 4), under Xvfb + openbox with a GTK app:
// clipboard_write confirmed and what xclip (another X client) pastes; clipboard_read of what another client
// wrote, with a secret typed earlier into a password field masked in it; move_cursor confirmed by the
// pointer read back and checked against xdotool's own XQueryPointer, as is get_cursor_position. An xclip
// whose owner claims the selection late (as on a busy machine) still gets a confirmed write, and does not
// take the clipboard from whoever copies next.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, until, type Desktop, type GtkApp } from './desktop.js';

const missing = missingTools() ?? (existsSync('/usr/bin/xclip') ? null : '/usr/bin/xclip is missing');
let d: Desktop;
let v: Verity;
let app: GtkApp;
const SECRET = 'clip#Secret7';

before(async () => {
  if (missing) return;
  d = await startDesktop();
  app = await startApp(d, 'Verity Clipboard Form', ['--password']);
  v = await startVerity(['--caps', 'clipboard,cursor', '--allow-clipboard-read'], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

/** The X server's pointer as xdotool reads it (its own XQueryPointer). */
function xdotoolPointer(): { x: number; y: number } {
  const at = d.x('xdotool', ['getmouselocation']);
  return { x: Number(/x:(-?\d+)/.exec(at)?.[1]), y: Number(/y:(-?\d+)/.exec(at)?.[1]) };
}

/** What another X client pastes from the clipboard now ('' when nothing is offered as UTF8_STRING). */
function pasted(): string {
  try {
    return d.x('xclip', ['-selection', 'clipboard', '-o', '-t', 'UTF8_STRING']);
  } catch {
    return '';
  }
}

/**
 * Another X client owns the clipboard with `text`: xclip's forked owner claims it in its own time, so this
 * returns once a paste gives the text back.
 */
async function anotherAppCopies(text: string): Promise<void> {
  d.x('sh', ['-c', 'printf %s "$1" | xclip -selection clipboard -i >/dev/null 2>&1', 'sh', text]);
  await until(
    () => pasted() === text || null,
    () => `another client's copy of ${JSON.stringify(text)} (pasted: ${JSON.stringify(pasted())})`,
  );
}

async function elementToken(label: string): Promise<string> {
  const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
  const r = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
  assert.equal(r.isError, false, r.text);
  const el = r.structured.elements.find((e: any) => e.label === label);
  assert.ok(el, `no "${label}" in ${r.text}`);
  return el.element_token;
}

describe('X11: the clipboard', { skip: missing ?? false }, () => {
  test('clipboard_write is confirmed, and another X client pastes exactly that text [matrix x11 any clipboard_write confirmed]', async () => {
    const text = 'Verity ✓ clipboard\nline two';
    const r = await v.call('clipboard_write', { text });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.evidence[0].kind, 'clipboard_read_back', r.text);
    assert.equal(d.x('xclip', ['-selection', 'clipboard', '-o', '-t', 'UTF8_STRING']), text);
    assert.match(d.x('xclip', ['-selection', 'clipboard', '-o', '-t', 'TARGETS']), /UTF8_STRING/);
  });

  test('clipboard_read returns what another client copied, with the types it offers [matrix x11 any clipboard_read confirmed]', async () => {
    await anotherAppCopies('copied elsewhere: 42');
    const r = await v.call('clipboard_read', {});
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.text, 'copied elsewhere: 42', r.text);
    assert.ok(r.structured.types.includes('UTF8_STRING'), r.text);
  });

  test('a secret typed into a password field never comes back through clipboard_read', async () => {
    const typed = await v.call('type_text', { element_token: await elementToken('Secret'), text: SECRET });
    await app.waitFor((s) => s.secret === SECRET, 'the typed secret');
    assert.ok(!(JSON.stringify(typed.structured) + typed.text).includes(SECRET), typed.text);
    await anotherAppCopies(`the password is ${SECRET}`);
    const r = await v.call('clipboard_read', {});
    assert.equal(r.isError, false, r.text);
    assert.ok(!(JSON.stringify(r.structured) + r.text).includes(SECRET), `the secret came back: ${r.text}`);
    assert.match(r.structured.text, /^the password is /, r.text);
  });
});

describe('X11: the clipboard, its owner late', { skip: missing ?? false }, () => {
  test('an owner that claims the clipboard 400 ms after xclip exits: the write waits for it, confirmed, and takes nothing from the next copy', async () => {
    // An xclip in PATH whose copy is made by a second xclip started 400 ms later: what a busy machine does
    // to the owner the real one forks, which sends its claim only when it first runs.
    const bin = mkdtempSync(join(tmpdir(), 'verity-late-xclip-'));
    writeFileSync(
      join(bin, 'xclip'),
      `#!/bin/sh
case " $* " in *" -i "*)
  data=$(mktemp); cat > "$data"
  ( sleep 0.4; /usr/bin/xclip "$@" < "$data"; rm -f "$data"; touch "$0.claimed" ) >/dev/null 2>&1 &
  exit 0;;
esac
exec /usr/bin/xclip "$@"
`,
    );
    chmodSync(join(bin, 'xclip'), 0o755);
    const late = await startVerity(['--caps', 'clipboard', '--allow-clipboard-read'], {
      ...d.env,
      PATH: `${bin}:${d.env.PATH ?? process.env.PATH}`,
    });
    try {
      await anotherAppCopies('before the write');
      const text = 'written by a late owner';
      const r = await late.call('clipboard_write', { text });
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.equal(pasted(), text);
      // The owner is in place when the write returns: the next copy is not taken back from its owner.
      // The late owner's claim is made (the wrapper marks it) before the next copy: nothing of it is still to come.
      await until(() => existsSync(join(bin, 'xclip.claimed')) || null, "the late owner's claim");
      await anotherAppCopies('copied after it');
      assert.equal(pasted(), 'copied after it', 'the next copy stays');
    } finally {
      await late.close();
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe('X11: the pointer', { skip: missing ?? false }, () => {
  test('move_cursor to a point of a window: confirmed, where xdotool finds the pointer [matrix x11 any move_cursor confirmed]', async () => {
    const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
    const r = await v.call('move_cursor', { target, x: 17, y: 23 });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const read = r.structured.evidence.find((e: any) => e.kind === 'pointer_position');
    assert.ok(read, r.text);
    const at = xdotoolPointer();
    assert.deepEqual(read.observed, at, r.text);
    const windows = await v.call('list_windows');
    const w = windows.structured.windows.find((x: any) => x.window_id === app.windowId());
    assert.ok(Math.abs(at.x - (w.bounds.x + 17)) <= 1 && Math.abs(at.y - (w.bounds.y + 23)) <= 1, JSON.stringify(w));
  });

  test('move_cursor onto an element: confirmed, the pointer inside its frame [matrix x11 gtk3 move_cursor confirmed]', async () => {
    const r = await v.call('move_cursor', { element_token: await elementToken('Press me') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const read = r.structured.evidence.find((e: any) => e.kind === 'pointer_position');
    assert.deepEqual(read.observed, xdotoolPointer(), r.text);
  });

  test('get_cursor_position says where xdotool finds the pointer [matrix x11 any get_cursor_position confirmed]', async () => {
    d.x('xdotool', ['mousemove', '101', '57']);
    const r = await v.call('get_cursor_position', {});
    assert.equal(r.isError, false, r.text);
    assert.deepEqual(r.structured, xdotoolPointer());
    assert.deepEqual(r.structured, { x: 101, y: 57 });
  });
});
