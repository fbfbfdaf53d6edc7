// verify_state on native windows (issue 45) on X11 (Xvfb, openbox, AT-SPI), the apps' own state as the
// truth (each app prints its widgets' state on every change): a checkbox that becomes checked only while
// the check waits, a field's value, an ambiguous selector listing its candidates, a window's frame within a
// tolerance and its focus as xwininfo and xprop read them, a page predicate refused as unsupported, and a
// window that is gone. GTK 4 and Qt where installed: the same checkbox and field. No false satisfied.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startVerity, type Verity } from '../helpers/mcp.js';
import {
  missingToolkit,
  missingTools,
  startApp,
  startDesktop,
  until,
  type Desktop,
  type GtkApp,
  type Toolkit,
} from './desktop.js';

const missing = missingTools();
let d: Desktop;
let v: Verity;
let a: GtkApp;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  a = await startApp(d, 'Verity Verify A', ['--many', '3']);
  v = await startVerity([], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
});

const targetOf = (app: GtkApp) => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });

async function tokenOf(app: GtkApp, name: string): Promise<string> {
  // A toolkit may expose its tree a moment after its window maps: asked again until it lists the element.
  let labels = '';
  return until(
    async () => {
      const r = await v.call('get_window_state', { target: targetOf(app), format: 'full', include_screenshot: false });
      assert.equal(r.isError, false, r.text);
      labels = r.structured.elements.map((el: any) => el.label).join(', ');
      return r.structured.elements.find((el: any) => el.label === name)?.element_token as string | undefined;
    },
    `${app.title}'s tree to list ${name} (it listed: ${labels || 'nothing'})`,
    15_000,
  );
}

async function verify(app: GtkApp, expect: unknown[], extra: Record<string, unknown> = {}) {
  const r = await v.call('verify_state', { target: targetOf(app), expect, ...extra });
  assert.equal(r.isError, false, r.text);
  return r.structured;
}

function geometry(id: number) {
  const info = d.x('xwininfo', ['-id', String(id)]);
  const n = (label: string) => Number(new RegExp(`${label}:\\s+(-?\\d+)`).exec(info)?.[1]);
  return { x: n('Absolute upper-left X'), y: n('Absolute upper-left Y'), width: n('Width'), height: n('Height') };
}
const activeWindow = () => Number.parseInt(d.x('xprop', ['-root', '_NET_ACTIVE_WINDOW']).split('#')[1] ?? '0', 16);

