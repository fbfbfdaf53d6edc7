// set_window_frame on the nutjs backend: nut-js moves and resizes the window, then reads its region back
// through nut-js itself: partial when it is elsewhere (saying where), no_effect when it did not move, and
// otherwise unverifiable with the region read (this backend is never confirmed: docs/contract.md).
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import type { NutjsContext } from '../context.js';
import type { Rect } from '../host.js';
import { nutWindow, nutWindowResult } from './window.js';

const text = (r: Rect) => `(${r.x}, ${r.y}) ${r.w}x${r.h}`;

export async function setWindowFrame(
  ctx: NutjsContext,
  target: ResolvedTarget,
  frame: ActionArgs['setWindowFrame'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const win = await nutWindow(ctx, target, 'set_window_frame');
  sw.lap('resolve');
  const asked: Rect = { x: frame.x, y: frame.y, w: frame.width, h: frame.height };
  const got = await ctx.host.call<Rect | null>('frame', { id: win.id, ...asked });
  sw.lap('deliver');
  if (!got) throw new Refusal('target_not_found', `nut-js lists no window ${win.id}; call list_windows`);
  const same = got.x === asked.x && got.y === asked.y && got.w === asked.w && got.h === asked.h;
  const unchanged =
    got.x === win.bounds.x && got.y === win.bounds.y && got.w === win.bounds.w && got.h === win.bounds.h;
  const evidence = [
    {
      kind: 'window_frame',
      expected: text(asked),
      observed: text(got),
      detail: "nut-js read the window's region back",
    },
  ];
  const effect = same ? 'unverifiable' : unchanged ? 'no_effect' : 'partial';
  return nutWindowResult(effect, sw, win, 'nut_move_resize', evidence, {
    observed: { frame: got },
    escalation: {
      target: 'verify',
      reason: same
        ? 'nut-js read back the frame asked; call list_windows to see it from the window manager'
        : `the window is at ${text(got)}, not ${text(asked)}`,
    },
  });
}
