// What the router asks of the browser route, and nothing more (like Chrome DevTools MCP's McpContext: a
// member is here because the router or the tools' page operations use it). The CDP route implements these
// (server/cdp/route.ts over its BrowserHost and Tab); the composition root (core.ts) builds it and hands it to
// the router, which imports nothing of server/cdp/.
import type { ActionCaused, Driver, TabHandle, TargetElement } from './driver.js';
import type { SideEffect } from './wire.js';
import type { ClipboardContent } from './native-host.js';

type ConsoleLevel = NonNullable<ActionCaused['console']>[number]['level'];

/** A tab as the router holds it: what it shows, and a picture of it (the recording's before and after). */
export interface RoutedTab extends TabHandle {
  url(): Promise<string>;
  title(): Promise<string>;
  screenshot(): Promise<{ data: string }>;
}

/** Where a call's tabs are listed, found and opened: the shared browser, or a connection's own one. */
export interface BrowserTabs<T extends RoutedTab> {
  /** The tab with this id; refused `target_not_found` when none is open. */
  findTab(tabId: string): Promise<T>;
  /** Every open tab (launching or attaching the browser when needed). */
  tabs_(): Promise<T[]>;
  /** A new tab. */
  newTab(): Promise<T>;
}

/** The browser route's driver: the actions, and a navigation watched for the download its own response is. */
export interface TabDriver extends Driver {
  /** page navigate (and new_tab's URL): what it caused beside its page, counted against `owner`'s quota. */
  navigate(tab: TabHandle, owner: string, url: string): Promise<SideEffect[]>;
}

/** The browser route as the router drives it: its tabs, the facts of its browser, and what it does to a tab. */
export interface BrowserRoute<T extends RoutedTab> extends BrowserTabs<T> {
  /** The driver of the actions on this browser's tabs. */
  readonly driver: TabDriver;
  /** Whether a browser is running now (listing never launches one). */
  readonly running: boolean;
  /** Whether the browser is one Verity attached to (not launched). */
  readonly attached: boolean;
  /** The pid of the browser Verity launched, if it did. */
  readonly launchedPid: number | null;
  /** Told of every tab that closed, by id. */
  readonly closedListeners: Set<(tabId: string) => void>;
  /** Whether the operator shares this tab with every session (the extension's group). */
  isShared(tabId: string): boolean;
  /** The browser's product and version (attaching or launching it when needed). */
  version(): Promise<string>;
  /** The pid of the browser's process, as the browser reports it (an attached one). */
  processPid(): Promise<number | null>;
  /** The tab's address now (synchronous: what the policy checks before an action). */
  urlOf(tab: T): string;
  /** The id of the tab that opened this one (a popup's opener), or null. */
  openerIdOf(tab: T): Promise<string | null>;
  /** Whether the tab is the one its window shows. */
  isVisible(tab: T): Promise<boolean>;
  /** A small JPEG of the tab for the operators' action log. */
  thumbnailOf(tab: T): Promise<string>;
  /** Installs the origin policy's request guard on a tab a session drives. */
  guard(tab: T): Promise<void>;
  /** Closes a tab (a handle the router gave out). */
  closeTab(tab: TabHandle): Promise<void>;
  /** Takes the agent cursor off a tab. */
  hideCursor(tab: T): Promise<void>;
  /** Whether the agent cursor is drawn in the tab now. */
  cursorVisible(tab: T): Promise<boolean>;
  /** Draws the cursor glides that waited for a call's result. */
  flushCursors(): void;
  /** Closes the browser (a launched one) and what the route holds. */
  close(): Promise<void>;
}

/** Why a connection's own browser went away: said to the call that meets it (`browser_lost`). */
export interface BrowserLoss {
  message: string;
  aliveMs: number;
  code: number;
}

/** A connection's own browser (a pool's) or context (--isolated): its tabs and its driver. */
export interface ConnectionBrowser<T extends RoutedTab> extends BrowserTabs<T> {
  readonly driver: TabDriver;
  /** Forgets its tabs (the browser is gone); the ids forgotten. */
  forgetTabs(): string[];
  /** Closes it, and the shared route stops finding its tabs. */
  close(): Promise<void>;
}

