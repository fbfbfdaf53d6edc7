// Pointer, key, value, scroll and drag actions on the browser route. Each case asserts the page's own
// state (its counters and fields, read over an independent CDP connection) and the reported effect.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

const evidenceText = (r: { structured: any }) => JSON.stringify(r.structured.evidence ?? []);

describe('click', () => {
  test('a button: confirmed, and the page counted exactly one click', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('click', { element_token: snap.token('Increment') });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.route, 'dom');
    assert.match(evidenceText(r), /click/);
    const m = await s.model(page);
    assert.equal(m.clicks, 1);
    assert.equal(await page.$eval('#count', (el) => el.textContent), '1');
  });

  test('a covered button is refused with element_covered naming the overlay; nothing is clicked', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('click', { element_token: snap.token('Covered') });
    assert.equal(r.isError, true);
    assert.equal(r.structured.status, 'refused', r.text);
    assert.equal(r.structured.refusal.code, 'element_covered');
    assert.match(r.structured.refusal.message, /overlay/);
    assert.match(String(r.structured.refusal.covering_element), /overlay/);
    const m = await s.model(page);
    assert.equal(m.coveredClicks, 0);
    assert.equal(m.overlayClicks, 0);
  });

  test('element_covered names the cover by role and name, with its token, in the text (all an error shows the model)', async () => {
    const page = await s.open('covered.html');
    const snap = await s.snapshot(s.v);
    const accept = snap.token('Accept cookies');
    const r = await s.v.call('click', { element_token: snap.token('Buy') });
    assert.equal(r.isError, true);
    assert.equal(r.structured.refusal.code, 'element_covered', r.text);
    assert.match(r.text, /covered by button 'Accept cookies'/);
    assert.ok(r.text.includes(`element_token ${accept}`), r.text);
    assert.equal(r.structured.refusal.covering_element_token, accept);
    assert.equal(r.structured.refusal.covering_role, 'button');
    assert.deepEqual(await s.model(page), { bought: 0, accepted: 0 });
    // The named token is the way out: click it, then the covered button.
    const out = await s.v.call('click', { element_token: accept });
    assert.equal(out.structured.effect, 'confirmed', out.text);
    const buy = await s.v.call('click', { element_token: (await s.snapshot(s.v)).token('Buy') });
    assert.equal(buy.structured.effect, 'confirmed', buy.text);
    assert.deepEqual(await s.model(page), { bought: 1, accepted: 1 });
  });

  test('a cover that is not listed is named by role and name, and said to have no token', async () => {
    await s.open('plain.html');
    const r = await s.v.call('click', { element_token: (await s.snapshot(s.v)).token('Covered') });
    assert.equal(r.structured.refusal.code, 'element_covered', r.text);
    assert.match(r.text, /covered by generic 'overlay' \(not listed in the latest snapshot; div#overlay/);
    assert.equal(r.structured.refusal.covering_element_token, undefined);
  });

  test('an element clickable only through a delegated listener (a pointer cursor) is listed once and clicked', async () => {
    const page = await s.open('clicks.html');
    const snap = await s.snapshot(s.v);
    const cards = snap.elements.filter((e) => /Add/.test(e.label));
    assert.equal(cards.length, 1, JSON.stringify(cards));
    assert.match(cards[0].label, /Add to cart/);
    const r = await s.v.call('click', { element_token: cards[0].element_token });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await s.model(page)).card, 1);
  });

  test('a button moved by a CSS transition after the snapshot is re-resolved and clicked', async () => {
    const page = await s.open('clicks.html');
    const snap = await s.snapshot(s.v);
    const slide = snap.token('Slide');
    await page.evaluate('window.__move()'); // starts the transition; a decoy takes the old place
    const r = await s.v.call('click', { element_token: slide });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const m = await s.model(page);
    assert.equal(m.slide, 1);
    assert.equal(m.decoys, 0);
  });

  test('a button moved by a timer after the snapshot is clicked where it is now, not where it was', async () => {
    const page = await s.open('clicks.html');
    const snap = await s.snapshot(s.v);
    const jump = snap.token('Jump');
    await page.evaluate('window.__move()');
    await page.waitForFunction('window.__moved === true');
    const r = await s.v.call('click', { element_token: jump });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const m = await s.model(page);
    assert.equal(m.jump, 1);
    assert.equal(m.decoys, 0);
  });

  test('a disabled button is refused with element_disabled', async () => {
    const page = await s.open('clicks.html');
    const snap = await s.snapshot(s.v);
    const off = snap.find((e) => e.label === 'Disabled button', 'the disabled button');
    assert.equal((off as any).enabled, false);
    const r = await s.v.call('click', { element_token: off.element_token });
    assert.equal(r.isError, true);
    assert.equal(r.structured.refusal?.code, 'element_disabled', r.text);
    assert.equal((await s.model(page)).off, 0);
  });

  test('double_click: the page sees one dblclick', async () => {
    const page = await s.open('clicks.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('double_click', { element_token: snap.token('Double me') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.match(evidenceText(r), /dblclick/);
    const m = await s.model(page);
    assert.equal(m.dblclick, 1);
    assert.equal(m.click, 2);
  });

  test('right_click: the page sees one contextmenu', async () => {
    const page = await s.open('clicks.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('right_click', { element_token: snap.token('Context me') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.match(evidenceText(r), /contextmenu/);
    assert.equal((await s.model(page)).contextmenu, 1);
  });

  test('px form: x,y at the centre of the element frame (screenshot pixels) clicks it', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v, { include_screenshot: true });
    const btn = snap.find((e) => e.label === 'Increment', 'the Increment button');
    const x = btn.frame.x + btn.frame.w / 2,
      y = btn.frame.y + btn.frame.h / 2;
    const r = await s.v.call('click', { x, y });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.match(String(r.structured.target), /#btn/);
    assert.equal((await s.model(page)).clicks, 1);
  });

  test('buttons inside a same-origin and a cross-origin iframe', async () => {
    const page = await s.open(`frames.html?cross=${encodeURIComponent(s.fx.crossUrl('frame-child.html'))}`);
    const snap = await s.snapshot(s.v);
    const buttons = snap.elements.filter((e) => e.label === 'Inner button');
    assert.equal(buttons.length, 2, JSON.stringify(snap.elements.map((e) => e.label)));
    const [same, cross] = buttons;
    const r1 = await s.v.call('click', { element_token: same.element_token });
    assert.equal(r1.structured.effect, 'confirmed', r1.text);
    const r2 = await s.v.call('click', { element_token: cross.element_token });
    assert.equal(r2.structured.effect, 'confirmed', r2.text);
    const sameFrame = page.frames().find((f) => f.url().startsWith(s.fx.url('frame-child.html')))!;
    const crossFrame = page.frames().find((f) => f.url().startsWith(s.fx.crossUrl('')))!;
    assert.equal(await sameFrame.evaluate('window.__clicks()'), 1);
    assert.equal(await crossFrame.evaluate('window.__clicks()'), 1);
  });

  test('a button inside a closed shadow root', async () => {
    const page = await s.open('shadow.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('click', { element_token: snap.token('Closed button') });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await s.model(page)).closedClicks, 1);
  });
});

