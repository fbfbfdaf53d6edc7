// Pointer cases shared by the X11 desktop (gtk.test.ts) and the Wayland one (wayland.test.ts): the same
// bodies on each desktop's input path (XTest there, the virtual pointer and keyboard here), with the GTK
// test app's own state (test/native/app.py) as the truth.
import assert from 'node:assert/strict';
import type { Verity } from '../helpers/mcp.js';
import type { GtkApp } from './desktop.js';

export interface PointerCase {
  v: Verity;
  app: GtkApp;
  /** The app's window as a target. */
  target: () => Record<string, unknown>;
}

/** A window's full snapshot (no screenshot unless asked), and its elements found by label. */
export async function windowState(v: Verity, target: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const r = await v.call('get_window_state', { format: 'full', target, include_screenshot: false, ...extra });
  assert.equal(r.isError, false, r.text);
  const elements = r.structured.elements as Array<{
    element_token: string;
    role: string;
    label: string;
    value?: string;
    focused: boolean;
    in_web_content: boolean;
    frame: { x: number; y: number; w: number; h: number };
  }>;
  const find = (label: string) => {
    const e = elements.find((x) => x.label === label);
    assert.ok(e, `no element "${label}" in ${elements.map((x) => `${x.role}:${x.label}`).join(', ')}`);
    return e;
  };
  return { r, elements, find, token: (label: string) => find(label).element_token };
}

const snap = (c: PointerCase) => windowState(c.v, c.target());

/** A slider dragged (proven by its value), a field's text dragged across (by its selection), a button (neither). */
export async function dragCases(c: PointerCase): Promise<void> {
  const { v, app, target } = c;
  let s = await snap(c);
  const volume = s.find('Volume').frame;
  const wasVolume = app.state().volume;
  const y = volume.y + volume.h / 2;
  const slid = await v.call('drag', {
    target: target(),
    from_x: volume.x + volume.w * 0.1,
    from_y: y,
    to_x: volume.x + volume.w * 0.8,
    to_y: y,
    delivery_mode: 'foreground',
  });
  assert.equal(slid.structured.effect, 'confirmed', slid.text);
  const moved = await app.waitFor((st) => st.volume > wasVolume, 'the slider to move');
  assert.ok(
    slid.structured.evidence.some(
      (e: any) => e.kind === 'drag_state' && e.observed.includes(`after: value ${moved.volume}`),
    ),
    slid.text,
  );

  const set = await v.call('set_value', { element_token: s.token('Name'), value: 'select me please' });
  assert.equal(set.structured.effect, 'confirmed', set.text);
  s = await snap(c);
  const name = s.find('Name').frame;
  // GTK takes the first press into an unfocused entry as focusing it, not as a selection: click it first.
  await v.call('click', {
    target: target(),
    x: name.x + name.w - 10,
    y: name.y + name.h / 2,
    delivery_mode: 'foreground',
  });
  await app.waitFor((x) => x.focus === 'Name', 'the entry to take focus');
  const selected = await v.call('drag', {
    target: target(),
    from_x: name.x + 20,
    from_y: name.y + name.h / 2,
    to_x: name.x + 120,
    to_y: name.y + name.h / 2,
    delivery_mode: 'foreground',
  });
  assert.equal(selected.structured.effect, 'confirmed', selected.text);
  const st = await app.waitFor(
    (x) => x.selection.length === 2 && x.selection[1] > x.selection[0],
    'a selection in the entry',
  );
  assert.ok(
    selected.structured.evidence.some(
      (e: any) =>
        e.kind === 'drag_state' && e.observed.includes(`after: selection ${st.selection[0]}-${st.selection[1]}`),
    ),
    selected.text,
  );

  const button = s.find('Press me').frame;
  const nothing = await v.call('drag', {
    target: target(),
    from_x: button.x + 5,
    from_y: button.y + button.h / 2,
    to_x: button.x + 5,
    to_y: button.y + button.h / 2 + 2,
    delivery_mode: 'foreground',
  });
  assert.equal(nothing.structured.effect, 'unverifiable', nothing.text);
  assert.equal(nothing.structured.escalation?.target, 'verify', nothing.text);
}

/**
 * The wheel over the notes (longer than their view) moves their scroll bar, down then up, confirmed by it;
 * over the button no scroll bar moves: no_effect, and the notes stay where they were.
 */
export async function wheelCases(c: PointerCase): Promise<void> {
  const { v, app, target } = c;
  let s = await snap(c);
  const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n');
  const set = await v.call('set_value', { element_token: s.token('Notes'), value: lines });
  assert.equal(set.structured.effect, 'confirmed', set.text);
  await app.waitFor((st) => st.notes === lines, 'the notes holding 40 lines');
  try {
    s = await snap(c);
    const top = app.state().notes_scroll ?? 0;
    const down = await v.call('scroll', {
      element_token: s.token('Notes'),
      direction: 'down',
      amount: 3,
      delivery_mode: 'foreground',
    });
    assert.equal(down.structured.effect, 'confirmed', down.text);
    const scrolled = await app.waitFor((st) => (st.notes_scroll ?? 0) > top, 'the notes to scroll down');
    const up = await v.call('scroll', {
      element_token: s.token('Notes'),
      direction: 'up',
      amount: 1,
      delivery_mode: 'foreground',
    });
    assert.equal(up.structured.effect, 'confirmed', up.text);
    const back = await app.waitFor(
      (st) => (st.notes_scroll ?? 0) < scrolled.notes_scroll!,
      'the notes to scroll back up',
    );
    const button = s.find('Press me').frame;
    const still = await v.call('scroll', {
      target: target(),
      x: button.x + button.w / 2,
      y: button.y + button.h / 2,
      direction: 'down',
      delivery_mode: 'foreground',
    });
    assert.equal(still.structured.effect, 'no_effect', still.text);
    assert.equal(app.state().notes_scroll, back.notes_scroll, 'the notes did not move');
  } finally {
    await v.call('set_value', { element_token: s.token('Notes'), value: '' });
  }
}

/**
 * A ctrl+shift click on the button arrives with both held (the app reads them off the press), and a plain
 * click after it with none: the modifiers were let go. A button keeps no state: honestly unverifiable.
 */
export async function modifierClickCases(c: PointerCase): Promise<void> {
  const { v, app, target } = c;
  const s = await snap(c);
  const button = s.find('Press me').frame;
  const at = { x: button.x + button.w / 2, y: button.y + button.h / 2 };
  const clicks = app.state().clicks;
  const r = await v.call('click', {
    target: target(),
    ...at,
    modifier: ['ctrl', 'shift'],
    delivery_mode: 'foreground',
  });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.structured.effect, 'unverifiable', r.text);
  await app.waitFor(
    (st) => st.clicks === clicks + 1 && [...(st.press_mods ?? [])].sort().join('+') === 'ctrl+shift',
    'a click with ctrl and shift held',
    5000,
  );
  const plain = await v.call('click', { target: target(), ...at, delivery_mode: 'foreground' });
  assert.equal(plain.isError, false, plain.text);
  await app.waitFor(
    (st) => st.clicks === clicks + 2 && st.press_mods?.length === 0,
    'a plain click with no modifier left held',
    5000,
  );
}
