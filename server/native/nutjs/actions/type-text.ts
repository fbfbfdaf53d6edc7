// type_text on the nutjs backend: keys to the focused window (the px form clicks the field first), bounded
// by the shared keystroke budget and by what nut-js can type.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { maxChunkChars } from '../../shared/key-pace.js';
import type { NutjsContext } from '../context.js';
import { nutUntypable, x11Keys } from '../keys.js';

export async function typeText(
  ctx: NutjsContext,
  target: ResolvedTarget,
  { text, ...options }: ActionArgs['typeText'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const odd = nutUntypable(text);
  if (odd.length)
    throw new Refusal(
      'text_not_deliverable',
      `the nutjs native backend types printable ASCII, newlines and tabs only (nut-js drops other characters without a word); this text has ${odd.slice(0, 10).join(' ')}; nothing was typed`,
      { characters: odd.slice(0, 10).join(' ') },
    );
  const chars = Array.from(text).length;
  const limit = maxChunkChars(options.delayMs);
  if (chars > limit)
    throw new Refusal(
      'type_text_synthesis_budget_exceeded',
      `the nutjs native backend types key by key, and ${chars} characters at delay_ms ${options.delayMs} exceed one call's budget; nothing was typed. Send at most ${limit} characters per call`,
      { max_chunk_chars: limit, delay_ms: options.delayMs, chars },
    );
  const keys = ctx.host.linux ? await x11Keys(ctx.host.linuxDesktop, text) : { shifted: [], missing: [] };
  if (keys.missing.length)
    throw new Refusal(
      'text_not_deliverable',
      `the keyboard map of this X server has no key for ${keys.missing.slice(0, 10).join(' ')}, and nut-js would drop it; nothing was typed`,
      { characters: keys.missing.slice(0, 10).join(' ') },
    );
  // The px form clicks the field first, as a user would (the click also gives its window the keyboard).
  let clicked = '';
  if (target.point) {
    const { m, at } = await ctx.pointOf(target, 'types');
    await ctx.host.call('click', { ...at, button: 'left', count: 1, modifiers: [] });
    await new Promise((r) => setTimeout(r, 50));
    clicked = `clicked ${ctx.where(m, at)}, then `;
  }
  const m = await ctx.keyboardFor({ ...target, point: undefined });
  sw.lap('resolve');
  await ctx.host.call('type', { text, delayMs: options.delayMs, shifted: keys.shifted });
  sw.lap('deliver');
  return {
    ...ctx.result(sw, 'key_events', `${clicked}typed ${chars} character(s) as keys to the focused window`, m),
    delivery: { mode: 'foreground', delivered_count: chars },
  };
}
