// set_window_state on the nutjs backend: nut-js minimizes and restores a window but cannot read whether it
// is minimized (unverifiable), and has no maximize or close (refused, naming the tools that have them).
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import type { NutjsContext } from '../context.js';
import { nutWindow, nutWindowResult } from './window.js';

export async function setWindowState(
  ctx: NutjsContext,
  target: ResolvedTarget,
  { state }: ActionArgs['setWindowState'],
): Promise<ActionResult> {
  if (state === 'maximized' || state === 'closed')
    throw new Refusal(
      'not_supported',
      `set_window_state "${state}": the nutjs backend (nut-js) has no way to ${state === 'closed' ? 'close' : 'maximize'} a window; on Linux the default native backend (--native-backend auto) does it through the window manager, or set_window_frame to the screen's size`,
    );
  const sw = new Stopwatch();
  const win = await nutWindow(ctx, target, 'set_window_state');
  sw.lap('resolve');
  const done = await ctx.host.call<boolean | null>(state === 'minimized' ? 'minimize' : 'restore', { id: win.id });
  sw.lap('deliver');
  if (done === null) throw new Refusal('target_not_found', `nut-js lists no window ${win.id}; call list_windows`);
  return nutWindowResult(
    'unverifiable',
    sw,
    win,
    state === 'minimized' ? 'nut_minimize' : 'nut_restore',
    [{ kind: 'os_input', detail: `nut-js ${state === 'minimized' ? 'minimize' : 'restore'} returned ${done}` }],
    {
      escalation: {
        target: 'verify',
        reason: 'nut-js cannot read whether a window is minimized; call list_windows or take a screenshot',
      },
    },
  );
}
