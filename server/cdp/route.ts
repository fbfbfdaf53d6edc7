// The CDP route as the router sees it (server/contract/browser-route.ts): the shared browser host with the
// tab commands the router asks for, each connection's own browser (a pool's, or a --isolated context), and
// the page tool's operations. The composition root (core.ts) builds these and hands them to the router.
import type { BrowserRoute, ConnectionBrowser, OpenConnectionBrowser, PageOps } from '../contract/browser-route.js';
import type { TabHandle } from '../contract/driver.js';
import type { Policy } from '../policy.js';
import { currentProgress } from '../progress.js';
import { BrowserHost, type BrowserOptions } from './browser/browser.js';
import { connectToPool, lossMessage, redactEndpoint, type PoolEndpoint } from './browser/pool.js';
import { CdpDriver } from './driver.js';
import * as ops from './page-ops.js';
import { browserProcessPid, isVisible, openerIdOf, thumbnailOf } from './tab-commands.js';
import { flushCursors, hideCursor } from './tab/cursor-overlay.js';
import { guardRequests } from './tab/guard.js';
import type { Tab } from './tab/tab.js';

/** The shared browser host as the router's browser route. */
export class CdpBrowserRoute implements BrowserRoute<Tab> {
  readonly driver: CdpDriver;

  constructor(
    readonly host: BrowserHost,
    private readonly policy: Policy,
  ) {
    this.driver = new CdpDriver(host);
  }

  get running(): boolean {
    return this.host.running;
  }
  get attached(): boolean {
    return this.host.attached;
  }
  get launchedPid(): number | null {
    return this.host.launchedPid;
  }
  get closedListeners(): Set<(tabId: string) => void> {
    return this.host.closedListeners;
  }
  findTab(tabId: string): Promise<Tab> {
    return this.host.findTab(tabId);
  }
  tabs_(): Promise<Tab[]> {
    return this.host.tabs_();
  }
  newTab(): Promise<Tab> {
    return this.host.newTab();
  }
  isShared(tabId: string): boolean {
    return this.host.isShared(tabId);
  }
  async version(): Promise<string> {
    return (await this.host.get()).version();
  }
  processPid(): Promise<number | null> {
    return browserProcessPid(this.host);
  }
  urlOf(tab: Tab): string {
    return tab.page.url();
  }
  openerIdOf(tab: Tab): Promise<string | null> {
    return openerIdOf(tab);
  }
  isVisible(tab: Tab): Promise<boolean> {
    return isVisible(tab);
  }
  thumbnailOf(tab: Tab): Promise<string> {
    return thumbnailOf(tab);
  }
  guard(tab: Tab): Promise<void> {
    return guardRequests(tab, this.policy);
  }
  closeTab(tab: TabHandle): Promise<void> {
    return ops.closePage(tab);
  }
  hideCursor(tab: Tab): Promise<void> {
    return hideCursor(tab);
  }
  async cursorVisible(tab: Tab): Promise<boolean> {
    const [frame] = await tab.frames();
    return (await tab.call(frame, 'cursorVisible')) === true;
  }
  flushCursors(): void {
    flushCursors();
  }
  close(): Promise<void> {
    return this.host.close();
  }
}

/**
 * How each MCP connection gets a browser of its own: a browser from the pool (--browser-endpoint) or a
 * browser context in the shared one (--isolated); undefined when every session shares `shared`.
 */
export function connectionBrowsers(
  shared: CdpBrowserRoute,
  options: { endpoint?: PoolEndpoint; isolated?: boolean; browser: BrowserOptions },
): OpenConnectionBrowser<Tab> | undefined {
  const { endpoint } = options;
  const log = options.browser.log ?? (() => {});
  const own = (host: BrowserHost, driver: CdpDriver): ConnectionBrowser<Tab> => ({
    driver,
    findTab: (tabId) => host.findTab(tabId),
    tabs_: () => host.tabs_(),
    newTab: () => host.newTab(),
    forgetTabs: () => host.forgetTabs(),
    close: async () => {
      shared.host.removePeer(host);
      await host.close();
    },
  });
  if (endpoint) {
    const where = redactEndpoint(endpoint.url);
    return (connectionId, { lost, tabGone }) => {
      const host: BrowserHost = new BrowserHost({
        viewport: options.browser.viewport,
        downloads: options.browser.downloads,
        // The session's browser from the pool holds the origin policy too (its workers; see guard.ts).
        policy: options.browser.policy,
        transport: async () => {
          const transport = await connectToPool(
            endpoint,
            (loss) => lost({ message: lossMessage(where, loss), aliveMs: loss.aliveMs, code: loss.code }),
            currentProgress(),
          );
          log(`a browser from the pool at ${where} for MCP connection ${connectionId}`);
          return transport;
        },
        // The operator's views list it only while it is connected (listing never connects one).
        available: () => host.running,
      });
      host.closedListeners.add(tabGone);
      // Tabs the operator shares through the extension are every session's, here too.
      for (const peer of shared.host.sharedPeers()) host.addPeer(peer);
      // The operator's views (browser panel, tabs.assign) find this connection's tabs through the shared host.
      shared.host.addPeer(host, false);
      return own(host, new CdpDriver(host));
    };
  }
  if (options.isolated)
    // Its tabs are the shared host's too (one Tab per page), whose closed-tab listeners already clean up after them.
    return () => own(new BrowserHost({ log, contextOf: shared.host }), shared.driver);
  return undefined;
}

/** The page tool's operations on a tab, over page-ops.ts. */
export const pageOps: PageOps = {
  url: ops.urlOf,
  title: ops.titleOf,
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
  clipboard: ops.clipboard,
  consoleMessages: ops.consoleMessages,
  networkRequests: ops.networkRequests,
  activitySince: ops.activitySince,
};
