// The extension relay: tabs the operator shares from their own Chrome (the "Verity" tab group) reach the
// CDP route as ordinary tabs. The extension connects to the gateway WebSocket (client id
// `verity-extension`, cap `tab-relay`), announces its shared tabs (`relay.tabs`), answers the commands
// the gateway sends it (`relay.command` event → `relay.result` request) and forwards the debugger's
// events (`relay.event`). Here, a browser-level CDP endpoint is emulated over that link, so puppeteer
// connects to it with a custom transport and sees each shared tab as a tab target with one page.
//
// The consent boundary is checked here too: a command for a tab that is not in the extension's latest
// announcement is refused, and a tab that leaves the announcement is detached from puppeteer at once
// (its Tab closes; the next call naming it is refused as target_not_found).
//
// Delivery: every command has an id; it is sent once. When the extension connection drops, commands
// still waiting are refused (their result is unknown; they are never resent), and the emulated browser
// disconnects. A new extension connection starts a fresh emulated browser; tab ids (real CDP target
// ids) stay the same, so sessions keep pointing at their tabs.
import { errorCodeOf, errorTag, RelayCommandError, type RelayErrorCode } from '../errors.js';
import { randomBytes } from 'node:crypto';
import type { ConnectionTransport } from 'puppeteer-core';
import { BrowserHost } from '../cdp/browser/browser.js';
import type { GatewayConnection } from './connection.js';
import { GatewayError } from './protocol.js';

export interface SharedTab {
  targetId: string;
  tabId: number;
  url: string;
  title: string;
  attachId: number;
}

interface CdpMessage {
  id?: number;
  method?: string;
  params?: any;
  sessionId?: string;
  result?: unknown;
  error?: { code: number; message: string; data?: string };
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** One live extension link: its shared tabs and the commands waiting on it. */
class Link {
  readonly tabs = new Map<string, SharedTab>();
  readonly pending = new Map<string, Pending>();
  transport: EmulatedBrowser | null = null;
  constructor(readonly conn: GatewayConnection) {}
}

export class Relay {
  private link: Link | null = null;
  private seq = 0;
  private readonly prefix = randomBytes(4).toString('hex');
  /** The shared tabs as a source of tabs for the CDP route. */
  readonly host: BrowserHost;

  constructor(private readonly log: (line: string) => void) {
    this.host = new BrowserHost({
      transport: async () => {
        const link = this.link;
        if (!link?.conn.open) throw new Error('the Verity extension is not connected');
        link.transport?.close();
        link.transport = new EmulatedBrowser(this, link);
        return link.transport;
      },
      available: () => !!this.link && this.link.tabs.size > 0,
      log,
    });
  }

  get connected(): boolean {
    return !!this.link?.conn.open;
  }
  sharedTabs(): SharedTab[] {
    return [...(this.link?.tabs.values() ?? [])];
  }

  /** The extension (re)connected: it replaces any earlier link. */
  attach(conn: GatewayConnection): void {
    if (this.link?.conn === conn) return;
    if (this.link) this.drop(this.link, 'a newer extension connection replaced it');
    const link = new Link(conn);
    this.link = link;
    conn.disposers.add(() => {
      if (this.link === link) {
        this.drop(link, 'the extension disconnected');
        this.link = null;
      }
    });
    this.log('the Verity extension connected');
  }

  private drop(link: Link, why: string): void {
    for (const [id, waiter] of link.pending)
      waiter.reject(
        new RelayCommandError(
          'delivery_unknown',
          `${why} before answering relay command ${id}; its result is unknown and it is not resent: check the page and retry if needed`,
        ),
      );
    link.pending.clear();
    // Those refusals reach puppeteer (and the tool that waits on them) before the emulated browser closes;
    // closed first, the caller would only see "connection closed", which reads as safe to retry.
    const transport = link.transport;
    link.transport = null;
    link.tabs.clear();
    if (transport) setTimeout(() => transport.close(), 0);
  }

  private own(conn: GatewayConnection): Link {
    if (!conn.caps.includes('tab-relay'))
      throw new GatewayError(
        'FORBIDDEN',
        'relay methods need the tab-relay cap (only the Verity extension connects with it)',
      );
    this.attach(conn);
    return this.link!;
  }

