// What an action changed, in its result (issue 45 item 3), on a real Chromium through the real MCP SDK client:
// a click that opens a dialog (appeared, dialog), typing into a field named only by a token from `changes`,
// a click that closes it and changes a value, a state and the page's text (removed, changed, text_added), a
// click that adds more than the cap (changes_complete false, a cut-off token still good), and a link that
// navigates (navigated, the new page's elements with tokens that resolve). The truth is the page's own state.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'puppeteer-core';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
let page: Page;
before(async () => {
  s = await browserSuite();
  page = await s.open('changes.html');
});
after(async () => {
  await s?.close();
});

type Named = { role: string; name: string; element_token: string };
const named = (list: Named[] | undefined, name: string): Named => {
  const hit = list?.find((e) => e.name === name);
  assert.ok(hit, `no ${name} in ${JSON.stringify(list)}`);
  return hit;
};

test('changes: a dialog opens, is typed into and closed, by tokens from the results alone; then a cap and a navigation', async () => {
  const snap = await s.snapshot(s.v);
  const observed = snap.result.structured.snapshot_id as string;

  // 1. A click that opens a dialog: its elements appeared, the dialog is said, nothing else.
  const open = await s.v.call('click', { element_token: snap.token('Open dialog') });
  assert.equal(open.structured.effect, 'confirmed', open.text);
  assert.equal(open.structured.changes_complete, true, open.text);
  const opened = open.structured.changes;
  assert.equal(opened.dialog?.name, 'Confirm order', open.text);
  assert.equal(opened.dialog?.role, 'dialog', open.text);
  const note = named(opened.appeared, 'Note');
  const place = named(opened.appeared, 'Place order');
  named(opened.appeared, 'Cancel');
  assert.equal(opened.removed, undefined, 'nothing went away');
  assert.ok(note.element_token.startsWith(`${observed}:`), 'new elements are tokens of the held observation');
  assert.match(open.text, /changes dialog: dialog "Confirm order"\n/);
  assert.equal((await s.model(page)).dialogOpen, true);

  // 2. A token from `changes` resolves like one of get_window_state's; the observation's own tokens stay good.
  const typed = await s.v.call('type_text', { element_token: note.element_token, text: 'ring twice' });
  assert.equal(typed.structured.effect, 'confirmed', typed.text);
  assert.equal((await s.model(page)).noteValue, 'ring twice');
  assert.equal(typed.structured.changes, undefined, "the typed field's own value is its evidence, not a change");
  assert.equal(typed.structured.changes_complete, true);

  // 3. Placing the order: the dialog went, a value, a state and the page's text changed.
  const placed = await s.v.call('click', { element_token: place.element_token });
  assert.equal(placed.structured.effect, 'confirmed', placed.text);
  const c = placed.structured.changes;
  for (const gone of ['Note', 'Place order', 'Cancel']) named(c.removed, gone);
  const count = named(c.changed, 'Count') as Named & { value?: string; was?: string };
  assert.deepEqual([count.value, count.was], ['1', '0'], placed.text);
  assert.equal(count.element_token, snap.token('Count'), 'a changed element keeps its token');
  const save = named(c.changed, 'Save') as Named & { enabled?: boolean };
  assert.equal(save.enabled, true);
  assert.deepEqual(c.text_added, ['Order placed']);
  const truth = await s.model(page);
  assert.deepEqual([truth.placed, truth.note, truth.count, truth.saveEnabled], [1, 'ring twice', '1', true]);
  // The Save button, enabled now, is clicked by the token the first observation gave it.
  const saved = await s.v.call('click', { element_token: save.element_token });
  assert.equal(saved.structured.effect === 'confirmed' || saved.structured.effect === 'unverifiable', true, saved.text);

  // 4. More than the cap appeared: said, never silently cut; a listed token is good.
  const many = await s.v.call('click', { element_token: snap.token('Add many') });
  assert.equal(many.structured.changes_complete, false, many.text);
  assert.equal(many.structured.changes.appeared.length, 40, many.text);
  assert.equal(many.structured.changes.more.appeared, 10, many.text);
  assert.match(many.text, /changes_complete: false \(10 more appeared/);
  const item = named(many.structured.changes.appeared, 'Item 40');
  const clicked = await s.v.call('click', { element_token: item.element_token });
  assert.equal(clicked.structured.effect, 'confirmed', clicked.text);
  assert.equal((await s.model(page)).clicked, 'Item 40');
  // The cut ones are in the observation too: a get_window_state lists them (a new observation, new tokens).

  // 5. A link that navigates: the new page's elements, tokens of a new observation that resolve; old ones are stale.
  const nav = await s.v.call('click', { element_token: snap.token('Next page') });
  assert.ok(['confirmed', 'unverifiable'].includes(nav.structured.effect), nav.text);
  const moved = nav.structured.changes;
  assert.match(moved.navigated, /plain\.html$/, nav.text);
  const text = named(moved.appeared, 'Text');
  assert.ok(!text.element_token.startsWith(`${observed}:`), 'a new document is a new observation');
  const typedThere = await s.v.call('type_text', { element_token: text.element_token, text: 'after' });
  assert.equal(typedThere.structured.effect, 'confirmed', typedThere.text);
  const stale = await s.v.call('click', { element_token: snap.token('Open dialog') });
  assert.equal(stale.structured.refusal?.code, 'stale_element_token', stale.text);
});

test('an action on a tab never observed carries no changes', async () => {
  await s.v.call('page', { action: 'new_tab', url: s.fx.url('changes.html') });
  const r = await s.v.call('press_key', { key: 'Tab' });
  assert.equal(r.isError, false, r.text);
  assert.equal(r.structured.changes, undefined, r.text);
  assert.equal(r.structured.changes_complete, undefined, r.text);
});

test('an action on a page with frames re-reads every frame: the frames elements are not said removed', async () => {
  const framed = await s.open('frames.html');
  await framed.waitForFunction('window.__ready === true', { timeout: 5000 });
  const snap = await s.snapshot(s.v);
  const typed = await s.v.call('type_text', { element_token: snap.token('Top'), text: 'x' });
  assert.equal(typed.structured.effect, 'confirmed', typed.text);
  assert.equal(typed.structured.changes_complete, true, typed.text);
  assert.equal(typed.structured.changes?.removed, undefined, typed.text);
});

test('run_actions page steps: a tab opened and observed in one call; a dialog answered with the closing check as its expect', async () => {
  // 1. A new tab and its observation in one call: the step's result names the tab, the observation is of it.
  const opened = await s.v.call('run_actions', {
    steps: [{ tool: 'page', args: { action: 'new_tab', url: s.fx.url('dialogs.html') } }],
    observe: {},
  });
  assert.equal(opened.isError, false, opened.text);
  const step = opened.structured.steps[0];
  assert.equal(step.status, 'ok', opened.text);
  assert.equal(typeof step.result.tab_id, 'string', opened.text);
  const observation = opened.structured.observation;
  assert.equal(observation.target.tab_id, step.result.tab_id, opened.text);
  assert.match(observation.outline, /button 'Prompt' \[t=\d+\]/, opened.text);

  // 2. A prompt opened by a click, answered in a batch whose step checks the page's answer.
  const page = await s.open('dialogs.html');
  const snap = await s.snapshot(s.v);
  const click = await s.v.call('click', { element_token: snap.token('Prompt') });
  assert.equal(click.structured.effect, 'unverifiable', click.text);
  const answered = await s.v.call('run_actions', {
    steps: [
      {
        tool: 'page',
        args: { action: 'handle_dialog', accept: true, prompt_text: 'Ada' },
        expect: [{ text_present: 'Answer: "Ada"' }],
      },
    ],
  });
  assert.equal(answered.isError, false, answered.text);
  assert.equal(answered.structured.steps[0].expect.status, 'satisfied', answered.text);
  assert.equal((await s.model(page)).answer, 'Ada');

  // 3. An expect the page does not meet fails the step: never satisfied from what the agent hoped.
  const again = await s.v.call('click', { element_token: snap.token('Prompt') });
  assert.equal(again.structured.effect, 'unverifiable', again.text);
  const unmet = await s.v.call('run_actions', {
    steps: [
      {
        tool: 'page',
        args: { action: 'handle_dialog', accept: true, prompt_text: 'Grace' },
        expect: [{ text_present: 'Answer: "Ada"' }],
      },
    ],
  });
  assert.equal(unmet.isError, true, unmet.text);
  assert.equal(unmet.structured.steps[0].status, 'failed', unmet.text);
  assert.notEqual(unmet.structured.steps[0].expect.status, 'satisfied', unmet.text);
  assert.equal((await s.model(page)).answer, 'Grace');
});
