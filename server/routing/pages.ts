// The tabs and page operations tools see (ToolContext's `pages`): tabs found, opened and closed under the
// router's ownership rules, and what the page tool does with one. A tab is an opaque TabHandle here: tools
// never hold a Tab, puppeteer or the page agent; the CDP side (cdp/page-ops.ts) checks each handle it is given.
import * as ops from '../cdp/page-ops.js';
import type { TabHandle, TargetElement } from '../contract/driver.js';
import type { SideEffect } from '../contract/wire.js';
import type { Caller, Router } from './router.js';

export type { HistoryMove } from '../cdp/page-ops.js';

/** What tools may do with tabs; implemented over the router by pagesOf. Add a member only when a tool needs it. */
export interface Pages {
  /** The tabs this call's connection may see: its own and the operator's unclaimed ones. */
  list(caller: Caller): Promise<TabHandle[]>;
  /** A tab by id: another connection's is refused as not found; an unowned one is claimed. */
  find(caller: Caller, tabId: string): Promise<TabHandle>;
  /** The session's current tab (else its own, else the operator's first, else a new one). */
  current(caller: Caller): Promise<TabHandle>;
  /** A new tab, owned by this call's connection and guarded before it loads anything. */
  open(caller: Caller): Promise<TabHandle>;
  setCurrent(caller: Caller, tabId: string | undefined): void;
  /** Closes a tab with what the router keeps of it: its snapshots' tokens, and the session's current tab. */
  close(caller: Caller, tab: TabHandle): Promise<void>;
  url(tab: TabHandle): string;
  title(tab: TabHandle): Promise<string>;
  /** What the navigation caused beside its page: a download its own response was (side_effects). */
  navigate(caller: Caller, tab: TabHandle, url: string): Promise<SideEffect[]>;
  moveInHistory(tab: TabHandle, move: ops.HistoryMove): Promise<void>;
  bringToFront(tab: TabHandle): Promise<void>;
  text: typeof ops.pageText;
  queryDom: typeof ops.queryDom;
  has: typeof ops.pageHas;
  screenshot: typeof ops.screenshot;
  dialog: typeof ops.dialogOf;
  answerDialog: typeof ops.answerOpenDialog;
  setInputFiles(tab: TabHandle, element: TargetElement, paths: string[]): Promise<string[]>;
  runScript: typeof ops.runScript;
  windowOf: typeof ops.windowOf;
  consoleMessages: typeof ops.consoleMessages;
  networkRequests: typeof ops.networkRequests;
}

export function pagesOf(router: Router): Pages {
  return {
    list: (caller) => router.tabsFor(caller),
    find: (caller, tabId) => router.tabFor(caller, tabId),
    current: (caller) => router.currentTab(caller),
    open: (caller) => router.openTab(caller),
    setCurrent: (caller, tabId) => router.setCurrentTab(caller, tabId),
    close: (caller, tab) => router.closeTab(caller, tab),
    url: ops.urlOf,
    title: ops.titleOf,
    navigate: (caller, tab, url) => router.navigateTab(caller, ops.asTab(tab), url),
    moveInHistory: ops.moveInHistory,
    bringToFront: ops.bringToFront,
    text: ops.pageText,
    queryDom: ops.queryDom,
    has: ops.pageHas,
    screenshot: ops.screenshot,
    dialog: ops.dialogOf,
    answerDialog: ops.answerOpenDialog,
    setInputFiles: ops.setInputFiles,
    runScript: ops.runScript,
    windowOf: ops.windowOf,
    consoleMessages: ops.consoleMessages,
    networkRequests: ops.networkRequests,
  };
}
