// type_text on the browser route: exactly once, at the caret, in every ordinary kind of field, and never
// a false `confirmed`. Each case asserts the page's own model and the reported effect.
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

const UNICODE = 'héllo 👋🏽 世界 مرحبا שלום';

describe('plain fields', () => {
  test('input: unicode, emoji, CJK and RTL arrive exactly, at the caret', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Text'), text: UNICODE });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.method, 'insert_text');
    assert.ok(r.structured.evidence.some((e: any) => e.observed === UNICODE));
    assert.equal((await s.model(page)).text, UNICODE);
    // A second call appends at the caret; nothing is cleared.
    const again = await s.v.call('type_text', { text: '!' });
    assert.equal(again.structured.effect, 'confirmed', again.text);
    assert.equal((await s.model(page)).text, UNICODE + '!');
  });

  test('a field that upper-cases what arrives: mismatch, and delivered_count says all of it was delivered', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Upper-cases on input'), text: 'quiet words' });
    assert.equal(r.structured.effect, 'mismatch', r.text);
    assert.equal(r.structured.delivery.delivered_count, 11, r.text);
    assert.equal((await s.model(page)).upper, 'QUIET WORDS');
  });

  test('textarea keeps newlines', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Area'), text: 'line one\nline two\n\nfour' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await s.model(page)).area, 'line one\nline two\n\nfour');
  });

  test('a newline for a single-line input is refused before anything is typed', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Text'), text: 'a\nb' });
    assert.equal(r.isError, true);
    assert.equal(r.structured.refusal.code, 'text_not_deliverable');
    assert.equal((await s.model(page)).text, '');
  });

  test('contenteditable inserts at the caret and makes line breaks', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const ce = snap.find((e) => e.value === 'Hello', 'the contenteditable');
    const r = await s.v.call('type_text', { element_token: ce.element_token, text: ' world\nsecond 🙂' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const text = await page.$eval('#ce', (el) => (el as HTMLElement).innerText);
    assert.match(text, /^Hello world\n+second 🙂\n*$/);
  });

  test('a field that selects its value a moment after focus keeps it: the text goes after it', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Highlights its value'), text: ' and more' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await s.model(page)).selall, 'keep me and more');
  });

  test('maxlength: partial, with how much landed and what the field holds', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Max length'), text: 'abcdefgh' });
    assert.equal(r.isError, true);
    assert.equal(r.structured.effect, 'partial', r.text);
    assert.equal(r.structured.delivery.delivered_count, 5);
    assert.equal(r.structured.observed, 'abcde');
    assert.equal((await s.model(page)).max, 'abcde');
  });

  test('a field that transforms its value is a mismatch, never confirmed', async () => {
    await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Upper-cases'), text: 'abc' });
    assert.equal(r.structured.effect, 'mismatch', r.text);
    assert.equal(r.structured.observed, 'ABC');
  });

  test('readonly and disabled fields are refused and keep their value', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const ro = await s.v.call('type_text', { element_token: snap.token('Read-only'), text: 'x' });
    assert.equal(ro.structured.refusal.code, 'element_readonly');
    const dis = await s.v.call('type_text', { element_token: snap.token('Disabled'), text: 'x' });
    assert.equal(dis.structured.refusal.code, 'element_disabled');
    const m = await s.model(page);
    assert.equal(m.ro, 'fixed');
    assert.equal(m.dis, '');
  });

  test('a cancelled beforeinput is no_effect, and no second method doubles anything', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Cancels'), text: 'xyz' });
    assert.equal(r.structured.effect, 'no_effect', r.text);
    assert.ok(r.structured.evidence.some((e: any) => e.kind === 'beforeinput'));
    assert.equal((await s.model(page)).cancel, '');
  });

  test('typing without a token goes to the focused field; with nothing focused it is refused', async () => {
    const page = await s.open('plain.html');
    const none = await s.v.call('type_text', { text: 'x' });
    assert.equal(none.structured.refusal.code, 'target_not_found', none.text);
    await page.focus('#far');
    const r = await s.v.call('type_text', { text: 'focused' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(await page.$eval('#far', (el) => (el as HTMLInputElement).value), 'focused');
  });
});

