// The Control UI: sessions, split panes with live action logs, a terminal and a browser panel, and the
// approvals queue. Agent commands (ui.command) and the operator's clicks both go through `command()`.
import { LitElement, html, nothing } from 'lit';
import { GatewayClient, type ConnState } from './gateway.js';
import { apply, focusedSession, loadLayout, panes, saveLayout, type Layout, type UiCommand } from './layout.js';
import {
  auditAction,
  badge,
  closedRows,
  connectionBanner,
  dockGrid,
  fleetPaneKey,
  fleetPaneState,
  lastActionMark,
  loneSession,
  mergeActions,
  otherApprovals,
  otherSessions,
  parseFleetPaneKey,
  sessionName,
  shortcut,
  shownState,
  type PanelPlace,
} from './console.js';
import { evidenceFields } from './evidence.js';
import './terminal-panel.js';
import './browser-panel.js';
import { installBrakeShortcuts } from './brake-controls.js';
import './policy-view.js';
import './fleet-view.js';
import type { Approval } from './approval-card.js';
import './approval-card.js';
import type { AuditLog } from './audit-log.js';
import './audit-log.js';
import './styles.css';
import type {
  ActionEntry as ActionRow,
  AuditEntry,
  FleetView,
  HelloOk,
  PairingRow,
  SessionRow,
} from '../../server/gateway/protocol.js';

/**
 * The id of the pane the main area shows by itself when the layout has none and there is one session: not
 * part of the layout (nothing is saved, no agent's command moved anything), made a real pane by a split.
 */
/** Withdrawn approval cards kept until dismissed; past this many, the oldest go. */
const WITHDRAWN_KEPT = 20;
const SOLO_PANE = 'solo';

/** Where a reloaded tab finds its single-use resume ticket (never the credential: see connection()). */
const RESUME_KEY = 'verity.resume';
/** Where versions before issue #22 kept the operator credential; deleted on every load. */
const STALE_TOKEN_KEY = 'verity.token';

/**
 * Where the gateway is and the operator credential. Served by the gateway, the UI connects only to its
 * own origin (never to an address from the URL: a link could send the credential elsewhere). The
 * credential comes from the URL, is removed from the address bar at once, and is kept in memory only:
 * never in web storage, which any process that binds 127.0.0.1:<port> while the gateway is down could
 * read the next time the operator opens the console URL or a bookmark. A reload reconnects with the
 * single-use resume ticket the gateway gave this tab (hello-ok resume_token, in sessionStorage), which no
 * later gateway process accepts. Hosted by the extension, both come from the extension's own pairing
 * storage (its origin is not a port anyone can bind).
 */
