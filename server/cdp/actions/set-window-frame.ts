// set_window_frame on a tab: its browser window's bounds (left, top, width, height: the browser's outer
// window, screen pixels) set with Browser.setWindowBounds (made normal first: a maximized, minimized or
// fullscreen window takes no bounds) and read back: confirmed when they are what was asked, partial when the
// browser or the window manager placed it otherwise, saying where.
import type { ActionArgs } from '../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../contract/driver.js';
import { tabOf, type CdpRoute } from './aim.js';
import {
  type BrowserBounds,
  HEADLESS_NOTE,
  boundsText,
  headless,
  setBounds,
  waitForBounds,
  windowOfTab,
  windowResult,
} from './browser-window.js';

export async function setWindowFrame(
  _route: CdpRoute,
  target: ResolvedTarget,
  frame: ActionArgs['setWindowFrame'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const tab = tabOf(target);
  const { windowId, bounds: before } = await windowOfTab(tab);
  sw.lap('resolve');
  const notes: string[] = [];
  if (before.windowState !== 'normal') {
    await setBounds(tab, windowId, { windowState: 'normal' });
    await waitForBounds(tab, windowId, (b) => b.windowState === 'normal');
    notes.push(`it was ${before.windowState}: made normal first`);
  }
  const asked = { left: frame.x, top: frame.y, width: frame.width, height: frame.height };
  await setBounds(tab, windowId, asked);
  sw.lap('deliver');
  const matches = (b: BrowserBounds) =>
    b.left === asked.left && b.top === asked.top && b.width === asked.width && b.height === asked.height;
  const { bounds, held, waitedMs } = await waitForBounds(tab, windowId, matches);
  const isHeadless = await headless(tab);
  const evidence = [
    {
      kind: 'window_frame',
      expected: boundsText({ ...asked, windowState: 'normal' }),
      observed: boundsText(bounds),
      detail: `Browser.getWindowBounds read back after ${waitedMs} ms${notes.length ? `; ${notes.join('; ')}` : ''}${isHeadless ? `; ${HEADLESS_NOTE}` : ''}`,
    },
  ];
  const observed = { frame: { x: bounds.left, y: bounds.top, w: bounds.width, h: bounds.height } };
  if (held) return windowResult('confirmed', sw, tab, windowId, 'cdp_set_window_bounds', evidence, { observed });
  const unchanged =
    bounds.left === before.left &&
    bounds.top === before.top &&
    bounds.width === before.width &&
    bounds.height === before.height;
  return windowResult(unchanged ? 'no_effect' : 'partial', sw, tab, windowId, 'cdp_set_window_bounds', evidence, {
    observed,
    escalation: {
      target: 'verify',
      reason: unchanged
        ? `the browser window stayed at ${boundsText(bounds)}`
        : `the frame was clamped: the browser window is at ${boundsText(bounds)}, not what was asked`,
    },
  });
}
