// launch_app and kill_app on X11 (issue 44 item 1, --caps apps) under Xvfb + openbox, through the Linux
// desktop route and the nut-js backend: the GTK test app started by desktop-file id (a desktop file in a
// temporary XDG data dir) and by path, each verdict checked against the window manager's and the kernel's own
// state on their own connections (xprop's _NET_CLIENT_LIST, _NET_WM_PID and WM_NAME; /proc); and the
// refusals, each before anything starts: an app --allow-launch does not name, a shell not named itself (also
// behind a named desktop file), a pid this session did not launch, the capability off.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync } from 'node:fs';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { launchFixture, type LaunchFixture } from './apps-launch.js';
import { alive, missingTools, startDesktop, until, type Desktop } from './desktop.js';

const missing = missingTools();
let d: Desktop;
let f: LaunchFixture;
let v: Verity;
let nut: Verity;
let off: Verity;
const launched: number[] = [];

/** A secret in Verity's own environment that a launched app must not inherit. */
const SECRET = 'VERITY_TEST_LAUNCH_SECRET';

before(async () => {
  if (missing) return;
  d = await startDesktop();
  f = launchFixture('Launched From Desktop');
  const env = { ...d.env, XDG_DATA_DIRS: f.dataDirs, [SECRET]: 'do-not-inherit' };
  const allow = ['--allow-launch', `${f.desktopId},${f.wrapper},${f.shellId}`];
  v = await startVerity(['--caps', 'apps', ...allow], env);
  nut = await startVerity(['--native-backend', 'nutjs', '--caps', 'apps', ...allow], env);
  off = await startVerity(allow, env);
});
after(async () => {
  await v?.close();
  await nut?.close();
  await off?.close();
  await f?.close(launched);
  await d?.close();
});

/** A root property's window list, as xprop prints it (ids in hex). */
const clientList = () =>
  (d.x('xprop', ['-root', '_NET_CLIENT_LIST']).split('#')[1] ?? '')
    .split(',')
    .map((s) => Number.parseInt(s.trim(), 16))
    .filter((n) => n > 0);
const netWmPid = (id: number) => Number(/= (\d+)/.exec(d.x('xprop', ['-id', String(id), '_NET_WM_PID']))?.[1]);
const wmName = (id: number) => /= "(.*)"$/.exec(d.x('xprop', ['-id', String(id), '_NET_WM_NAME']))?.[1];
const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

/** The launched window as the window manager has it, checked against what the result says. */
function assertListed(r: { structured: any; text: string }, title: string) {
  assert.equal(r.structured.effect, 'confirmed', r.text);
  const { pid, window } = r.structured;
  assert.ok(pid > 0, r.text);
  launched.push(pid);
  assert.equal(window.kind, 'window');
  assert.ok(clientList().includes(window.window_id), "openbox's _NET_CLIENT_LIST holds the window");
  assert.equal(netWmPid(window.window_id), window.pid, "the window's _NET_WM_PID is the result's");
  assert.equal(window.pid, pid, 'the wrapper execs the app: the window is the launched pid itself');
  assert.equal(wmName(window.window_id), title, "the window's title per xprop");
  assert.equal(window.title, title);
}

