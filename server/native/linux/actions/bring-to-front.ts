// bring_to_front on the Linux desktop: the window manager asked to activate the window (EWMH
// _NET_ACTIVE_WINDOW as a pager sends it, which also restores a minimized one; sway: focus), confirmed when
// it reads back as the active window on top of the stacking order.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import type { LinuxHost } from '../host.js';
import { describeView, readWm, requestActivate, waitForWm } from '../transport/ewmh.js';
import { focusMovedTo } from '../transport/settle.js';
import { focusWindow, focusedWindow } from '../transport/wayland.js';
import { WM_BOUND_MS, askedOf, wmResult, wmWindow } from './window-manager.js';

export async function bringToFront(
  host: LinuxHost,
  target: ResolvedTarget,
  _args: ActionArgs['bringToFront'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const win = await wmWindow(host, target, 'bring_to_front');
  sw.lap('resolve');
  if (win.via.kind === 'sway') {
    await focusWindow(win.id);
    sw.lap('deliver');
    const until = Date.now() + WM_BOUND_MS;
    let focused = await focusedWindow();
    while (focused !== win.id && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      focused = await focusedWindow();
    }
    const seen = focused === win.id ? 'the focused window' : `not focused (focused: ${focused || 'none'})`;
    return wmResult(focused === win.id ? 'confirmed' : 'no_effect', sw, win, 'sway_focus', [
      {
        kind: 'window_manager',
        expected: 'focused',
        observed: seen,
        detail: `sway's tree read back: window ${win.id} is ${seen}`,
      },
    ]);
  }
  const before = await readWm(win.id);
  focusMovedTo(win.id); // keys sent next wait for the app to hear of its focus (settle.ts)
  await requestActivate(win.id, before.active);
  sw.lap('deliver');
  const onTop = (v: typeof before) => v.stacking[v.stacking.length - 1] === win.id;
  const { view, held, waitedMs } = await waitForWm(
    win.id,
    (v) => v.active === win.id && onTop(v) && !!v.window?.viewable,
    WM_BOUND_MS,
  );
  const seen = describeView(win.id, view);
  const evidence = [
    {
      kind: 'window_manager',
      expected: 'active, top of the stacking order, shown',
      observed: seen,
      detail: `${askedOf(win)} read back after ${waitedMs} ms (_NET_ACTIVE_WINDOW, _NET_CLIENT_LIST_STACKING, map state)`,
    },
  ];
  if (held) return wmResult('confirmed', sw, win, 'ewmh_active_window', evidence);
  const some = view.active === win.id || onTop(view);
  return wmResult(some ? 'partial' : 'no_effect', sw, win, 'ewmh_active_window', evidence, {
    escalation: {
      target: 'verify',
      reason: some
        ? `the window manager did part of it: window ${win.id} is ${seen} (a window kept above others stays above)`
        : `the window manager did not activate window ${win.id} within ${WM_BOUND_MS} ms: it is ${seen}`,
    },
  });
}