describe('a page that rewrites the value after the input is caught, however it defers it', () => {
  // The read-back's second read waits for the frame after the (last) input and a task after it: a rewrite
  // in that frame, a timer or a microtask is seen, and the text that arrived is a mismatch, never confirmed.
  for (const [label, key] of [
    ['Rewrites in a frame', 'frame'],
    ['Rewrites in a timer', 'timer'],
    ['Rewrites in a microtask', 'micro'],
  ] as const) {
    test(`${label.toLowerCase()}: mismatch, all of it delivered`, async () => {
      const page = await s.open('rewrites.html');
      const snap = await s.snapshot(s.v);
      const r = await s.v.call('type_text', { element_token: snap.token(label), text: 'abc' });
      assert.equal(r.structured.effect, 'mismatch', r.text);
      assert.equal(r.structured.delivery.delivered_count, 3, r.text);
      assert.equal((await s.model(page))[key], 'ABC');
    });
  }

  test('several lines, rewritten in the frame after the last one: mismatch', async () => {
    const page = await s.open('rewrites.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', {
      element_token: snap.token('Area rewrites in a frame'),
      text: 'one\ntwo\nthree',
    });
    assert.equal(r.structured.effect, 'mismatch', r.text);
    assert.equal((await s.model(page)).area, 'ONE\nTWO\nTHREE');
  });
});

describe('framework-controlled inputs', () => {
  test('React controlled input and textarea: the component state holds the text', async () => {
    const page = await s.open('react.html');
    const snap = await s.snapshot(s.v);
    const r1 = await s.v.call('type_text', { element_token: snap.token('Name'), text: 'Ada Lovelace' });
    assert.equal(r1.structured.effect, 'confirmed', r1.text);
    const r2 = await s.v.call('type_text', { element_token: snap.token('Bio'), text: 'first\nsecond' });
    assert.equal(r2.structured.effect, 'confirmed', r2.text);
    const m = await s.model(page);
    assert.equal(m.name, 'Ada Lovelace');
    assert.equal(m.bio, 'first\nsecond');
  });

  test('React field that rewrites its state is reported as mismatch', async () => {
    const page = await s.open('react.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Upper'), text: 'abc' });
    assert.equal(r.structured.effect, 'mismatch', r.text);
    // The text arrived and the page rewrote it: all of it was delivered.
    assert.equal(r.structured.delivery.delivered_count, 3, r.text);
    assert.match(r.text, /delivered_count"?:? ?3/);
    assert.equal((await s.model(page)).upper, 'ABC');
  });

  test('Vue v-model: the reactive state holds the text', async () => {
    const page = await s.open('vue.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Name'), text: 'Grace 🌟' });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const r2 = await s.v.call('type_text', { element_token: snap.token('Bio'), text: 'a\nb' });
    assert.equal(r2.structured.effect, 'confirmed', r2.text);
    const m = await s.model(page);
    assert.equal(m.name, 'Grace 🌟');
    assert.equal(m.bio, 'a\nb');
  });
});

describe('rich editors with their own document model', () => {
  for (const editor of ['prosemirror', 'lexical', 'slate', 'quill', 'codemirror']) {
    test(`${editor}: text lands exactly once at the caret, newlines become breaks in the model`, async () => {
      const page = await s.open(`${editor}.html`);
      const snap = await s.snapshot(s.v);
      const field = snap.find(
        (e) => e.role === 'textbox' && (e.value ?? '').includes('Hello world'),
        `the ${editor} editor`,
      );
      const r = await s.v.call('type_text', { element_token: field.element_token, text: ' and more 世界' });
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.equal(await s.model(page), 'Hello world and more 世界');
      const r2 = await s.v.call('type_text', { text: '\nnext line' });
      assert.equal(r2.structured.effect, 'confirmed', r2.text);
      assert.equal(await s.model(page), 'Hello world and more 世界\nnext line');
    });
  }
});

