// The audit log view: the durable trail of every call, approval, brake and operator input (the gateway's
// audit.* methods), newest first, paged back, filtered by session, tool, verdict, text and time, and a
// session exported as JSONL (the recording format) or a zip with its images. A click on an entry opens it:
// expected vs observed for every piece of evidence, the element labels, who approved it, and the
// before/after images side by side when the session was recording.
import { LitElement, html, nothing } from 'lit';
import type { AuditActor, AuditEntry, AuditSession } from '../../server/gateway/protocol.js';
import type { GatewayClient } from './gateway.js';
import { targetLine } from './approval-card.js';
import { entryKey } from './console.js';
import { evidenceFields, objectFields, shotView } from './evidence.js';
import './audit.css';

interface Filters {
  sessionKey: string;
  /** The agent (its clientInfo name), across its sessions. */
  client: string;
  /** With a shared audit store: the gateway that wrote the entry. */
  gateway: string;
  tool: string;
  verdict: string;
  text: string;
  from: string;
  to: string;
}

const VERDICTS = [
  'confirmed',
  'satisfied',
  'unsatisfied',
  'unknown',
  'mismatch',
  'no_effect',
  'partial',
  'unverifiable',
  'refused',
  'ok',
  'failed',
  'requested',
  'approved',
  'denied',
  'timed_out',
  'cancelled',
  'withdrawn',
  'stopped',
  'paused',
  'resumed',
  'ended',
  'input',
];
/** Entries the view holds at once; older ones are dropped from view (they stay in the store). */
const SHOWN_MAX = 2000;

/** A session named by its actor (the trail keeps it after the session ended): `claude-code 1.2 · research (ended, a1b2c3d4)`. */
export function actorTitle(actor: AuditActor | undefined, sessionKey: string): string {
  const connection = (actor?.connection ?? sessionKey.split('/')[0]).replace(/^http-/, '').slice(0, 8);
  if (!actor) return `a session that ended (${connection})`;
  const client = `${actor.client}${actor.client_version ? ` ${actor.client_version}` : ''}`;
  const session = actor.session === 'implicit' ? '(default session)' : `· ${actor.session}`;
  return `${client} ${session} (ended, ${connection})`;
}

/** Another gateway's session, named by its actor as the shared trail keeps it (it may still be live there). */
export function foreignTitle(actor: AuditActor | undefined, sessionKey: string, gateway: string): string {
  if (!actor)
    return `a session (${sessionKey
      .split('/')[0]
      .replace(/^http-/, '')
      .slice(0, 8)}) on ${gateway}`;
  const session = actor.session === 'implicit' ? '(default session)' : `· ${actor.session}`;
  return `${actor.client} ${session} on ${gateway}`;
}

/** A PNG's size from its header (IHDR, bytes 16-23 of the file: the first 44 base64 characters hold them). */
function pngSize(base64: string): { width: number; height: number } | undefined {
  const head = atob(base64.slice(0, 44));
  if (head.length < 24) return undefined;
  const u32 = (at: number) =>
    ((head.charCodeAt(at) << 24) |
      (head.charCodeAt(at + 1) << 16) |
      (head.charCodeAt(at + 2) << 8) |
      head.charCodeAt(at + 3)) >>>
    0;
  return { width: u32(16), height: u32(20) };
}

interface Shot {
  src: string;
  size?: { width: number; height: number };
}

export class AuditLog extends LitElement {
  static properties = {
    client: { attribute: false },
    open: { type: Boolean },
    gateway: { attribute: false },
    gateways: { attribute: false },
    titleOf: { attribute: false },
    entries: { state: true },
    nextBefore: { state: true },
    filters: { state: true },
    knownSessions: { state: true },
    selected: { state: true },
    images: { state: true },
    wholePage: { state: true },
    status: { state: true },
  };
  client!: GatewayClient;
  open = false;
  /** With a shared audit store: this gateway's name in the trail (its entries' `gateway`); null without one. */
  gateway: string | null = null;
  /** With a shared audit store: every gateway of the fleet (the Gateway filter's choices). */
  gateways: string[] = [];
  /** How the app names a sessionKey it knows (its label and client); null for one it does not (named from the trail). */
  titleOf: (sessionKey: string) => string | null = () => null;
  entries: AuditEntry[] = [];
  nextBefore: number | null = null;
  filters: Filters = { sessionKey: '', client: '', gateway: '', tool: '', verdict: '', text: '', from: '', to: '' };
  knownSessions: AuditSession[] = [];
  selected: AuditEntry | null = null;
  images: { before?: Shot; after?: Shot; note?: string } = {};
  /** The open entry's images as whole pages instead of cropped around the target. */
  wholePage = false;
  status = '';
  private textTimer: number | undefined;
  private loadedFor: GatewayClient | null = null;
  private stopEntries: (() => void) | null = null;

