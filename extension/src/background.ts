// Verity extension service worker: shares the tabs of the "Verity" tab group with the paired gateway.
//
// Consent: a tab is shared only while it is in a tab group titled "Verity". That is checked before every
// attach and before every relayed command; a tab that leaves the group is detached at once and the
// gateway is told (relay.tabs). Tabs join the group by the operator's hand or the context menu item.
//
// Relay: one gateway connection (the shared GatewayClient: client id verity-extension, cap tab-relay).
// The gateway sends `relay.command` events {id, targetId, sessionId?, method, params}; each is run once
// with chrome.debugger.sendCommand and answered with `relay.result`; debugger events go up as
// `relay.event`. A command id is run at most once; a result that cannot be sent is dropped (the gateway
// has already refused that command as "result unknown"), so nothing is ever doubled.
//
// Resilience: the client reconnects with its back-off; the shared set lives in storage.session so a
// restarted service worker re-attaches; an alarm and the heartbeat keep it going while sharing; a tab whose
// debugger detached (navigation, crash) is re-attached while it stays in the group.
//
// APIs: webextension-polyfill's `browser.*` for everything it covers (storage, tabs, runtime, alarms,
// contextMenus, action); `chrome.*` only for the Chrome-only debugger, tabGroups and sidePanel.
import browser, { type Menus, type Tabs } from 'webextension-polyfill';
import { GatewayClient, type StateDetail } from '../../control-ui/src/gateway.js';
import type { RelayCommand } from '../../server/gateway/protocol.js';
import type { Pairing, WorkerMessage, WorkerStatus } from './messages.js';

const GROUP_TITLE = 'Verity';
const HEARTBEAT_MS = 20_000;
/** Relay command ids remembered (each runs at most once); the oldest is forgotten past this. */
const MAX_DONE_IDS = 5000;

/** A tab attached with chrome.debugger; stale: known from before a worker restart, checked on reconcile. */
interface Attached {
  targetId: string;
  attachId: number;
  url: string;
  title: string;
  stale?: boolean;
}

const inGroupTitle = (title: string | undefined) => (title ?? '').trim().toLowerCase() === GROUP_TITLE.toLowerCase();
const shareable = (url: string) => /^(https?|file):/.test(url) || url === 'about:blank';
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

class TabRelay {
  private readonly attached = new Map<number, Attached>();
  private attachSeq = 0;
  private client: GatewayClient | null = null;
  private connected = false;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private readonly done = new Set<string>();
  /** What needs the operator's attention now (shown on the badge), keyed by topic. */
  private readonly attention = new Map<string, string>();
  private pairingCache: Pairing | null | undefined;
  private badging: Promise<void> = Promise.resolve();
  private reconciling: Promise<void> = Promise.resolve();
  private readonly restored: Promise<void>;

  constructor() {
    this.restored = (async () => {
      const saved = (await browser.storage.session.get('relay')).relay as
        | { attachSeq?: number; attached?: Array<[number, Attached]> }
        | undefined;
      if (!saved) return;
      this.attachSeq = saved.attachSeq ?? 0;
      // Attached before the worker stopped: the debugger may or may not still be attached; checked on reconcile.
      for (const [tabId, info] of saved.attached ?? []) this.attached.set(tabId, { ...info, stale: true });
    })().catch(() => {});
  }

  // ---- state that survives the worker being stopped ----

  private async persist(): Promise<void> {
    await browser.storage.session
      .set({ relay: { attachSeq: this.attachSeq, attached: [...this.attached] } })
      .catch(() => {});
  }

  private async pairing(): Promise<Pairing | null> {
    if (this.pairingCache === undefined)
      this.pairingCache = ((await browser.storage.local.get('pairing')).pairing as Pairing | undefined) ?? null;
    return this.pairingCache;
  }

  async status(): Promise<WorkerStatus> {
    await this.restored;
    const p = await this.pairing();
    return {
      paired: !!p,
      gateway: p?.gateway ?? null,
      connected: this.connected,
      shared: [...this.attached].map(([tabId, a]) => ({
        tabId,
        targetId: a.targetId,
        attachId: a.attachId,
        url: a.url,
        title: a.title,
      })),
      attention: [...this.attention.values()],
    };
  }

