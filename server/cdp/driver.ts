// The CDP route: actions on browser tabs, each verified by reading the page back from Verity's isolated
// world. Pointer and key input is trusted input from Input.dispatch*; proof is what the page observed.
// A thin driver over its parts (actions/: one file per action; snapshot.ts), which
// share the lower toolbox in actions/aim.ts and never import this file (server/native/ is built the same way).
import { defineActionMethods, loadHalves } from '../contract/action-halves.js';
import type { ActionMethods, ActionResult, Driver, ResolvedTarget, Snapshot } from '../contract/driver.js';
import { withTiming } from '../contract/driver.js';
import { tabOf, type CdpRoute } from './actions/aim.js';
import type { BrowserHost } from './browser/browser.js';
import { NAVIGATION_DOWNLOAD_SETTLE_MS, SideEffectWatch, type SideEffect } from './browser/side-effects.js';
import { reobserveTab, snapshotTab, type TabElementRef } from './snapshot.js';
import { zoomTab } from './zoom.js';
import type { ZoomImage, ZoomRequest } from '../contract/zoom.js';
import type { HeldObservation, Reobservation } from '../contract/changes.js';
import type { Tab } from './tab/tab.js';
import { withTabLock } from './tab/tab-lock.js';

/** Each action's browser half, from actions/<kebab-name>.ts by the action's name. */
const HALVES = await loadHalves<CdpRoute>('the CDP route', (file) => import(`./actions/${file}.js`));

// The action methods (one per action of the table, ActionMethods) are made in the constructor from HALVES.
export interface CdpDriver extends ActionMethods {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see the interface above.
export class CdpDriver implements Driver {
  private readonly route: CdpRoute;
  constructor(readonly host: BrowserHost) {
    this.route = { host, sideEffects: new SideEffectWatch(host) };
    defineActionMethods(this, HALVES, this.route, (target, act) => this.delivered(target, act));
  }

  tab(target: ResolvedTarget): Tab {
    return tabOf(target);
  }

  /**
   * Orders this action against other Verity processes driving the same tab (cdp/tab/tab-lock.ts). Only an
   * attached browser (--browser-url) can have other drivers: one this process launched speaks DevTools
   * over a pipe only it holds, so its tabs skip the lock and the round trips it costs (about 5-15 ms).
   */
  async exclusive(target: ResolvedTarget, work: () => Promise<ActionResult>): Promise<ActionResult> {
    if (!this.host.attached) return work();
    let lockMs = 0;
    const r = await withTabLock(this.tab(target), work, (ms) => {
      lockMs = ms;
    });
    return withTiming(r, 'lock', lockMs);
  }

  async snapshot(
    target: ResolvedTarget,
    snapshotId: string,
    options: { includeScreenshot: boolean; probe?: boolean },
  ): Promise<Snapshot> {
    return snapshotTab(this.tab(target), snapshotId, options.includeScreenshot, options.probe);
  }

  /** A probe's element is a token's when the frame's latest observation listed it at the token's index. */
  sameElement(token: unknown, read: unknown): boolean {
    const a = token as TabElementRef;
    const b = read as TabElementRef;
    return a.sessionId === b.sessionId && a.frameId === b.frameId && b.latest !== undefined && b.latest === a.local;
  }

  zoom(target: ResolvedTarget, request: ZoomRequest): Promise<ZoomImage> {
    return zoomTab(this.tab(target), request);
  }

  reobserve(target: ResolvedTarget, held: HeldObservation): Promise<Reobservation | null> {
    return reobserveTab(this.tab(target), held, target);
  }

  /**
   * The target's delivery_mode honoured: input reaches a tab in the background as it is; `foreground`
   * brings the tab to the front first (one CDP call), and the result says it was delivered so.
   */
  private async delivered(target: ResolvedTarget, act: () => Promise<ActionResult>): Promise<ActionResult> {
    if (target.deliveryMode !== 'foreground') return act();
    await this.tab(target).page.bringToFront();
    const r = await act();
    return { ...r, delivery: { ...r.delivery, mode: 'foreground' } };
  }

  /**
   * page navigate (and new_tab's URL) inside a side-effect window, so that a navigation whose own response
   * is a file (Content-Disposition: attachment) has that download counted as its own, within the session's
   * quota (`owner`), and told in its result. Downloads the new page's script starts as it loads are not its:
   * the tab committed another document (side-effects.ts), so they are refused `download_without_action`.
   * A navigation that became a download is aborted by the browser (net::ERR_ABORTED) and leaves the tab on
   * its page: that is its success, not a failed load.
   */
  async navigate(tab: Tab, owner: string, url: string): Promise<SideEffect[]> {
    // Only its own response counts: a download the page it leaves starts meanwhile is that page's script's.
    const watch = await this.route.sideEffects.begin(
      tab.id,
      owner,
      () => tab.documents,
      URL.canParse(url) ? new URL(url).href : url,
    );
    let failure: unknown = null;
    try {
      await tab.navigate(url);
    } catch (e) {
      failure = e;
    }
    // The browser tells the download on its own session: a failed navigation listens a moment longer for it.
    const effects = await watch.end(null, failure ? NAVIGATION_DOWNLOAD_SETTLE_MS : 0);
    const becameDownload = effects.some((e) => e.kind === 'download' && e.code !== 'download_without_action');
    if (failure && !(becameDownload && /net::ERR_ABORTED/.test((failure as Error).message))) throw failure;
    return effects;
  }
}