async function connection(): Promise<{ url: string; token: string; resumed: boolean }> {
  const ext = (globalThis as { chrome?: { storage?: { local?: { get(key: string): Promise<Record<string, any>> } } } })
    .chrome;
  if (location.protocol === 'chrome-extension:' && ext?.storage?.local) {
    const { pairing } = await ext.storage.local.get('pairing');
    return { url: pairing?.gateway ?? '', token: pairing?.token ?? '', resumed: false };
  }
  localStorage.removeItem(STALE_TOKEN_KEY);
  const params = new URLSearchParams(location.search);
  const hash = new URLSearchParams(location.hash.slice(1));
  const given = params.get('token') ?? hash.get('token');
  if (params.has('token') || hash.has('token')) history.replaceState(null, '', location.pathname);
  // A ticket is used once: taken out now, replaced by the one the gateway sends with hello-ok.
  const ticket = sessionStorage.getItem(RESUME_KEY);
  sessionStorage.removeItem(RESUME_KEY);
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/gateway`;
  return { url, token: given ?? ticket ?? '', resumed: !given && !!ticket };
}

/**
 * sessions.changed carries a delta {added, updated, removed (sessionKeys)}, not the whole list; the full
 * list comes from sessions.list on (re)connect. Rows are keyed by sessionKey, so a delta that overlaps
 * the list fetched at connect applies cleanly.
 */
export function applySessionsDelta(
  rows: SessionRow[],
  delta: { added?: SessionRow[]; updated?: SessionRow[]; removed?: string[] },
): SessionRow[] {
  const byKey = new Map(rows.map((r) => [r.sessionKey, r]));
  for (const key of delta.removed ?? []) byKey.delete(key);
  for (const row of [...(delta.added ?? []), ...(delta.updated ?? [])]) byKey.set(row.sessionKey, row);
  return [...byKey.values()];
}

export class VerityApp extends LitElement {
  static properties = {
    layout: { state: true },
    sessions: { state: true },
    actions: { state: true },
    approvals: { state: true },
    pairings: { state: true },
    conn: { state: true },
    link: { state: true },
    error: { state: true },
    logOpen: { state: true },
    closed: { state: true },
    narrow: { state: true },
    announcement: { state: true },
    fleet: { state: true },
  };
  layout: Layout = loadLayout();
  sessions: SessionRow[] = [];
  actions = new Map<string, ActionRow[]>();
  approvals: Approval[] = [];
  /** Paired extensions (listed only to a connection holding operator.admin). */
  pairings: PairingRow[] | null = null;
  conn: ConnState = 'connecting';
  link: { mcp_url: string; link_token: string } | null = null;
  error = '';
  /** The audit log view (audit-log.ts) is open. */
  logOpen = false;
  client!: GatewayClient;
  /** Sessions whose client went away, kept (bounded) so their panes and rows say "closed" instead of vanishing. */
  closed: SessionRow[] = [];
  /** Below ~1000 px: one pane, panels as drawers under it. */
  narrow = false;
  /** What the polite live region last said (approvals, connection state), for screen readers. */
  announcement = '';
  /** With a shared audit store: every gateway's sessions and held calls (fleet.sessions, fleet.changed); null without. */
  fleet: FleetView | null = null;
  /** The panes of other gateways' sessions whose history was read since the last (re)connect (their keys). */
  private fleetLoaded = new Set<string>();
  /** When the gateway last answered (the banner says how old the greyed view is). */
  private lastConnected: Date | null = null;
  private narrowQuery = matchMedia('(max-width: 999px)');
  private onNarrow = () => {
    this.narrow = this.narrowQuery.matches;
  };
  private onShortcut = (e: KeyboardEvent) => {
    const c = shortcut(e, this.layout);
    if (c) {
      e.preventDefault();
      this.command(c);
    }
  };

  createRenderRoot() {
    return this;
  } // light DOM: the data-* hooks are plain to find

  connectedCallback(): void {
    super.connectedCallback();
    this.narrowQuery.addEventListener('change', this.onNarrow);
    this.onNarrow();
    window.addEventListener('keydown', this.onShortcut);
    // The brake's shortcuts act on the focused pane's session (brake-controls.ts).
    installBrakeShortcuts(
      window,
      () => {
        const key = this.localFocusedKey();
        return { client: this.client, sessionKey: key, status: this.sessions.find((s) => s.sessionKey === key)?.brake };
      },
      (m) => {
        this.error = m;
      },
    );
    void connection().then(
      ({ url, token, resumed }) => this.start(url, token, resumed),
      (e) => {
        this.conn = 'unauthorized';
        this.error = `cannot read the gateway pairing: ${(e as Error).message}`;
      },
    );
  }

  /** `resumed`: the token is a single-use resume ticket, not the credential (a reloaded tab). */
  private start(url: string, token: string, resumed: boolean): void {
    this.client = new GatewayClient({
      url,
      token,
      caps: ['ui-commands'],
      scopes: ['operator.read', 'operator.write', 'operator.admin', 'operator.approvals'],
      clientId: 'verity-control-ui',
      // Served by the gateway, the page's port is anyone's while the gateway is down: prove, never send.
      proveCredential: location.protocol !== 'chrome-extension:',
    });
    this.client.addEventListener('state', (e) => {
      const { state, error } = (e as CustomEvent).detail;
      if (this.conn === 'connected' && state !== 'connected') this.lastConnected = new Date();
      if (state !== this.conn && (state === 'connected' || this.conn === 'connected'))
        this.announcement = state === 'connected' ? 'Connected to the gateway.' : 'Lost the gateway; reconnecting.';
      this.conn = state;
      this.error = state === 'unauthorized' ? error : '';
    });
    this.client.addEventListener('hello', (e) => {
      const ticket = (e as CustomEvent<HelloOk>).detail.resume_token;
      if (ticket && location.protocol !== 'chrome-extension:') {
        sessionStorage.setItem(RESUME_KEY, ticket);
        // A tab that came back with a ticket has no credential: its next reconnect uses the newest ticket.
        if (resumed) this.client.options.token = ticket;
      }
      void this.refresh();
    });
    this.client.on('ui.command', ({ command }) => this.command(command));
    this.client.on('sessions.changed', (delta) => {
      this.updateSessions(() => {
        this.closed = closedRows(this.closed, this.sessions, delta);
        this.sessions = applySessionsDelta(this.sessions, delta);
      });
    });
    this.client.on('action', (entry) => this.addAction(entry));
    this.client.on('audit.entry', (entry) => this.addFleetEntry(entry));
    this.client.on('fleet.changed', (view) => {
      this.fleet = view.shared ? view : null;
    });
    this.client.on('approval.requested', (request) => {
      this.approvals = [...this.approvals, request];
      this.announcement = `Approval needed: ${request.tool} from ${this.sessionTitle(request.sessionKey)}.`;
    });
    this.client.on('approval.resolved', ({ id, reason, detail }) => {
      // A call whose client gave up stays in the queue, marked withdrawn (the operator sees why it went), until
      // dismissed; past WITHDRAWN_KEPT of them the oldest go, so a console left open all day stays bounded.
      if (reason !== 'withdrawn') {
        this.approvals = this.approvals.filter((a) => a.id !== id);
        return;
      }
      const marked = this.approvals.map((a) => (a.id === id ? { ...a, withdrawn: detail ?? 'its client gave up' } : a));
      let excess = marked.filter((a) => a.withdrawn).length - WITHDRAWN_KEPT;
      this.approvals = marked.filter((a) => !(a.withdrawn && excess-- > 0));
    });
    if (!token || !url) {
      this.conn = 'unauthorized';
      this.error = 'no gateway token: open the Control UI with the URL `verity start` printed (it ends in ?token=…)';
      return;
    }
    this.client.start();
  }

  private async refresh(): Promise<void> {
    // The link this page held before a reload (or a gateway restart) is asked back, so agents bound to it
    // keep working; the gateway mints a new one when it cannot give it back.
    const held = sessionStorage.getItem('verity.link') ?? undefined;
    const [sessions, actions, approvals, link] = await Promise.all([
      this.client.request('sessions.list'),
      this.client.request('actions.list'),
      this.client.request('approvals.list').catch(() => ({ approvals: [] })),
      this.client
        .request('agent.link', held ? { link_token: held } : undefined)
        .catch(() => this.client.request('agent.link')),
    ]);
    sessionStorage.setItem('verity.link', link.link_token);
    // Sessions that did not survive the gap (a gateway restart ends them) are shown closed, not dropped.
    const now = new Set(sessions.sessions.map((s: SessionRow) => s.sessionKey));
    this.updateSessions(() => {
      this.closed = closedRows(this.closed, this.sessions, {
        added: sessions.sessions,
        removed: this.sessions.filter((s) => !now.has(s.sessionKey)).map((s) => s.sessionKey),
      });
      this.sessions = sessions.sessions;
    });
    // The gateway's recent actions start empty after a restart: the lines this page already showed stay
    // (keyed by session), so a pane's history is back once the gateway is.
    const shown = this.actions;
    this.actions = new Map();
    for (const a of actions.actions) this.addAction(a);
    for (const [key, rows] of shown) if (!this.actions.has(key)) this.actions = new Map(this.actions).set(key, rows);
    this.approvals = approvals.approvals;
    this.link = link;
    // Other gateways' panes read their history again: entries written while this page was away are in it.
    this.fleetLoaded.clear();
    await Promise.all([this.refreshPairings(), this.refreshFleet(), this.loadFleetPanes()]);
  }

  private async refreshPairings(): Promise<void> {
    if (!this.client.hello?.methods.includes('pairings.list')) {
      this.pairings = null;
      return;
    }
    this.pairings = (await this.client.request('pairings.list').catch(() => ({ pairings: [] }))).pairings;
  }

  private async refreshFleet(): Promise<void> {
    if (!this.client.hello?.methods.includes('fleet.sessions')) return;
    const view = await this.client.request('fleet.sessions').catch(() => null);
    this.fleet = view?.shared ? view : null;
  }

  private revokePairing(id: string): void {
    void this.client.request('pairings.revoke', { id }).then(
      () => this.refreshPairings(),
      (e) => {
        this.error = e.message;
      },
    );
  }

  private addAction(entry: ActionRow): void {
    const list = [...(this.actions.get(entry.sessionKey) ?? [])];
    const at = list.findIndex((a) => a.id === entry.id);
    if (at >= 0) list[at] = entry;
    else list.push(entry);
    this.actions = new Map(this.actions).set(entry.sessionKey, list.slice(-100));
  }

  /** Whether a pane of the layout shows `key` (a fleet pane's key: another gateway's session). */
  private paneShows(key: string): boolean {
    return panes(this.layout).some((p) => p.sessionKey === key);
  }

  /**
   * Another gateway's entry (the shared trail's audit.entry): a call of a session shown in a pane here is a
   * line of that pane's log, as this gateway's own `action` events are for its sessions.
   */
  private addFleetEntry(entry: AuditEntry): void {
    if (!entry.gateway || entry.gateway === this.fleet?.gateway) return;
    const key = fleetPaneKey(entry.gateway, entry.sessionKey);
    const line = this.paneShows(key) ? auditAction(entry) : null;
    if (line) this.actions = new Map(this.actions).set(key, mergeActions(this.actions.get(key) ?? [], [line]));
  }

  /**
   * The panes of other gateways' sessions: each one's recent calls read once from the shared trail
   * (audit.query by its gateway and key), merged with what audit.entry brought meanwhile.
   */
  private async loadFleetPanes(): Promise<void> {
    if (this.client?.state !== 'connected') return;
    const keys = [...new Set(panes(this.layout).map((p) => p.sessionKey))].filter(
      (k) => !this.fleetLoaded.has(k) && parseFleetPaneKey(k),
    );
    await Promise.all(
      keys.map(async (key) => {
        const { gateway, sessionKey } = parseFleetPaneKey(key)!;
        this.fleetLoaded.add(key);
        try {
          const page = await this.client.request('audit.query', { gateway, sessionKey, kind: 'call', limit: 100 });
          // (The database away, the store answers with this gateway's own entries: none of them is that session's.)
          const lines = page.entries
            .filter((e) => e.gateway === gateway)
            .map(auditAction)
            .filter((a) => a !== null);
          this.actions = new Map(this.actions).set(key, mergeActions(this.actions.get(key) ?? [], lines));
        } catch (e) {
          this.fleetLoaded.delete(key);
          this.error = `the history of a session on ${gateway}: ${(e as Error).message}`;
        }
      }),
    );
  }

  /** The session the main area shows by itself: the only one, while the layout has no pane. */
  private soloSession(): string | null {
    return this.layout.columns.length === 0 ? (loneSession(this.sessions)?.sessionKey ?? null) : null;
  }

  /** The focused pane's session (the solo pane's when it is the one shown). */
  private focusedKey(): string | null {
    return focusedSession(this.layout) ?? this.soloSession();
  }

  /**
   * The focused pane's session when it is one of this gateway's: the brake keys and the browser panel follow
   * it (another gateway's session has its brake on its fleet row, its browser on its own gateway).
   */
  private localFocusedKey(): string | null {
    const key = this.focusedKey();
    return key && !parseFleetPaneKey(key) ? key : null;
  }

  /** The one way the layout changes: an agent's ui.command or the operator's own click. */
  command(command: UiCommand): void {
    this.layout = apply(this.layout, command, this.focusedKey());
    saveLayout(this.layout);
    void this.loadFleetPanes();
  }

  /**
   * Sessions came or went: a session the page showed by itself (the lone one, with no pane) stays shown
   * when another appears, as a pane of its own. What a page shows changes only by its operator's or its own
   * agent's command, never because another page's agent started a session.
   */
  private updateSessions(update: () => void): void {
    const shown = this.soloSession();
    update();
    if (shown && this.soloSession() !== shown && this.sessions.some((s) => s.sessionKey === shown))
      this.command({ kind: 'navigate', sessionKey: shown });
  }

  private resolveApproval(id: string, approve: boolean): void {
    if (this.approvals.find((a) => a.id === id)?.withdrawn) {
      this.approvals = this.approvals.filter((a) => a.id !== id); // its Dismiss
      return;
    }
    void this.client.request('approvals.resolve', { id, approve }).catch((e) => {
      this.error = e.message;
    });
  }

  /**
   * A call held on another gateway, decided from this console (fleet.resolve): the decision travels through
   * the shared store and the holding gateway acts on it; `by` names this console's operator and gateway.
   */
  private resolveFleetApproval(gateway: string, id: string, tool: string, approve: boolean): void {
    void this.client.request('fleet.resolve', { gateway, id, approve }).then(
      ({ by }) => {
        if (this.fleet)
          this.fleet = {
            ...this.fleet,
            approvals: this.fleet.approvals.filter((a) => !(a.gateway === gateway && a.request.id === id)),
          };
        this.announcement = `${approve ? 'Approved' : 'Denied'} ${tool} held on ${gateway}, by ${by}.`;
      },
      (e) => {
        this.error = e.message;
      },
    );
  }

  /**
   * Opens the audit log on one session's history, and on one of its entries when given (a log line's click);
   * `gateway`: a session of another gateway of the fleet (its keys are that gateway's own).
   */
  private openHistory(key: string, auditId?: number, gateway?: string): void {
    this.logOpen = true;
    void this.updateComplete.then(() => {
      const log = this.querySelector('verity-audit-log') as AuditLog | null;
      return auditId === undefined ? log?.showSession(key, gateway) : log?.showEntry(key, auditId, gateway);
    });
  }

  /**
   * A session of another gateway, named from the fleet's rows: its own row, else its connection's agent (a
   * call without a session label is its connection's default session, which has no row of its own).
   */
  private fleetTitle(gateway: string, key: string): string {
    const rows = otherSessions(this.fleet).filter((s) => s.gateway === gateway);
    const row = rows.find((s) => s.row.sessionKey === key)?.row;
    if (row) return sessionName(row);
    const [connection, label] = key.split('/');
    const sibling = rows.find((s) => s.row.sessionKey.split('/')[0] === connection)?.row;
    return sibling ? sessionName({ ...sibling, session: label === 'implicit' ? null : label }) : 'a session';
  }

  private sessionTitle(key: string): string {
    return this.knownTitle(key) ?? 'a session that ended';
  }

  /** A session's name while this page knows its row (live, or closed here); null past that (the audit log names it from the trail). */
  private knownTitle(key: string): string | null {
    const s = this.sessions.find((row) => row.sessionKey === key) ?? this.closed.find((row) => row.sessionKey === key);
    return s ? sessionName(s) : null;
  }

  render() {
    const { layout } = this;
    const sessionKey = this.localFocusedKey();
    const solo = this.soloSession();
    const focusedRow = this.sessions.find((s) => s.sessionKey === sessionKey);
    const online = this.conn === 'connected';
    const grid = dockGrid(layout, this.narrow);
    const banner = connectionBanner(this.conn, this.lastConnected);
    const rows = [...this.sessions, ...this.closed.map((row) => ({ ...row, state: 'closed' }))];
    // An agent cannot hide what waits for the operator: with an approval waiting or an agent on the brake,
    // the sidebar shows whatever the layout says (the screen tool refuses sidebar_hide then, too).
    // (Calls held on other gateways do not force it: their own gateway's console shows them, as the screen
    // tool's refusal counts only this gateway's.)
    const fleetHeld = otherApprovals(this.fleet);
    const sidebarShown =
      layout.sidebar ||
      this.approvals.some((a) => !a.withdrawn) ||
      this.sessions.some((s) => s.brake && s.brake.state !== 'running');
    return html`
      <header class="bar">
        <button class="icon" aria-label=${layout.sidebar ? 'Hide the sidebar' : 'Show the sidebar'} aria-expanded=${String(layout.sidebar)} title="Toggle the sidebar" @click=${() => this.command({ kind: 'sidebar', visible: !layout.sidebar })}><span aria-hidden="true">☰</span></button>
        <strong>Verity</strong>
        <span class="conn ${this.conn}" data-connection=${this.conn} role="status">${this.conn}</span>
        ${this.error ? html`<span class="error" role="alert">${this.error}</span>` : nothing}
        <span class="spacer"></span>
        ${
          this.link
            ? html`<details class="agent-link" data-agent-link data-link-token=${this.link.link_token} data-mcp-url=${this.link.mcp_url}>
          <summary>connect an agent</summary>
          <p>MCP over HTTP at <code>${this.link.mcp_url}</code> with headers <code>Authorization: Bearer &lt;agent credential&gt;</code> (the <code>/mcp</code> line <code>verity start</code> printed) and
          <code>X-Verity-Link: ${this.link.link_token}</code>. Agents started in the terminal panel are linked automatically.</p>
        </details>`
            : nothing
        }
        <button data-toggle="log" aria-pressed=${String(this.logOpen)} @click=${() => {
          this.logOpen = !this.logOpen;
        }}>Log</button>
        <button data-toggle="terminal" aria-pressed=${String(layout.panels.terminal.open)} title="Terminal (Ctrl+\`)" @click=${() => this.command({ kind: 'panel', panel: 'terminal', open: !layout.panels.terminal.open })}>Terminal</button>
        <button data-toggle="browser" aria-pressed=${String(layout.panels.browser.open)} @click=${() => this.command({ kind: 'panel', panel: 'browser', open: !layout.panels.browser.open })}>Browser</button>
      </header>
      ${banner ? html`<div class="banner" data-offline-banner role="alert">${banner}</div>` : nothing}
      <div class="visually-hidden" role="status" aria-live="polite" data-live>${this.announcement}</div>
      <div class="body ${online || this.conn === 'unauthorized' ? '' : 'offline'}" ?inert=${!!banner} aria-busy=${String(!!banner)}>
        <aside data-sidebar data-visible=${String(sidebarShown)} ?hidden=${!sidebarShown} aria-label="Sessions and approvals" @brake-error=${(
          e: CustomEvent,
        ) => {
          this.error = e.detail;
        }}>
          <h2>Sessions <small>${this.sessions.length}</small></h2>
          ${rows.length === 0 ? html`<p class="muted">${online ? 'No MCP sessions yet. Connect an agent (stdio or HTTP); it shows up here live.' : 'Not connected to the gateway.'}</p>` : nothing}
          <ul class="sessions">${rows.map(
            (s) => html`
            <li class="${s.sessionKey === sessionKey ? 'current' : ''} ${s.state === 'closed' ? 'closed' : ''}" data-session-key=${s.sessionKey} data-state=${s.state}>
              <button class="link" aria-label=${`Show ${sessionName(s)}`} @click=${() => this.command({ kind: 'navigate', sessionKey: s.sessionKey })}>${sessionName(s)}</button>
              <small>${this.fleet?.gateway ? html`on <b data-session-gateway>${this.fleet.gateway}</b> · ` : nothing}${s.transport} · <span data-session-state>${shownState(s)}</span>${s.recording_active ? html` · <span class="rec" data-recording>⏺ recording</span>` : nothing}${this.renderLastMark(s.sessionKey)}${renderCheckMark(s.last_check)}</small>
              ${s.state === 'closed' ? nothing : html`<verity-brake compact .client=${this.client} .sessionKey=${s.sessionKey} .name=${sessionName(s)} .status=${s.brake}></verity-brake>`}
              <span class="row-actions">
                <button aria-label=${`Split right with ${sessionName(s)}`} title="Split right" @click=${() => this.command({ kind: 'split', direction: 'right', sessionKey: s.sessionKey })}><span aria-hidden="true">⇥</span></button>
                <button aria-label=${`Split down with ${sessionName(s)}`} title="Split down" @click=${() => this.command({ kind: 'split', direction: 'down', sessionKey: s.sessionKey })}><span aria-hidden="true">⤓</span></button>
              </span>
            </li>`,
          )}</ul>
          <h2 id="approvals-heading">Approvals <small>${this.approvals.filter((a) => !a.withdrawn).length + fleetHeld.length}</small></h2>
          <ul class="approvals" data-approvals aria-labelledby="approvals-heading" aria-live="polite" @approval-decide=${(e: CustomEvent) => this.resolveApproval(e.detail.id, e.detail.approve)}>${this.approvals.map(
            (a) => html`
            <li data-approval=${a.id} data-withdrawn=${String(!!a.withdrawn)}><verity-approval .approval=${a} .sessionTitle=${this.sessionTitle(a.sessionKey)}></verity-approval></li>`,
          )}${fleetHeld.map(
            ({ gateway, request }) => html`
            <li class="fleet-approval" data-approval=${request.id} data-approval-gateway=${gateway} data-withdrawn="false" @approval-decide=${(
              e: CustomEvent,
            ) => {
              e.stopPropagation();
              this.resolveFleetApproval(gateway, request.id, request.tool, e.detail.approve);
            }}><verity-approval .approval=${request} .sessionTitle=${`${this.fleetTitle(gateway, request.sessionKey)} on ${gateway}`}></verity-approval></li>`,
          )}</ul>
          <verity-fleet .client=${this.client} .view=${this.fleet} .current=${this.focusedKey()} @fleet-history=${(e: CustomEvent) => this.openHistory(e.detail.sessionKey, undefined, e.detail.gateway)}
            @fleet-open=${(e: CustomEvent) => this.command({ kind: 'navigate', sessionKey: fleetPaneKey(e.detail.gateway, e.detail.sessionKey) })}></verity-fleet>
          ${
            this.pairings
              ? html`<h2>Paired extensions <small>${this.pairings.length}</small></h2>
          <ul class="pairings" data-pairings>${this.pairings.map(
            (p) => html`
            <li data-pairing=${p.id}><small>paired ${new Date(p.createdAt).toLocaleString()}${p.connected ? ' · connected' : html` · last used <time datetime=${p.lastUsedAt}>${new Date(p.lastUsedAt).toLocaleString()}</time>`}</small>
              <button class="deny" data-revoke=${p.id} aria-label=${`Revoke the pairing made ${new Date(p.createdAt).toLocaleString()}`} @click=${() => this.revokePairing(p.id)}>Revoke</button></li>`,
          )}</ul>`
              : nothing
          }
          <verity-policy .client=${this.client}></verity-policy>
        </aside>
        <main class="work ${this.narrow ? 'narrow' : ''}" style=${grid.style}>
          <section class="panes" style=${grid.panes} aria-label="Session panes">
            ${solo ? html`<div class="column">${this.renderPane(SOLO_PANE, solo)}</div>` : layout.columns.length === 0 ? this.renderEmptyMain() : nothing}
            ${layout.columns.map((column) => html`<div class="column">${column.map((pane) => this.renderPane(pane.id, pane.sessionKey))}</div>`)}
          </section>
          ${(['right', 'bottom'] as const).map(
            (
              dock,
            ) => html`<div class="resizer resizer-${dock}" data-resizer=${dock} style=${grid.resizers[dock] ?? ''} ?hidden=${!grid.resizers[dock]}
            role="separator" tabindex="0" aria-label=${dock === 'right' ? 'Resize the right panels (arrow keys)' : 'Resize the bottom panels (arrow keys)'}
            aria-orientation=${dock === 'right' ? 'vertical' : 'horizontal'} aria-valuenow=${layout.docks[dock]} aria-valuemin="160" aria-valuemax="2400"
            @pointerdown=${(e: PointerEvent) => this.dragDock(e, dock)} @keydown=${(e: KeyboardEvent) => this.keyDock(e, dock)}></div>`,
          )}
          ${this.renderPanel('terminal', grid.panels.terminal, html`<verity-terminal .client=${this.client} .open=${layout.panels.terminal.open} .online=${online}></verity-terminal>`)}
          ${this.renderPanel(
            'browser',
            grid.panels.browser,
            html`<verity-browser .client=${this.client}
            .active=${layout.panels.browser.open && online} .online=${online} .sessionKey=${sessionKey} .tabId=${focusedRow?.tab_id ?? null}></verity-browser>`,
          )}
        </main>
        <verity-audit-log class="audit-drawer" .client=${this.client} .open=${this.logOpen} .gateway=${this.fleet?.gateway ?? null}
          .gateways=${this.fleet?.gateways.map((g) => g.gateway) ?? []} .titleOf=${(k: string) => this.knownTitle(k)} @close-log=${() => {
            this.logOpen = false;
          }}></verity-audit-log>
      </div>`;
  }

  /** The main area without a pane: what to do next, for as many sessions as there are. */
  private renderEmptyMain() {
    const live = this.sessions.filter((s) => !s.awaiting_first_call);
    if (live.length === 0)
      return this.sessions.length
        ? html`<p class="empty muted" data-empty-main="connected">${this.sessions.map(sessionName).join(', ')} connected: its first call shows here.</p>`
        : html`<p class="empty muted" data-empty-main="none">No agent is connected yet. Connect one (stdio or HTTP, "connect an agent" above): it appears in the sidebar and here.</p>`;
    return html`<p class="empty muted" data-empty-main="many">Pick a session in the sidebar to watch it here.</p>`;
  }

  /** The sidebar's mark for a session whose last action failed or did not do what was asked. */
  private renderLastMark(key: string) {
    const mark = lastActionMark(this.actions.get(key) ?? []);
    return mark
      ? html` · <span class="last-mark" data-last-action=${mark} title=${`Its last action: ${mark}`}>⚠ last: ${mark.replace('_', ' ')}</span>`
      : nothing;
  }

  /** A docked panel's frame: its name, dock side and close buttons; the panel itself stays the same element. */
  private renderPanel(name: 'terminal' | 'browser', place: PanelPlace | null, body: unknown) {
    const panel = this.layout.panels[name];
    const label = name === 'terminal' ? 'Terminal' : 'Browser';
    const other = panel.dock === 'right' ? 'bottom' : 'right';
    return html`<section class="panel" data-panel=${name} data-open=${String(panel.open)} data-dock=${this.narrow ? 'drawer' : panel.dock} data-layout-dock=${panel.dock}
      style=${place?.style ?? ''} ?hidden=${!panel.open} aria-label=${label}>
      <div class="panel-frame-head">
        <strong>${label}</strong><span class="spacer"></span>
        ${
          this.narrow
            ? nothing
            : html`<button data-dock-to=${other} aria-label=${`Dock the ${name} ${other === 'right' ? 'on the right' : 'at the bottom'}`} title=${`Dock ${other}`}
          @click=${() => this.command({ kind: 'panel', panel: name, open: true, dock: other })}><span aria-hidden="true">${other === 'right' ? '◨' : '⬓'}</span></button>`
        }
        <button data-panel-close aria-label=${`Close the ${name} panel`} title="Close" @click=${() => this.command({ kind: 'panel', panel: name, open: false })}><span aria-hidden="true">✕</span></button>
      </div>
      ${body}
    </section>`;
  }

  private dragDock(e: PointerEvent, dock: 'right' | 'bottom'): void {
    const handle = e.currentTarget as HTMLElement;
    handle.setPointerCapture(e.pointerId);
    const start = { x: e.clientX, y: e.clientY, size: this.layout.docks[dock] };
    const move = (m: PointerEvent) => {
      const delta = dock === 'right' ? start.x - m.clientX : start.y - m.clientY;
      this.command({ kind: 'dock-size', dock, size: start.size + delta });
    };
    const up = () => {
      handle.removeEventListener('pointermove', move);
      handle.removeEventListener('pointerup', up);
    };
    handle.addEventListener('pointermove', move);
    handle.addEventListener('pointerup', up);
  }

  private keyDock(e: KeyboardEvent, dock: 'right' | 'bottom'): void {
    const grow: Record<string, number> =
      dock === 'right' ? { ArrowLeft: 1, ArrowRight: -1 } : { ArrowUp: 1, ArrowDown: -1 };
    const step = grow[e.key];
    if (!step) return;
    e.preventDefault();
    this.command({ kind: 'dock-size', dock, size: this.layout.docks[dock] + step * 40 });
  }

  /** A pane's split: the solo pane (not in the layout) first becomes a real pane, then splits like any other. */
  private splitPane(direction: 'right' | 'down', key: string, id: string): void {
    if (id === SOLO_PANE) this.command({ kind: 'navigate', sessionKey: key });
    this.command({ kind: 'split', direction, sessionKey: key, ...(id === SOLO_PANE ? {} : { paneId: id }) });
  }

  private renderPane(id: string, key: string) {
    const solo = id === SOLO_PANE;
    const focused = solo || id === this.layout.focused;
    const actions = this.actions.get(key) ?? [];
    // Another gateway's session (a fleet pane): named and stated from the fleet's rows, its lines from the shared trail.
    const fleet = parseFleetPaneKey(key);
    const session = fleet ? undefined : this.sessions.find((s) => s.sessionKey === key);
    const fleetShown = fleet ? fleetPaneState(this.fleet, fleet.gateway, fleet.sessionKey) : '';
    const name = fleet
      ? `${this.fleetTitle(fleet.gateway, fleet.sessionKey)} on ${fleet.gateway}`
      : this.sessionTitle(key);
    const state = fleet ? fleetShown : session ? `${shownState(session)} · ${session.transport}` : 'closed';
    const closed = fleet ? fleetShown.startsWith('ended') : !session;
    const history = (auditId?: number) => this.openHistory(fleet?.sessionKey ?? key, auditId, fleet?.gateway);
    return html`
      <article class="pane ${focused ? 'focused' : ''} ${closed ? 'closed' : ''}" data-pane=${id} data-pane-session=${key} ?data-focused=${focused}
        data-pane-gateway=${fleet?.gateway ?? this.fleet?.gateway ?? ''} data-pane-fleet=${String(!!fleet)}
        tabindex="0" aria-label=${`Session ${name}${focused ? ' (focused)' : ''}`} aria-current=${focused ? 'true' : 'false'}
        @focusin=${() => {
          if (!focused) this.command({ kind: 'focus', paneId: id });
        }}
        @click=${() => {
          if (!focused) this.command({ kind: 'focus', paneId: id });
        }}>
        <header>
          <strong title=${name}>${name}</strong>
          <small data-pane-state title=${state}>${state}</small>
          <span class="spacer"></span>
          ${
            session
              ? html`<verity-brake .client=${this.client} .sessionKey=${key} .name=${name} .status=${session.brake} @brake-error=${(
                  e: CustomEvent,
                ) => {
                  this.error = e.detail;
                }}></verity-brake>`
              : nothing
          }
          <button data-history aria-label=${`History of ${name} in the audit log`} title="This session's full history in the audit log" @click=${(
            e: Event,
          ) => {
            e.stopPropagation();
            history();
          }}>History</button>
          <button aria-label=${`Split right with ${name}`} title="Split right" @click=${(e: Event) => {
            e.stopPropagation();
            this.splitPane('right', key, id);
          }}><span aria-hidden="true">⇥</span></button>
          <button aria-label=${`Split down with ${name}`} title="Split down" @click=${(e: Event) => {
            e.stopPropagation();
            this.splitPane('down', key, id);
          }}><span aria-hidden="true">⤓</span></button>
          ${
            solo
              ? nothing
              : html`<button data-close-pane aria-label=${`Close this pane (${name})`} title="Close pane" @click=${(
                  e: Event,
                ) => {
                  e.stopPropagation();
                  this.command({ kind: 'close-pane', paneId: id });
                }}><span aria-hidden="true">✕</span></button>`
          }
        </header>
        ${
          fleet
            ? html`<p class="pane-elsewhere muted" data-pane-elsewhere role="note">Held by gateway <b>${fleet.gateway}</b>: its browser and terminal panels are on that gateway's console (no screencast across gateways). Its actions show here live, from the shared audit trail.</p>`
            : nothing
        }
        <ol class="log" data-action-log aria-label=${`Actions of ${name}`}>
          ${actions.length === 0 ? html`<li class="muted">No actions yet.</li>` : nothing}
          ${actions
            .slice()
            .reverse()
            .map(
              (a) => html`
            <li class="action ${a.isError ? 'bad' : ''}" data-action-id=${a.id} data-audit-id=${a.auditId ?? ''} data-tool=${a.tool} data-effect=${badge(a)}>
              <button class="thumb-button" data-action-details title="Open this action in the audit log: expected vs observed, before/after images" aria-label=${`Details of ${a.tool} at ${new Date(a.at).toLocaleTimeString()} in the audit log`}
                @click=${(e: Event) => {
                  e.stopPropagation();
                  history(a.auditId);
                }}>${a.thumbnail ? html`<img class="thumb" alt="" src="data:image/jpeg;base64,${a.thumbnail}">` : html`<span class="thumb"></span>`}</button>
              <div>
                <div><code>${a.tool}</code> <span class="effect ${badge(a)}">${badge(a)}</span> <small class="muted">${new Date(a.at).toLocaleTimeString()}</small>
                  ${a.approval ? html`<span class="approval-mark" data-approved-by=${a.approval.by ?? ''}>approved${a.approval.by ? ` by ${a.approval.by}` : ''}</span>` : nothing}</div>
                <pre class="approval-args" data-approval-args tabindex="0" aria-label=${`Arguments of ${a.tool}`}>${a.summary}</pre>
                ${a.refusal ? html`<div class="refusal">${a.refusal}</div>` : nothing}
                ${a.check ? renderCheck(a.check) : nothing}
                ${a.evidence.map(evidenceFields)}
              </div>
            </li>`,
            )}
        </ol>
      </article>`;
  }
}

/**
 * The sidebar's mark of a session's last verify_state: "done" once it was satisfied (the task's end, as the
 * agent proved it), else what it was.
 */
function renderCheckMark(status: SessionRow['last_check']) {
  if (!status) return nothing;
  return status === 'satisfied'
    ? html` · <span class="check-mark done" data-last-check="satisfied" title="Its last verify_state was satisfied">✓ done</span>`
    : html` · <span class="check-mark" data-last-check=${status} title=${`Its last verify_state was ${status}`}>check: ${status}</span>`;
}

/** A verify_state in a pane: its outcome, and each predicate as asked with whether it held (✓, ✗, ? unknown). */
function renderCheck(check: NonNullable<ActionRow['check']>) {
  return html`<div class="check" data-check=${check.status}>
    <div>check <b>${check.status}</b>${check.reason ? html` <small class="muted">(${check.reason.replace('_', ' ')})</small>` : nothing}</div>
    <ul class="predicates">${check.predicates.map(
      (p) =>
        html`<li data-holds=${String(p.holds)}><span aria-label=${p.holds === true ? 'held' : p.holds === false ? 'did not hold' : 'unknown'}>${p.holds === true ? '✓' : p.holds === false ? '✗' : '?'}</span> <code>${p.predicate}</code></li>`,
    )}</ul>
  </div>`;
}

customElements.define('verity-app', VerityApp);
