// set_window_state on a tab: its browser window minimized, maximized or made normal (Browser.setWindowBounds'
// windowState), confirmed by Browser.getWindowBounds reading the state back. Closing is not done here: a
// browser window holds other tabs, and a tab closes with `page close`.
import type { ActionArgs } from '../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import { tabOf, type CdpRoute } from './aim.js';
import {
  HEADLESS_NOTE,
  boundsText,
  headless,
  setBounds,
  waitForBounds,
  windowOfTab,
  windowResult,
} from './browser-window.js';

export async function setWindowState(
  _route: CdpRoute,
  target: ResolvedTarget,
  { state }: ActionArgs['setWindowState'],
): Promise<ActionResult> {
  const tab = tabOf(target);
  if (state === 'closed')
    throw new Refusal(
      'invalid_arguments',
      `state: "closed" is not done to a tab's browser window (it holds other tabs); close the tab with page {action: "close_tab", tab_id: "${tab.id}"}`,
    );
  const sw = new Stopwatch();
  const { windowId, bounds: before } = await windowOfTab(tab);
  sw.lap('resolve');
  const notes: string[] = [];
  if (before.windowState !== state) {
    // The browser moves between minimized, maximized and fullscreen only through normal.
    if (state !== 'normal' && before.windowState !== 'normal') {
      await setBounds(tab, windowId, { windowState: 'normal' });
      await waitForBounds(tab, windowId, (b) => b.windowState === 'normal');
      notes.push(`it was ${before.windowState}: made normal first`);
    }
    await setBounds(tab, windowId, { windowState: state });
  } else notes.push(`it was ${state} already; nothing was sent`);
  sw.lap('deliver');
  const { bounds, held, waitedMs } = await waitForBounds(tab, windowId, (b) => b.windowState === state);
  const isHeadless = await headless(tab);
  const evidence = [
    {
      kind: 'window_state',
      expected: state,
      observed: boundsText(bounds),
      detail: `Browser.getWindowBounds read back after ${waitedMs} ms${notes.length ? `; ${notes.join('; ')}` : ''}${isHeadless ? `; ${HEADLESS_NOTE}` : ''}`,
    },
  ];
  const observed = {
    frame: { x: bounds.left, y: bounds.top, w: bounds.width, h: bounds.height },
    state: bounds.windowState,
  };
  if (held) return windowResult('confirmed', sw, tab, windowId, 'cdp_set_window_bounds', evidence, { observed });
  return windowResult('no_effect', sw, tab, windowId, 'cdp_set_window_bounds', evidence, {
    observed,
    escalation: { target: 'verify', reason: `the browser window is ${bounds.windowState}, not ${state}` },
  });
}