describe('set_value', () => {
  test('select by label and by value', async () => {
    const page = await s.open('plain.html');
    let snap = await s.snapshot(s.v);
    const r1 = await s.v.call('set_value', { element_token: snap.token('Select'), value: 'Beta' });
    assert.equal(r1.structured.effect, 'confirmed', r1.text);
    assert.equal((await s.model(page)).sel, 'b');
    snap = await s.snapshot(s.v);
    const r2 = await s.v.call('set_value', { element_token: snap.token('Select'), value: 'c' });
    assert.equal(r2.structured.effect, 'confirmed', r2.text);
    assert.equal((await s.model(page)).sel, 'c');
  });

  test('an unknown option is refused, naming the options; the selection is kept', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('set_value', { element_token: snap.token('Select'), value: 'Omega' });
    assert.equal(r.isError, true);
    assert.equal(r.structured.status, 'refused', r.text);
    for (const name of ['Alpha', 'Beta', 'Gamma']) assert.match(r.structured.refusal.message, new RegExp(name));
    assert.equal((await s.model(page)).sel, 'a');
  });

  test('checkbox true, then false', async () => {
    const page = await s.open('plain.html');
    const on = await s.v.call('set_value', { element_token: (await s.snapshot(s.v)).token('Checkbox'), value: 'true' });
    assert.equal(on.structured.effect, 'confirmed', on.text);
    assert.equal((await s.model(page)).cb, true);
    const off = await s.v.call('set_value', {
      element_token: (await s.snapshot(s.v)).token('Checkbox'),
      value: 'false',
    });
    assert.equal(off.structured.effect, 'confirmed', off.text);
    assert.equal((await s.model(page)).cb, false);
  });

  test('radio: selecting one clears the other', async () => {
    const page = await s.open('plain.html');
    const r1 = await s.v.call('set_value', { element_token: (await s.snapshot(s.v)).token('Radio 1'), value: 'true' });
    assert.equal(r1.structured.effect, 'confirmed', r1.text);
    const r2 = await s.v.call('set_value', { element_token: (await s.snapshot(s.v)).token('Radio 2'), value: 'true' });
    assert.equal(r2.structured.effect, 'confirmed', r2.text);
    const m = await s.model(page);
    assert.equal(m.r1, false);
    assert.equal(m.r2, true);
  });

  test('range, date, and replacing the text of a field', async () => {
    const page = await s.open('plain.html');
    let snap = await s.snapshot(s.v);
    const range = await s.v.call('set_value', { element_token: snap.token('Range'), value: '73' });
    assert.equal(range.structured.effect, 'confirmed', range.text);
    const date = await s.v.call('set_value', { element_token: snap.token('Date'), value: '2024-02-29' });
    assert.equal(date.structured.effect, 'confirmed', date.text);
    const typed = await s.v.call('type_text', { element_token: snap.token('Text'), text: 'old words' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    snap = await s.snapshot(s.v);
    const text = await s.v.call('set_value', { element_token: snap.token('Text'), value: 'new' });
    assert.equal(text.structured.effect, 'confirmed', text.text);
    const m = await s.model(page);
    assert.equal(m.range, '73');
    assert.equal(m.date, '2024-02-29');
    assert.equal(m.text, 'new');
  });
});

describe('press_key and hotkey', () => {
  test('Backspace in the focused input deletes one character', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    await s.v.call('type_text', { element_token: snap.token('Text'), text: 'abc' });
    const r = await s.v.call('press_key', { key: 'Backspace' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await s.model(page)).text, 'ab');
  });

  test('Tab moves focus to the next field', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('press_key', { element_token: snap.token('Text'), key: 'Tab' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(await page.evaluate('document.activeElement && document.activeElement.id'), 'area');
  });

  test('hotkey ctrl+a selects the field, and the next text replaces it', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    await s.v.call('type_text', { element_token: snap.token('Text'), text: 'hello world' });
    const r = await s.v.call('hotkey', { keys: ['ctrl', 'a'] });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const selection = await page.$eval('#text', (el) => [
      (el as HTMLInputElement).selectionStart,
      (el as HTMLInputElement).selectionEnd,
    ]);
    assert.deepEqual(selection, [0, 'hello world'.length]);
    const typed = await s.v.call('type_text', { text: 'bye' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    assert.equal((await s.model(page)).text, 'bye');
  });

  test('an unknown key name is refused clearly, nothing is typed, and the server keeps working', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    await s.v.call('type_text', { element_token: snap.token('Text'), text: 'keep' });
    const r = await s.v.call('press_key', { key: 'NoSuchKey' });
    assert.equal(r.isError, true);
    assert.equal(r.structured.refusal?.code, 'invalid_arguments', r.text);
    assert.match(r.structured.refusal.message, /NoSuchKey/);
    const combo = await s.v.call('hotkey', { keys: ['ctrl', 'bogus'] });
    assert.equal(combo.structured.refusal?.code, 'invalid_arguments', combo.text);
    assert.equal((await s.model(page)).text, 'keep');
    const ok = await s.v.call('press_key', { key: 'Backspace' });
    assert.equal(ok.structured.effect, 'confirmed', ok.text);
    assert.equal((await s.model(page)).text, 'kee');
  });
});

describe('scroll', () => {
  test('the page scrolls down: window.scrollY moved, inner scrollers did not', async () => {
    const page = await s.open('plain.html');
    const r = await s.v.call('scroll', { direction: 'down', amount: 5 });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const m = await s.model(page);
    assert.ok(m.scrollY > 0, `scrollY ${m.scrollY}`);
    assert.equal(r.structured.observed.scroll_y, m.scrollY);
    assert.equal(m.scrollerTop, 0);
  });

  test('the page scrolls even when an inner scroller sits at the viewport centre', async () => {
    const page = await s.open('plain.html');
    await page.evaluate(`(() => {
      const scroller = document.getElementById('scroller');
      scroller.style.width = '95vw'; // wide enough to lie under the viewport centre
      scroller.scrollIntoView({ block: 'center' });
      const hit = document.elementFromPoint(innerWidth / 2, innerHeight / 2);
      if (!scroller.contains(hit)) throw new Error('the scroller is not under the viewport centre');
    })()`);
    const start = (await s.model(page)).scrollY;
    const r = await s.v.call('scroll', { direction: 'down', amount: 3 });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.target, 'the page');
    const m = await s.model(page);
    assert.ok(m.scrollY > start, `scrollY ${start} -> ${m.scrollY}`);
    assert.equal(m.scrollerTop, 0);
  });

  test('an element token scrolls its own scroll container', async () => {
    const page = await s.open('plain.html');
    let snap = await s.snapshot(s.v);
    const down = await s.v.call('scroll', { element_token: snap.token('Deep button'), direction: 'down', amount: 2 });
    assert.equal(down.structured.effect, 'confirmed', down.text);
    let m = await s.model(page);
    assert.ok(m.scrollerTop > 0, `scrollerTop ${m.scrollerTop}`);
    assert.equal(down.structured.observed.scroll_y, m.scrollerTop);
    snap = await s.snapshot(s.v);
    const up = await s.v.call('scroll', { element_token: snap.token('Deep button'), direction: 'up', amount: 10 });
    assert.equal(up.structured.effect, 'confirmed', up.text);
    m = await s.model(page);
    assert.equal(m.scrollerTop, 0);
    const again = await s.v.call('scroll', { element_token: snap.token('Deep button'), direction: 'up', amount: 1 });
    assert.equal(again.structured.effect, 'no_effect', again.text);
    assert.equal((await s.model(page)).scrollerTop, 0);
  });

  test('scrolling up at the top of the page is no_effect', async () => {
    const page = await s.open('plain.html');
    const r = await s.v.call('scroll', { direction: 'up', amount: 3 });
    assert.equal(r.isError, true);
    assert.equal(r.structured.effect, 'no_effect', r.text);
    assert.equal((await s.model(page)).scrollY, 0);
  });
});

describe('drag', () => {
  test('mousedown, mousemove, mouseup move the box by the drag distance', async () => {
    const page = await s.open('drag.html');
    const snap = await s.snapshot(s.v, { include_screenshot: true });
    const box = snap.find((e) => e.label === 'Box', 'the box');
    const scale = snap.result.structured.screenshot_width / ((await page.evaluate('innerWidth')) as number);
    const from = { x: box.frame.x + box.frame.w / 2, y: box.frame.y + box.frame.h / 2 };
    const r = await s.v.call('drag', {
      from_x: from.x,
      from_y: from.y,
      to_x: from.x + 150 * scale,
      to_y: from.y + 100 * scale,
      duration_ms: 0,
    });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.match(evidenceText(r), /mousedown at div#box/);
    const m = await s.model(page);
    assert.equal(m.drops, 1);
    assert.ok(m.moves > 0);
    assert.ok(Math.abs(m.left - 210) <= 1, `left ${m.left}`);
    assert.ok(Math.abs(m.top - 180) <= 1, `top ${m.top}`);
  });
});
