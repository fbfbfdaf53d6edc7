// What an action changed, on the native route (issue 45 item 3): a real GTK 3 app (app.py --reveal) under
// Xvfb + AT-SPI. A click that shows hidden widgets says they appeared, with tokens that drive them; keys typed
// to the window show the field they changed, with what it held before. The truth is the app's own state.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startApp, startDesktop, type Desktop, type GtkApp } from './desktop.js';
import { windowState } from './pointer-cases.js';

const missing = missingTools();
let d: Desktop;
let v: Verity;
let app: GtkApp;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  app = await startApp(d, 'Verity Changes', ['--reveal']);
  v = await startVerity([], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

const win = () => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });
type Named = { role: string; name: string; element_token: string; value?: string; was?: string };
const named = (list: Named[] | undefined, name: string): Named => {
  const hit = list?.find((e) => e.name === name);
  assert.ok(hit, `no ${name} in ${JSON.stringify(list)}`);
  return hit;
};

describe('native route: changes', { skip: missing ?? false }, () => {
  test('a click that shows widgets says they appeared; their tokens drive them; typed keys show as a changed value', async () => {
    const s = await windowState(v, win());
    const observed = s.r.structured.snapshot_id as string;
    assert.ok(!s.elements.some((e) => e.label === 'Extra'), 'hidden before the click');

    const shown = await v.call('click', { element_token: s.token('Show more') });
    assert.equal(shown.isError, false, shown.text);
    await app.waitFor((st: any) => st.more_shown === true, 'the hidden box shown');
    assert.equal(shown.structured.changes_complete, true, shown.text);
    const extra = named(shown.structured.changes.appeared, 'Extra');
    named(shown.structured.changes.appeared, 'Extra button');
    assert.ok(extra.element_token.startsWith(`${observed}:`), 'a token of the held observation');

    // The token from `changes` drives the field it names, as one of get_window_state's would.
    const typed = await v.call('type_text', { element_token: extra.element_token, text: 'more' });
    assert.equal(typed.structured.effect, 'confirmed', typed.text);
    await app.waitFor((st: any) => st.extra === 'more', 'the Extra field holding "more"');

    // Keys typed to the window (no element named) land in the focused field: its new value is a change. The
    // field is focused by typing its first letter by token (that value is the action's own evidence).
    const first = await v.call('type_text', { element_token: s.token('Name'), text: 'A' });
    assert.equal(first.structured.effect, 'confirmed', first.text);
    await app.waitFor((st) => st.focus === 'Name' && st.entry === 'A', 'the Name field focused, holding "A"');
    const keys = await v.call('type_text', { target: win(), text: 'da' });
    assert.equal(keys.isError, false, keys.text);
    await app.waitFor((st) => st.entry === 'Ada', 'the Name field holding "Ada"');
    const name = named(keys.structured.changes?.changed, 'Name');
    assert.deepEqual([name.value, name.was], ['Ada', 'A'], keys.text);
    assert.equal(name.element_token, s.token('Name'), 'a changed element keeps its token');
    assert.match(keys.text, /changes changed: \S+ "Name" s[1-9a-f][0-9a-f]{0,7}:\d+ = "Ada" \(was "A"\)/);
  });
});
