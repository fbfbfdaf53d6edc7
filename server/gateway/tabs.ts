// The tabs the gateway's methods show and drive (the browser panel, operator input, tabs.assign), looked up
// through the router's operator lookups, never by the gateway in the browser itself: ownership lives in the
// router, and the tab strip of a session agrees with it. Showing a tab never launches a browser.
import type { BrowserHost } from '../cdp/browser/browser.js';
import type { Tab } from '../cdp/tab/tab.js';
import type { Router } from '../routing/router.js';
import type { SessionManager } from '../sessions/manager.js';
import type { SessionRow } from '../sessions/summary.js';
import { GatewayError } from './protocol.js';

export class OperatorTabs {
  constructor(
    private readonly router: Pick<Router<Tab>, 'operatorTab' | 'operatorTabs' | 'sessionTabs' | 'assignTab'>,
    private readonly browser: Pick<BrowserHost, 'running' | 'isShared'>,
    private readonly sessions: Pick<SessionManager, 'all' | 'keyOf'>,
    /** The session rows the operator sees (sessions.list): whose tab a panel shows, and whether it ended. */
    private readonly rows: () => SessionRow[],
  ) {}

  /** The session driving a tab (its current tab first, then any it drove), for the browser panel to name. */
  owner(tabId: string): SessionRow | null {
    const active = this.sessions.all().filter((s) => s.state === 'active');
    const owner = active.find((s) => s.currentTabId === tabId) ?? active.find((s) => s.tabs.has(tabId));
    if (!owner) return null;
    const key = this.sessions.keyOf(owner);
    return this.rows().find((row) => row.sessionKey === key) ?? null;
  }

  /** A tab by id, whoever owns it (the operator's panel and input). */
  find(tabId: string): Promise<Tab> {
    return this.router.operatorTab(tabId);
  }

  /** Every open tab, or only the tabs of one session (its tab strip); none while no browser runs. */
  async list(sessionKey: string | undefined): Promise<Tab[]> {
    if (!sessionKey) return this.router.operatorTabs();
    const session = this.sessions.all().find((s) => this.sessions.keyOf(s) === sessionKey);
    return session ? this.router.sessionTabs(session) : [];
  }

  /** The operator gives a tab to an active session: from then it is that session's connection's alone. */
  async assign(tabId: string, sessionKey: string): Promise<void> {
    const session = this.sessions.all().find((s) => s.state === 'active' && this.sessions.keyOf(s) === sessionKey);
    if (!session) throw new GatewayError('NOT_FOUND', `no active session ${sessionKey}; sessions.list names them`);
    await this.router.operatorTab(tabId).catch(() => {
      throw new GatewayError('NOT_FOUND', `no tab ${tabId}; browser.tabs lists them`);
    });
    this.router.assignTab(tabId, session.connectionId);
  }

  /** The tab the browser panel shows: the one named, else the session's current one, else the first. */
  async toShow(tabId: string | undefined, sessionKey: string | undefined): Promise<Tab> {
    const session = tabId ? undefined : this.sessions.all().find((s) => this.sessions.keyOf(s) === sessionKey);
    // The panel follows one session: once that session has ended it shows nothing, never another agent's
    // tab in its place (the panel says whose tab it shows; it would be someone else's).
    if (!tabId && sessionKey && !this.rows().some((r) => r.sessionKey === sessionKey))
      throw new GatewayError(
        'NOT_FOUND',
        `the session ${sessionKey} has ended: the panel shows no other session's tab in its place`,
        { reason: 'session_ended' },
      );
    const wanted = tabId ?? session?.currentTabId;
    // Showing a tab never launches a browser: without one (and without a shared tab) the panel says so.
    if (!this.browser.running && !(wanted && this.browser.isShared(wanted))) {
      throw new GatewayError('NOT_FOUND', 'no browser yet: an agent opens one with its first browser action', {
        reason: 'no_browser',
      });
    }
    if (wanted) return this.router.operatorTab(wanted);
    const [first] = await this.router.operatorTabs();
    if (!first)
      throw new GatewayError('NOT_FOUND', 'no tab to show yet: an agent opens one with its first browser action');
    return first;
  }
}
