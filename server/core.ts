// The core every front door (stdio MCP, HTTP MCP, later the gateway) shares: the browser host, the
// drivers, the element tokens, and target resolution (which route an action takes).
import { BrowserHost, type BrowserOptions } from './cdp/browser.js';
import { CdpDriver } from './cdp/driver.js';
import type { Driver, ResolvedTarget } from './routing/driver.js';
import { Refusal } from './routing/refusal.js';
import { SnapshotRegistry } from './routing/snapshots.js';
import type { Tab } from './cdp/tab.js';

/** Per-connection state handed to every tool call. */
export interface CallContext {
  connectionId: string;
  /** The tab this connection drives when a call names none. */
  currentTabId?: string;
}

export interface TargetArgs {
  element_token?: string;
  target?: { kind: 'tab'; tab_id: string } | { kind: 'window'; pid: number; window_id: number } | { kind: 'desktop'; display_id?: 'primary' };
  pid?: number;
  window_id?: number;
  scope?: 'window' | 'desktop';
  x?: number;
  y?: number;
}

export interface VerityOptions extends BrowserOptions {
  allowJavascript?: boolean;
}

export class Verity {
  readonly browser: BrowserHost;
  readonly cdp: CdpDriver;
  readonly snapshots = new SnapshotRegistry();

  constructor(readonly options: VerityOptions) {
    this.browser = new BrowserHost(options);
    this.cdp = new CdpDriver(this.browser);
  }

  /** The tab a call without a target acts on: the connection's current tab, else the first, else a new one. */
  async currentTab(ctx: CallContext): Promise<Tab> {
    const tabs = await this.browser.tabs_();
    const current = tabs.find((t) => t.id === ctx.currentTabId) ?? tabs[0] ?? await this.browser.newTab();
    ctx.currentTabId = current.id;
    return current;
  }

  /**
   * Turns a call's targeting arguments into one resolved target and the driver for its route.
   * Mixing two ways of naming a target is refused; tokens are checked for staleness here.
   */
  async resolve(args: TargetArgs, ctx: CallContext, options: { needsTarget?: boolean } = {}): Promise<{ target: ResolvedTarget; driver: Driver }> {
    const named = [
      args.element_token !== undefined && 'element_token',
      args.target !== undefined && 'target',
      (args.pid !== undefined || args.window_id !== undefined) && 'pid/window_id',
      args.scope === 'desktop' && 'scope',
    ].filter(Boolean) as string[];
    if (named.length > 1) throw new Refusal('conflicting_target', `name the target one way only; got ${named.join(' and ')}`, { fields: named });
    if ((args.x === undefined) !== (args.y === undefined)) throw new Refusal('invalid_arguments', `${args.x === undefined ? 'x' : 'y'}: the px form needs both x and y`);
    if (args.element_token !== undefined && args.x !== undefined) throw new Refusal('conflicting_target', 'pass element_token or x,y, not both');
    const point = args.x !== undefined ? { x: args.x, y: args.y! } : undefined;

    if (args.element_token !== undefined) {
      const found = this.snapshots.resolve(args.element_token);
      if (found.kind !== 'tab') throw new Refusal('unavailable', 'native element tokens need the native route, which this build does not have yet');
      await this.checkTabOpen(found.key);
      ctx.currentTabId = found.key;
      return { target: { kind: 'tab', key: found.key, element: { snapshotId: found.snapshotId, index: found.index, ref: found.element.ref } }, driver: this.cdp };
    }
    const t = args.target;
    if (t?.kind === 'tab') {
      await this.browser.findTab(t.tab_id);
      ctx.currentTabId = t.tab_id;
      return { target: { kind: 'tab', key: t.tab_id, point }, driver: this.cdp };
    }
    if (t?.kind === 'window' || args.pid !== undefined || args.window_id !== undefined || t?.kind === 'desktop' || args.scope === 'desktop') {
      throw new Refusal('unavailable', 'native windows and the desktop need the native route, which this build does not have yet; use a tab target');
    }
    void options;
    const tab = await this.currentTab(ctx);
    return { target: { kind: 'tab', key: tab.id, point }, driver: this.cdp };
  }

  private async checkTabOpen(tabId: string): Promise<void> {
    try {
      await this.browser.findTab(tabId);
    } catch (e) {
      if (e instanceof Refusal && e.code === 'target_not_found') {
        this.snapshots.forget('tab', tabId);
        throw new Refusal('target_not_found', `the tab of this element_token (${tabId}) is closed; call page list_tabs and get_window_state`);
      }
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}
