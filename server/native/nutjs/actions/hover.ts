// hover on the nutjs backend: the pointer moved to screenshot pixels. move_cursor (`pointer`) reads nut-js's
// pointer back: confirmed when it is where it was sent.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import type { NutjsContext } from '../context.js';

export async function hover(
  ctx: NutjsContext,
  target: ResolvedTarget,
  args: ActionArgs['hover'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const { m, at } = await ctx.pointOf(target, 'hovers');
  sw.lap('resolve');
  await ctx.host.call('move', at);
  sw.lap('deliver');
  const moved = ctx.result(sw, 'pointer_motion', `pointer moved ${ctx.where(m, at)}`, m);
  if (!args.pointer) return moved;
  const observed = await ctx.host.pointerPosition();
  sw.lap('verify');
  const expected = { x: Math.round(at.x), y: Math.round(at.y) };
  const there = Math.abs(observed.x - expected.x) <= 1 && Math.abs(observed.y - expected.y) <= 1;
  const { escalation, ...rest } = moved;
  return {
    ...rest,
    effect: there ? 'confirmed' : 'mismatch',
    evidence: [...moved.evidence, { kind: 'pointer_position', expected, observed, detail: "nut-js's mouse position" }],
    timings_ms: sw.timings,
    ...(there
      ? {}
      : {
          escalation: {
            ...escalation,
            reason: `the pointer reads back at (${observed.x}, ${observed.y}), not (${expected.x}, ${expected.y})`,
          },
        }),
  };
}
