// scroll on the nutjs backend: wheel steps at screenshot pixels (a page is ten steps).
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import type { NutjsContext } from '../context.js';

export async function scroll(
  ctx: NutjsContext,
  target: ResolvedTarget,
  options: ActionArgs['scroll'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const { m, at } = await ctx.pointOf(target, 'scrolls');
  // A page is taken as ten wheel steps: nut-js has no page scroll, and a step's distance is the OS's.
  const steps = options.by === 'page' ? options.amount * 10 : options.amount;
  sw.lap('resolve');
  await ctx.host.call('scroll', { ...at, direction: options.direction, amount: steps });
  sw.lap('deliver');
  return ctx.result(sw, 'wheel', `${steps} wheel step(s) ${options.direction} ${ctx.where(m, at)}`, m);
}
