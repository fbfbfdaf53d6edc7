// The Control UI: sessions, split panes with live action logs, a terminal and a browser panel, and the
// approvals queue. Agent commands (ui.command) and the operator's clicks both go through `command()`.
import { LitElement, html, nothing } from 'lit';
import { GatewayClient, type ConnState } from './gateway.js';
import { apply, loadLayout, saveLayout, type Layout, type UiCommand } from './layout.js';
import './terminal-panel.js';
import './browser-panel.js';
import { installBrakeShortcuts, type BrakeStatus } from './brake-controls.js';
import type { Approval } from './approval-card.js';
import './approval-card.js';
import type { AuditLog } from './audit-log.js';
import './audit-log.js';
import './styles.css';

interface SessionRow { sessionKey: string; session: string | null; implicit: boolean; state: string; transport: string; client: string; recording_active: boolean; idle_seconds: number; tab_id: string | null; brake?: BrakeStatus }
interface ActionRow { id: number; at: string; sessionKey: string; tool: string; summary: string; effect: string | null; refusal: string | null; evidence: Array<{ kind: string; expected?: unknown; observed?: unknown; detail?: string }>; isError: boolean; thumbnail?: string; labels?: Record<string, string>; approval?: { id: string; by?: string } }

interface PairingRow { id: string; origin: string; createdAt: string; connected: boolean }

/**
 * Where the gateway is and the operator credential. Served by the gateway, the UI connects only to its
 * own origin (never to an address from the URL: a link could send the credential elsewhere); the token
 * comes from the URL (then removed from the address bar) or storage. Hosted by the extension, both come
 * from the extension's own pairing storage.
 */
