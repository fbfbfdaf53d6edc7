// press_key on the nutjs backend: a key with its modifiers to the focused window.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import type { NutjsContext } from '../context.js';
import { nutKey } from '../keys.js';

export async function pressKey(
  ctx: NutjsContext,
  target: ResolvedTarget,
  { key, modifiers }: ActionArgs['pressKey'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const keys = [...modifiers.map((k) => nutKey(k, 'modifiers')), nutKey(key)];
  const m = await ctx.keyboardFor(target);
  sw.lap('resolve');
  await ctx.host.call('keys', { keys });
  sw.lap('deliver');
  return ctx.result(sw, 'key_events', `${[...modifiers, key].join('+')} to the focused window`, m);
}