  // ---- the badge: connected, sharing (count) or needs-attention ----

  /** Updates are serialized: interleaved, one update's text and another's title could stay on the badge. */
  badge(): Promise<void> {
    this.badging = this.badging.then(
      () => this.badgeNow(),
      () => this.badgeNow(),
    );
    return this.badging;
  }

  private async badgeNow(): Promise<void> {
    const p = await this.pairing();
    let text: string,
      color = '#2e7d32',
      title: string;
    const count = this.attached.size;
    if (!p) {
      text = '!';
      color = '#c62828';
      title = 'Verity: not paired. Run `verity start` and open the "Pair the Chrome extension" link it prints.';
    } else if (this.attention.size) {
      text = '!';
      color = '#c62828';
      title = `Verity: ${[...this.attention.values()].join(' ')}`;
    } else if (!this.connected) {
      text = '…';
      color = '#757575';
      title = `Verity: connecting to ${p.gateway}…`;
    } else if (count) {
      text = String(count);
      title = `Verity: sharing ${count} tab${count === 1 ? '' : 's'} (the "${GROUP_TITLE}" tab group) with ${p.gateway}`;
    } else {
      text = 'on';
      title = `Verity: connected to ${p.gateway}. Put tabs in a tab group named "${GROUP_TITLE}" (or right-click → "Share this tab with Verity") to share them.`;
    }
    try {
      await browser.action.setBadgeText({ text });
      await browser.action.setBadgeBackgroundColor({ color });
      await browser.action.setTitle({ title });
    } catch {
      /* no action UI: fine */
    }
  }

  private needs(topic: string, message: string | null): void {
    if (message) this.attention.set(topic, message);
    else this.attention.delete(topic);
    void this.badge();
  }

  // ---- the gateway connection ----

  /** Connects with the stored pairing unless already connected or connecting. */
  async connect(): Promise<void> {
    await this.restored;
    if (this.client?.running) return;
    const p = await this.pairing();
    if (!p) {
      void this.badge();
      return;
    }
    // The relay presents its pairing's relay secret (not the operator credential): only it may relay.
    if (!p.relaySecret) {
      this.needs(
        'gateway',
        `this pairing has no relay secret (made by an older Verity). Pair again: open the link \`verity start\` prints.`,
      );
      return;
    }
    const client =
      this.client ??
      new GatewayClient({
        url: p.gateway,
        token: p.relaySecret,
        caps: ['tab-relay'],
        scopes: ['operator.read', 'operator.write'],
        clientId: 'verity-extension',
        mode: 'relay',
        displayName: 'Verity extension',
      });
    if (!this.client) {
      this.client = client;
      client.addEventListener('state', (e) => this.onState(client, p, (e as CustomEvent<StateDetail>).detail));
      client.on('relay.command', (command) => {
        void this.runCommand(command);
      });
    }
    client.start();
  }

  private onState(client: GatewayClient, p: Pairing, { state, error, code, wasConnected }: StateDetail): void {
    if (client !== this.client) return;
    if (state === 'connected') {
      this.connected = true;
      this.needs('gateway', null);
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = setInterval(() => {
        void this.announce();
      }, HEARTBEAT_MS);
      void this.reconcile().then(() => this.announce());
      return;
    }
    this.connected = false;
    if (this.heartbeat) {
      clearInterval(this.heartbeat);
      this.heartbeat = null;
    }
    if (state === 'unauthorized') {
      this.needs(
        'gateway',
        `the gateway at ${p.gateway} refused the connection (${error}). Pair again: open the link \`verity start\` prints.`,
      );
    } else if (state === 'closed' && !this.attention.has('gateway')) {
      this.needs(
        'gateway',
        wasConnected
          ? `lost the gateway at ${p.gateway} (${code}); reconnecting. If \`verity start\` was restarted with a new token, pair again with its link.`
          : `cannot reach the gateway at ${p.gateway}: is \`verity start\` running? If it is, pair again with the link it prints (the gateway refuses unpaired extensions).`,
      );
    } else void this.badge();
  }

