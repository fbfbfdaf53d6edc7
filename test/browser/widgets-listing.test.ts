// Everything a person can act on is listed (#24 item 2), with the real libraries: jQuery UI's datepicker
// (Prev/Next are <a> without href, clickable only through jQuery's handlers) and slider (a <span> handle
// without ARIA), a mail client's sibling "Reply"/"Forward" spans inside a pointer-cursor bar and its
// icon-only buttons (Font Awesome, a Material ligature), a Font Awesome feed with a "more" menu, and colour
// swatches that are only coloured <div>s with a handler. Each control is listed on its own, named (a guess
// from its icon is marked as one), and a click by its token is checked against what the page's handler did.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'puppeteer-core';
import { browserSuite, type Suite } from '../helpers/suite.js';
import { decodeOutline, webNormOf } from '../../server/tools/outline.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

type Listed = { element_token: string; role: string; label: string; value?: string; name_source?: string };

async function listed(): Promise<Listed[]> {
  return (await s.snapshot(s.v, { format: 'full' })).elements as Listed[];
}

/** The n-th listed element with this role and exact label. */
function find(elements: Listed[], role: string, label: string, nth = 0): Listed {
  const found = elements.filter((e) => e.role === role && e.label === label);
  assert.ok(found[nth], `no ${role} "${label}" #${nth} in ${elements.map((e) => `${e.role}:${e.label}`).join(', ')}`);
  return found[nth];
}

async function click(e: Listed) {
  const r = await s.v.call('click', { element_token: e.element_token });
  assert.ok(!r.isError, `click on ${e.role} "${e.label}" refused: ${r.text}`);
  return r;
}

async function model(page: Page) {
  return s.model(page);
}

describe('jQuery UI datepicker', () => {
  test('blank: Prev and Next are listed by name; a click on Next moves to the next month', async () => {
    const page = await s.open('listing.html');
    const elements = await listed();
    for (const name of ['Prev', 'Next']) find(elements, 'link', name, 1); // both datepickers have both
    assert.equal((await model(page)).dpBlank, 'January 2024');
    await click(find(elements, 'link', 'Next', 0));
    assert.equal((await model(page)).dpBlank, 'February 2024', 'the blank datepicker moved on a month');
    assert.equal((await model(page)).dpFilled, 'June 2025', 'the other one did not move');
  });

  test('pre-filled: a click on Prev moves to the month before and keeps the chosen date', async () => {
    const page = await s.open('listing.html');
    await click(find(await listed(), 'link', 'Prev', 1));
    const m = await model(page);
    assert.equal(m.dpFilled, 'May 2025');
    assert.equal(m.dpFilledDate, 10, 'the chosen date stays');
    assert.equal(m.dpBlank, 'January 2024');
  });
});

describe('jQuery UI slider (no ARIA)', () => {
  test('each handle is a slider with its value and range, read from the widget', async () => {
    const page = await s.open('listing.html');
    let sliders = (await listed()).filter((e) => e.role === 'slider');
    assert.deepEqual(
      sliders.map((e) => e.value),
      ['0 (0–100)', '30 (10–50)'],
    );
    await page.evaluate(`jQuery('#slider-filled').slider('value', 42)`);
    sliders = (await listed()).filter((e) => e.role === 'slider');
    assert.equal(sliders[1].value, '42 (10–50)', 'the value is read again at each observation');
    assert.ok(!(await listed()).some((e) => e.role === 'generic' && e.label === ''), 'no nameless track is listed');
  });

  test('a click by token lands on the handle (it takes focus, the value stays)', async () => {
    const page = await s.open('listing.html');
    const handle = (await listed()).filter((e) => e.role === 'slider')[1];
    await click(handle);
    assert.equal(
      await page.evaluate(`document.activeElement === document.querySelector('#slider-filled .ui-slider-handle')`),
      true,
    );
    assert.equal((await model(page)).sliderFilled, 30);
  });
});

describe('mail client', () => {
  test('sibling "Reply" and "Forward" spans are two elements, never one merged name; each click runs its handler', async () => {
    const page = await s.open('listing.html');
    const elements = await listed();
    assert.ok(
      !elements.some((e) => /Reply ?Forward/.test(e.label)),
      `a merged name: ${elements.map((e) => e.label).join(', ')}`,
    );
    await click(find(elements, 'generic', 'Reply'));
    await click(find(elements, 'generic', 'Forward'));
    assert.deepEqual((await model(page)).clicked, ['reply', 'forward']);
  });

  test('icon-only buttons get a name guessed from the icon, marked as a guess; clicks land', async () => {
    const page = await s.open('listing.html');
    const elements = await listed();
    const archive = find(elements, 'generic', 'box archive');
    const trash = find(elements, 'generic', 'trash can');
    const label = find(elements, 'generic', 'label important'); // a Material ligature, not its raw text
    for (const e of [archive, trash, label]) assert.equal(e.name_source, 'icon_guess', e.label);
    await click(trash);
    await click(label);
    assert.deepEqual((await model(page)).clicked, ['delete', 'label']);
  });
});

