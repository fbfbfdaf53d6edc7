// drag on a tab: press, a path of moves with the button held, release, as trusted mouse input; proved by
// which elements got the press and the release.
import type { Protocol } from 'puppeteer-core';
import type { ActionResult, DragOptions, ResolvedTarget } from '../../contract/driver.js';
import { Stopwatch } from '../../contract/driver.js';
import { dialogResult, notePointer, result, scaleOf, tabOf, withSideEffects, type CdpRoute } from './aim.js';
import { queueCursor } from '../tab/cursor-overlay.js';
import { INPUT_SETTLE_MS } from '../browser/side-effects.js';
import { judgeDrag } from '../../contract/drag-verdict.js';

/** A drag with the side effects it caused (a drop can open a tab or start a download). */
export function drag(route: CdpRoute, target: ResolvedTarget, options: DragOptions): Promise<ActionResult> {
  return withSideEffects(route, target, () => deliverDrag(target, options), INPUT_SETTLE_MS);
}

async function deliverDrag(target: ResolvedTarget, options: DragOptions): Promise<ActionResult> {
  const sw = new Stopwatch();
  const tab = tabOf(target);
  const frames = await tab.frames();
  const scale = await scaleOf(tab);
  const from = { x: options.from.x / scale, y: options.from.y / scale };
  const to = { x: options.to.x / scale, y: options.to.y / scale };
  const source = await tab.call(frames[0], 'watchDrag', from.x, from.y, to.x, to.y);
  if (target.cursor) queueCursor(tab, from.x, from.y, target.cursor, 'drag');
  sw.lap('resolve');
  notePointer(tab, null); // wherever the drag stops, the next click moves there first
  const send = (params: Protocol.Input.DispatchMouseEventRequest) =>
    tab.unlessDialog(tab.session.send('Input.dispatchMouseEvent', params));
  const steps: Protocol.Input.DispatchMouseEventRequest[] = [
    { type: 'mouseMoved', x: from.x, y: from.y },
    { type: 'mousePressed', x: from.x, y: from.y, button: options.button, clickCount: 1 },
  ];
  for (let i = 1; i <= options.steps; i++) {
    const t = i / options.steps;
    steps.push({
      type: 'mouseMoved',
      x: from.x + (to.x - from.x) * t,
      y: from.y + (to.y - from.y) * t,
      button: options.button,
      buttons: 1,
    });
  }
  steps.push({ type: 'mouseReleased', x: to.x, y: to.y, button: options.button, clickCount: 1 });
  for (const step of steps) {
    if ((await send(step)) === 'dialog') {
      sw.lap('deliver');
      return dialogResult(sw, source, 'the drag');
    }
    if (step.type === 'mouseMoved' && step.buttons && options.durationMs > 0)
      await new Promise((r) => setTimeout(r, options.durationMs / options.steps));
  }
  sw.lap('deliver');
  const seen = await tab.call(frames[0], 'dragSeen');
  sw.lap('verify');
  // What moved is the proof: a list's order, a slider's value, the grabbed element's box (contract/drag-verdict.ts).
  const v = judgeDrag(seen.probe, seen);
  return result(v.effect, sw, v.evidence, {
    target: source,
    ...(v.observed ? { observed: v.observed } : {}),
    ...(v.escalation ? { escalation: v.escalation } : {}),
  });
}