describe('launch_app and kill_app on X11 (openbox)', { skip: missing ?? false }, () => {
  test('launch_app by desktop-file id: confirmed, its pid and window as openbox lists them [matrix x11 gtk3 launch_app confirmed]', async () => {
    const r = await v.call('launch_app', { app: f.desktopId });
    assertListed(r, f.desktopTitle);
    const listed = await v.call('list_windows');
    assert.ok(
      listed.structured.windows.some((w: any) => w.window_id === r.structured.window.window_id),
      'list_windows has it',
    );
    // Apart from Verity: no stdio (its stdout is MCP's), none of Verity's secrets, the desktop's display.
    const pid = r.structured.pid;
    assert.equal(readlinkSync(`/proc/${pid}/fd/1`), '/dev/null', "the app's stdout");
    assert.ok(!environ(pid).some((e) => e.startsWith(`${SECRET}=`)), 'the secret is not inherited');
    assert.ok(environ(pid).includes(`DISPLAY=${d.display}`), 'the display is');
  });

  test('launch_app by absolute path with arguments: confirmed, the window titled by them', async () => {
    const r = await v.call('launch_app', { app: f.wrapper, args: ['Launched By Path'] });
    assertListed(r, 'Launched By Path');
  });

  test('launch_app as a run_actions step: its expect checked on the window it opened, satisfied as openbox lists it', async () => {
    const r = await v.call('run_actions', {
      steps: [
        {
          tool: 'launch_app',
          args: { app: f.wrapper, args: ['Launched In A Batch'] },
          expect: [
            { window: { title: 'Launched In A Batch' }, exists: true },
            { window: {}, focused: true },
          ],
        },
      ],
    });
    assert.ok(r.structured.steps, r.text);
    const [step] = r.structured.steps;
    assertListed({ structured: step.result, text: r.text }, 'Launched In A Batch');
    assert.equal(step.status, 'ok', r.text);
    assert.equal(step.expect.status, 'satisfied', r.text);
    assert.equal(Number(d.x('xdotool', ['getactivewindow'])), step.result.window.window_id, 'openbox has it focused');
    const wrong = await v.call('run_actions', {
      steps: [
        {
          tool: 'launch_app',
          args: { app: f.wrapper, args: ['Launched Again'] },
          expect: [{ window: { title: 'Not This Title' }, exists: true }],
        },
        { tool: 'press_key', args: { key: 'Escape' } },
      ],
    });
    assert.ok(wrong.structured.steps, wrong.text);
    assertListed({ structured: wrong.structured.steps[0].result, text: wrong.text }, 'Launched Again');
    assert.equal(wrong.structured.steps[0].status, 'failed', 'an unmet expect stops the batch');
    assert.notEqual(wrong.structured.steps[0].expect.status, 'satisfied', wrong.text);
    assert.equal(wrong.structured.steps[1].status, 'not_run');
  });

  test('kill_app: its window closed through openbox, confirmed once the process is gone [matrix x11 gtk3 kill_app confirmed]', async () => {
    const r = await v.call('launch_app', { app: f.wrapper, args: ['Launched To Kill'] });
    assertListed(r, 'Launched To Kill');
    const { pid, window } = r.structured;
    const k = await v.call('kill_app', { pid });
    assert.equal(k.structured.effect, 'confirmed', k.text);
    assert.equal(k.structured.method, 'close_windows', k.text);
    assert.equal(alive(pid), false, 'the process is gone (kill -0)');
    assert.ok(!clientList().includes(window.window_id), "gone from openbox's _NET_CLIENT_LIST");
    const again = await v.call('kill_app', { pid });
    assert.equal(again.structured.refusal?.code, 'not_permitted', 'a pid it ended is no longer its own');
  });

  test('launch_app of an app --allow-launch does not name: refused not_permitted naming the flag [matrix x11 any launch_app refused]', async () => {
    const before = clientList().length;
    const r = await v.call('launch_app', { app: 'xdotool', args: ['version'] });
    assert.equal(r.structured.refusal?.code, 'not_permitted', r.text);
    assert.match(r.text, /--allow-launch/);
    assert.equal(clientList().length, before);
  });

  test('a shell is refused unless named itself: by name, and behind a named desktop file', async () => {
    const sh = await v.call('launch_app', { app: 'sh', args: ['-c', 'true'] });
    assert.equal(sh.structured.refusal?.code, 'not_permitted', sh.text);
    assert.match(sh.text, /--allow-launch/);
    const desktop = await v.call('launch_app', { app: f.shellId });
    assert.equal(desktop.structured.refusal?.code, 'not_permitted', desktop.text);
    assert.match(desktop.text, /runs sh, a shell.*--allow-launch/);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(f.shellRan(), false, 'its command never ran');
  });

  test('a relative path is refused naming the field', async () => {
    const r = await v.call('launch_app', { app: 'bin/app' });
    assert.equal(r.structured.refusal?.code, 'invalid_arguments', r.text);
    assert.match(r.text, /app: .*relative path/);
  });

  test('kill_app of a pid this session did not launch: refused, and the process lives [matrix x11 any kill_app refused]', async () => {
    const r = await v.call('kill_app', { pid: process.pid });
    assert.equal(r.structured.refusal?.code, 'not_permitted', r.text);
    assert.match(r.text, /not started by launch_app/);
    assert.equal(alive(process.pid), true);
  });

  test('without --caps apps: launch_app is refused naming the capability', async () => {
    const r = await off.call('launch_app', { app: f.wrapper });
    assert.equal(r.structured.refusal?.code, 'invalid_arguments', r.text);
    assert.match(r.text, /--caps apps/);
  });

  test('nut-js backend: launch_app confirmed by the window it lists [matrix nutjs gtk3 launch_app confirmed]', async () => {
    const r = await nut.call('launch_app', { app: f.wrapper, args: ['Launched Through Nutjs'] });
    assertListed(r, 'Launched Through Nutjs');
  });

  test('nut-js backend: kill_app confirmed once the process is gone [matrix nutjs gtk3 kill_app confirmed]', async () => {
    const pid = launched.at(-1)!;
    const k = await nut.call('kill_app', { pid });
    assert.equal(k.structured.effect, 'confirmed', k.text);
    assert.equal(alive(pid), false, 'the process is gone (kill -0)');
    await until(() => !clientList().some((id) => netWmPid(id) === pid), 'its window gone from _NET_CLIENT_LIST', 5000);
  });
});
