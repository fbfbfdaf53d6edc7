// Browsers per MCP connection. By default every session drives the one browser Verity launched or attached
// to (tabs kept apart by ownership, see core.ts). With --isolated each connection gets its own browser
// context in that browser (its own cookies, storage and tabs); with --browser-endpoint its own browser from a
// pool service (the CDP route's pool, built by the composition root). Either way a connection sees and drives only its own tabs: its calls
// list, find and open tabs through its own host, never through another's.
//
// The connection's browser is connected on its first call that needs a tab, and closed when the last of its
// sessions that used it ends, however it ends (end_session, the MCP connection closing, idle, shutdown): a
// cleanup hook on each such session. A pool browser that goes away without being asked (the pool's session
// timeout, a crash) is remembered: the call it happened in, or else the connection's next call that needs a
// browser, is refused `browser_lost` saying why; the call after that connects a fresh one. Nothing is
// reconnected or retried silently.
import type {
  BrowserLoss,
  BrowserTabs,
  ConnectionBrowser,
  OpenConnectionBrowser,
  RoutedTab,
  TabDriver,
} from '../contract/browser-route.js';

import { Refusal } from '../contract/refusal.js';
import type { Session, SessionManager } from '../sessions/manager.js';

export interface SessionBrowsersOptions<T extends RoutedTab> {
  /** Opens a connection's own browser (--browser-endpoint) or context (--isolated); none: every session shares one. */
  open?: OpenConnectionBrowser<T>;
  /** The server's log. */
  log?: (line: string) => void;
  sessions: SessionManager;
  /** Told of each tab of a connection's browser that went away with it (owners and tokens of it are forgotten). */
  tabGone: (tabId: string) => void;
}

interface Own<T extends RoutedTab> {
  browser: ConnectionBrowser<T>;
  /** Why the pool's browser went away, until a call has been told. */
  loss: BrowserLoss | null;
  /** How many times it went away (a call compares this before and after it ran). */
  losses: number;
}

/** The cleanup hook's name on a session that used its connection's browser. */
const HOOK = 'browser';

export class SessionBrowsers<T extends RoutedTab> {
  private readonly own = new Map<string, Own<T>>();

  constructor(
    private readonly shared: BrowserTabs<T>,
    private readonly sharedDriver: TabDriver,
    private readonly options: SessionBrowsersOptions<T>,
  ) {}

  /** Whether connections get browsers (or contexts) of their own. */
  get perConnection(): boolean {
    return !!this.options.open;
  }

  /** The browser host whose tabs this call may list, find and open. Refused `browser_lost` once after its pool browser went away. */
  hostFor(ctx: { connectionId: string; session?: Session }): BrowserTabs<T> {
    return this.perConnection ? this.entry(ctx).browser : this.shared;
  }

  /** The CDP route's driver for this call's tabs. */
  driverFor(ctx: { connectionId: string; session?: Session }): TabDriver {
    return this.perConnection ? this.entry(ctx).browser.driver : this.sharedDriver;
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

  private takeLoss(own: Own<T>): Refusal {
    const loss = own.loss!;
    own.loss = null;
    return new Refusal('browser_lost', loss.message, {
      retryable: true,
      alive_ms: loss.aliveMs,
      close_code: loss.code,
    });
  }

  private entry(ctx: { connectionId: string; session?: Session }): Own<T> {
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

  private open(connectionId: string): Own<T> {
    const own: Own<T> = { browser: null!, loss: null, losses: 0 };
    own.browser = this.options.open!(connectionId, {
      lost: (loss) => this.lost(connectionId, own, loss),
      tabGone: this.options.tabGone,
    });
    return own;
  }

  private lost(connectionId: string, own: Own<T>, loss: BrowserLoss): void {
    if (this.own.get(connectionId) !== own) return; // closed on purpose meanwhile
    own.loss = loss;
    own.losses++;
    (this.options.log ?? (() => {}))(
      `the browser from the pool for MCP connection ${connectionId} went away after ${Math.round(loss.aliveMs / 1000)} s (WebSocket close ${loss.code})`,
    );
    this.forgetTabs(connectionId, own);
  }

  /** The tabs of a browser that is gone: their owners, tokens and the sessions' current tab go too. */
  private forgetTabs(connectionId: string, own: Own<T>): void {
    const gone = new Set(own.browser.forgetTabs());
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
    this.forgetTabs(connectionId, own);
    await own.browser.close();
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
