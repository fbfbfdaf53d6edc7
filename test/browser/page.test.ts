// The `page` tool: tabs, history, page reads, waiting, screenshots, dialogs, file inputs and the
// JavaScript gate. Each case checks the browser's own state over an independent CDP connection.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserSuite, type Suite } from '../helpers/suite.js';

let s: Suite;
// set_input_files reads only under a root the operator allowed (the contract: paths only under allowed roots).
const uploads = mkdtempSync(join(tmpdir(), 'verity-upload-'));
before(async () => {
  s = await browserSuite(['--upload-root', uploads]);
});
after(async () => {
  await s?.close();
  rmSync(uploads, { recursive: true, force: true });
});

describe('tabs', () => {
  test('list_tabs, new_tab, select_tab, close_tab; a token of a closed tab is refused', async () => {
    await s.open('plain.html');
    const listed = await s.v.call('page', { action: 'list_tabs' });
    assert.equal(listed.isError, false, listed.text);
    const first = listed.structured.current_tab_id as string;
    const firstTab = listed.structured.tabs.find((t: any) => t.tab_id === first);
    assert.equal(firstTab?.url, s.fx.url('plain.html'));
    assert.equal(firstTab?.title, 'Plain controls fixture');

    const opened = await s.v.call('page', { action: 'new_tab', url: s.fx.url('clicks.html') });
    assert.equal(opened.isError, false, opened.text);
    const second = opened.structured.tab_id as string;
    assert.ok(second && second !== first);
    assert.equal(opened.structured.url, s.fx.url('clicks.html'));
    assert.equal(opened.structured.title, 'Clicks fixture');
    assert.deepEqual(
      (await s.chrome.pageTargets()).filter((t) => t.targetId === second).map((t) => t.url),
      [s.fx.url('clicks.html')],
      'the browser has the new tab',
    );
    const both = await s.v.call('page', { action: 'list_tabs' });
    assert.deepEqual(
      both.structured.tabs
        .map((t: any) => t.tab_id)
        .filter((id: string) => id === first || id === second)
        .sort(),
      [first, second].sort(),
    );
    assert.equal(both.structured.current_tab_id, second, 'new_tab makes the new tab current');

    // The new tab is current: a snapshot without a target is of it, and its token clicks in it.
    const secondPage = await s.chrome.page(s.fx.url('clicks.html'));
    const snap = await s.snapshot(s.v);
    assert.equal(snap.result.structured.target.tab_id, second);
    const clicked = await s.v.call('right_click', { element_token: snap.token('Context me') });
    assert.equal(clicked.structured.effect, 'confirmed', clicked.text);
    assert.equal((await s.model(secondPage)).contextmenu, 1);

    const selected = await s.v.call('page', { action: 'select_tab', tab_id: first });
    assert.equal(selected.structured.tab_id, first, selected.text);
    assert.equal(selected.structured.url, s.fx.url('plain.html'));
    const back = await s.snapshot(s.v);
    assert.equal(back.result.structured.target.tab_id, first);
    assert.ok(back.elements.some((e) => e.label === 'Increment'));

    const stale = await s.snapshot(s.v, { target: { kind: 'tab', tab_id: second } });
    const closed = await s.v.call('page', { action: 'close_tab', tab_id: second });
    assert.equal(closed.isError, false, closed.text);
    assert.ok(!(await s.chrome.pageTargets()).some((t) => t.targetId === second), 'the tab is gone from the browser');
    const after = await s.v.call('page', { action: 'list_tabs' });
    assert.ok(!after.structured.tabs.some((t: any) => t.tab_id === second));
    const r = await s.v.call('click', { element_token: stale.token('Context me') });
    assert.equal(r.isError, true);
    assert.ok(['target_not_found', 'stale_element_token'].includes(r.structured.refusal?.code), r.text);
    const gone = await s.v.call('page', { action: 'select_tab', tab_id: second });
    assert.equal(gone.structured.refusal?.code, 'target_not_found', gone.text);
  });
});

