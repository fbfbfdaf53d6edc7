// bring_to_front on the nutjs backend: the window focused (nut-js, or the window manager on Linux) and the
// active window read back. Like every action of this backend it is never confirmed (docs/contract.md): the
// stacking order is not read, so at best unverifiable with what was read; no_effect when another is active.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import type { NutjsContext } from '../context.js';
import { nutWindow, nutWindowResult } from './window.js';

export async function bringToFront(
  ctx: NutjsContext,
  target: ResolvedTarget,
  _args: ActionArgs['bringToFront'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const win = await nutWindow(ctx, target, 'bring_to_front');
  sw.lap('resolve');
  await ctx.host.focus(win.id);
  sw.lap('deliver');
  const began = Date.now();
  let active = await ctx.host.activeWindow();
  while (active !== win.id && Date.now() - began < 2000) {
    await new Promise((r) => setTimeout(r, 50));
    active = await ctx.host.activeWindow();
  }
  return nutWindowResult(
    active === win.id ? 'unverifiable' : 'no_effect',
    sw,
    win,
    'nut_focus',
    [
      {
        kind: 'active_window',
        expected: win.id,
        observed: active || 'none',
        detail: `the active window read back after ${Date.now() - began} ms; the stacking order is not read by this backend`,
      },
    ],
    { escalation: { target: 'verify', reason: 'take a screenshot to see whether the window is on top' } },
  );
}
