// An undriven Firefox (ESR) on the native route: its web content is never confirmed through accessibility,
// and type_text there goes by XTest keystrokes (its accessibility insertion never reaches the page), with
// an escalation that does not send the keys again. The page's own truth: its title shows the field's value
// (document.title = value on input), read from the X window's title.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { missingTools, startDesktop, until, type Desktop } from './desktop.js';

const FIREFOX = '/usr/bin/firefox-esr';
const missing = missingTools() ?? (existsSync(FIREFOX) ? null : `${FIREFOX} is missing (apt firefox-esr)`);
let d: Desktop;
let v: Verity;
let dir: string;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  dir = mkdtempSync(join(tmpdir(), 'verity-firefox-'));
  writeFileSync(
    join(dir, 'form.html'),
    '<!doctype html><title>FF start</title><input id="f" autofocus style="width:400px;height:40px;font-size:20px" oninput="document.title = \'FF:\' + this.value">',
  );
  mkdirSync(join(dir, 'profile')); // Firefox starts no window for a --profile that does not exist
  d.spawn(FIREFOX, ['--no-remote', '--profile', join(dir, 'profile'), `file://${join(dir, 'form.html')}`], {
    GNOME_ACCESSIBILITY: '1',
    MOZ_DISABLE_CONTENT_SANDBOX: '1',
  });
  v = await startVerity([], d.env);
});
after(async () => {
  await v?.close();
  await d?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('native route: an undriven Firefox', { skip: missing ?? false }, () => {
  test('type_text into its page (px form, then by token) goes by keystrokes, lands, and is unverifiable with a "verify" escalation', async () => {
    const win = await until(
      async () => {
        const r = await v.call('list_windows');
        return (r.structured.windows as any[]).find((w) => /FF start/.test(w.title ?? ''));
      },
      'the Firefox window',
      60_000,
      500,
    );
    const target = { kind: 'window', pid: win.pid, window_id: win.window_id };
    // Firefox builds its page's tree a while after its window shows (longer on a loaded machine): poll for a
    // snapshot that lists the page's field, and name what the last one listed if none does.
    let listed = '';
    const field = await until(
      async () => {
        const r = await v.call('get_window_state', {
          format: 'full',
          target,
          include_screenshot: false,
          max_elements: 5000,
        });
        if (r.isError) return null;
        const web = (r.structured.elements as any[]).filter((e) => e.in_web_content);
        listed = web.map((e) => `${e.role}:${e.label}`).join(', ');
        return web.find((e) => /entry|text/.test(e.role)) ?? null;
      },
      "a snapshot of the Firefox window that lists its page's field",
      30_000,
      500,
    ).catch((e: Error) => assert.fail(`${e.message}; its web content listed: ${listed || 'nothing'}`));
    // The px form on the field, as the escalation of a token's insertion used to advise.
    const r = await v.call('type_text', {
      target,
      x: field.frame.x + 20,
      y: field.frame.y + field.frame.h / 2,
      text: 'hé 1',
      delivery_mode: 'foreground',
      delay_ms: 0,
    });
    assert.notEqual(r.structured.effect, 'confirmed', r.text);
    assert.equal(r.structured.effect, 'unverifiable', r.text);
    assert.equal(r.structured.route, 'synthetic_events', r.text);
    assert.equal(r.structured.escalation?.target, 'verify', r.text);
    await until(
      async () => {
        const l = await v.call('list_windows');
        return (l.structured.windows as any[]).find(
          (w) => w.window_id === win.window_id && w.title?.startsWith('FF:hé 1'),
        );
      },
      'the page to hold the typed text (its title)',
      10_000,
      200,
    );

    // By its token: the same keystrokes (Firefox takes the accessibility insertion and shows nothing), and
    // an escalation that does not lead back to a route that failed or would type the text a second time.
    const byToken = await v.call('type_text', {
      element_token: field.element_token,
      text: 'xy',
      delivery_mode: 'foreground',
      delay_ms: 0,
    });
    assert.equal(byToken.structured.effect, 'unverifiable', byToken.text);
    assert.equal(byToken.structured.route, 'synthetic_events', byToken.text);
    assert.equal(byToken.structured.escalation?.target, 'verify', byToken.text);
    await until(
      async () => {
        const l = await v.call('list_windows');
        return (l.structured.windows as any[]).find(
          (w) => w.window_id === win.window_id && w.title?.startsWith('FF:hé 1xy'),
        );
      },
      'the page to hold the text typed by token (its title)',
      10_000,
      200,
    );

    // set_value has no px form: its escalation names the calls that have one (click and type_text with x, y).
    const set = await v.call('set_value', { element_token: field.element_token, value: 'zz' });
    assert.notEqual(set.structured.effect, 'confirmed', set.text);
    assert.equal(set.structured.escalation?.target, 'pixel', set.text);
    assert.match(set.structured.escalation.reason, /set_value has no px form/, set.text);
    assert.match(set.structured.escalation.reason, /type_text with the same x, y/, set.text);
  });
});