  private onEntry = (entry: AuditEntry) => {
    if (!this.open || !this.shows(entry)) return;
    this.entries = [entry, ...this.entries].slice(0, SHOWN_MAX);
  };
  private onHello = () => {
    if (this.open) void this.reload();
  };

  createRenderRoot() {
    return this;
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    this.unlisten();
  }

  private unlisten(): void {
    this.stopEntries?.();
    this.stopEntries = null;
    this.loadedFor?.removeEventListener('hello', this.onHello);
    this.loadedFor = null;
  }

  updated(changed: Map<string, unknown>): void {
    if ((changed.has('open') || changed.has('client')) && this.open && this.client && this.loadedFor !== this.client) {
      this.unlisten();
      this.loadedFor = this.client;
      this.stopEntries = this.client.on('audit.entry', this.onEntry);
      this.client.addEventListener('hello', this.onHello);
      void this.reload();
    } else if (changed.has('open') && this.open) void this.reload();
  }

  /**
   * Shows one session's history (the pane's "History" button); `gateway`: a session another gateway of the
   * fleet holds (session keys are each gateway's own, so its entries are asked with its gateway).
   */
  showSession(sessionKey: string, gateway?: string): void {
    this.filters = { ...this.filters, sessionKey, gateway: gateway && gateway !== this.gateway ? gateway : '' };
    void this.reload();
  }

  /** Whether this gateway wrote the entry (its id is one of this gateway's, its images on this disk). */
  private own(e: AuditEntry): boolean {
    return !e.gateway || e.gateway === this.gateway;
  }

  /**
   * Opens one entry (a click on a pane's log line): the session's history with that entry selected, its
   * images and expected vs observed shown, scrolled into view. An entry older than the first page is
   * shown on top of it. `gateway`: an entry of another gateway's session (a fleet pane's line), found in its
   * session's history by that gateway's id.
   */
  async showEntry(sessionKey: string, id: number, gateway?: string): Promise<void> {
    const other = gateway && gateway !== this.gateway ? gateway : '';
    this.filters = { sessionKey, client: '', gateway: other, tool: '', verdict: '', text: '', from: '', to: '' };
    await this.reload();
    let entry = this.entries.find((e) => e.id === id && (other ? e.gateway === other : this.own(e)));
    if (!entry && other) {
      this.status = `entry ${id} of ${other} is not among this session's newest entries: page back to find it`;
      return;
    }
    if (!entry) {
      const stored = (
        await this.client.request('audit.query', { sessionKey, before: id + 1, limit: 1 }).catch(() => null)
      )?.entries?.[0] as AuditEntry | undefined;
      if (stored?.id !== id) {
        this.status = `entry ${id} is no longer in the trail (retention)`;
        return;
      }
      entry = stored;
      this.entries = [stored, ...this.entries];
    }
    if (!this.selected || entryKey(this.selected) !== entryKey(entry)) await this.select(entry);
    await this.updateComplete;
    const line = this.querySelector(
      `[data-audit-key="${CSS.escape(entryKey(entry))}"] .audit-line`,
    ) as HTMLElement | null;
    line?.scrollIntoView({ block: 'nearest' });
    line?.focus();
  }

  private shows(e: AuditEntry): boolean {
    const f = this.filters;
    if (f.sessionKey && e.sessionKey !== f.sessionKey) return false;
    // A session key alone names one of this gateway's sessions (another gateway's may have the same key).
    if (f.sessionKey && !f.gateway && !this.own(e)) return false;
    if (f.client && e.actor?.client !== f.client) return false;
    if (f.gateway && e.gateway !== f.gateway) return false;
    if (f.tool && e.tool !== f.tool) return false;
    if (f.verdict && e.verdict !== f.verdict) return false;
    if (f.to) return false; // a window that ends in the past gets no live entries
    if (f.text && !JSON.stringify(e).toLowerCase().includes(f.text.toLowerCase())) return false;
    return true;
  }