  /** The pairing changed: drop the connection and start again with the new one. */
  reconnectNow(): void {
    this.pairingCache = undefined;
    const old = this.client;
    this.client = null;
    this.connected = false;
    old?.stop();
    this.attention.delete('gateway');
    void this.connect();
  }

  private async announce(): Promise<void> {
    const client = this.client;
    if (!client || !this.connected) return;
    const tabs = [...this.attached].map(([tabId, a]) => ({
      tabId,
      targetId: a.targetId,
      attachId: a.attachId,
      url: a.url,
      title: a.title,
    }));
    await client.request('relay.tabs', { tabs }).catch(() => {});
  }

  // ---- consent: the "Verity" tab group ----

  private async verityGroupIds(): Promise<Set<number>> {
    const groups = await chrome.tabGroups.query({});
    return new Set(groups.filter((g) => inGroupTitle(g.title)).map((g) => g.id));
  }

  async inVerityGroup(tabId: number): Promise<boolean> {
    try {
      const tab = await browser.tabs.get(tabId);
      if (tab.groupId === undefined || tab.groupId < 0) return false;
      return inGroupTitle((await chrome.tabGroups.get(tab.groupId)).title);
    } catch {
      return false;
    }
  }

  private async attach(tab: Tabs.Tab & { id: number; pendingUrl?: string }): Promise<void> {
    const url = tab.url || tab.pendingUrl || '';
    if (!shareable(url)) {
      this.needs(
        `tab-${tab.id}`,
        `the tab "${tab.title ?? url}" cannot be shared (${url.split(':')[0]}: pages cannot be debugged); take it out of the "${GROUP_TITLE}" group.`,
      );
      return;
    }
    if (!(await this.inVerityGroup(tab.id))) return; // consent, checked right before attaching
    try {
      await chrome.debugger.attach({ tabId: tab.id }, '1.3');
    } catch (e) {
      if (!/already attached/i.test(messageOf(e))) {
        this.needs(
          `tab-${tab.id}`,
          `could not attach to the tab "${tab.title ?? url}": ${messageOf(e)}. Close DevTools or other debuggers on it, or take it out of the group and back in.`,
        );
        return;
      }
    }
    try {
      const { targetInfo } = (await chrome.debugger.sendCommand({ tabId: tab.id }, 'Target.getTargetInfo')) as {
        targetInfo: { targetId: string; url: string; title: string };
      };
      this.attached.set(tab.id, {
        targetId: targetInfo.targetId,
        attachId: ++this.attachSeq,
        url: targetInfo.url,
        title: targetInfo.title,
      });
      this.needs(`tab-${tab.id}`, null);
    } catch (e) {
      this.needs(`tab-${tab.id}`, `attached to "${tab.title ?? url}" but could not read it: ${messageOf(e)}`);
    }
  }

  private async detach(tabId: number): Promise<void> {
    this.attached.delete(tabId);
    this.needs(`tab-${tabId}`, null);
    await chrome.debugger.detach({ tabId }).catch(() => {});
  }

  /** Makes the attached set equal the tabs of the "Verity" group(s), then tells the gateway. Serialized. */
  reconcile(): Promise<void> {
    this.reconciling = this.reconciling.then(
      () => this.reconcileNow(),
      () => this.reconcileNow(),
    );
    return this.reconciling;
  }

  private async reconcileNow(): Promise<void> {
    await this.restored;
    const groups = await this.verityGroupIds();
    const tabs = groups.size
      ? (await browser.tabs.query({})).filter(
          (t) => t.id !== undefined && t.groupId !== undefined && groups.has(t.groupId),
        )
      : [];
    const want = new Map(tabs.map((t) => [t.id!, t as Tabs.Tab & { id: number }]));
    let changed = false;
    // The debugger can go away without an onDetach (detached by this extension's own code, or while the
    // worker slept): a tab whose debugger is no longer attached is attached again (a new attachId, so the
    // gateway starts a fresh page session for it).
    const live = new Set(
      (await chrome.debugger.getTargets()).filter((t) => t.attached && t.tabId !== undefined).map((t) => t.tabId),
    );
    for (const [tabId, a] of [...this.attached])
      if (!a.stale && want.has(tabId) && !live.has(tabId)) {
        this.attached.delete(tabId);
        changed = true;
      }
    for (const tabId of [...this.attached.keys()])
      if (!want.has(tabId)) {
        await this.detach(tabId);
        changed = true;
      }
    for (const [tabId, tab] of want) {
      // Known from before a worker restart: attach again (attach() accepts a debugger still attached).
      if (this.attached.get(tabId)?.stale) {
        this.attached.delete(tabId);
        changed = true;
      }
      const a = this.attached.get(tabId);
      if (!a) {
        await this.attach(tab);
        changed = true;
      } else {
        a.url = tab.url ?? '';
        a.title = tab.title ?? '';
      }
    }
    for (const topic of [...this.attention.keys()])
      if (topic.startsWith('tab-') && !want.has(Number(topic.slice(4)))) this.attention.delete(topic);
    await this.persist();
    if (changed || this.connected) await this.announce();
    void this.badge();
  }