/** Opens a connection's own browser; `lost` is told when it goes away without being asked. */
export type OpenConnectionBrowser<T extends RoutedTab> = (
  connectionId: string,
  hooks: { lost: (loss: BrowserLoss) => void; tabGone: (tabId: string) => void },
) => ConnectionBrowser<T>;

export type HistoryMove = 'back' | 'forward' | 'reload';

export interface ConsoleFilter {
  level?: string;
  text?: string;
  limit: number;
}
export interface NetworkFilter {
  status?: number;
  failed?: boolean;
  url?: string;
  limit: number;
}

/** What a recording of a tab's activity holds beside the entries it shows. */
interface ActivityCounts {
  kept: number;
  dropped: number;
  bound: number;
  recording: boolean;
  matched: number;
}

/** What the page tool does with a tab (the CDP route checks each handle is its own). */
export interface PageOps {
  url(tab: TabHandle): string;
  title(tab: TabHandle): Promise<string>;
  moveInHistory(tab: TabHandle, move: HistoryMove): Promise<void>;
  bringToFront(tab: TabHandle): Promise<void>;
  /** The top frame's text, at most `max` characters. */
  text(tab: TabHandle, max: number): Promise<{ text: string; truncated: boolean; title: string; url: string }>;
  /** The top frame's elements matching a CSS selector, with the attributes asked for. */
  queryDom(
    tab: TabHandle,
    selector: string,
    attributes: string[],
    limit: number,
  ): Promise<
    | { error: string; count?: undefined; matches?: undefined }
    | {
        count: number;
        matches: { tag: string; text: string; attributes: { [k: string]: string | null } }[];
        error?: undefined;
      }
  >;
  /** Whether the top frame shows this text or has an element matching this selector now. */
  has(tab: TabHandle, text: string | null, selector: string | null): Promise<boolean>;
  screenshot(tab: TabHandle): Promise<{ data: string; width: number; height: number }>;
  /** The JavaScript dialog open in the tab now, if any. */
  dialog(tab: TabHandle): { type: string; message: string } | null;
  /** Accepts or dismisses the tab's open dialog. */
  answerDialog(tab: TabHandle, accept: boolean, promptText?: string): Promise<void>;
  /** Puts files into the element's <input type=file>; the names it holds now. */
  setInputFiles(tab: TabHandle, element: TargetElement, paths: string[]): Promise<string[]>;
  /** Runs a script in the page's main world. */
  runScript(
    tab: TabHandle,
    expression: string,
    options: { awaitResult: boolean },
  ): Promise<{ value: unknown; error?: string }>;
  /**
   * The page's clipboard (navigator.clipboard), the permission granted to the tab's origin only: writes
   * `write` first when given, then reads it back; what it holds as text and the types offered.
   */
  clipboard(tab: TabHandle, write: string | null): Promise<ClipboardContent>;
  /** The browser window holding the tab, by its CDP window id and bounds. */
  windowOf(tab: TabHandle): Promise<{ windowId: number; bounds: unknown }>;
  consoleMessages(
    tab: TabHandle,
    filter: ConsoleFilter,
  ): ActivityCounts & { messages: { at: string; source?: string; level: ConsoleLevel; text: string }[] };
  /**
   * The console errors and exceptions and the requests after sequence number `since` (an action result's
   * `mark`), URLs shown as results show them; `firstKept`: the oldest number still kept (the buffers are bounded).
   */
  activitySince(
    tab: TabHandle,
    since: number,
  ): {
    recording: boolean;
    firstKept: number;
    errors: Array<{ seq: number; text: string }>;
    requests: Array<{ seq: number; url: string; status?: number; failed?: string; done: boolean }>;
  };
  networkRequests(
    tab: TabHandle,
    filter: NetworkFilter,
  ): ActivityCounts & {
    requests: {
      type: string;
      at: string;
      method: string;
      url: string;
      status?: number;
      failed?: string;
      pending?: true;
    }[];
  };
}