  /** relay.tabs: the complete list of tabs the extension shares now. */
  announce(conn: GatewayConnection, tabs: SharedTab[]): { shared: number } {
    const link = this.own(conn);
    const next = new Map(tabs.map((t) => [t.targetId, t]));
    for (const [id, old] of link.tabs) {
      const now = next.get(id);
      if (!now || now.attachId !== old.attachId) {
        link.tabs.delete(id);
        link.transport?.removeTab(id);
      }
    }
    for (const [id, tab] of next) {
      const old = link.tabs.get(id);
      link.tabs.set(id, tab);
      if (!old) link.transport?.addTab(tab);
    }
    return { shared: link.tabs.size };
  }

  /** relay.result: the answer to one command. Unknown ids (a previous link's) are ignored. */
  result(
    conn: GatewayConnection,
    id: string,
    result: unknown,
    error: string | undefined,
    code?: RelayErrorCode,
  ): { ok: true } {
    const link = this.own(conn);
    const waiter = link.pending.get(id);
    if (waiter) {
      link.pending.delete(id);
      if (error !== undefined) waiter.reject(code ? new RelayCommandError(code, error) : new Error(error));
      else waiter.resolve(result ?? {});
    }
    return { ok: true };
  }

  /** relay.event: a debugger event of a shared tab (sessionId: a child session of that tab). */
  event(
    conn: GatewayConnection,
    targetId: string,
    sessionId: string | undefined,
    method: string,
    params: unknown,
  ): { ok: true } {
    const link = this.own(conn);
    if (link.tabs.has(targetId)) link.transport?.tabEvent(targetId, sessionId, method, params);
    return { ok: true };
  }

  /** Sends one command to the extension, once. Refused when the tab is not shared (consent boundary). */
  command(
    link: Link,
    targetId: string,
    sessionId: string | undefined,
    method: string,
    params: unknown,
  ): Promise<unknown> {
    if (this.link !== link || !link.conn.open)
      return Promise.reject(new Error('the Verity extension is not connected; the command was not sent'));
    if (!link.tabs.has(targetId))
      return Promise.reject(
        new Error(`tab ${targetId} is no longer shared (it left the "Verity" tab group); the command was not sent`),
      );
    const id = `${this.prefix}-${++this.seq}`;
    return new Promise((resolve, reject) => {
      link.pending.set(id, { resolve, reject });
      if (!link.conn.event('relay.command', { id, targetId, sessionId, method, params: params ?? {} })) {
        link.pending.delete(id);
        reject(new Error('the Verity extension connection is closing; the command was not sent'));
      }
    });
  }
}

interface PageSession {
  kind: 'page';
  targetId: string;
}
interface TabSession {
  kind: 'tab';
  targetId: string;
}
interface ChildSession {
  kind: 'child';
  targetId: string;
  parent: string;
  child: string;
}
type Session = PageSession | TabSession | ChildSession;

/**
 * A browser-level CDP endpoint emulated over the extension link, in the shape puppeteer expects of a
 * real Chrome: each shared tab is a `tab` target whose auto-attach yields its `page` target. Page
 * sessions forward to chrome.debugger on the tab; the tab's child sessions (OOPIFs, workers) are given
 * one alias per page session, so two page sessions (puppeteer's and Verity's own) never share one.
 */
class EmulatedBrowser implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  private closed = false;
  private discover = false;
  private autoAttach = false;
  private readonly sessions = new Map<string, Session>();
  private readonly tabSessionOf = new Map<string, string>();
  private n = 0;

  constructor(
    private readonly relay: Relay,
    private readonly link: Link,
  ) {}

  private emit(message: CdpMessage): void {
    if (this.closed) return;
    const text = JSON.stringify(message);
    this.onmessage?.(text);
  }

  private reply(id: number, sessionId: string | undefined, result: unknown): void {
    this.emit({ id, ...(sessionId ? { sessionId } : {}), result: result ?? {} } as CdpMessage);
  }

  private fail(id: number, sessionId: string | undefined, message: string, code?: RelayErrorCode | null): void {
    // puppeteer keeps only the text of a protocol error: the code travels as a tag in `data` (server/errors.ts).
    this.emit({
      id,
      ...(sessionId ? { sessionId } : {}),
      error: { code: -32000, message, ...(code ? { data: errorTag(code) } : {}) },
    });
  }

  private newSession(session: Session): string {
    const id = `relay-${++this.n}-${randomBytes(3).toString('hex')}`;
    this.sessions.set(id, session);
    return id;
  }

  private tabInfo(tab: SharedTab) {
    return {
      targetId: `tab-${tab.targetId}`,
      type: 'tab',
      title: tab.title,
      url: tab.url,
      attached: true,
      canAccessOpener: false,
    };
  }

