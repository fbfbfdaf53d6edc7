// drag on the nutjs backend: a button held from one screenshot pixel to another, both checked against the policy.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import type { NutjsContext } from '../context.js';

export async function drag(
  ctx: NutjsContext,
  target: ResolvedTarget,
  options: ActionArgs['drag'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const m = await ctx.mapping(target);
  const from = ctx.toScreen(m, options.from, 'from');
  const to = ctx.toScreen(m, options.to, 'to');
  await ctx.host.checkPoint(from);
  await ctx.host.checkPoint(to);
  sw.lap('resolve');
  await ctx.host.call('drag', {
    from,
    to,
    steps: options.steps,
    durationMs: options.durationMs,
    button: options.button,
  });
  sw.lap('deliver');
  return ctx.result(
    sw,
    'pointer_drag',
    `${options.button} drag from (${from.x}, ${from.y}) to (${to.x}, ${to.y}) in ${options.steps} steps`,
    m,
  );
}