describe('icon-font feed with a "more" menu', () => {
  test('reply, retweet, like and more are listed and clickable; the menu that opens lists its items', async () => {
    const page = await s.open('listing.html');
    const elements = await listed();
    for (const name of ['reply', 'retweet', 'heart']) {
      assert.equal(find(elements, 'generic', name).name_source, 'icon_guess');
    }
    await click(find(elements, 'generic', 'retweet'));
    assert.ok(!elements.some((e) => e.label === 'Mute'), 'the closed menu lists nothing');
    await click(find(elements, 'generic', 'more'));
    assert.equal((await model(page)).menuOpen, true, 'the more menu opened');
    const opened = await listed();
    await click(find(opened, 'generic', 'Report'));
    find(opened, 'generic', 'Mute');
    assert.deepEqual((await model(page)).clicked, ['feed-retweet', 'menu-report']);
  });

  test('the outline marks a guessed name, and keeps a given one unmarked', async () => {
    await s.open('listing.html');
    const r = await s.v.call('get_window_state', { include_screenshot: false });
    assert.ok(!r.isError, r.text);
    const outline = r.structured.outline as string;
    assert.match(outline, /- generic 'retweet' \(guessed\)/);
    assert.match(outline, /- generic Reply\b(?! \(guessed\))|- generic 'Reply'(?! \(guessed\))/);
  });
});

describe('colour swatches', () => {
  test('each swatch is named by its colour and a click chooses it', async () => {
    const page = await s.open('listing.html');
    const elements = await listed();
    const swatches = ['#ff0000', '#008080', '#000080'].map((c) => find(elements, 'generic', c));
    for (const e of swatches) assert.equal(e.name_source, 'colour');
    await click(swatches[1]);
    assert.equal((await model(page)).swatch, 'teal');
    await click(swatches[2]);
    assert.equal((await model(page)).swatch, 'navy');
  });
});

describe('the pointer cursor', () => {
  test('children of an unlisted pointer-cursor wrapper (display: contents) are listed; their clicks land', async () => {
    const page = await s.open('listing.html');
    const elements = await listed();
    await click(find(elements, 'generic', 'Beta'));
    await click(find(elements, 'generic', 'Alpha'));
    assert.deepEqual((await model(page)).clicked, ['beta', 'alpha']);
  });
});

describe('wrappers', () => {
  test('a card clickable itself stays listed beside the icon button inside it; both clicks land', async () => {
    const page = await s.open('listing.html');
    const elements = await listed();
    const save = find(elements, 'generic', 'bookmark');
    assert.equal(save.name_source, 'icon_guess');
    await click(save);
    await click(find(elements, 'generic', 'Card title'));
    assert.deepEqual((await model(page)).clicked, ['card-save', 'card']);
  });
});

describe('the other forms and the cost', () => {
  test('the compact form decodes to the full form, name sources included', async () => {
    await s.open('listing.html');
    const full = await s.v.call('get_window_state', { include_screenshot: false, format: 'full' });
    const compact = await s.v.call('get_window_state', { include_screenshot: false, format: 'compact' });
    const st = compact.structured;
    const decoded = decodeOutline(st.outline, st.roles, webNormOf(st.target.kind));
    const want = full.structured.elements.map(({ element_token: _t, ...e }: any) => e);
    assert.deepEqual(decoded, want);
    assert.ok(decoded.some((e) => e.name_source === 'icon_guess') && decoded.some((e) => e.name_source === 'colour'));
  });

  test('a thousand rows with their own click handlers are all listed, each by its name', async () => {
    const page = await s.open('listing.html');
    await page.evaluate(`(() => {
      const list = document.createElement('div');
      for (let i = 0; i < 1000; i++) {
        const row = document.createElement('span');
        row.textContent = 'row ' + i;
        row.style.display = 'block';
        row.addEventListener('click', () => (window.__row = i));
        list.append(row);
      }
      document.body.prepend(list);
    })()`);
    const started = Date.now();
    const elements = await listed();
    const ms = Date.now() - started;
    const rows = elements.filter((e) => /^row \d+$/.test(e.label));
    assert.equal(rows.length, 1000);
    console.log(`# observed ${elements.length} elements (1000 handler rows) in ${ms} ms`);
    await click(rows[777]);
    assert.equal(await page.evaluate('window.__row'), 777);
  });
});