  // ---- relayed commands ----

  private async runCommand(command: RelayCommand): Promise<void> {
    const { id, targetId, sessionId, method, params } = command;
    if (typeof id !== 'string' || this.done.has(id)) return; // at most once
    this.done.add(id);
    if (this.done.size > MAX_DONE_IDS) this.done.delete(this.done.values().next().value!);
    const answer = (body: { result: unknown } | { error: string; code?: 'not_delivered' }) => {
      this.client?.notify('relay.result', { id, ...body });
    };
    const entry = [...this.attached].find(([, a]) => a.targetId === targetId);
    if (!entry) return answer({ error: `tab ${targetId} is not shared (it is not in the "${GROUP_TITLE}" tab group)` });
    const [tabId] = entry;
    // Consent, checked before every command: a tab out of the group is detached, never driven.
    if (!(await this.inVerityGroup(tabId))) {
      await this.detach(tabId);
      await this.persist();
      void this.announce();
      return answer({ error: `tab ${targetId} left the "${GROUP_TITLE}" tab group; it is no longer shared` });
    }
    try {
      const target: chrome.debugger.DebuggerSession = sessionId ? { tabId, sessionId } : { tabId };
      const result = await chrome.debugger.sendCommand(target, method, (params ?? {}) as Record<string, unknown>);
      answer({ result: result ?? {} });
    } catch (e) {
      const message = messageOf(e);
      if (/not attached/i.test(message)) {
        // Never reached the page: refused (not resent); the tab is attached again while it stays in the group.
        answer({
          error: `the debugger was detached from tab ${targetId}, so ${method} was not delivered; it is being re-attached (${message})`,
          code: 'not_delivered',
        });
        this.attached.delete(tabId);
        void this.reconcile();
      } else answer({ error: message });
    }
  }

  onDebuggerEvent(source: chrome.debugger.DebuggerSession, method: string, params: unknown): void {
    const a = source.tabId !== undefined ? this.attached.get(source.tabId) : undefined;
    if (!a || !this.connected || !this.client) return;
    const frame = (params as { frame?: { parentId?: string; url: string } } | undefined)?.frame;
    if (method === 'Page.frameNavigated' && frame && !frame.parentId) a.url = frame.url;
    this.client.notify('relay.event', {
      targetId: a.targetId,
      ...(source.sessionId ? { sessionId: source.sessionId } : {}),
      method,
      ...(params !== undefined ? { params } : {}),
    });
  }

  /** The debugger left a shared tab: banner dismissed → sharing revoked; anything else → attached again. */
  async onDetach(source: chrome.debugger.Debuggee, reason: string): Promise<void> {
    const tabId = source.tabId;
    if (tabId === undefined || !this.attached.has(tabId)) return;
    this.attached.delete(tabId);
    void this.persist();
    void this.announce();
    if (reason === 'canceled_by_user') {
      // The operator dismissed the "is being debugged" banner: that revokes sharing.
      await browser.tabs.ungroup(tabId).catch(() => {});
      await this.reconcile();
      return;
    }
    // Navigation or a renderer swap: re-attach while the tab stays in the group (a few tries).
    let tries = 0;
    const retry = () =>
      setTimeout(
        async () => {
          await this.reconcile();
          if (!this.attached.has(tabId) && (await this.inVerityGroup(tabId)) && ++tries < 5) retry();
        },
        200 * (tries + 1),
      );
    retry();
  }

