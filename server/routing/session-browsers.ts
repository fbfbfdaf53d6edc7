// Browsers per MCP connection. By default every session drives the one browser Verity launched or attached
// to (tabs kept apart by ownership, see core.ts). With --isolated each connection gets its own browser
// context in that browser (its own cookies, storage and tabs); with --browser-endpoint its own browser from a
// pool service (server/cdp/pool.ts). Either way a connection sees and drives only its own tabs: its calls
// list, find and open tabs through its own host, never through another's.
//
// The connection's browser is connected on its first call that needs a tab, and closed when the last of its
// sessions that used it ends, however it ends (end_session, the MCP connection closing, idle, shutdown): a
// cleanup hook on each such session. A pool browser that goes away without being asked (the pool's session
// timeout, a crash) is remembered: the call it happened in, or else the connection's next call that needs a
// browser, is refused `browser_lost` saying why; the call after that connects a fresh one. Nothing is
// reconnected or retried silently.
import { BrowserHost, type BrowserOptions } from '../cdp/browser.js';
import { CdpDriver } from '../cdp/driver.js';
import { connectToPool, lossMessage, redactEndpoint, type PoolEndpoint, type PoolLoss } from '../cdp/pool.js';
import { currentProgress } from '../progress.js';
import { Refusal } from '../contract/refusal.js';
import type { Session, SessionManager } from '../sessions/manager.js';

export interface SessionBrowsersOptions {
  /** --browser-endpoint: a browser per connection from this pool. */
  endpoint?: PoolEndpoint;
  /** --isolated: a browser context per connection in the one shared browser. */
  isolated?: boolean;
  /** What every connection's browser is opened with (the viewport, the log). */
  browser: BrowserOptions;
  sessions: SessionManager;
  /** Told of each tab of a connection's browser that went away with it (owners and tokens of it are forgotten). */
  tabGone: (tabId: string) => void;
}

interface Own {
  host: BrowserHost;
  driver: CdpDriver;
  /** Why the pool's browser went away, until a call has been told. */
  loss: PoolLoss | null;
  /** How many times it went away (a call compares this before and after it ran). */
  losses: number;
}

/** The cleanup hook's name on a session that used its connection's browser. */
const HOOK = 'browser';

export class SessionBrowsers {
  private readonly own = new Map<string, Own>();

  constructor(
    private readonly shared: BrowserHost,
    private readonly sharedDriver: CdpDriver,
    private readonly options: SessionBrowsersOptions,
  ) {}

  /** Whether connections get browsers (or contexts) of their own. */
  get perConnection(): boolean {
    return !!this.options.endpoint || !!this.options.isolated;
  }

  /** The browser host whose tabs this call may list, find and open. Refused `browser_lost` once after its pool browser went away. */
  hostFor(ctx: { connectionId: string; session?: Session }): BrowserHost {
    return this.perConnection ? this.entry(ctx).host : this.shared;
  }

  /** The CDP route's driver for this call's tabs. */
  driverFor(ctx: { connectionId: string; session?: Session }): CdpDriver {
    return this.perConnection ? this.entry(ctx).driver : this.sharedDriver;
  }

  /** How often this connection's browser went away so far (taken before a call runs; see lostDuring). */
  lossesOf(connectionId: string): number {
    return this.own.get(connectionId)?.losses ?? 0;
  }

  /**
   * After a call: the `browser_lost` refusal to give instead of its result when its browser went away while it
   * ran (and no call has said so yet). Whatever it read or verified was on a browser that is gone: never `confirmed`.
   */
  lostDuring(connectionId: string, lossesBefore: number): Refusal | null {
    const own = this.own.get(connectionId);
    if (!own?.loss || own.losses === lossesBefore) return null;
    return this.takeLoss(own);
  }

  private takeLoss(own: Own): Refusal {
    const loss = own.loss!;
    own.loss = null;
    return new Refusal('browser_lost', lossMessage(redactEndpoint(this.options.endpoint?.url ?? ''), loss), {
      retryable: true,
      alive_ms: loss.aliveMs,
      close_code: loss.code,
    });
  }

