// The page tool's operations on a tab, on the CDP side: navigation and history, the page agent's
// page-level reads, dialogs, uploads, scripts, and bringing a tab to the front. Tools name the tab by the
// opaque TabHandle the router gave them (routing/pages.ts): they never hold a Tab, puppeteer or the page
// agent, and each operation here checks that the handle is this route's Tab.
import type { TabHandle, TargetElement } from '../contract/driver.js';
import { Refusal } from '../contract/refusal.js';
import type { ConsoleFilter, NetworkFilter } from './tab/page-activity.js';
import { Tab } from './tab/tab.js';
import { answerDialog, browserWindowOf, evaluateInPage, pageClipboard } from './tab-commands.js';
import type { HistoryMove } from '../contract/browser-route.js';

export type { HistoryMove } from '../contract/browser-route.js';

/** How long a history move may take to load its page. */
const HISTORY_TIMEOUT_MS = 30_000;

/** The Tab behind a handle the router gave out (anything else is a defect, not a caller's mistake). */
export function asTab(handle: TabHandle): Tab {
  if (!(handle instanceof Tab)) throw new Error(`tab ${handle.id}: not a tab of the browser route`);
  return handle;
}

/** The tab's address now (after redirects, clicks, history moves). */
export function urlOf(handle: TabHandle): string {
  return asTab(handle).page.url();
}

export function titleOf(handle: TabHandle): Promise<string> {
  return asTab(handle).title();
}

export async function moveInHistory(handle: TabHandle, move: HistoryMove): Promise<void> {
  const { page } = asTab(handle);
  const options = { timeout: HISTORY_TIMEOUT_MS };
  if (move === 'back') await page.goBack(options);
  else if (move === 'forward') await page.goForward(options);
  else await page.reload(options);
}

export function bringToFront(handle: TabHandle): Promise<void> {
  return asTab(handle).page.bringToFront();
}

export function closePage(handle: TabHandle): Promise<void> {
  return asTab(handle).page.close();
}

/** The top frame's text (page get_text), at most `max` characters. */
export async function pageText(handle: TabHandle, max: number) {
  const tab = asTab(handle);
  const [frame] = await tab.frames();
  return tab.call(frame, 'pageText', max);
}

/** The top frame's elements matching a CSS selector, with the attributes asked for (page query_dom). */
export async function queryDom(handle: TabHandle, selector: string, attributes: string[], limit: number) {
  const tab = asTab(handle);
  const [frame] = await tab.frames();
  return tab.call(frame, 'queryDom', selector, attributes, limit);
}

/** Whether the top frame shows this text or has an element matching this selector now (page wait_for). */
export async function pageHas(handle: TabHandle, text: string | null, selector: string | null): Promise<boolean> {
  const tab = asTab(handle);
  // A tab or browser gone fails the wait here (the call is then refused browser_lost, not waited out)...
  const [frame] = await tab.frames();
  // ...while a page between two documents (a navigation) has nothing yet: asked again on the next round.
  return tab.call(frame, 'pageHas', text, selector).catch((e) => {
    if (e instanceof Refusal) throw e;
    return false;
  });
}

export function screenshot(handle: TabHandle) {
  return asTab(handle).screenshot();
}

/** The JavaScript dialog open in the tab now, if any. */
export function dialogOf(handle: TabHandle): { type: string; message: string } | null {
  return asTab(handle).dialog;
}

/** Accepts or dismisses the tab's open dialog; the tab has none open after. */
export async function answerOpenDialog(handle: TabHandle, accept: boolean, promptText?: string): Promise<void> {
  const tab = asTab(handle);
  await answerDialog(tab, accept, promptText);
  tab.dialog = null;
}

/** Puts files into the element's <input type=file>; the names it holds now (the read-back). */
export function setInputFiles(handle: TabHandle, element: TargetElement, paths: string[]): Promise<string[]> {
  return asTab(handle).setInputFiles(element, paths);
}

/** Runs a script in the page's main world (execute_javascript, javascript: URLs). */
export function runScript(handle: TabHandle, expression: string, options: { awaitResult: boolean }) {
  return evaluateInPage(asTab(handle), expression, options);
}

/** The page's clipboard, written when `write` is given, then read back (clipboard_write, clipboard_read). */
export function clipboard(handle: TabHandle, write: string | null) {
  return pageClipboard(asTab(handle), write);
}

/** The browser window holding the tab, by its CDP window id and bounds. */
export function windowOf(handle: TabHandle) {
  return browserWindowOf(asTab(handle));
}

export function consoleMessages(handle: TabHandle, filter: ConsoleFilter) {
  return asTab(handle).activity.consoleMessages(filter);
}

export function networkRequests(handle: TabHandle, filter: NetworkFilter) {
  return asTab(handle).activity.networkRequests(filter);
}

export function activitySince(handle: TabHandle, since: number) {
  return asTab(handle).activity.since(since);
}
