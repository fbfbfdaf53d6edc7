// Native computer-use calls read well where operators decide (issue 44 item 9): a real `verity start` on a
// real desktop (Xvfb, openbox, AT-SPI) whose policy holds set_window_frame and invoke_menu, the GTK 3 test
// app with its menu bar, and a real Control UI page. Each held call's card names the app, leads with what the
// call does in words (`x 140, y 120, 560×460 on window … (pid …)`, `Format › Bold on window …`), keeps the
// arguments exactly as they will run below it, and approving it runs the call: the frame as xwininfo reads
// it, the app's own Bold state.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { sharedChromium, type TestBrowser } from '../helpers/chromium.js';
import { approveCard, openControlUi } from '../helpers/control-ui.js';
import { startGateway, type Connection, type Gateway } from '../helpers/gateway.js';
import { missingTools, startApp, startDesktop, type Desktop, type GtkApp } from './desktop.js';

const missing = missingTools();
const dir = mkdtempSync(join(tmpdir(), 'verity-native-approval-lines-'));
let d: Desktop;
let app: GtkApp;
let gw: Gateway;
let chrome: TestBrowser;
let page: Page;
let agent: Connection;

before(async () => {
  if (missing) return;
  d = await startDesktop();
  app = await startApp(d, 'Approval Lines', ['--menus']);
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ require_approval: ['set_window_frame', 'invoke_menu'] }));
  // 40 s: longer than every wait below, so no card times out under a loaded machine.
  gw = await startGateway(
    ['--policy', join(dir, 'policy.json'), '--caps', 'windows,menus', '--approval-timeout-s', '40'],
    { ...d.env, SHELL: '/bin/sh', VERITY_CONFIG_DIR: dir },
  );
  chrome = await sharedChromium();
  page = await openControlUi(chrome, gw);
  agent = await gw.connect();
});
after(async () => {
  await agent?.disconnect();
  await chrome?.close();
  await gw?.close();
  await d?.close();
  rmSync(dir, { recursive: true, force: true });
});

function geometry(id: number) {
  const info = d.x('xwininfo', ['-id', String(id)]);
  const n = (label: string) => Number(new RegExp(`${label}:\\s+(-?\\d+)`).exec(info)?.[1]);
  return [n('Absolute upper-left X'), n('Absolute upper-left Y'), n('Width'), n('Height')];
}

describe('approval cards of native calls', { skip: missing ?? false }, () => {
  const win = () => ({ kind: 'window', pid: app.pid, window_id: app.windowId() });

  test('set_window_frame: the card names the app and reads "x 140, y 120, 560×460 on window …"; approved, xwininfo reads that frame', async () => {
    const sent = { target: win(), x: 140, y: 120, width: 560, height: 460 };
    const pending = agent.call('set_window_frame', sent);
    const card = await approveCard(page, 'set_window_frame');
    assert.match(card.target, new RegExp(`\\(pid ${app.pid}\\)`), card.target);
    assert.equal(card.line, `x 140, y 120, 560×460 on window ${app.windowId()} (pid ${app.pid})`);
    assert.deepEqual(card.args, sent, 'the arguments below the line are exactly what runs');
    const r = await pending;
    assert.equal(r.structured.effect, 'confirmed', r.text);
    assert.deepEqual(geometry(app.windowId()), [140, 120, 560, 460]);
  });

  test('invoke_menu: the card reads "Format › Bold on window …"; approved, the app holds Bold on', async () => {
    assert.equal(app.state().bold, false);
    const sent = { target: win(), path: ['Format', 'Bold'] };
    const pending = agent.call('invoke_menu', sent);
    const card = await approveCard(page, 'invoke_menu');
    assert.equal(card.line, `Format › Bold on window ${app.windowId()} (pid ${app.pid})`);
    assert.deepEqual(card.args, sent);
    const r = await pending;
    await app.waitFor((s) => !!s.bold, `Bold on (${r.text})`);
    assert.equal(r.structured.effect, 'confirmed', r.text);
  });
});