  private pageInfo(tab: SharedTab) {
    return {
      targetId: tab.targetId,
      type: 'page',
      title: tab.title,
      url: tab.url,
      attached: true,
      canAccessOpener: false,
    };
  }

  addTab(tab: SharedTab): void {
    if (this.discover) {
      this.emit({ method: 'Target.targetCreated', params: { targetInfo: this.tabInfo(tab) } });
      this.emit({ method: 'Target.targetCreated', params: { targetInfo: this.pageInfo(tab) } });
    }
    if (this.autoAttach) this.addTabAttach(tab);
  }

  removeTab(targetId: string): void {
    const tabSession = this.tabSessionOf.get(targetId);
    for (const [id, s] of [...this.sessions]) {
      if (s.targetId !== targetId || s.kind === 'tab') continue;
      this.sessions.delete(id);
      if (s.kind === 'page')
        this.emit({
          ...(tabSession ? { sessionId: tabSession } : {}),
          method: 'Target.detachedFromTarget',
          params: { sessionId: id, targetId },
        });
    }
    if (tabSession) {
      this.sessions.delete(tabSession);
      this.tabSessionOf.delete(targetId);
      this.emit({
        method: 'Target.detachedFromTarget',
        params: { sessionId: tabSession, targetId: `tab-${targetId}` },
      });
    }
    if (this.discover) {
      this.emit({ method: 'Target.targetDestroyed', params: { targetId } });
      this.emit({ method: 'Target.targetDestroyed', params: { targetId: `tab-${targetId}` } });
    }
  }

  /** A debugger event of a shared tab, delivered to every page session of it (child events by alias). */
  tabEvent(targetId: string, child: string | undefined, method: string, params: any): void {
    for (const [id, s] of [...this.sessions]) {
      if (child === undefined && s.kind === 'page' && s.targetId === targetId) {
        if (method === 'Target.attachedToTarget' || method === 'Target.detachedFromTarget') {
          const alias = `${id}~${params.sessionId}`;
          if (method === 'Target.attachedToTarget')
            this.sessions.set(alias, { kind: 'child', targetId, parent: id, child: params.sessionId });
          else this.sessions.delete(alias);
          this.emit({ sessionId: id, method, params: { ...params, sessionId: alias } });
        } else {
          this.emit({ sessionId: id, method, params });
        }
      } else if (child !== undefined && s.kind === 'child' && s.targetId === targetId && s.child === child) {
        this.emit({ sessionId: id, method, params });
      }
    }
  }

  send(message: string): void {
    const msg = JSON.parse(message) as Required<Pick<CdpMessage, 'id' | 'method'>> & CdpMessage;
    // Answers go out asynchronously, as from a socket.
    queueMicrotask(() => {
      void this.handle(msg).catch((e) => this.fail(msg.id, msg.sessionId, (e as Error).message, errorCodeOf(e)));
    });
  }