  private params(before?: number): Record<string, unknown> {
    const f = this.filters;
    const time = (v: string) => (v ? new Date(v).toISOString() : undefined);
    return Object.fromEntries(
      Object.entries({
        sessionKey: f.sessionKey || undefined,
        client: f.client || undefined,
        gateway: f.gateway || undefined,
        tool: f.tool || undefined,
        verdict: f.verdict || undefined,
        text: f.text || undefined,
        from: time(f.from),
        to: time(f.to),
        before,
        limit: 100,
      }).filter(([, v]) => v !== undefined),
    );
  }

  async reload(): Promise<void> {
    if (this.client?.state !== 'connected') return;
    try {
      const [page, sessions] = await Promise.all([
        this.client.request('audit.query', this.params()),
        this.client.request('audit.sessions'),
      ]);
      this.entries = page.entries;
      this.nextBefore = page.next_before;
      this.knownSessions = sessions.sessions;
      // How full the trail is: when it or a session's share is full, agents' calls are refused (too_many_audit_bytes).
      this.status = `${page.total} entries kept, ${mib(sessions.bytes)} of ${mib(sessions.max_bytes)} (a session may hold ${mib(sessions.share_bytes)})`;
    } catch (e) {
      this.status = (e as Error).message;
    }
  }

  private async older(): Promise<void> {
    if (this.nextBefore === null) return;
    try {
      const page = await this.client.request('audit.query', this.params(this.nextBefore));
      this.entries = [...this.entries, ...page.entries].slice(0, SHOWN_MAX);
      this.nextBefore = page.next_before;
    } catch (e) {
      this.status = (e as Error).message;
    }
  }

  private setFilter(key: keyof Filters, value: string): void {
    this.filters = { ...this.filters, [key]: value };
    window.clearTimeout(this.textTimer);
    // Typing in the text box searches once the operator pauses, not on every key.
    this.textTimer = window.setTimeout(() => void this.reload(), key === 'text' ? 300 : 0);
  }

  /** Whether `entry` is the one open (its gateway and id: ids clash across the gateways of a fleet). */
  private isSelected(entry: AuditEntry): boolean {
    return !!this.selected && entryKey(this.selected) === entryKey(entry);
  }

  private async select(entry: AuditEntry): Promise<void> {
    if (this.isSelected(entry)) {
      this.selected = null;
      return;
    }
    this.selected = entry;
    this.images = {};
    this.wholePage = false;
    if (!this.own(entry)) {
      // Another gateway's entry comes from the shared trail whole; its images are on that gateway's disk.
      this.images = { note: `No before/after images here: they are kept on ${entry.gateway}, which wrote this entry.` };
      return;
    }
    // This gateway's live entries come without their result: the stored entry has it (asked by the session's
    // key, this gateway's own files answer, with their ids).
    const stored = (
      await this.client
        .request('audit.query', { sessionKey: entry.sessionKey, before: entry.id + 1, limit: 1 })
        .catch(() => null)
    )?.entries[0];
    if (stored?.id === entry.id && this.isSelected(entry)) this.selected = { ...stored, gateway: entry.gateway };
    const current = this.selected;
    if (!current?.recording) {
      this.images = {
        note: 'No before/after images: only calls of a recording session (start_session with recording_dir) keep them.',
      };
      return;
    }
    const images: { before?: Shot; after?: Shot } = {};
    for (const which of ['before', 'after'] as const) {
      if (!current.recording[which]) continue;
      const png = await this.client.request('audit.image', { id: current.id, which }).catch(() => null);
      if (png) images[which] = { src: `data:${png.mimeType};base64,${png.data}`, size: pngSize(png.data) };
    }
    if (this.isSelected(current)) this.images = images;
  }

  private async exportSession(format: 'jsonl' | 'zip'): Promise<void> {
    const sessionKey = this.filters.sessionKey;
    if (!sessionKey) {
      this.status = 'choose a session to export';
      return;
    }
    try {
      const { url, filename } = await this.client.request('audit.export', { sessionKey, format });
      const a = document.createElement('a');
      a.href = url;
      a.download = filename;
      a.dataset.auditDownload = format;
      document.body.append(a);
      a.click();
      a.remove();
      this.status = `exported ${filename}`;
    } catch (e) {
      this.status = (e as Error).message;
    }
  }

  /** A session's name: the app's while it knows the session, else its actor's as the trail kept it. */
  private nameOf(sessionKey: string, actor?: AuditActor, gateway?: string): string {
    if (gateway && gateway !== this.gateway) return foreignTitle(actor, sessionKey, gateway);
    return (
      this.titleOf(sessionKey) ??
      actorTitle(actor ?? this.knownSessions.find((s) => s.sessionKey === sessionKey)?.actor, sessionKey)
    );
  }

