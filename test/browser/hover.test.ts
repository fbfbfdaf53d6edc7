// hover (#24 item 4): the pointer moved onto an element or a point of a tab. A CSS :hover menu, a script's
// mouseenter menu and a delayed tooltip each open and are confirmed by what became visible, checked against
// the page (window.__model()); an item of the opened menu is then clicked by its token. A hover that opens
// nothing is unverifiable, never confirmed. Also as a run_actions step.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
before(async () => {
  s = await browserSuite();
});
after(async () => {
  await s?.close();
});

for (const [trigger, item, key] of [
  ['Products', 'Laptops', 'cssMenuOpen'],
  ['Account', 'Sign out', 'jsMenuOpen'],
] as const) {
  test(`${trigger}: hover opens the menu (confirmed by what shows); its item is then clicked by token`, async () => {
    const page = await s.open('hover.html');
    const before = await s.snapshot(s.v, { format: 'full' });
    assert.ok(!before.elements.some((e) => e.label === item), `${item} is not listed before the hover`);
    const r = await s.v.call('hover', { element_token: before.token(trigger) });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.match(JSON.stringify(r.structured.evidence), new RegExp(item), r.text);
    assert.equal((await s.model(page))[key], true, 'the page shows the menu open');
    const opened = await s.snapshot(s.v, { format: 'full' });
    const c = await s.v.call('click', { element_token: opened.token(item) });
    assert.equal(c.structured.effect, 'confirmed', c.text);
    assert.deepEqual((await s.model(page)).clicked, [item]);
  });
}

test('a delayed tooltip is waited for and confirmed', async () => {
  const page = await s.open('hover.html');
  const snap = await s.snapshot(s.v, { format: 'full' });
  const r = await s.v.call('hover', { element_token: snap.token('Help') });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.match(JSON.stringify(r.structured.evidence), /Opens the manual/, r.text);
  assert.equal((await s.model(page)).tooltip, true);
});

test('a hover that opens nothing is unverifiable with an escalation, never confirmed', async () => {
  const page = await s.open('hover.html');
  const snap = await s.snapshot(s.v, { format: 'full' });
  const r = await s.v.call('hover', { element_token: snap.token('Inert') });
  assert.equal(r.structured.effect, 'unverifiable', r.text);
  assert.equal(r.structured.escalation?.target, 'verify', r.text);
  const m = await s.model(page);
  assert.equal(m.cssMenuOpen || m.jsMenuOpen || m.tooltip, false, 'nothing opened');
});

test('the px form: hover at a point of the screenshot', async () => {
  const page = await s.open('hover.html');
  const snap = await s.snapshot(s.v, { format: 'full' });
  await s.v.call('hover', { element_token: snap.token('Inert') }); // the pointer starts elsewhere
  const f = snap.find((e) => e.label === 'Products', 'Products').frame;
  const r = await s.v.call('hover', { x: f.x + f.w / 2, y: f.y + f.h / 2 });
  assert.equal(r.structured.effect, 'confirmed', r.text);
  assert.equal((await s.model(page)).cssMenuOpen, true);
});

test('hover as a run_actions step, observed after', async () => {
  const page = await s.open('hover.html');
  const snap = await s.snapshot(s.v, { format: 'full' });
  const r = await s.v.call('run_actions', {
    steps: [{ tool: 'hover', args: { element_token: snap.token('Account') } }],
    observe: { format: 'full' },
  });
  assert.equal(r.structured.steps[0].status, 'ok', r.text);
  assert.equal(r.structured.steps[0].result.effect, 'confirmed', r.text);
  assert.ok(
    r.structured.observation.elements.some((e: any) => e.label === 'Sign out'),
    'the observation lists the opened menu',
  );
  assert.equal((await s.model(page)).jsMenuOpen, true);
});
