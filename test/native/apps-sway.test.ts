// launch_app and kill_app on sway (issue 44 item 1, --caps apps): the GTK test app started by desktop-file id
// as a Wayland client, confirmed once list_windows has its window, checked against sway's own tree
// (swaymsg -t get_tree on its own connection: a node of that pid with that title); kill_app closes it through
// sway's IPC and is confirmed once the process is gone, which sway's tree and the kernel agree with.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startVerity, type Verity } from '../helpers/mcp.js';
import { launchFixture, type LaunchFixture } from './apps-launch.js';
import { alive, missingWaylandTools, startWaylandDesktop, type Desktop } from './desktop.js';

const missing = missingWaylandTools();

/** The titles of sway's windows of process `pid`, from its own tree. */
function swayTitles(d: Desktop, pid: number): string[] {
  const r = spawnSync('/usr/bin/swaymsg', ['-t', 'get_tree', '-r'], {
    env: { ...process.env, ...d.env },
    encoding: 'utf8',
  });
  const out: string[] = [];
  const walk = (n: any) => {
    if (n.pid === pid) out.push(n.name);
    for (const c of [...(n.nodes ?? []), ...(n.floating_nodes ?? [])]) walk(c);
  };
  walk(JSON.parse(r.stdout));
  return out;
}

describe('launch_app and kill_app on sway', { skip: missing ?? false }, () => {
  let d: Desktop;
  let f: LaunchFixture;
  let v: Verity;
  const launched: number[] = [];
  before(async () => {
    d = await startWaylandDesktop();
    f = launchFixture('Launched On Sway');
    v = await startVerity(['--caps', 'apps', '--allow-launch', `${f.desktopId},${f.wrapper}`], {
      ...d.env,
      XDG_DATA_DIRS: f.dataDirs,
    });
  });
  after(async () => {
    await v?.close();
    await f?.close(launched);
    await d?.close();
  });

  test('launch_app by desktop-file id: confirmed, the pid and title sway shows [matrix sway gtk3 launch_app confirmed]', async () => {
    const r = await v.call('launch_app', { app: f.desktopId });
    assert.equal(r.structured.effect, 'confirmed', r.text);
    const { pid, window } = r.structured;
    launched.push(pid);
    assert.equal(window.pid, pid, r.text);
    assert.equal(window.title, f.desktopTitle);
    assert.deepEqual(swayTitles(d, pid), [f.desktopTitle], "sway's tree: a window of that pid with that title");
    const listed = await v.call('list_windows');
    assert.ok(listed.structured.windows.some((w: any) => w.window_id === window.window_id && w.pid === pid));
  });

  test('kill_app: closed through sway, confirmed once the process is gone [matrix sway gtk3 kill_app confirmed]', async () => {
    const pid = launched[0]!;
    const k = await v.call('kill_app', { pid });
    assert.equal(k.structured.effect, 'confirmed', k.text);
    assert.equal(k.structured.method, 'close_windows', k.text);
    assert.equal(alive(pid), false, 'the process is gone (kill -0)');
    assert.deepEqual(swayTitles(d, pid), [], "sway's tree holds no window of it");
  });

  test('an app --allow-launch does not name is refused before it starts [matrix sway any launch_app refused]', async () => {
    const r = await v.call('launch_app', { app: 'swaymsg' });
    assert.equal(r.structured.refusal?.code, 'not_permitted', r.text);
    assert.match(r.text, /--allow-launch/);
  });
});
