// hover on the nutjs backend: the pointer moved to screenshot pixels.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import type { NutjsContext } from '../context.js';

export async function hover(
  ctx: NutjsContext,
  target: ResolvedTarget,
  _args: ActionArgs['hover'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const { m, at } = await ctx.pointOf(target, 'hovers');
  sw.lap('resolve');
  await ctx.host.call('move', at);
  sw.lap('deliver');
  return ctx.result(sw, 'pointer_motion', `pointer moved ${ctx.where(m, at)}`, m);
}
