// scroll on a tab: one wheel turn where the element's scroll container (or the page) is what scrolls,
// proved by its offsets once they stop moving.
import type { ActionResult, Evidence, ResolvedTarget, ScrollOptions } from '../../contract/driver.js';
import { Stopwatch } from '../../contract/driver.js';
import { aimRefusal, dialogResult, result, scaleOf, tabOf, withSideEffects, type CdpRoute } from './aim.js';
import { queueCursor } from '../tab/cursor-overlay.js';
import type { ScrollOffsets } from '../page-agent/motion.js';
import { frameOf, type TabElementRef } from '../snapshot.js';
import type { Frame } from '../tab/tab.js';

/** A scroll, with what arrived during it (no extra listening: a wheel rarely opens anything). */
export function scroll(route: CdpRoute, target: ResolvedTarget, options: ScrollOptions): Promise<ActionResult> {
  return withSideEffects(route, target, () => deliverScroll(target, options));
}

async function deliverScroll(target: ResolvedTarget, options: ScrollOptions): Promise<ActionResult> {
  const sw = new Stopwatch();
  const tab = tabOf(target);
  let frame: Frame, x: number, y: number;
  let before: ScrollOffsets;
  if (target.point && !target.element) {
    frame = (await tab.frames())[0];
    const scale = await scaleOf(tab);
    x = target.point.x / scale;
    y = target.point.y / scale;
    before = await tab.call(frame, 'scrollState', null, -1, x, y);
  } else {
    // The wheel goes where the element's scroll container (or the page) is what scrolls; the element
    // itself is not scrolled into view, which would move the container before the "before" reading.
    let frames: Frame[];
    if (target.element) ({ frame, frames } = await frameOf(tab, target.element.ref as TabElementRef));
    else {
      frames = await tab.frames();
      frame = frames[0];
    }
    const aimed = await tab.call(
      frame,
      'scrollAim',
      target.element?.snapshotId ?? null,
      target.element ? (target.element.ref as TabElementRef).local : -1,
    );
    if (aimed.refusal) throw aimRefusal(aimed, { tab, frame, snapshotId: target.element?.snapshotId ?? null });
    const origin = await tab.frameOrigin(frame, frames);
    x = origin.x + aimed.x;
    y = origin.y + aimed.y;
    before = aimed.offsets;
  }
  if (target.cursor) queueCursor(tab, x, y, target.cursor, 'scroll');
  sw.lap('resolve');
  const viewport = await tab.viewport();
  const unit =
    options.by === 'page'
      ? (options.direction === 'left' || options.direction === 'right' ? viewport.width : viewport.height) * 0.875
      : 40;
  const delta = unit * options.amount;
  const deltaX = options.direction === 'left' ? -delta : options.direction === 'right' ? delta : 0;
  const deltaY = options.direction === 'up' ? -delta : options.direction === 'down' ? delta : 0;
  const wheeled = await tab.unlessDialog(
    tab.session.send('Input.dispatchMouseEvent', { type: 'mouseWheel', x, y, deltaX, deltaY }),
  );
  sw.lap('deliver');
  if (wheeled === 'dialog') return dialogResult(sw, before.target, 'the wheel');
  const after = await tab.call(frame, 'scrollSettled');
  sw.lap('verify');
  const moved = { x: after.x - before.x, y: after.y - before.y };
  const intended = Math.sign(deltaX) * moved.x > 0 || Math.sign(deltaY) * moved.y > 0;
  const evidence: Evidence[] = [
    {
      kind: 'scroll_offset',
      expected: `${options.direction} by about ${Math.round(delta)} px in ${before.target}`,
      observed: `from (${before.x}, ${before.y}) to (${after.x}, ${after.y}) in ${after.target}`,
    },
  ];
  if (intended)
    return result('confirmed', sw, evidence, {
      target: after.target,
      observed: { scroll_x: after.x, scroll_y: after.y },
    });
  if (moved.x === 0 && moved.y === 0)
    return result('no_effect', sw, evidence, {
      target: after.target,
      observed: { scroll_x: after.x, scroll_y: after.y },
      escalation: {
        target: 'verify',
        reason: 'nothing scrolled: already at the end, or nothing scrollable under the point',
      },
    });
  return result('mismatch', sw, evidence, { target: after.target, observed: { scroll_x: after.x, scroll_y: after.y } });
}
