// bring_to_front on a tab: the tab made its window's active tab (Page.bringToFront), its window restored if
// minimized; confirmed when the page reads back visible and focused (document.visibilityState, hasFocus(),
// in Verity's isolated world), partial when it is visible but the window lacks the system's focus.
import type { ActionArgs } from '../../contract/actions.js';
import { type ActionResult, type ResolvedTarget, Stopwatch } from '../../contract/driver.js';
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

export async function bringToFront(
  _route: CdpRoute,
  target: ResolvedTarget,
  _args: ActionArgs['bringToFront'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const tab = tabOf(target);
  const { windowId, bounds } = await windowOfTab(tab);
  sw.lap('resolve');
  if (bounds.windowState === 'minimized') {
    await setBounds(tab, windowId, { windowState: 'normal' });
    await waitForBounds(tab, windowId, (b) => b.windowState !== 'minimized');
  }
  await tab.page.bringToFront();
  sw.lap('deliver');
  const contextId = await tab.world(tab.topFrame());
  const began = Date.now();
  let seen = { visible: false, focused: false };
  for (;;) {
    const { result } = await tab.session.send('Runtime.evaluate', {
      expression: '({visible: document.visibilityState === "visible", focused: document.hasFocus()})',
      contextId,
      returnByValue: true,
    });
    seen = result.value as typeof seen;
    if ((seen.visible && seen.focused) || Date.now() - began >= 2000) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const after = await windowOfTab(tab);
  const isHeadless = await headless(tab);
  const evidence = [
    {
      kind: 'page_state',
      expected: 'visible and focused',
      observed: `${seen.visible ? 'visible' : 'hidden'}, ${seen.focused ? 'focused' : 'not focused'}; window ${boundsText(after.bounds)}`,
      detail: `document.visibilityState and document.hasFocus() read back after ${Date.now() - began} ms${isHeadless ? `; ${HEADLESS_NOTE}` : ''}`,
    },
  ];
  if (seen.visible && seen.focused && after.bounds.windowState !== 'minimized')
    return windowResult('confirmed', sw, tab, windowId, 'cdp_bring_to_front', evidence);
  return windowResult(seen.visible ? 'partial' : 'no_effect', sw, tab, windowId, 'cdp_bring_to_front', evidence, {
    escalation: {
      target: 'verify',
      reason: seen.visible
        ? 'the tab is the one its window shows, but the window does not have the system focus (another app has it)'
        : 'the tab is still hidden after Page.bringToFront',
    },
  });
}