  onTabRemoved(tabId: number): void {
    if (!this.attached.has(tabId)) return;
    this.attached.delete(tabId);
    void this.persist();
    void this.announce();
    void this.badge();
  }

  isAttached(tabId: number): boolean {
    return this.attached.has(tabId);
  }

  // ---- menu: share a tab (adds it to the "Verity" group, made if needed) ----

  async shareTab(tab: Tabs.Tab & { id: number }): Promise<void> {
    const groups = await chrome.tabGroups.query({ windowId: tab.windowId });
    const existing = groups.find((g) => inGroupTitle(g.title));
    if (existing) await browser.tabs.group({ tabIds: [tab.id], groupId: existing.id });
    else {
      const groupId = await browser.tabs.group({ tabIds: [tab.id] });
      await chrome.tabGroups.update(groupId, { title: GROUP_TITLE, color: 'orange' });
    }
    await this.reconcile();
  }

  async unshareTab(tab: Tabs.Tab & { id: number }): Promise<void> {
    if (await this.inVerityGroup(tab.id)) await browser.tabs.ungroup(tab.id);
    await this.reconcile();
  }

  /** The context menu (page and toolbar button): share or stop sharing the tab it was opened on. */
  async onMenuClicked(info: Menus.OnClickData, tab: Tabs.Tab | undefined): Promise<void> {
    if (tab?.id === undefined) return;
    const withId = tab as Tabs.Tab & { id: number };
    if (info.menuItemId === 'verity-share') await this.shareTab(withId);
    if (info.menuItemId === 'verity-unshare') await this.unshareTab(withId);
  }
}

const relay = new TabRelay();

// ---- what makes the shared set change ----

chrome.debugger.onEvent.addListener((source, method, params) => relay.onDebuggerEvent(source, method, params));
chrome.debugger.onDetach.addListener((source, reason) => {
  void relay.onDetach(source, reason);
});
browser.tabs.onUpdated.addListener((tabId, change) => {
  if (
    change.groupId !== undefined ||
    (relay.isAttached(tabId) && (change.url !== undefined || change.status === 'complete'))
  )
    void relay.reconcile();
});
browser.tabs.onRemoved.addListener((tabId) => relay.onTabRemoved(tabId));
browser.tabs.onAttached.addListener(() => {
  void relay.reconcile();
});
chrome.tabGroups.onCreated.addListener(() => {
  void relay.reconcile();
});
chrome.tabGroups.onUpdated.addListener(() => {
  void relay.reconcile();
});
chrome.tabGroups.onRemoved.addListener(() => {
  void relay.reconcile();
});
browser.contextMenus.onClicked.addListener((info, tab) => {
  void relay.onMenuClicked(info, tab);
});

// ---- lifecycle ----

browser.runtime.onInstalled.addListener(() => {
  void browser.contextMenus.removeAll().then(() => {
    browser.contextMenus.create({
      id: 'verity-share',
      title: 'Share this tab with Verity',
      contexts: ['page', 'action'],
    });
    browser.contextMenus.create({
      id: 'verity-unshare',
      title: 'Stop sharing this tab with Verity',
      contexts: ['page', 'action'],
    });
  });
  chrome.sidePanel?.setPanelBehavior?.({ openPanelOnActionClick: true }).catch(() => {});
});
browser.runtime.onStartup.addListener(() => {
  void relay.connect();
});

void browser.alarms.create('verity-keepalive', { periodInMinutes: 0.5 });
browser.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name !== 'verity-keepalive') return;
  void relay.connect();
  void relay.reconcile();
});

browser.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && changes.pairing) relay.reconnectNow();
});

// Extension pages talk to the worker: the pairing page says it paired, and asks for the status it shows.
browser.runtime.onMessage.addListener((message: unknown) => {
  const type = (message as Partial<WorkerMessage> | null)?.type;
  if (type === 'paired') {
    relay.reconnectNow();
    return Promise.resolve({ ok: true });
  }
  if (type === 'status') return relay.status();
  return undefined;
});

void relay.connect();
void relay.reconcile();
void relay.badge();