describe('iframes and shadow roots', () => {
  test('same-origin and cross-origin iframes: fields are listed and typed into', async () => {
    const page = await s.open(`frames.html?cross=${encodeURIComponent(s.fx.crossUrl('frame-child.html'))}`);
    const snap = await s.snapshot(s.v);
    const inner = snap.elements.filter((e) => e.label === 'Inner');
    assert.equal(inner.length, 2, JSON.stringify(snap.elements.map((e) => e.label)));
    const [same, cross] = inner;
    const r1 = await s.v.call('type_text', { element_token: same.element_token, text: 'same origin' });
    assert.equal(r1.structured.effect, 'confirmed', r1.text);
    const r2 = await s.v.call('type_text', { element_token: cross.element_token, text: 'cross origin ✓' });
    assert.equal(r2.structured.effect, 'confirmed', r2.text);
    assert.equal((await s.model(page)).same, 'same origin');
    const crossFrame = page.frames().find((f) => f.url().startsWith(s.fx.crossUrl('')))!;
    assert.equal(await crossFrame.evaluate('window.__model()'), 'cross origin ✓');
  });

  test('open and closed shadow roots: fields are listed and typed into', async () => {
    const page = await s.open('shadow.html');
    const snap = await s.snapshot(s.v);
    const r1 = await s.v.call('type_text', { element_token: snap.token('Open'), text: 'in open' });
    assert.equal(r1.structured.effect, 'confirmed', r1.text);
    const r2 = await s.v.call('type_text', { element_token: snap.token('Closed'), text: 'in closed' });
    assert.equal(r2.structured.effect, 'confirmed', r2.text);
    const m = await s.model(page);
    assert.equal(m.open, 'in open');
    assert.equal(m.closed, 'in closed');
  });
});

/** How many fields type_text actions hold in the page agent's world of the page's top frame (freed when each ends). */
async function heldFields(page: import('puppeteer-core').Page): Promise<number> {
  const cdp = await page.createCDPSession();
  try {
    const top = (await cdp.send('Page.getFrameTree')).frameTree.frame.id;
    const worlds: number[] = [];
    cdp.on('Runtime.executionContextCreated', ({ context }) => {
      if (context.name === 'verity' && context.auxData?.frameId === top) worlds.push(context.id);
    });
    await cdp.send('Runtime.enable'); // reports the contexts that exist now
    assert.equal(worlds.length, 1, "the page agent's world in the top frame");
    const { result } = await cdp.send('Runtime.evaluate', {
      expression: 'globalThis.__verity.heldFieldCount()',
      contextId: worlds[0],
      returnByValue: true,
    });
    return result.value;
  } finally {
    await cdp.detach();
  }
}

describe("the action's field, held by a handle", () => {
  test('each type_text frees the field it held: confirmed, refused, or typed as keys', async () => {
    const page = await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    const typed = await s.v.call('type_text', { element_token: snap.token('Text'), text: 'held' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    const refused = await s.v.call('type_text', { element_token: snap.token('Text'), text: 'two\nlines' });
    assert.equal(refused.structured.refusal?.code, 'text_not_deliverable', refused.text);
    assert.equal(await heldFields(page), 0, 'no field stays held after its action');
  });

  test('the page moves the focus into another frame before the text arrives: no key events, the text arrives once', async () => {
    const page = await s.open('plain.html');
    // An email field (no selection API: the End key places its caret) whose End key moves the focus into an
    // iframe's field: the insertion lands there, and nothing is heard in the top frame.
    await page.evaluate(async () => {
      const mover = Object.assign(document.createElement('input'), { type: 'email' });
      mover.setAttribute('aria-label', 'Moves the focus away');
      const frame = Object.assign(document.createElement('iframe'), {
        srcdoc: '<input id="b" aria-label="Elsewhere">',
      });
      const loaded = new Promise((r) => frame.addEventListener('load', r, { once: true }));
      document.body.append(mover, frame);
      await loaded;
      const elsewhere = frame.contentDocument!.getElementById('b') as HTMLInputElement;
      mover.addEventListener('keydown', (e) => {
        if (e.key === 'End') elsewhere.focus();
      });
      (window as any).elsewhereValue = () => elsewhere.value;
    });
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Moves the focus away'), text: 'once' });
    assert.notEqual(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.method, 'insert_text', r.text);
    assert.ok(
      r.structured.evidence.some((e: any) => e.kind === 'focus'),
      r.text,
    );
    assert.equal(await page.evaluate(() => (window as any).elsewhereValue()), 'once', 'the text arrived exactly once');
    assert.equal(await heldFields(page), 0);
  });
});