  /** What a session holds of the trail, and how many of its calls were refused for want of room. */
  private usageOf(sessionKey: string): string {
    const s = this.knownSessions.find((k) => k.sessionKey === sessionKey);
    if (!s) return '';
    return ` (${mib(s.bytes)}${s.refused ? `, ${s.refused} refused: no room` : ''})`;
  }

  render() {
    if (!this.open) return nothing;
    const f = this.filters;
    const sessions = new Set([...this.knownSessions.map((s) => s.sessionKey), ...(f.sessionKey ? [f.sessionKey] : [])]);
    // The agents: each client name once, however many sessions it had.
    const agents = [
      ...new Set([
        ...this.knownSessions.flatMap((s) => (s.actor ? [s.actor.client] : [])),
        ...(f.client ? [f.client] : []),
      ]),
    ].sort();
    const tools = [...new Set(this.entries.map((e) => e.tool))].sort();
    // With a shared audit store, the gateways the trail's entries name (none with the JSONL files).
    const gateways = [
      ...new Set([...this.gateways, ...this.entries.flatMap((e) => (e.gateway ? [e.gateway] : []))]),
    ].sort();
    return html`<section class="audit-log" data-audit-log aria-label="Audit log">
      <header class="audit-head">
        <strong>Audit log</strong> <small class="muted" data-audit-status role="status">${this.status}</small>
        <span class="spacer"></span>
        <button data-audit-export="jsonl" ?disabled=${!f.sessionKey} title="The chosen session's trail in the recording format" @click=${() => this.exportSession('jsonl')}>Export JSONL</button>
        <button data-audit-export="zip" ?disabled=${!f.sessionKey} title="JSONL and the before/after images" @click=${() => this.exportSession('zip')}>Export zip</button>
        <button aria-label="Close the audit log" @click=${() => this.dispatchEvent(new CustomEvent('close-log', { bubbles: true }))}>Close</button>
      </header>
      <form class="audit-filters" @submit=${(e: Event) => {
        e.preventDefault();
        void this.reload();
      }}>
        <label>Session <select data-audit-filter="session" @change=${(e: Event) => this.setFilter('sessionKey', (e.target as HTMLSelectElement).value)}>
          <option value="" ?selected=${!f.sessionKey}>all</option>
          ${[...sessions].map((k) => html`<option value=${k} ?selected=${k === f.sessionKey}>${this.nameOf(k)}${this.usageOf(k)}</option>`)}
        </select></label>
        <label>Agent <select data-audit-filter="client" @change=${(e: Event) => this.setFilter('client', (e.target as HTMLSelectElement).value)}>
          <option value="" ?selected=${!f.client}>all</option>
          ${agents.map((c) => html`<option value=${c} ?selected=${c === f.client}>${c}</option>`)}
        </select></label>
        ${
          gateways.length || f.gateway
            ? html`<label>Gateway <select data-audit-filter="gateway" @change=${(e: Event) => this.setFilter('gateway', (e.target as HTMLSelectElement).value)}>
          <option value="" ?selected=${!f.gateway}>all</option>
          ${[...new Set([...gateways, ...(f.gateway ? [f.gateway] : [])])].map((g) => html`<option value=${g} ?selected=${g === f.gateway}>${g}</option>`)}
        </select></label>`
            : nothing
        }
        <label>Tool <input data-audit-filter="tool" list="audit-tools" size="10" .value=${f.tool} @change=${(e: Event) => this.setFilter('tool', (e.target as HTMLInputElement).value.trim())}></label>
        <datalist id="audit-tools">${tools.map((t) => html`<option value=${t}></option>`)}</datalist>
        <label>Verdict <select data-audit-filter="verdict" @change=${(e: Event) => this.setFilter('verdict', (e.target as HTMLSelectElement).value)}>
          <option value="" ?selected=${!f.verdict}>any</option>${VERDICTS.map((v) => html`<option value=${v} ?selected=${v === f.verdict}>${v}</option>`)}
        </select></label>
        <label>Text <input data-audit-filter="text" type="search" size="14" .value=${f.text} @input=${(e: Event) => this.setFilter('text', (e.target as HTMLInputElement).value)}></label>
        <label>From <input data-audit-filter="from" type="datetime-local" .value=${f.from} @change=${(e: Event) => this.setFilter('from', (e.target as HTMLInputElement).value)}></label>
        <label>To <input data-audit-filter="to" type="datetime-local" .value=${f.to} @change=${(e: Event) => this.setFilter('to', (e.target as HTMLInputElement).value)}></label>
      </form>
      <ol class="audit-entries">
        ${this.entries.length === 0 ? html`<li class="muted">Nothing in the trail matches.</li>` : nothing}
        ${this.entries.map((e) => this.renderEntry(e))}
      </ol>
      <footer class="audit-foot">
        ${this.nextBefore !== null ? html`<button data-audit-older @click=${() => this.older()}>Older entries</button>` : html`<small class="muted" data-audit-end>the beginning of the trail (as far as retention keeps it)</small>`}
      </footer>
    </section>`;
  }

