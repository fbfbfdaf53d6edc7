// click on the nutjs backend: a click at screenshot pixels, mapped to the screen and checked against the policy.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import type { NutjsContext } from '../context.js';
import { nutKey } from '../keys.js';

export async function click(
  ctx: NutjsContext,
  target: ResolvedTarget,
  options: ActionArgs['click'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const modifiers = options.modifiers.map((k) => nutKey(k, 'modifiers'));
  const { m, at } = await ctx.pointOf(target, 'clicks');
  sw.lap('resolve');
  await ctx.host.call('click', { ...at, button: options.button, count: options.count, modifiers });
  sw.lap('deliver');
  const how = `${options.button} click${options.count > 1 ? ` x${options.count}` : ''}${modifiers.length ? ` with ${options.modifiers.join('+')}` : ''}`;
  return ctx.result(sw, 'pointer_click', `${how} ${ctx.where(m, at)}`, m);
}