describe('history', () => {
  test('navigate, back, forward, reload; actions work on the page history brought back', async () => {
    const page = await s.open('plain.html');
    const nav = await s.v.call('page', { action: 'navigate', url: s.fx.url('clicks.html') });
    assert.equal(nav.structured.url, s.fx.url('clicks.html'), nav.text);
    assert.equal(nav.structured.title, 'Clicks fixture');
    assert.equal(page.url(), s.fx.url('clicks.html'));

    const back = await s.v.call('page', { action: 'back' });
    assert.equal(back.structured.url, s.fx.url('plain.html'), back.text);
    await page.waitForFunction('window.__ready === true');
    assert.equal(page.url(), s.fx.url('plain.html'));
    const snap = await s.snapshot(s.v);
    const click = await s.v.call('click', { element_token: snap.token('Increment') });
    assert.equal(click.structured.effect, 'confirmed', click.text);
    assert.equal((await s.model(page)).clicks, 1);

    const fwd = await s.v.call('page', { action: 'forward' });
    assert.equal(fwd.structured.url, s.fx.url('clicks.html'), fwd.text);
    assert.equal(page.url(), s.fx.url('clicks.html'));

    await page.evaluate('window.__marker = 42');
    const reload = await s.v.call('page', { action: 'reload' });
    assert.equal(reload.structured.url, s.fx.url('clicks.html'), reload.text);
    assert.equal(await page.evaluate('typeof window.__marker'), 'undefined', 'the document was reloaded');
    const snap2 = await s.snapshot(s.v);
    const dbl = await s.v.call('double_click', { element_token: snap2.token('Double me') });
    assert.equal(dbl.structured.effect, 'confirmed', dbl.text);
    assert.equal((await s.model(page)).dblclick, 1);
  });

  test('navigate to a non-absolute URL is refused', async () => {
    const page = await s.open('plain.html');
    const r = await s.v.call('page', { action: 'navigate', url: 'not a url' });
    assert.equal(r.structured.refusal?.code, 'invalid_arguments', r.text);
    assert.equal(page.url(), s.fx.url('plain.html'));
  });
});

describe('reading the page', () => {
  test('get_text returns the page text, title and URL', async () => {
    await s.open('plain.html');
    const r = await s.v.call('page', { action: 'get_text' });
    assert.equal(r.isError, false, r.text);
    assert.match(r.structured.text, /Plain controls/);
    assert.match(r.structured.text, /Increment/);
    assert.equal(r.structured.title, 'Plain controls fixture');
    assert.equal(r.structured.url, s.fx.url('plain.html'));
  });

  test('query_dom returns matches with the asked attributes; a bad selector is refused', async () => {
    await s.open('plain.html');
    const r = await s.v.call('page', {
      action: 'query_dom',
      css_selector: '#sel option',
      attributes: ['value', 'data-none'],
    });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.count, 3);
    assert.deepEqual(
      r.structured.matches.map((m: any) => m.attributes.value),
      ['a', 'b', 'c'],
    );
    assert.deepEqual(
      r.structured.matches.map((m: any) => m.text),
      ['Alpha', 'Beta', 'Gamma'],
    );
    assert.equal(r.structured.matches[0].attributes['data-none'], null);
    const bad = await s.v.call('page', { action: 'query_dom', css_selector: '##nope' });
    assert.equal(bad.structured.refusal?.code, 'invalid_arguments', bad.text);
  });

  test('wait_for text that a timer adds later; a timeout names what it waited for', async () => {
    const page = await s.open('dialogs.html');
    assert.equal(await page.evaluate('window.__later(300, "Loaded later")'), false, 'not there when the wait starts');
    const r = await s.v.call('page', { action: 'wait_for', text: 'Loaded later', timeout_ms: 10_000 });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.found, true);
    assert.ok(await page.$('#later'), 'the page holds the text');
    const sel = await s.v.call('page', { action: 'wait_for', css_selector: '#later', timeout_ms: 1000 });
    assert.equal(sel.structured.found, true, sel.text);
    const late = await s.v.call('page', { action: 'wait_for', text: 'Never shows up', timeout_ms: 300 });
    assert.equal(late.isError, true);
    assert.equal(late.structured.refusal?.code, 'timeout', late.text);
    assert.match(late.structured.refusal.message, /Never shows up/);
  });

  test('screenshot returns a PNG image of the tab', async () => {
    await s.open('plain.html');
    const raw = await s.v.client.callTool({ name: 'page', arguments: { action: 'screenshot' } });
    const images = (raw.content as Array<{ type: string; data?: string; mimeType?: string }>).filter(
      (c) => c.type === 'image',
    );
    assert.equal(images.length, 1);
    assert.equal(images[0].mimeType, 'image/png');
    const png = Buffer.from(images[0].data!, 'base64');
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    const structured = raw.structuredContent as { width: number; height: number };
    assert.equal(png.readUInt32BE(16), structured.width);
    assert.equal(png.readUInt32BE(20), structured.height);
    assert.ok(structured.width > 100 && structured.height > 100);
  });
});