describe('verify_state on an X11 GTK 3 window', { skip: missing ?? false }, () => {
  test('a checkbox checked while the check waits: satisfied, and the app says it is checked', async () => {
    assert.equal(a.state().checked, false);
    const subscribe = await tokenOf(a, 'Subscribe');
    const unchecked = await verify(a, [{ element: { name: 'Subscribe' }, checked: true }], { timeout_ms: 400 });
    assert.equal(unchecked.status, 'unsatisfied', JSON.stringify(unchecked));
    // The check starts first; the click lands while it samples.
    const waiting = v.call('verify_state', {
      target: targetOf(a),
      expect: [{ element: { element_token: subscribe }, checked: true }],
      timeout_ms: 8000,
    });
    await new Promise((r) => setTimeout(r, 500));
    const click = await v.call('click', { element_token: subscribe });
    assert.equal(click.structured.effect, 'confirmed', click.text);
    const r = await waiting;
    assert.equal(r.structured.status, 'satisfied', r.text);
    assert.ok(r.structured.samples >= 2, r.text);
    assert.equal(a.state().checked, true, "the app's own state");
  });

  test("a field's value: satisfied for what the app holds, unsatisfied for anything else", async () => {
    const name = await tokenOf(a, 'Name');
    const set = await v.call('set_value', { element_token: name, value: 'Ada Lovelace' });
    assert.equal(set.structured.effect, 'confirmed', set.text);
    await a.waitFor((s) => s.entry === 'Ada Lovelace', 'the entry to hold the name');
    const yes = await verify(a, [
      { element: { name: 'Name' }, value_equals: 'Ada Lovelace' },
      { element: { name: 'Name' }, value_contains: 'Love' },
      { element: { name: 'Name' }, enabled: true },
    ]);
    assert.equal(yes.status, 'satisfied', JSON.stringify(yes));
    const no = await verify(a, [{ element: { name: 'Name' }, value_equals: 'Grace Hopper' }], { timeout_ms: 400 });
    assert.equal(no.status, 'unsatisfied', JSON.stringify(no));
    assert.equal(no.predicates[0].observed.value, 'Ada Lovelace');
  });

  test('three "Open N" buttons: name_contains is ambiguous and lists them; a count is not', async () => {
    const r = await verify(a, [{ element: { name_contains: 'Open' }, enabled: true }], { timeout_ms: 300 });
    assert.equal(r.status, 'unknown', JSON.stringify(r));
    assert.equal(r.reason, 'ambiguous_selector');
    assert.deepEqual(
      r.candidates.map((c: any) => c.name),
      ['Open 0', 'Open 1', 'Open 2'],
    );
    const count = await verify(a, [{ element: { name_contains: 'Open ' }, count: 3 }]);
    assert.equal(count.status, 'satisfied', JSON.stringify(count));
  });

  test('the window: its frame within a tolerance, as xwininfo reads it; its focus, as _NET_ACTIVE_WINDOW says', async () => {
    const g = geometry(a.windowId());
    const near = { x: g.x + 2, y: g.y - 2, width: g.width + 1, height: g.height };
    const within = await verify(a, [
      { window: {}, frame: { ...near, tolerance: 2 } },
      { window: { title: 'Verity Verify A' }, exists: true },
    ]);
    assert.equal(within.status, 'satisfied', `${JSON.stringify(within)} xwininfo ${JSON.stringify(g)}`);
    const outside = await verify(a, [{ window: {}, frame: { ...near, tolerance: 1 } }], { timeout_ms: 300 });
    assert.equal(outside.status, 'unsatisfied', JSON.stringify(outside));
    await until(() => activeWindow() !== 0, 'a window to be active', 10_000);
    const focused = activeWindow() === a.windowId();
    const r = await verify(a, [{ window: { title: 'Verity Verify A' }, focused }]);
    assert.equal(r.status, 'satisfied', `${JSON.stringify(r)}; _NET_ACTIVE_WINDOW says focused=${focused}`);
    const none = await verify(a, [{ window: { title: 'No such window' }, exists: false }]);
    assert.equal(none.status, 'satisfied', JSON.stringify(none));
  });

  test('a page predicate on a window is unknown (unsupported_predicate), never satisfied', async () => {
    const r = await verify(a, [{ text_present: 'Press me' }]);
    assert.equal(r.status, 'unknown', JSON.stringify(r));
    assert.equal(r.reason, 'unsupported_predicate');
  });

  test('a window that is gone: unknown, target_missing', async () => {
    const b = await startApp(d, 'Verity Verify B');
    const target = targetOf(b);
    await b.kill();
    await until(
      () => !d.x('xprop', ['-root', '_NET_CLIENT_LIST']).includes(target.window_id.toString(16)),
      'B to go',
      10_000,
    );
    const r = await v.call('verify_state', {
      target,
      expect: [{ element: { name: 'Subscribe' }, exists: true }],
      timeout_ms: 300,
    });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.status, 'unknown', r.text);
    assert.equal(r.structured.reason, 'target_missing', r.text);
  });
});

for (const toolkit of ['gtk4', 'qt'] as Toolkit[]) {
  const skip = missing ?? missingToolkit(toolkit);
  describe(`verify_state on an X11 ${toolkit} window`, { skip: skip ?? false }, () => {
    test("its checkbox and field, the app's own state as the truth", async () => {
      const app = await startApp(d, `Verity Verify ${toolkit}`, [], toolkit);
      try {
        const check = await tokenOf(app, 'Subscribe');
        // The checkbox's label is an element of its own named Subscribe too (GTK 4, Qt): the role says which.
        const before = await verify(app, [{ element: { role: 'checkbox', name: 'Subscribe' }, checked: false }]);
        assert.equal(before.status, 'satisfied', JSON.stringify(before));
        const click = await v.call('click', { element_token: check });
        assert.equal(click.structured.effect, 'confirmed', click.text);
        await app.waitFor((s) => s.checked === true, 'the app to say its checkbox is checked');
        const name = await tokenOf(app, 'Name');
        const set = await v.call('set_value', { element_token: name, value: 'Grace' });
        assert.equal(set.structured.effect, 'confirmed', set.text);
        await app.waitFor((s) => s.entry === 'Grace', 'the app to hold the name');
        // A newer observation (the Name field's token) made the checkbox's token stale: its fresh one.
        const fresh = await tokenOf(app, 'Subscribe');
        const r = await verify(app, [
          { element: { element_token: fresh }, checked: true },
          { element: { name: 'Name' }, value_equals: 'Grace' },
        ]);
        assert.equal(r.status, 'satisfied', JSON.stringify(r));
        const no = await verify(app, [{ element: { role: 'checkbox', name: 'Subscribe' }, checked: false }], {
          timeout_ms: 300,
        });
        assert.equal(no.status, 'unsatisfied', JSON.stringify(no));
      } finally {
        await app.kill();
      }
    });
  });
}
