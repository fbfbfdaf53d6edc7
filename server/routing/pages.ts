// The tabs and page operations tools see (ToolContext's `pages`): tabs found, opened and closed under the
// router's ownership rules, and what the page tool does with one. A tab is an opaque TabHandle here: tools
// never hold a Tab, puppeteer or the page agent; the browser route (its PageOps, from the composition root) checks each handle it is given.
import type { PageOps } from '../contract/browser-route.js';
import type { TabHandle } from '../contract/driver.js';
import type { SideEffect } from '../contract/wire.js';
import type { Caller, Router } from './router.js';

export type { HistoryMove } from '../contract/browser-route.js';

/** What tools may do with tabs; implemented over the router by pagesOf. Add a member only when a tool needs it. */
export interface Pages extends PageOps {
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
  /** What the navigation caused beside its page: a download its own response was (side_effects). */
  navigate(caller: Caller, tab: TabHandle, url: string): Promise<SideEffect[]>;
}

export function pagesOf(router: Router): Pages {
  return {
    list: (caller) => router.tabsFor(caller),
    find: (caller, tabId) => router.tabFor(caller, tabId),
    current: (caller) => router.currentTab(caller),
    open: (caller) => router.openTab(caller),
    setCurrent: (caller, tabId) => router.setCurrentTab(caller, tabId),
    close: (caller, tab) => router.closeTab(caller, tab),
    ...router.pageOps,
    navigate: (caller, tab, url) => router.navigateTab(caller, tab, url),
  };
}
