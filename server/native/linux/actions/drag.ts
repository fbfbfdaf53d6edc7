// drag on a native target: a button held along a path; confirmed when the grabbed element's value or text
// selection moved.
import type { ActionArgs } from '../../../contract/actions.js';
import type { ActionResult, Evidence, ResolvedTarget } from '../../../contract/driver.js';
import { Stopwatch } from '../../../contract/driver.js';
import { IFACE, type Atspi } from '../atspi/model.js';
import { aim, deliver, nativeResult, webEscalation, webLike } from './aim.js';
import type { LinuxHost } from '../host.js';
import { dragPath } from '../transport/input.js';
import { roleName } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { checkUncovered, elementAt, pointerOf } from './pointing.js';

/**
 * What a drag can change on the element it grabs, as AT-SPI reports it: a value (a slider, a scroll bar)
 * or a text selection. Null when the element offers neither.
 */
async function dragState(atspi: Atspi, el: NativeRef | null): Promise<string | null> {
  if (!el) return null;
  const parts: string[] = [];
  if (el.interfaces.includes(IFACE.value))
    parts.push(`value ${Number(await atspi.prop(el, IFACE.value, 'CurrentValue'))}`);
  if (el.interfaces.includes(IFACE.text)) {
    const [count] = await atspi.call(el, IFACE.text, 'GetNSelections');
    const range = Number(count) > 0 ? await atspi.call(el, IFACE.text, 'GetSelection', 'i', [0]) : null;
    parts.push(range ? `selection ${range[0]}-${range[1]}` : 'no selection');
  }
  return parts.length ? parts.join(', ') : null;
}

export async function drag(
  host: LinuxHost,
  target: ResolvedTarget,
  options: ActionArgs['drag'],
): Promise<ActionResult> {
  const mode = target.deliveryMode;
  const sw = new Stopwatch();
  const a = await aim(host, target);
  return deliver(mode, a.win, async () => {
    const origin = target.kind === 'desktop' ? { x: 0, y: 0 } : { x: a.win.bounds.x, y: a.win.bounds.y };
    const from = { x: origin.x + options.from.x, y: origin.y + options.from.y };
    const to = { x: origin.x + options.to.x, y: origin.y + options.to.y };
    await checkUncovered(a, from);
    await a.host.checkPoint(to); // a drop lands where it ends
    const grabbed = target.kind !== 'desktop' ? await elementAt(a, from) : null;
    const before = await dragState(a.atspi, grabbed).catch(() => null);
    sw.lap('resolve');
    await dragPath(from, to, options.steps, options.durationMs, options.button);
    sw.lap('deliver');
    await new Promise((r) => setTimeout(r, 50));
    const after = await dragState(a.atspi, grabbed).catch(() => null);
    sw.lap('verify');
    const label = grabbed ? `${grabbed.name || 'element'} (${roleName(grabbed.role)})` : `window ${a.win.id}`;
    const evidence: Evidence[] = [
      {
        kind: 'pixel_event',
        detail: `${pointerOf(a)} drag from (${from.x}, ${from.y}) to (${to.x}, ${to.y}) in ${options.steps} steps over ${label}`,
      },
    ];
    if (before !== null && after !== null)
      evidence.push({
        kind: 'drag_state',
        expected: "the grabbed element's value or selection changes",
        observed: `before: ${before}; after: ${after}`,
      });
    if (webLike(a.win, grabbed))
      return nativeResult('unverifiable', 'pixel', sw, evidence, mode, {
        target: label,
        method: 'pixel_drag',
        escalation: webEscalation(a.win, true, mode),
      });
    // The grabbed element's own value or selection moved: the drag acted on it. Anything else (a drop
    // elsewhere, a window moved) leaves nothing AT-SPI can prove.
    if (before !== null && after !== null && after !== before)
      return nativeResult('confirmed', 'pixel', sw, evidence, mode, { target: label, method: 'pixel_drag' });
    return nativeResult('unverifiable', 'pixel', sw, evidence, mode, {
      target: label,
      method: 'pixel_drag',
      escalation: {
        target: 'verify',
        reason:
          before === null
            ? 'a drag leaves nothing AT-SPI can prove here; call get_window_state and check the screenshot'
            : "the grabbed element's value and selection did not change; call get_window_state and check the screenshot for what else moved",
      },
    });
  });
}
