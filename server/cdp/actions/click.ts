// click on a tab: trusted mouse input at the point the page agent hit-tested, proved by the events that
// reached the element (or, for a link that navigated, by the navigation).
import type { ActionResult, ClickOptions, Evidence, ResolvedTarget } from '../../contract/driver.js';
import { Stopwatch } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import { judgePointer } from '../../contract/verdicts.js';
import { aim, describeEvents, mouseClick, result, tabOf, withSideEffects, type CdpRoute } from './aim.js';
import { queueCursor } from '../tab/cursor-overlay.js';
import type { Watched } from '../page-agent/core.js';
import { DOWNLOAD_BEGIN_WAIT_MS, INPUT_SETTLE_MS, type Settle } from '../browser/side-effects.js';

const BUTTON_EVENT: Record<string, string> = { left: 'click', right: 'contextmenu', middle: 'auxclick' };

/** A click with the side effects it caused (it listens a moment longer: clicks open tabs and start downloads). */
export function click(route: CdpRoute, target: ResolvedTarget, options: ClickOptions): Promise<ActionResult> {
  // Listens on unless the page's own account of the click says nothing in it can lead out of the page:
  // a popup a handler opens at once is heard before that account comes back (one connection, in order);
  // a link, a form submit or an unload takes the wait (a new tab's target or a download comes a moment later);
  // a download link's click waits for its download to begin (bounded), which a busy machine tells late.
  // A link or a form's submit whose default ran: what the click caused waits (bounded) for the navigation's
  // request to begin, which a busy machine also tells late.
  let settle: Settle = INPUT_SETTLE_MS;
  let navigating = false;
  const heard = (seen: Watched) => {
    settle = seen.downloading ? { untilDownloadMs: DOWNLOAD_BEGIN_WAIT_MS } : seen.leaving ? INPUT_SETTLE_MS : 0;
    navigating = !!seen.navigating;
  };
  return withSideEffects(
    route,
    target,
    () => deliverClick(target, options, heard),
    () => settle,
    () => navigating,
  );
}

async function deliverClick(
  target: ResolvedTarget,
  options: ClickOptions,
  heard: (seen: Watched) => void = () => {},
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const decisive = options.count >= 2 && options.button === 'left' ? 'dblclick' : BUTTON_EVENT[options.button];
  const aimed = await aim(tabOf(target), target, ['mousedown', 'mouseup', decisive]);
  if (target.cursor) queueCursor(aimed.tab, aimed.x, aimed.y, target.cursor, 'click');
  sw.lap('resolve');
  const urlBefore = aimed.frame.url;
  await mouseClick(aimed.tab, aimed.x, aimed.y, options);
  sw.lap('deliver');
  let seen: Watched;
  try {
    seen = await aimed.tab.call(aimed.frame, 'watched', false);
  } catch (e) {
    if (!(e instanceof Refusal) || e.code !== 'dialog_open') throw e;
    sw.lap('verify');
    // The refusal's advice is the escalation's, said once; page handle_dialog's result says what the page did then.
    return result('unverifiable', sw, [{ kind: 'dialog', observed: e.message.replace(/; answer it with .*$/, '') }], {
      target: aimed.target,
      escalation: { target: 'page', reason: 'a dialog opened after the click; answer it with page handle_dialog' },
    });
  }
  if (!seen.fresh) heard(seen);
  // A link click that navigated replaces the world that was watching; the navigation is the proof.
  if (seen.fresh) {
    const url = aimed.tab.page.url();
    sw.lap('verify');
    if (aimed.href && url === aimed.href && url !== urlBefore) {
      return result('confirmed', sw, [{ kind: 'navigation', expected: aimed.href, observed: url }], {
        target: aimed.target,
      });
    }
    return result(
      'unverifiable',
      sw,
      [{ kind: 'navigation', observed: url, detail: 'the frame navigated before its events could be read' }],
      { target: aimed.target, escalation: { target: 'verify', reason: 'call get_window_state to see the new page' } },
    );
  }
  sw.lap('verify');
  return classifyPointerEvents(seen, decisive, sw, aimed.target);
}

function classifyPointerEvents(seen: Watched, decisive: string, sw: Stopwatch, target: string): ActionResult {
  const evidence: Evidence[] = [
    { kind: 'event', expected: `trusted ${decisive} on ${target}`, observed: describeEvents(seen) },
  ];
  const v = judgePointer(seen.events, decisive);
  return result(v.effect, sw, evidence, {
    target,
    ...(v.observed ? { observed: v.observed } : {}),
    ...(v.escalation ? { escalation: v.escalation } : {}),
  });
}
