// The window tools on a tab: the tab's browser window, through CDP's Browser domain (getWindowForTarget,
// getWindowBounds, setWindowBounds), each verdict from the bounds and state the browser reads back. A
// headless browser has no window on any screen: its bounds are the browser's own record, and the results say so.
import type { ActionResult, Evidence } from '../../contract/driver.js';
import { type Stopwatch, windowToolResult } from '../../contract/driver.js';
import type { Tab } from '../tab/tab.js';

export type BrowserWindowState = 'normal' | 'minimized' | 'maximized' | 'fullscreen';
export interface BrowserBounds {
  left: number;
  top: number;
  width: number;
  height: number;
  windowState: BrowserWindowState;
}

/** The tab's browser window: its id and bounds now. */
export async function windowOfTab(tab: Tab): Promise<{ windowId: number; bounds: BrowserBounds }> {
  const { windowId, bounds } = await tab.session.send('Browser.getWindowForTarget', {});
  return { windowId, bounds: fill(bounds) };
}

export async function boundsOf(tab: Tab, windowId: number): Promise<BrowserBounds> {
  return fill((await tab.session.send('Browser.getWindowBounds', { windowId })).bounds);
}

function fill(b: Partial<BrowserBounds>): BrowserBounds {
  return {
    left: b.left ?? 0,
    top: b.top ?? 0,
    width: b.width ?? 0,
    height: b.height ?? 0,
    windowState: b.windowState ?? 'normal',
  };
}

export async function setBounds(tab: Tab, windowId: number, bounds: Partial<BrowserBounds>): Promise<void> {
  await tab.session.send('Browser.setWindowBounds', { windowId, bounds });
}

/** Whether the browser is headless (its product or user agent says so): then no window is on a screen. */
export async function headless(tab: Tab): Promise<boolean> {
  // Asked of the browser's own connection (a tab's session may not answer the Browser domain's getVersion).
  const browser = tab.page.browser();
  const [product, agent] = await Promise.all([browser.version().catch(() => ''), browser.userAgent().catch(() => '')]);
  return /headless/i.test(product) || /headless/i.test(agent);
}

/** Reads the window's bounds until `holds` says so (at most `boundMs`): the browser applies them in its own time. */
export async function waitForBounds(
  tab: Tab,
  windowId: number,
  holds: (b: BrowserBounds) => boolean,
  boundMs = 2000,
): Promise<{ bounds: BrowserBounds; held: boolean; waitedMs: number }> {
  const began = Date.now();
  for (;;) {
    const bounds = await boundsOf(tab, windowId);
    const waitedMs = Date.now() - began;
    if (holds(bounds) || waitedMs >= boundMs) return { bounds, held: holds(bounds), waitedMs };
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const boundsText = (b: BrowserBounds) => `(${b.left}, ${b.top}) ${b.width}x${b.height} ${b.windowState}`;

/** What a headless browser's read-back is, said in the evidence. */
export const HEADLESS_NOTE =
  'the browser is headless: no window is on a screen, these are the bounds and state the browser keeps for it';

export function windowResult(
  effect: ActionResult['effect'],
  sw: Stopwatch,
  tab: Tab,
  windowId: number,
  method: string,
  evidence: Evidence[],
  extra: Partial<ActionResult> = {},
): ActionResult {
  return windowToolResult(
    effect,
    sw,
    { route: 'dom', target: `browser window ${windowId} of tab ${tab.id}` },
    method,
    evidence,
    extra,
  );
}