  private entry(ctx: { connectionId: string; session?: Session }): Own {
    let own = this.own.get(ctx.connectionId);
    if (own?.loss) throw this.takeLoss(own);
    if (!own) {
      own = this.open(ctx.connectionId);
      this.own.set(ctx.connectionId, own);
    }
    // The browser lives as long as a session of the connection that used it.
    if (ctx.session && ctx.session.state === 'active' && !ctx.session.hooks.has(HOOK))
      ctx.session.hooks.set(HOOK, (session) => this.sessionEnded(session));
    return own;
  }

  private open(connectionId: string): Own {
    const log = this.options.browser.log ?? (() => {});
    const endpoint = this.options.endpoint;
    if (!endpoint) {
      // Its tabs are the shared host's too (one Tab per page), whose closed-tab listeners already clean up after them.
      const host = new BrowserHost({ log, contextOf: this.shared });
      return { host, driver: this.sharedDriver, loss: null, losses: 0 };
    }
    const where = redactEndpoint(endpoint.url);
    const own: Own = { host: null!, driver: null!, loss: null, losses: 0 };
    own.host = new BrowserHost({
      viewport: this.options.browser.viewport,
      downloads: this.options.browser.downloads,
      // The session's browser from the pool holds the origin policy too (its workers; see guard.ts).
      policy: this.options.browser.policy,
      transport: async () => {
        const transport = await connectToPool(
          endpoint,
          (loss) => this.lost(connectionId, own, loss),
          currentProgress(),
        );
        log(`a browser from the pool at ${where} for MCP connection ${connectionId}`);
        return transport;
      },
      // The operator's views list it only while it is connected (listing never connects one).
      available: () => own.host.running,
    });
    own.driver = new CdpDriver(own.host);
    own.host.closedListeners.add(this.options.tabGone);
    // Tabs the operator shares through the extension are every session's, here too.
    for (const peer of this.shared.sharedPeers()) own.host.addPeer(peer);
    // The operator's views (browser panel, tabs.assign) find this connection's tabs through the shared host.
    this.shared.addPeer(own.host, false);
    return own;
  }

  private lost(connectionId: string, own: Own, loss: PoolLoss): void {
    if (this.own.get(connectionId) !== own) return; // closed on purpose meanwhile
    own.loss = loss;
    own.losses++;
    (this.options.browser.log ?? (() => {}))(
      `the browser from the pool for MCP connection ${connectionId} went away after ${Math.round(loss.aliveMs / 1000)} s (WebSocket close ${loss.code})`,
    );
    this.forgetTabs(connectionId, own);
  }

  /** The tabs of a browser that is gone: their owners, tokens and the sessions' current tab go too. */
  private forgetTabs(connectionId: string, own: Own): void {
    const gone = new Set(own.host.forgetTabs());
    for (const tabId of gone) this.options.tabGone(tabId);
    for (const session of this.options.sessions.list(connectionId)) {
      if (session.currentTabId && gone.has(session.currentTabId)) session.currentTabId = undefined;
      for (const tabId of gone) session.tabs.delete(tabId);
    }
  }

  /** A session that used the browser ended: the browser goes when no other session of the connection holds it. */
  private async sessionEnded(session: Session): Promise<void> {
    const holders = this.options.sessions
      .list(session.connectionId)
      .filter((s) => s !== session && s.state === 'active' && s.hooks.has(HOOK));
    if (!holders.length) await this.release(session.connectionId);
  }

  /** Closes a connection's browser (pool) or context (--isolated). */
  async release(connectionId: string): Promise<void> {
    const own = this.own.get(connectionId);
    if (!own) return;
    this.own.delete(connectionId);
    this.shared.removePeer(own.host);
    this.forgetTabs(connectionId, own);
    await own.host.close();
  }

  /** Shutdown: every connection's browser. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.own.keys()].map((id) => this.release(id)));
  }

  /** For the operator and tests: the connections that hold a browser (or context) now. */
  get count(): number {
    return this.own.size;
  }
}
