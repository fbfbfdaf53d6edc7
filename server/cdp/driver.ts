// The CDP route: actions on browser tabs, each verified by reading the page back from Verity's isolated
// world. Pointer and key input is trusted input from Input.dispatch*; proof is what the page observed.
// A thin driver over its parts (actions/: one file per action; snapshot.ts), which
// share the lower toolbox in actions/aim.ts and never import this file (server/native/ is built the same way).
import type { ActionArgs } from '../contract/actions.js';
import type { ActionResult, Driver, ResolvedTarget, Snapshot } from '../contract/driver.js';
import { withTiming } from '../contract/driver.js';
import { tabOf, type CdpRoute } from './actions/aim.js';
import type { BrowserHost } from './browser/browser.js';
import { setValue } from './actions/set-value.js';
import { click } from './actions/click.js';
import { drag } from './actions/drag.js';
import { hover } from './actions/hover.js';
import { pressKey } from './actions/press-key.js';
import { scroll } from './actions/scroll.js';
import { SideEffectWatch } from './browser/side-effects.js';
import { snapshotTab } from './snapshot.js';
import type { Tab } from './tab/tab.js';
import { typeText } from './actions/type-text.js';
import { withTabLock } from './tab/tab-lock.js';

export class CdpDriver implements Driver {
  private readonly route: CdpRoute;
  constructor(readonly host: BrowserHost) {
    this.route = { host, sideEffects: new SideEffectWatch(host) };
  }

  tab(target: ResolvedTarget): Tab {
    return tabOf(target);
  }

  /**
   * Orders this action against other Verity processes driving the same tab (cdp/tab-lock.ts). Only an
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
    options: { includeScreenshot: boolean },
  ): Promise<Snapshot> {
    return snapshotTab(this.tab(target), snapshotId, options.includeScreenshot);
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

  click(target: ResolvedTarget, args: ActionArgs['click']): Promise<ActionResult> {
    return this.delivered(target, () => click(this.route, target, args));
  }
  typeText(target: ResolvedTarget, { text, ...options }: ActionArgs['typeText']): Promise<ActionResult> {
    return this.delivered(target, () => typeText(this.route, target, text, options));
  }
  setValue(target: ResolvedTarget, { value }: ActionArgs['setValue']): Promise<ActionResult> {
    return this.delivered(target, () => setValue(this.route, target, value));
  }
  pressKey(target: ResolvedTarget, { key, modifiers }: ActionArgs['pressKey']): Promise<ActionResult> {
    return this.delivered(target, () => pressKey(this.route, target, key, modifiers));
  }
  scroll(target: ResolvedTarget, args: ActionArgs['scroll']): Promise<ActionResult> {
    return this.delivered(target, () => scroll(this.route, target, args));
  }
  drag(target: ResolvedTarget, args: ActionArgs['drag']): Promise<ActionResult> {
    return this.delivered(target, () => drag(this.route, target, args));
  }
  hover(target: ResolvedTarget): Promise<ActionResult> {
    return this.delivered(target, () => hover(this.route, target));
  }
}
