// The form cases every toolkit with an AT-SPI tree passes (GTK 4 and Qt 5 on X11 in toolkits.test.ts, GTK 4
// under sway in wayland.test.ts): every widget listed with a frame inside the window, non-ASCII and
// multi-line text typed exactly, values set and clicks proven, each against the app's own state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Verity } from '../helpers/mcp.js';
import type { GtkApp } from './desktop.js';

const TEXT = 'Grüße 😀 世界 مرحبا café';

type El = {
  element_token: string;
  role: string;
  label: string;
  value?: string;
  frame: { x: number; y: number; w: number; h: number };
};

/**
 * Registers the cases in the caller's describe; `form` gives Verity, the app and its window as a target. `env`
 * and `toolkit` are where they run, as the counted matrix names them (docs/action-matrix.md): each case's
 * title carries the rows it proves there.
 */
export function formCases(
  env: 'x11' | 'sway',
  toolkit: 'gtk4' | 'qt5',
  form: () => { v: Verity; app: GtkApp; target: Record<string, unknown> },
): void {
  const row = (action: string, outcome: string) => `[matrix ${env} ${toolkit} ${action} ${outcome}]`;
  const app = () => form().app;
  const win = () => form().target;
  const v = () => form().v;
  async function snap(extra: Record<string, unknown> = {}) {
    // Qt and GTK 4 build their trees as the window shows: the first snapshot may come before.
    let r = await v().call('get_window_state', { format: 'full', target: win(), include_screenshot: false, ...extra });
    for (let i = 0; i < 20 && !r.isError && (r.structured.elements as El[]).length < 8; i++) {
      await new Promise((res) => setTimeout(res, 250));
      r = await v().call('get_window_state', { format: 'full', target: win(), include_screenshot: false, ...extra });
    }
    assert.equal(r.isError, false, r.text);
    const elements = r.structured.elements as El[];
    const find = (label: string, role?: string) => {
      const e = elements.find((x) => (role ? x.role === role : true) && (label ? x.label === label : true));
      assert.ok(
        e,
        `no element "${label}" ${role ?? ''} in ${elements.map((x) => `${x.role}:${x.label}`).join(', ')} (target ${JSON.stringify(r.structured.target)})`,
      );
      return e;
    };
    return { r, elements, find };
  }

  test(`every widget is listed with a token and a frame inside the window ${row('get_window_state', 'confirmed')}`, async () => {
    const { r, find } = await snap();
    const s = r.structured;
    const widgets = [
      find('Name', 'text'),
      find('Notes', 'text'),
      find('Subscribe', 'check box'),
      find('Press me', 'push button'),
      find('', 'combo box'),
      find('Count', 'spin button'),
      find('Volume', 'slider'),
    ];
    for (const e of widgets) {
      assert.ok(e.element_token, JSON.stringify(e));
      assert.ok(
        e.frame.w > 0 &&
          e.frame.h > 0 &&
          e.frame.x >= 0 &&
          e.frame.y >= 0 &&
          e.frame.x + e.frame.w <= s.screenshot_width &&
          e.frame.y + e.frame.h <= s.screenshot_height,
        `${e.role} "${e.label}" ${JSON.stringify(e.frame)} inside ${s.screenshot_width}x${s.screenshot_height}`,
      );
    }
    // In the order the form lays them out, top to bottom: frames in the window's pixels, not all at one corner.
    const ys = widgets.map((e) => e.frame.y);
    assert.deepEqual(
      [...ys].sort((a, b) => a - b),
      ys,
      ys.join(' '),
    );
    assert.equal(find('Name', 'text').value, app().state().entry);
  });

  test(`type_text: non-ASCII (accents, emoji, CJK, RTL) goes in exactly, confirmed only when the app holds it ${row('type_text', 'confirmed')}`, async () => {
    const { find } = await snap();
    const r = await v().call('type_text', { element_token: find('Name', 'text').element_token, text: TEXT });
    const held = (await app().waitFor((st) => st.entry.length >= TEXT.length, 'the entry to take the text')).entry;
    assert.equal(held, TEXT, `the app holds ${JSON.stringify(held)}`);
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.route, 'accessibility');
    const again = await v().call('type_text', {
      element_token: (await snap()).find('Name', 'text').element_token,
      text: ' ✓',
    });
    assert.equal(again.structured.effect, 'confirmed', again.text);
    assert.equal((await app().waitFor((st) => st.entry === TEXT + ' ✓', 'the appended text')).entry, TEXT + ' ✓');
  });

  test(`type_text: a multi-line field keeps its newlines ${row('type_text', 'confirmed')}`, async () => {
    const { find } = await snap();
    const text = 'one\nzwei 二\n\nvier';
    const r = await v().call('type_text', { element_token: find('Notes', 'text').element_token, text });
    await app().waitFor((st) => st.notes === text, 'the notes');
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });

  test(`set_value: spin box and slider by Value, combo box by its option, each proven by the app ${row('set_value', 'confirmed')} ${row('set_value', 'refused')}`, async () => {
    const { find } = await snap();
    const spin = await v().call('set_value', {
      element_token: find('Count', 'spin button').element_token,
      value: '42',
    });
    assert.equal(spin.structured.effect, 'confirmed', spin.text);
    await app().waitFor((st) => st.count === 42, 'count = 42');
    const slider = await v().call('set_value', { element_token: find('Volume', 'slider').element_token, value: '64' });
    assert.equal(slider.structured.effect, 'confirmed', slider.text);
    await app().waitFor((st) => st.volume === 64, 'volume = 64');
    const combo = await v().call('set_value', { element_token: find('', 'combo box').element_token, value: 'Blue' });
    assert.equal(combo.structured.effect, 'confirmed', combo.text);
    await app().waitFor((st) => st.combo === 'Blue', 'combo = Blue');
    const none = await v().call('set_value', {
      element_token: (await snap()).find('', 'combo box').element_token,
      value: 'Purple',
    });
    assert.equal(none.structured.refusal?.code, 'no_such_option', none.text);
    assert.equal(app().state().combo, 'Blue');
  });

  test(`click on a check box is proven by its state read back ${row('click', 'confirmed')}`, async () => {
    const { find } = await snap();
    const was = app().state().checked;
    const r = await v().call('click', { element_token: find('Subscribe', 'check box').element_token });
    await app().waitFor((st) => st.checked === !was, 'the toggled check box');
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });

  test(`a click by pixels on a check box's label is proven by the check box's state ${row('click', 'confirmed')}`, async () => {
    const { find } = await snap();
    const box = find('Subscribe', 'check box');
    const was = app().state().checked;
    // Its text, to the right of the indicator: GTK 4 reports a label there (a part of the check box).
    const r = await v().call('click', {
      target: win(),
      x: box.frame.x + box.frame.w / 4,
      y: box.frame.y + box.frame.h / 2,
      delivery_mode: 'foreground',
    });
    await app().waitFor((st) => st.checked === !was, 'the toggled check box');
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });

  // An agent looks for the combo box by its name, "Colour": Qt says a combo box's current text where its
  // name belongs, so it was listed as combo box 'Red' and "Colour" found only the label beside it.
  test(`each element is listed under its name, its value apart: combo box 'Colour' and slider 'Volume', set by the tokens found by those names ${row('get_window_state', 'confirmed')} ${row('set_value', 'confirmed')}`, async () => {
    const { find } = await snap();
    const combo = find('Colour', 'combo box');
    assert.equal(combo.value, app().state().combo, JSON.stringify(combo));
    const slider = find('Volume', 'slider');
    assert.equal(Number(slider.value), app().state().volume, JSON.stringify(slider));
    const colour = combo.value === 'Green' ? 'Red' : 'Green';
    const set = await v().call('set_value', { element_token: combo.element_token, value: colour });
    assert.equal(set.structured.effect, 'confirmed', set.text);
    await app().waitFor((st) => st.combo === colour, `combo = ${colour}`);
    const volume = app().state().volume === 30 ? 31 : 30;
    const slid = await v().call('set_value', { element_token: slider.element_token, value: String(volume) });
    assert.equal(slid.structured.effect, 'confirmed', slid.text);
    await app().waitFor((st) => st.volume === volume, `volume = ${volume}`);
    const now = await snap();
    assert.equal(now.find('Colour', 'combo box').value, colour, 'listed under its name with its new value');
    assert.equal(now.find('Volume', 'slider').value, String(volume));
  });
}