  private async handle(msg: { id: number; method: string; params?: any; sessionId?: string }): Promise<void> {
    const { id, method, sessionId } = msg;
    const params = msg.params ?? {};
    if (sessionId) {
      const s = this.sessions.get(sessionId);
      if (!s) return this.fail(id, sessionId, `No session with given id ${sessionId} (the shared tab is gone)`);
      const tab = this.link.tabs.get(s.targetId);
      if (!tab)
        return this.fail(id, sessionId, `tab ${s.targetId} is no longer shared (it left the "Verity" tab group)`);
      if (s.kind === 'tab') {
        if (method === 'Target.setAutoAttach') {
          if (![...this.sessions.values()].some((o) => o.kind === 'page' && o.targetId === s.targetId)) {
            const pageSession = this.newSession({ kind: 'page', targetId: s.targetId });
            this.emit({
              sessionId,
              method: 'Target.attachedToTarget',
              params: { sessionId: pageSession, targetInfo: this.pageInfo(tab), waitingForDebugger: false },
            });
          }
          return this.reply(id, sessionId, {});
        }
        if (method === 'Runtime.runIfWaitingForDebugger') return this.reply(id, sessionId, {});
        return this.fail(id, sessionId, `${method} is not available on a shared tab's tab target`);
      }
      let forwardParams = params;
      if (s.kind === 'page' && method === 'Target.detachFromTarget' && typeof params.sessionId === 'string') {
        const alias = this.sessions.get(params.sessionId);
        if (alias?.kind === 'child') forwardParams = { ...params, sessionId: alias.child };
      }
      const child = s.kind === 'child' ? s.child : undefined;
      // The extension's debugger session outlives this emulated browser (a gateway restart, a dropped link):
      // its Runtime domain is then already enabled, and enabling it again reports no execution contexts, so
      // puppeteer would wait for a main world that is never announced (every page.title() of a shared tab
      // ran into its 10 s bound after a restart). Disabling first makes Chrome announce them again.
      if (method === 'Runtime.enable') await this.relay.command(this.link, s.targetId, child, 'Runtime.disable', {});
      const result = await this.relay.command(this.link, s.targetId, child, method, forwardParams);
      return this.reply(id, sessionId, result);
    }
    switch (method) {
      case 'Browser.getVersion':
        return this.reply(id, undefined, {
          protocolVersion: '1.3',
          product: 'Chrome (Verity extension relay)',
          revision: '',
          userAgent: '',
          jsVersion: '',
        });
      case 'Target.getBrowserContexts':
        return this.reply(id, undefined, { browserContextIds: [] });
      case 'Target.setDiscoverTargets':
        this.discover = !!params.discover;
        if (this.discover)
          for (const tab of this.link.tabs.values()) {
            this.emit({ method: 'Target.targetCreated', params: { targetInfo: this.tabInfo(tab) } });
            this.emit({ method: 'Target.targetCreated', params: { targetInfo: this.pageInfo(tab) } });
          }
        return this.reply(id, undefined, {});
      case 'Target.setAutoAttach':
        this.autoAttach = !!params.autoAttach;
        if (this.autoAttach) for (const tab of this.link.tabs.values()) this.addTabAttach(tab);
        return this.reply(id, undefined, {});
      case 'Target.getTargets':
        return this.reply(id, undefined, {
          targetInfos: [...this.link.tabs.values()].flatMap((t) => [this.tabInfo(t), this.pageInfo(t)]),
        });
      case 'Target.getTargetInfo': {
        const tab = params.targetId ? this.link.tabs.get(params.targetId) : undefined;
        if (params.targetId && !tab) return this.fail(id, undefined, `no shared tab ${params.targetId}`);
        return this.reply(id, undefined, {
          targetInfo: tab
            ? this.pageInfo(tab)
            : { targetId: 'verity-relay', type: 'browser', title: '', url: '', attached: true, canAccessOpener: false },
        });
      }
      case 'Target.attachToTarget': {
        const tab = this.link.tabs.get(params.targetId);
        if (!tab)
          return this.fail(id, undefined, `no shared tab ${params.targetId} (it is not in the "Verity" tab group)`);
        const pageSession = this.newSession({ kind: 'page', targetId: tab.targetId });
        this.emit({
          method: 'Target.attachedToTarget',
          params: { sessionId: pageSession, targetInfo: this.pageInfo(tab), waitingForDebugger: false },
        });
        return this.reply(id, undefined, { sessionId: pageSession });
      }
      case 'Target.detachFromTarget': {
        const s = this.sessions.get(params.sessionId);
        if (s) {
          this.sessions.delete(params.sessionId);
          for (const [alias, o] of [...this.sessions])
            if (o.kind === 'child' && o.parent === params.sessionId) this.sessions.delete(alias);
          this.emit({
            method: 'Target.detachedFromTarget',
            params: { sessionId: params.sessionId, targetId: s.targetId },
          });
        }
        return this.reply(id, undefined, {});
      }
      case 'Target.activateTarget':
        return this.reply(id, undefined, {});
      case 'Target.closeTarget':
        return this.fail(
          id,
          undefined,
          'a shared tab is the operator\'s: Verity does not close it (take it out of the "Verity" tab group to stop sharing)',
        );
      case 'Target.createTarget':
        return this.fail(
          id,
          undefined,
          'new tabs are not opened in the operator\'s browser; the operator shares tabs by putting them in the "Verity" tab group',
        );
      default:
        return this.fail(id, undefined, `${method} is not available through the extension relay`);
    }
  }

  private addTabAttach(tab: SharedTab): void {
    if (this.tabSessionOf.has(tab.targetId)) return;
    const sessionId = this.newSession({ kind: 'tab', targetId: tab.targetId });
    this.tabSessionOf.set(tab.targetId, sessionId);
    this.emit({
      method: 'Target.attachedToTarget',
      params: { sessionId, targetInfo: this.tabInfo(tab), waitingForDebugger: false },
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sessions.clear();
    queueMicrotask(() => this.onclose?.());
  }
}