  private renderEntry(e: AuditEntry) {
    const open = this.isSelected(e);
    const detail = open ? this.selected! : null;
    return html`<li class="audit-entry kind-${e.kind} ${e.isError ? 'bad' : ''}" data-audit-entry=${e.id} data-audit-key=${entryKey(e)} data-tool=${e.tool} data-verdict=${e.verdict} data-session-key=${e.sessionKey}>
      <button class="audit-line" aria-expanded=${String(open)} @click=${() => this.select(e)}>
        <small class="muted">${new Date(e.at).toLocaleString()}</small>
        ${e.gateway ? html`<small class="audit-gateway" data-audit-gateway=${e.gateway}>${e.gateway}</small>` : nothing}
        <span class="audit-session" data-audit-actor=${e.actor?.client ?? ''}>${this.nameOf(e.sessionKey, e.actor, e.gateway)}</span>
        <code>${e.tool}</code> <span class="effect ${e.verdict}">${e.verdict}</span>
        ${e.approval?.by && e.kind === 'call' ? html`<span class="approval-mark" data-approved-by=${e.approval.by}>approved by ${e.approval.by}</span>` : nothing}
        ${e.by && e.kind !== 'call' ? html`<small>by ${e.by}</small>` : nothing}
        <span class="audit-summary">${e.summary}</span>
      </button>
      ${e.refusal ? html`<div class="refusal">${e.refusal.code}: ${e.refusal.message}</div>` : nothing}
      ${(e.evidence ?? []).map(evidenceFields)}
      ${
        detail
          ? html`<div class="audit-detail" data-audit-detail>
        ${detail.actor ? html`<div data-audit-who>agent <b>${detail.actor.client} ${detail.actor.client_version}</b> · session ${detail.actor.session} · connection <code>${detail.actor.connection}</code> (${detail.actor.transport}) · credential <code>${detail.actor.credential}</code></div>` : nothing}
        ${detail.target ? html`<div data-audit-target>on ${targetLine(detail.target)}</div>` : nothing}
        ${detail.labels ? html`<div data-audit-labels>${Object.entries(detail.labels).map(([token, label]) => html`<div><code>${token}</code> = ${label}</div>`)}</div>` : nothing}
        ${this.renderImages(detail)}
        <h3 class="fields-head">Arguments as sent</h3>
        ${objectFields(detail.args ?? {}, 'The arguments')}
        ${
          detail.result && typeof detail.result === 'object'
            ? html`<h3 class="fields-head">Result</h3>${objectFields(detail.result as Record<string, unknown>, 'The result')}`
            : nothing
        }
      </div>`
          : nothing
      }
    </li>`;
  }

  /** Before and after side by side: cropped around the target (outlined), or the whole pages, one click apart. */
  private renderImages(detail: AuditEntry) {
    const { before, after, note } = this.images;
    if (!before && !after) return note ? html`<p class="muted">${note}</p>` : nothing;
    const target = detail.recording?.target;
    const whole = this.wholePage || !target;
    const figure = (which: 'before' | 'after', shot: Shot | undefined) =>
      html`<figure><figcaption>${which}</figcaption>${shot ? shotView(which, shot.src, shot.size, target, whole) : html`<span class="muted">none</span>`}</figure>`;
    return html`<div class="before-after ${whole ? 'whole' : 'cropped'}" data-before-after=${whole ? 'page' : 'crop'}>
        ${figure('before', before)}${figure('after', after)}
      </div>
      ${
        target
          ? html`<button class="link" data-whole-page aria-pressed=${String(this.wholePage)} @click=${() => {
              this.wholePage = !this.wholePage;
            }}>${this.wholePage ? 'Show around the target' : 'Show the whole page'}</button>`
          : nothing
      }`;
  }
}

customElements.define('verity-audit-log', AuditLog);

/** Bytes as MiB with one decimal. */
function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