async function connection(): Promise<{ url: string; token: string }> {
  const ext = (globalThis as { chrome?: { storage?: { local?: { get(key: string): Promise<Record<string, any>> } } } }).chrome;
  if (location.protocol === 'chrome-extension:' && ext?.storage?.local) {
    const { pairing } = await ext.storage.local.get('pairing');
    return { url: pairing?.gateway ?? '', token: pairing?.token ?? '' };
  }
  const params = new URLSearchParams(location.search);
  const hash = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token') ?? hash.get('token') ?? localStorage.getItem('verity.token') ?? '';
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/gateway`;
  if (token) localStorage.setItem('verity.token', token);
  if (params.has('token') || hash.has('token')) history.replaceState(null, '', location.pathname);
  return { url, token };
}

/**
 * sessions.changed carries a delta {added, updated, removed (sessionKeys)}, not the whole list; the full
 * list comes from sessions.list on (re)connect. Rows are keyed by sessionKey, so a delta that overlaps
 * the list fetched at connect applies cleanly.
 */
export function applySessionsDelta(rows: SessionRow[], delta: { added?: SessionRow[]; updated?: SessionRow[]; removed?: string[] }): SessionRow[] {
  const byKey = new Map(rows.map((r) => [r.sessionKey, r]));
  for (const key of delta.removed ?? []) byKey.delete(key);
  for (const row of [...(delta.added ?? []), ...(delta.updated ?? [])]) byKey.set(row.sessionKey, row);
  return [...byKey.values()];
}

export class VerityApp extends LitElement {
  static properties = { layout: { state: true }, sessions: { state: true }, actions: { state: true }, approvals: { state: true }, pairings: { state: true }, conn: { state: true }, link: { state: true }, error: { state: true }, logOpen: { state: true } };
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

  createRenderRoot() { return this; } // light DOM: the data-* hooks are plain to find

  connectedCallback(): void {
    super.connectedCallback();
    // The brake's shortcuts act on the focused pane's session (brake-controls.ts).
    installBrakeShortcuts(window, () => ({ client: this.client, sessionKey: this.layout.focused, status: this.sessions.find((s) => s.sessionKey === this.layout.focused)?.brake }), (m) => { this.error = m; });
    void connection().then(({ url, token }) => this.start(url, token), (e) => { this.conn = 'unauthorized'; this.error = `cannot read the gateway pairing: ${(e as Error).message}`; });
  }

  private start(url: string, token: string): void {
    this.client = new GatewayClient({ url, token, caps: ['ui-commands'], scopes: ['operator.read', 'operator.write', 'operator.admin', 'operator.approvals'], clientId: 'verity-control-ui' });
    this.client.addEventListener('state', (e) => {
      const { state, error } = (e as CustomEvent).detail;
      this.conn = state;
      this.error = state === 'unauthorized' ? error : state === 'closed' ? (error || 'disconnected; reconnecting…') : '';
    });
    this.client.addEventListener('hello', () => void this.refresh());
    this.client.addEventListener('ui.command', (e) => this.command((e as CustomEvent).detail.command));
    this.client.addEventListener('sessions.changed', (e) => { this.sessions = applySessionsDelta(this.sessions, (e as CustomEvent).detail); });
    this.client.addEventListener('action', (e) => this.addAction((e as CustomEvent).detail));
    this.client.addEventListener('approval.requested', (e) => { this.approvals = [...this.approvals, (e as CustomEvent).detail]; });
    this.client.addEventListener('approval.resolved', (e) => { this.approvals = this.approvals.filter((a) => a.id !== (e as CustomEvent).detail.id); });
    if (!token || !url) { this.conn = 'unauthorized'; this.error = 'no gateway token: open the Control UI with the URL `verity start` printed (it ends in ?token=…)'; return; }
    this.client.start();
  }

  private async refresh(): Promise<void> {
    const [sessions, actions, approvals, link] = await Promise.all([
      this.client.request('sessions.list'), this.client.request('actions.list'),
      this.client.request('approvals.list').catch(() => ({ approvals: [] })), this.client.request('agent.link'),
    ]);
    this.sessions = sessions.sessions;
    this.actions = new Map();
    for (const a of actions.actions as ActionRow[]) this.addAction(a);
    this.approvals = approvals.approvals;
    this.link = link;
    await this.refreshPairings();
  }

  private async refreshPairings(): Promise<void> {
    if (!this.client.hello?.methods.includes('pairings.list')) { this.pairings = null; return; }
    this.pairings = (await this.client.request('pairings.list').catch(() => ({ pairings: [] }))).pairings;
  }

  private revokePairing(id: string): void {
    void this.client.request('pairings.revoke', { id }).then(() => this.refreshPairings(), (e) => { this.error = e.message; });
  }

  private addAction(entry: ActionRow): void {
    const list = [...(this.actions.get(entry.sessionKey) ?? [])];
    const at = list.findIndex((a) => a.id === entry.id);
    if (at >= 0) list[at] = entry; else list.push(entry);
    this.actions = new Map(this.actions).set(entry.sessionKey, list.slice(-100));
  }

  /** The one way the layout changes: an agent's ui.command or the operator's own click. */
  command(command: UiCommand): void {
    this.layout = apply(this.layout, command, this.layout.focused);
    saveLayout(this.layout);
  }

  private resolveApproval(id: string, approve: boolean): void {
    void this.client.request('approvals.resolve', { id, approve }).catch((e) => { this.error = e.message; });
  }

  /** Opens the audit log on one session's history. */
  private openHistory(key: string): void {
    this.logOpen = true;
    void this.updateComplete.then(() => (this.querySelector('verity-audit-log') as AuditLog | null)?.showSession(key));
  }

  private sessionTitle(key: string): string {
    const s = this.sessions.find((row) => row.sessionKey === key);
    return s ? (s.session ?? `implicit (${s.transport})`) : key;
  }

  render() {
    const { layout } = this;
    const focusedSession = this.sessions.find((s) => s.sessionKey === layout.focused);
    // An agent cannot hide what waits for the operator: with an approval waiting or an agent on the brake,
    // the sidebar shows whatever the layout says (the screen tool refuses sidebar_hide then, too).
    const sidebarShown = layout.sidebar || this.approvals.length > 0 || this.sessions.some((s) => s.brake && s.brake.state !== 'running');
    return html`
      <header class="bar">
        <button class="icon" title="Toggle the sidebar" @click=${() => this.command({ kind: 'sidebar', visible: !layout.sidebar })}>☰</button>
        <strong>Verity</strong>
        <span class="conn ${this.conn}" data-connection=${this.conn}>${this.conn}</span>
        ${this.error ? html`<span class="error" role="alert">${this.error}</span>` : nothing}
        <span class="spacer"></span>
        ${this.link ? html`<details class="agent-link" data-agent-link data-link-token=${this.link.link_token} data-mcp-url=${this.link.mcp_url}>
          <summary>connect an agent</summary>
          <p>MCP over HTTP at <code>${this.link.mcp_url}</code> with headers <code>Authorization: Bearer &lt;agent credential&gt;</code> (the <code>/mcp</code> line <code>verity start</code> printed) and
          <code>X-Verity-Link: ${this.link.link_token}</code>. Agents started in the terminal panel are linked automatically.</p>
        </details>` : nothing}
        <button data-toggle="log" aria-pressed=${String(this.logOpen)} @click=${() => { this.logOpen = !this.logOpen; }}>Log</button>
        <button data-toggle="terminal" @click=${() => this.command({ kind: 'panel', panel: 'terminal', open: !layout.panels.terminal.open })}>Terminal</button>
        <button data-toggle="browser" @click=${() => this.command({ kind: 'panel', panel: 'browser', open: !layout.panels.browser.open })}>Browser</button>
      </header>
      <div class="body">
        <aside data-sidebar data-visible=${String(sidebarShown)} ?hidden=${!sidebarShown} @brake-error=${(e: CustomEvent) => { this.error = e.detail; }}>
          <h2>Sessions <small>${this.sessions.length}</small></h2>
          ${this.sessions.length === 0 ? html`<p class="muted">No MCP sessions yet. Connect an agent (stdio or HTTP); it shows up here live.</p>` : nothing}
          <ul class="sessions">${this.sessions.map((s) => html`
            <li class=${s.sessionKey === layout.focused ? 'current' : ''} data-session-key=${s.sessionKey}>
              <button class="link" @click=${() => this.command({ kind: 'navigate', sessionKey: s.sessionKey })}>${s.session ?? 'implicit'}</button>
              <small>${s.transport} · ${s.state}${s.recording_active ? ' · ⏺' : ''}</small>
              <verity-brake compact .client=${this.client} .sessionKey=${s.sessionKey} .status=${s.brake}></verity-brake>
              <span class="row-actions">
                <button title="Split right" @click=${() => this.command({ kind: 'split', direction: 'right', sessionKey: s.sessionKey })}>⇥</button>
                <button title="Split down" @click=${() => this.command({ kind: 'split', direction: 'down', sessionKey: s.sessionKey })}>⤓</button>
              </span>
            </li>`)}</ul>
          <h2>Approvals <small>${this.approvals.length}</small></h2>
          <ul class="approvals" data-approvals aria-live="polite" @approval-decide=${(e: CustomEvent) => this.resolveApproval(e.detail.id, e.detail.approve)}>${this.approvals.map((a) => html`
            <li data-approval=${a.id}><verity-approval .approval=${a} .sessionTitle=${this.sessionTitle(a.sessionKey)}></verity-approval></li>`)}</ul>
          ${this.pairings ? html`<h2>Paired extensions <small>${this.pairings.length}</small></h2>
          <ul class="pairings" data-pairings>${this.pairings.map((p) => html`
            <li data-pairing=${p.id}><small>paired ${new Date(p.createdAt).toLocaleString()}${p.connected ? ' · connected' : ''}</small>
              <button class="deny" data-revoke=${p.id} @click=${() => this.revokePairing(p.id)}>Revoke</button></li>`)}</ul>` : nothing}
        </aside>
        <main class="work dock-${layout.panels.terminal.open ? layout.panels.terminal.dock : 'none'}-t dock-${layout.panels.browser.open ? layout.panels.browser.dock : 'none'}-b">
          <section class="panes">
            ${layout.columns.length === 0 ? html`<p class="empty muted">Pick a session in the sidebar to watch it here.</p>` : nothing}
            ${layout.columns.map((column) => html`<div class="column">${column.map((key) => this.renderPane(key))}</div>`)}
          </section>
          <verity-terminal data-panel="terminal" data-open=${String(layout.panels.terminal.open)} data-dock=${layout.panels.terminal.dock}
            class="panel dock-${layout.panels.terminal.dock}" ?hidden=${!layout.panels.terminal.open} .client=${this.client} .active=${layout.panels.terminal.open && this.conn === 'connected'}></verity-terminal>
          <verity-browser data-panel="browser" data-open=${String(layout.panels.browser.open)} data-dock=${layout.panels.browser.dock}
            class="panel dock-${layout.panels.browser.dock}" ?hidden=${!layout.panels.browser.open} .client=${this.client}
            .active=${layout.panels.browser.open && this.conn === 'connected'} .sessionKey=${layout.focused} .tabId=${focusedSession?.tab_id ?? null}></verity-browser>
        </main>
        <verity-audit-log class="audit-drawer" .client=${this.client} .open=${this.logOpen} .titleOf=${(k: string) => this.sessionTitle(k)} @close-log=${() => { this.logOpen = false; }}></verity-audit-log>
      </div>`;
  }

  private renderPane(key: string) {
    const focused = key === this.layout.focused;
    const actions = this.actions.get(key) ?? [];
    const session = this.sessions.find((s) => s.sessionKey === key);
    return html`
      <article class="pane ${focused ? 'focused' : ''}" data-pane-session=${key} ?data-focused=${focused} @click=${() => { if (!focused) this.command({ kind: 'focus', sessionKey: key }); }}>
        <header>
          <strong>${this.sessionTitle(key)}</strong>
          <small>${session ? `${session.state} · ${session.client}` : 'ended'}</small>
          <span class="spacer"></span>
          ${session ? html`<verity-brake .client=${this.client} .sessionKey=${key} .status=${session.brake} @brake-error=${(e: CustomEvent) => { this.error = e.detail; }}></verity-brake>` : nothing}
          <button data-history title="This session's full history in the audit log" @click=${(e: Event) => { e.stopPropagation(); this.openHistory(key); }}>History</button>
          <button title="Split right" @click=${(e: Event) => { e.stopPropagation(); this.command({ kind: 'split', direction: 'right', sessionKey: key }); }}>⇥</button>
          <button title="Split down" @click=${(e: Event) => { e.stopPropagation(); this.command({ kind: 'split', direction: 'down', sessionKey: key }); }}>⤓</button>
          <button title="Close pane" @click=${(e: Event) => { e.stopPropagation(); this.command({ kind: 'close-pane', sessionKey: key }); }}>✕</button>
        </header>
        <ol class="log" data-action-log>
          ${actions.length === 0 ? html`<li class="muted">No actions yet.</li>` : nothing}
          ${actions.slice().reverse().map((a) => html`
            <li class="action ${a.isError ? 'bad' : ''}" data-action-id=${a.id} data-tool=${a.tool} data-effect=${badge(a)}>
              <button class="thumb-button" data-action-details title="Open in the audit log: expected vs observed, before/after images" aria-label=${`Details of ${a.tool} in the audit log`}
                @click=${(e: Event) => { e.stopPropagation(); this.openHistory(key); }}>${a.thumbnail ? html`<img class="thumb" alt="" src="data:image/jpeg;base64,${a.thumbnail}">` : html`<span class="thumb"></span>`}</button>
              <div>
                <div><code>${a.tool}</code> <span class="effect ${badge(a)}">${badge(a)}</span> <small class="muted">${new Date(a.at).toLocaleTimeString()}</small>
                  ${a.approval ? html`<span class="approval-mark" data-approved-by=${a.approval.by ?? ''}>approved${a.approval.by ? ` by ${a.approval.by}` : ''}</span>` : nothing}</div>
                <pre class="approval-args" data-approval-args tabindex="0">${a.summary}</pre>
                ${a.refusal ? html`<div class="refusal">${a.refusal}</div>` : nothing}
                ${a.evidence.map((ev) => html`<div class="evidence">${ev.kind}: ${ev.expected !== undefined ? html`expected <b>${JSON.stringify(ev.expected)}</b> · ` : nothing}${ev.observed !== undefined ? html`observed <b>${JSON.stringify(ev.observed)}</b>` : ev.detail ?? ''}</div>`)}
              </div>
            </li>`)}
        </ol>
      </article>`;
  }
}

/** An action's badge: its effect, "refused", or "ok" for tools that report no effect (page, screen). */
function badge(a: ActionRow): string {
  return a.effect ?? (a.refusal ? 'refused' : a.isError ? 'failed' : 'ok');
}

customElements.define('verity-app', VerityApp);
