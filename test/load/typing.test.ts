// The load tier's typing check (issue 42 item 2): text with ASCII and characters the keyboard map lacks,
// typed into each toolkit's test app at least RUNS times while stress-ng keeps every core busy (run only by
// `node scripts/run-tests.mjs --load`, npm run test:load). Each run first clicks the app's button by pixels
// (the focus leaves the field, as in the case that lost 'swing ' of 'swing é' under load), then types by
// pixels into the field: the click, the focus change and the keyboard map change all come right before the
// keys. What each app itself holds is read back (its own JSON state); every character typed and not held is
// counted lost, and none may be.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import {
  missingTools,
  missingToolkit,
  startApp,
  startDesktop,
  type Desktop,
  type GtkApp,
  type Toolkit,
} from '../native/desktop.js';

const RUNS = 10;
// Qt first: started right after the GTK 4 app, Qt's AT-SPI bridge at times never registered (toolkits.test.ts).
const TOOLKITS: Toolkit[] = ['qt', 'gtk4', 'gtk3', 'tk', 'swing'];

let d: Desktop;
let v: Verity;
before(async () => {
  if (missingTools()) return;
  d = await startDesktop();
  v = await startVerity([], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

type El = { label: string; role: string; frame: { x: number; y: number; w: number; h: number } };
const centre = (f: El['frame']) => ({ x: Math.round(f.x + f.w / 2), y: Math.round(f.y + f.h / 2) });

/** How many characters of `typed` are not in `got`, in order (what the app lost of them). */
function lost(typed: string, got: string): number {
  const a = Array.from(typed),
    b = Array.from(got);
  // Longest common subsequence: characters typed and held, in order.
  let row = new Array<number>(b.length + 1).fill(0);
  for (const ch of a) {
    const next = [0];
    for (let j = 1; j <= b.length; j++) next[j] = ch === b[j - 1] ? row[j - 1] + 1 : Math.max(row[j], next[j - 1]);
    row = next;
  }
  return a.length - row[b.length];
}

/** Where the app's field and button are, in the window's screenshot pixels. */
async function places(
  toolkit: Toolkit,
  app: GtkApp,
): Promise<{ field: { x: number; y: number }; button: { x: number; y: number } }> {
  if (toolkit === 'tk' || toolkit === 'swing') {
    // Swing places them as app_tk.py does (AppSwing.java); Tk reports where it drew its button.
    const button =
      toolkit === 'tk'
        ? (await app.waitFor((st) => !!st.button, 'the button to be drawn')).button!
        : [150, 50, 120, 30];
    return { field: { x: 200, y: 20 }, button: centre({ x: button[0], y: button[1], w: button[2], h: button[3] }) };
  }
  const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
  let els: El[] = [];
  for (
    let i = 0;
    i < 40 && !(els.some((e) => e.label === 'Name' && e.role === 'text') && els.some((e) => e.label === 'Press me'));
    i++
  ) {
    if (i) await new Promise((r) => setTimeout(r, 250));
    const r = await v.call('get_window_state', { format: 'full', target, include_screenshot: false });
    els = (r.structured.elements ?? []) as El[];
  }
  const field = els.find((e) => e.label === 'Name' && e.role === 'text');
  const button = els.find((e) => e.label === 'Press me');
  assert.ok(
    field && button,
    `the field and button of ${toolkit}: ${els.map((e) => `${e.role}:${e.label}`).join(', ')}`,
  );
  return { field: centre(field.frame), button: centre(button.frame) };
}

describe('typing under load: no character lost, per toolkit', { skip: missingTools() ?? false }, () => {
  for (const toolkit of TOOLKITS) {
    test(`${toolkit}: ${RUNS} runs of ASCII and non-ASCII text typed by pixels right after a click elsewhere`, {
      skip: missingToolkit(toolkit) ?? false,
    }, async () => {
      const app = await startApp(d, `Verity load ${toolkit}`, [], toolkit);
      try {
        const target = { kind: 'window', pid: app.pid, window_id: app.windowId() };
        const { field, button } = await places(toolkit, app);
        let typed = 0,
          missing = 0;
        const misses: string[] = [];
        for (let i = 0; i < RUNS; i++) {
          const was = app.state().entry;
          const text = `${toolkit} é ñ∆ ok ${40 + i} `;
          const away = await v.call('click', { target, ...button, delivery_mode: 'foreground' });
          assert.equal(away.isError, false, away.text);
          const r = await v.call('type_text', { target, ...field, text, delivery_mode: 'foreground' });
          assert.equal(r.isError, false, r.text);
          const held = await app
            .waitFor((st) => st.entry === was + text, `run ${i + 1}'s text`, 10_000)
            .then((st) => st.entry)
            .catch(() => app.state().entry);
          const got = held.startsWith(was) ? held.slice(was.length) : held;
          const n = lost(text, got);
          typed += Array.from(text).length;
          missing += n;
          if (n)
            misses.push(
              `run ${i + 1}: typed ${JSON.stringify(text)}, the app holds ${JSON.stringify(got)} (settle ${JSON.stringify(r.structured.timings_ms)})`,
            );
        }
        process.stdout.write(`# load typing: ${toolkit} ${RUNS} runs, ${typed} chars typed, ${missing} lost\n`);
        assert.equal(missing, 0, misses.join('\n'));
      } finally {
        await app.kill();
      }
    });
  }
});
