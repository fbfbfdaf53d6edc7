// Keyboard-sink widgets (#24): the real xterm.js with a local echo, and a line editor drawn from keydown
// events, blank and pre-filled, each typed by its hidden input's token. The keys must reach the widget and
// the verdict must come from what it shows: checked against xterm's buffer (its API) and the line editor's
// text. A sink whose keys nothing draws is never confirmed. An ordinary field keeps the insert path.
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

/** The n-th element with this exact label (both terminals' textareas are "Terminal input"). */
async function tokenOf(label: string, nth = 0): Promise<string> {
  const snap = await s.snapshot(s.v, { format: 'full' });
  const found = snap.elements.filter((e) => e.label === label);
  assert.ok(found[nth], `no element ${nth} labelled ${label}: ${snap.elements.map((e) => e.label).join(', ')}`);
  return found[nth].element_token;
}

describe('xterm.js', () => {
  for (const [nth, id, text, shows] of [
    [0, 'term-blank', 'ls', '$ ls'],
    [1, 'term-filled', 'hello world', '$ echo hello world'],
  ] as const) {
    test(`${id}: type_text reaches the terminal as keys; confirmed by what it shows`, async () => {
      const page = await s.open('sinks.html');
      const r = await s.v.call('type_text', { element_token: await tokenOf('Terminal input', nth), text });
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.equal(r.structured.method, 'key_events', r.text);
      assert.ok(
        r.structured.evidence.some((e: any) => e.kind === 'shown_text'),
        r.text,
      );
      const m = await s.model(page);
      assert.equal(m[id], shows, 'the terminal buffer shows the typed text');
      assert.equal(
        m[id === 'term-blank' ? 'term-filled' : 'term-blank'],
        id === 'term-blank' ? '$ echo' : '$',
        'the other terminal is untouched',
      );
    });
  }
  test('a newline is the Enter key: each line shows, the last one on the new prompt', async () => {
    const page = await s.open('sinks.html');
    const r = await s.v.call('type_text', {
      element_token: await tokenOf('Terminal input', 0),
      text: 'echo a\necho b',
    });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal((await s.model(page))['term-blank'], '$ echo b');
  });

  test('the px form: a click on the terminal focuses its sink, then the text is typed as keys', async () => {
    const page = await s.open('sinks.html');
    const snap = await s.snapshot(s.v, { format: 'full' });
    const scale = snap.result.structured.screenshot_width / ((await page.evaluate('innerWidth')) as number);
    const box = (await page.evaluate(
      'JSON.parse(JSON.stringify(document.querySelector("#term-blank .xterm-screen").getBoundingClientRect()))',
    )) as { x: number; y: number; width: number; height: number };
    const r = await s.v.call('type_text', {
      x: (box.x + box.width / 2) * scale,
      y: (box.y + box.height / 2) * scale,
      text: 'pwd',
    });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.method, 'key_events', r.text);
    assert.equal((await s.model(page))['term-blank'], '$ pwd');
  });
});

describe('line editor drawn from keydown', () => {
  for (const [label, id, text, shows] of [
    ['line editor blank', 'le-blank', 'ls -la', 'ls -la'],
    ['line editor filled', 'le-filled', 'ls', 'cd /tmp; ls'],
  ] as const) {
    test(`${id}: type_text is typed as keys and confirmed by the editor's text`, async () => {
      const page = await s.open('sinks.html');
      const r = await s.v.call('type_text', { element_token: await tokenOf(label), text });
      assert.equal(r.structured.effect, 'confirmed', r.text);
      assert.equal((await s.model(page))[id].shows, shows);
    });
  }

  test('a sink whose keys nothing draws: the value fills, the page shows nothing, never confirmed', async () => {
    const page = await s.open('sinks.html');
    const r = await s.v.call('type_text', { element_token: await tokenOf('deaf sink'), text: 'ls' });
    assert.equal((await s.model(page)).deaf.value, 'ls', 'the keys did land in the hidden input');
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.equal(r.structured.escalation?.target, 'verify', r.text);
    assert.ok(
      r.structured.evidence.some((e: any) => e.kind === 'keyboard_sink'),
      r.text,
    );
  });
});

test('an ordinary visible field keeps the fast insert path', async () => {
  await s.open('sinks.html');
  const r = await s.v.call('type_text', { element_token: await tokenOf('plain field'), text: 'cd' });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal(r.structured.method, 'insert_text', r.text);
});

test('a field that shows itself once focused (an expanding search box) is an ordinary field', async () => {
  const page = await s.open('sinks.html');
  const r = await s.v.call('type_text', { element_token: await tokenOf('expanding search'), text: 'shoes' });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal(r.structured.method, 'insert_text', r.text);
  assert.equal(await page.evaluate('document.querySelector(".expand").value'), 'shoes');
});
