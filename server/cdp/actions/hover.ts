// hover on a tab: the pointer moved onto an element or a point (a trusted mouseMoved), confirmed when what
// the hover opened can be read back: things that became visible (a :hover menu, a mouseenter menu, a
// tooltip). Nothing new visible proves nothing (the hover may only restyle): unverifiable, never no_effect.
import type { ActionArgs } from '../../contract/actions.js';
import type { ActionResult, Evidence, ResolvedTarget } from '../../contract/driver.js';
import { Stopwatch } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import {
  aim,
  describeEvents,
  dialogResult,
  notePointer,
  result,
  tabOf,
  withSideEffects,
  type CdpRoute,
} from './aim.js';

export function hover(route: CdpRoute, target: ResolvedTarget, _args: ActionArgs['hover']): Promise<ActionResult> {
  return withSideEffects(route, target, () => deliverHover(target));
}

async function deliverHover(target: ResolvedTarget): Promise<ActionResult> {
  const sw = new Stopwatch();
  const aimed = await aim(tabOf(target), target, ['mouseover', 'mouseenter', 'mousemove']);
  const { tab, frame } = aimed;
  // What shows is read in the frame the pointer rests in (a menu opens beside its trigger).
  await tab.call(frame, 'hoverBaseline');
  sw.lap('resolve');
  notePointer(tab, null);
  const sent = await tab.unlessDialog(
    tab.session.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: aimed.x, y: aimed.y }),
  );
  if (sent !== 'dialog') notePointer(tab, { x: aimed.x, y: aimed.y });
  sw.lap('deliver');
  if (sent === 'dialog') return dialogResult(sw, aimed.target, 'the hover');
  let opened: { count: number; shown: string[] };
  let seen: Awaited<ReturnType<typeof tab.call<'watched'>>>;
  try {
    opened = await tab.call(frame, 'hoverAppeared');
    seen = await tab.call(frame, 'watched', false);
  } catch (e) {
    if (e instanceof Refusal && e.code === 'dialog_open') return dialogResult(sw, aimed.target, 'the hover');
    throw e;
  }
  sw.lap('verify');
  const reached = seen.events.some((e) => e.trusted && e.onTarget && e.type !== 'mousemove');
  const evidence: Evidence[] = [
    { kind: 'event', expected: `trusted mouseover at ${seen.target}`, observed: describeEvents(seen) },
    // What became visible is listed; on an observed tab the result's changes.appeared carry their tokens.
    opened.count
      ? { kind: 'appeared', observed: opened.shown }
      : {
          kind: 'appeared',
          observed: 'nothing new became visible',
          detail: 'the visible elements and text were read before and after the move',
        },
  ];
  if (opened.count) return result('confirmed', sw, evidence, { target: aimed.target, method: 'mouse_moved' });
  return result('unverifiable', sw, evidence, {
    target: aimed.target,
    method: 'mouse_moved',
    escalation: {
      target: 'verify',
      reason: reached
        ? 'the pointer rests on the element but nothing new became visible; take a screenshot to see what changed'
        : 'no pointer event reached the element; call get_window_state to see what is there',
    },
  });
}
