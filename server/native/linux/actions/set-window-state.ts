// set_window_state on the Linux desktop, through the window manager and read back from it:
// - minimized: ICCCM WM_CHANGE_STATE IconicState; confirmed when the window is iconic (WM_STATE) or
//   _NET_WM_STATE_HIDDEN, and unmapped;
// - maximized: _NET_WM_STATE add MAXIMIZED_VERT and MAXIMIZED_HORZ (restored first if minimized);
// - normal: restored (_NET_ACTIVE_WINDOW) if minimized, MAXIMIZED_* and FULLSCREEN removed;
// - closed: _NET_CLOSE_WINDOW, as its close button (the app may ask to save first); confirmed once the window
//   manager no longer lists it.
// sway has no minimized or maximized state (a tiling layout), so only normal (not fullscreen) and closed go there.
import type { ActionArgs, WindowState } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import type { LinuxHost } from '../host.js';
import {
  type WmView,
  describeView,
  readWm,
  requestActivate,
  requestClose,
  requestIconic,
  requestStates,
  waitForWm,
} from '../transport/ewmh.js';
import { placements, swayCommand } from '../transport/wayland.js';
import { WM_BOUND_MS, askedOf, wmResult, wmWindow, type WmWindow } from './window-manager.js';

const minimized = (v: WmView) => (v.iconic || v.states.includes('HIDDEN')) && !v.window?.viewable;
const maximized = (v: WmView) =>
  !!v.window?.viewable && v.states.includes('MAXIMIZED_VERT') && v.states.includes('MAXIMIZED_HORZ');
const normal = (v: WmView) =>
  !!v.window?.viewable &&
  !v.iconic &&
  !v.states.some((s) => s === 'HIDDEN' || s === 'MAXIMIZED_VERT' || s === 'MAXIMIZED_HORZ' || s === 'FULLSCREEN');
const closed = (v: WmView) => !v.listed || !v.window;

const HOLDS: Record<WindowState, (v: WmView) => boolean> = { minimized, maximized, normal, closed };

const EXPECTED: Record<WindowState, string> = {
  minimized: 'iconic or _NET_WM_STATE_HIDDEN, and unmapped',
  maximized: '_NET_WM_STATE MAXIMIZED_VERT and MAXIMIZED_HORZ, shown',
  normal: 'shown, neither iconic, hidden, maximized nor fullscreen',
  closed: 'no longer in _NET_CLIENT_LIST',
};

export async function setWindowState(
  host: LinuxHost,
  target: ResolvedTarget,
  { state }: ActionArgs['setWindowState'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const win = await wmWindow(host, target, 'set_window_state');
  sw.lap('resolve');
  if (win.via.kind === 'sway') return swayState(win, state, sw);
  const before = await readWm(win.id);
  const asked: string[] = [];
  if (!HOLDS[state](before)) {
    if (state === 'minimized') {
      await requestIconic(win.id);
      asked.push('WM_CHANGE_STATE IconicState');
    } else if (state === 'closed') {
      await requestClose(win.id);
      asked.push('_NET_CLOSE_WINDOW');
    } else {
      if (!before.window?.viewable || before.iconic || before.states.includes('HIDDEN')) {
        await requestActivate(win.id, before.active);
        asked.push('_NET_ACTIVE_WINDOW (restores it from minimized)');
      }
      if (state === 'maximized') {
        await requestStates(win.id, true, ['MAXIMIZED_VERT', 'MAXIMIZED_HORZ']);
        asked.push('_NET_WM_STATE add MAXIMIZED_VERT MAXIMIZED_HORZ');
      } else {
        if (before.states.includes('FULLSCREEN')) await requestStates(win.id, false, ['FULLSCREEN']);
        await requestStates(win.id, false, ['MAXIMIZED_VERT', 'MAXIMIZED_HORZ']);
        asked.push('_NET_WM_STATE remove MAXIMIZED_VERT MAXIMIZED_HORZ FULLSCREEN');
      }
    }
  }
  sw.lap('deliver');
  const { view, held, waitedMs } = asked.length
    ? await waitForWm(win.id, HOLDS[state], WM_BOUND_MS)
    : { view: before, held: true, waitedMs: 0 };
  const seen = describeView(win.id, view);
  const evidence = [
    {
      kind: 'window_manager',
      expected: EXPECTED[state],
      observed: seen,
      detail: asked.length
        ? `${askedOf(win)} asked with ${asked.join(', ')}; read back after ${waitedMs} ms`
        : `window ${win.id} was ${state} already; nothing was sent`,
    },
  ];
  const observed = view.window && view.listed ? { frame: view.window.bounds, states: view.states } : undefined;
  if (held) return wmResult('confirmed', sw, win, 'ewmh', evidence, observed ? { observed } : {});
  if (state === 'closed') {
    // An app may ask before it closes (unsaved changes): its question is a new window of the same app.
    const after = await host.windows().catch(() => []);
    const asking = after.filter((w) => w.pid !== null && w.pid === view.window?.pid && w.id !== win.id);
    return wmResult('no_effect', sw, win, 'ewmh', evidence, {
      escalation: {
        target: 'verify',
        reason: asking.length
          ? `window ${win.id} is still open after ${WM_BOUND_MS} ms and its app shows ${asking.map((w) => `window ${w.id} ("${w.title}")`).join(', ')}: it may be asking whether to save; answer it (get_window_state on it)`
          : `window ${win.id} is still open after ${WM_BOUND_MS} ms: the app did not close it (it may be busy or refuse); call list_windows`,
      },
    });
  }
  return wmResult('no_effect', sw, win, 'ewmh', evidence, {
    ...(observed ? { observed } : {}),
    escalation: {
      target: 'verify',
      reason: `the window manager did not make window ${win.id} ${state} within ${WM_BOUND_MS} ms: it is ${seen}`,
    },
  });
}

/** sway: closed (kill, as its close binding) and normal (fullscreen off); it has no minimized or maximized state. */
async function swayState(win: WmWindow, state: WindowState, sw: Stopwatch): Promise<ActionResult> {
  if (state === 'minimized' || state === 'maximized')
    throw new Refusal(
      'unavailable',
      `set_window_state "${state}": sway has no ${state} state (a tiling compositor: its windows are tiled, floating, fullscreen or in the scratchpad); set_window_frame makes a window floating at a given size; nothing was sent`,
      { window_id: win.id },
    );
  const con = await swayCommand(win.id, state === 'closed' ? 'kill' : 'fullscreen disable');
  sw.lap('deliver');
  const began = Date.now();
  const present = async () => (await placements())?.some((p) => p.conId === con) ?? false;
  let there = await present();
  while (state === 'closed' && there && Date.now() - began < WM_BOUND_MS) {
    await new Promise((r) => setTimeout(r, 50));
    there = await present();
  }
  // Whether it left fullscreen is not read back here (the listing keeps no fullscreen mode): normal is unverifiable.
  const effect = state === 'closed' ? (there ? 'no_effect' : 'confirmed') : there ? 'unverifiable' : 'no_effect';
  return wmResult(effect, sw, win, 'sway_ipc', [
    {
      kind: 'window_manager',
      expected: state === 'closed' ? "gone from sway's tree" : 'shown, not fullscreen',
      observed: there ? `container ${con} is in sway's tree` : `container ${con} is gone from sway's tree`,
      detail: `sway (its IPC) asked with ${state === 'closed' ? 'kill' : 'fullscreen disable'}; read back after ${Date.now() - began} ms`,
    },
  ]);
}