describe('dialogs', () => {
  test('a click that opens a prompt returns; handle_dialog answers it and the page gets the answer', async () => {
    const page = await s.open('dialogs.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('click', { element_token: snap.token('Prompt') });
    assert.equal(r.isError, false, r.text);
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.equal(r.structured.escalation?.target, 'page');
    assert.ok(
      r.structured.evidence.some((e: any) => e.kind === 'dialog'),
      r.text,
    );
    // While the dialog is open, reading the page is refused at once rather than hanging.
    const blocked = await s.v.call('get_window_state', { format: 'full', include_screenshot: false });
    assert.equal(blocked.structured.refusal?.code, 'dialog_open', blocked.text);
    const handled = await s.v.call('page', { action: 'handle_dialog', accept: true, prompt_text: 'Ada' });
    assert.equal(handled.isError, false, handled.text);
    assert.equal(handled.structured.handled, 'prompt');
    assert.equal(handled.structured.message, 'Your name?');
    assert.equal((await s.model(page)).answer, 'Ada');
    const none = await s.v.call('page', { action: 'handle_dialog', accept: true });
    assert.equal(none.structured.refusal?.code, 'target_not_found', none.text);
  });

  test('typing into a field whose input handler opens a dialog returns unverifiable instead of hanging', async () => {
    const page = await s.open('dialogs.html');
    const snap = await s.snapshot(s.v);
    const r = await s.v.call('type_text', { element_token: snap.token('Alerts on input'), text: 'x' });
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.equal(r.structured.escalation?.target, 'page');
    const handled = await s.v.call('page', { action: 'handle_dialog', accept: true });
    assert.equal(handled.structured.handled, 'alert', handled.text);
    assert.equal((await s.model(page)).typed, 'x');
  });

  test('alert accepted and confirm dismissed; the page carries on each time', async () => {
    const page = await s.open('dialogs.html');
    let snap = await s.snapshot(s.v);
    const a = await s.v.call('click', { element_token: snap.token('Alert') });
    assert.equal(a.structured.effect, 'unverifiable', a.text);
    const ok = await s.v.call('page', { action: 'handle_dialog', accept: true });
    assert.equal(ok.structured.handled, 'alert', ok.text);
    assert.equal((await s.model(page)).alerted, 1);
    snap = await s.snapshot(s.v);
    const c = await s.v.call('click', { element_token: snap.token('Confirm') });
    assert.equal(c.structured.effect, 'unverifiable', c.text);
    const no = await s.v.call('page', { action: 'handle_dialog', accept: false });
    assert.equal(no.structured.handled, 'confirm', no.text);
    assert.equal((await s.model(page)).confirmed, false);
  });
});

describe('file inputs and scripts', () => {
  test('set_input_files: the page sees the file, its name and its content', async () => {
    const dir = mkdtempSync(join(uploads, 'case-'));
    try {
      const file = join(dir, 'hello.txt');
      writeFileSync(file, 'hi there');
      const page = await s.open('upload.html');
      const snap = await s.snapshot(s.v);
      const r = await s.v.call('page', {
        action: 'set_input_files',
        element_token: snap.token('Attachment'),
        paths: [file],
      });
      assert.equal(r.isError, false, r.text);
      assert.deepEqual(r.structured.files, ['hello.txt']);
      assert.equal(r.structured.effect, 'confirmed');
      await page.waitForFunction('JSON.parse(window.__model()).text !== null');
      const m = await s.model(page);
      assert.deepEqual(m.names, ['hello.txt']);
      assert.equal(m.changes, 1);
      assert.equal(m.text, 'hi there');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('set_input_files on an element that is not a file input is refused', async () => {
    await s.open('plain.html');
    const snap = await s.snapshot(s.v);
    writeFileSync(join(uploads, 'any.txt'), 'x');
    const r = await s.v.call('page', {
      action: 'set_input_files',
      element_token: snap.token('Text'),
      paths: [join(uploads, 'any.txt')],
    });
    assert.equal(r.isError, true);
    assert.equal(r.structured.refusal?.code, 'invalid_arguments', r.text);
  });

  test('execute_javascript is refused with not_permitted by default, and nothing runs', async () => {
    const page = await s.open('plain.html');
    const r = await s.v.call('page', { action: 'execute_javascript', code: 'document.title = "pwned"; 1' });
    assert.equal(r.isError, true);
    assert.equal(r.structured.refusal?.code, 'not_permitted', r.text);
    assert.equal(await page.title(), 'Plain controls fixture');
  });
});
