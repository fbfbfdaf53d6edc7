// The browser panel: a live screencast of the focused session's tab, shown at the panel's own size (the
// gateway sizes the tab's viewport to it, so text is readable), with a URL bar (back, forward, reload),
// a strip of the session's tabs, and the operator's input forwarded only while they have taken control
// ("Take control"; Esc gives it back). Without control no key is captured: Tab moves on through the UI.
import { LitElement, html, nothing } from 'lit';
import type { GatewayClient } from './gateway.js';
import type { EventPayload, Params, Result, ScreencastFrame } from '../../server/gateway/protocol.js';
import { sessionName } from './console.js';

type Owner = NonNullable<Result<'browser.screencast.start'>['owner']>;

interface TabRow {
  tab_id: string;
  url: string;
  title: string;
}
interface Viewport {
  width: number;
  height: number;
  dpr: number;
}

export class BrowserPanel extends LitElement {
  static properties = {
    client: { attribute: false },
    active: { type: Boolean },
    online: { type: Boolean },
    sessionKey: { attribute: false },
    tabId: { attribute: false },
    status: { state: true },
    frames: { state: true },
    url: { state: true },
    tabs: { state: true },
    inControl: { state: true },
    noBrowser: { state: true },
    owner: { state: true },
  };
  client!: GatewayClient;
  active = false;
  online = false;
  sessionKey: string | null = null;
  /** The tab the focused session drives (followed unless the operator picked another in the tab strip). */
  tabId: string | null = null;
  status = '';
  frames = 0;
  url = '';
  tabs: TabRow[] = [];
  private tabsAsked = 0;
  inControl = false;
  noBrowser = false;
  /** Whose tab is shown (the session driving it), as the gateway answered; null: a tab no session drives. */
  owner: Owner | null | undefined = undefined;
  private streaming: string | null = null;
  /** The tab the operator picked in the strip, for as long as the session stays on the same tab. */
  private picked: { tab: string; while: string | null } | null = null;
  /** The tab the screencast actually shows (the one input goes to), as the gateway answered. */
  private shownTab: string | null = null;
  private inputQueue: Promise<unknown> = Promise.resolve();
  private size = { width: 1, height: 1 };
  private observer: ResizeObserver | null = null;
  private resizeTimer: number | undefined;
  private lastViewport = '';
  private onFrame = (frame: ScreencastFrame) => {
    if (frame.tab_id !== this.shownTab) return;
    const img = this.querySelector('img.screen') as HTMLImageElement | null;
    if (!img) return;
    img.src = `data:image/jpeg;base64,${frame.data}`;
    // The frame is the tab at the panel's size: shown 1:1 in CSS pixels (scaled down only while resizing).
    img.style.width = `${frame.width}px`;
    this.size = { width: frame.width, height: frame.height };
    this.frames++;
    img.dataset.frames = String(this.frames);
  };
  private onLocation = (location: EventPayload<'browser.location'>) => {
    if (location.tab_id !== this.shownTab) return;
    if (document.activeElement !== this.querySelector('[data-browser-url]')) this.url = location.url;
    void this.refreshTabs();
  };

  createRenderRoot() {
    return this;
  }

  connectedCallback(): void {
    super.connectedCallback();
    this.observer = new ResizeObserver(() => this.viewportChanged());
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    this.client?.off('browser.frame', this.onFrame);
    this.client?.off('browser.location', this.onLocation);
    this.observer?.disconnect();
  }

  render() {
    const shown = this.frames > 0 && !this.noBrowser;
    return html`
      <div class="browser-bar" role="toolbar" aria-label="Browser navigation">
        <button data-nav="back" aria-label="Back" title="Back" ?disabled=${!this.shownTab} @click=${() => this.navigate('back')}><span aria-hidden="true">←</span></button>
        <button data-nav="forward" aria-label="Forward" title="Forward" ?disabled=${!this.shownTab} @click=${() => this.navigate('forward')}><span aria-hidden="true">→</span></button>
        <button data-nav="reload" aria-label="Reload" title="Reload" ?disabled=${!this.shownTab} @click=${() => this.navigate('reload')}><span aria-hidden="true">↻</span></button>
        <form class="url-form" @submit=${this.go}>
          <input class="url" data-browser-url aria-label="Address of the shown tab" .value=${this.url} ?disabled=${!this.shownTab} spellcheck="false" autocomplete="off">
        </form>
        <button class="take-control ${this.inControl ? 'on' : ''}" data-take-control aria-pressed=${String(this.inControl)} ?disabled=${!shown}
          @click=${() => this.setControl(!this.inControl)}>${this.inControl ? 'Give back (Esc)' : 'Take control'}</button>
      </div>
      ${
        this.tabs.length > 1
          ? html`<div class="tab-strip" role="tablist" aria-label="The session's tabs" data-tab-strip>
        ${this.tabs.map(
          (
            t,
          ) => html`<button role="tab" data-tab-id=${t.tab_id} aria-selected=${String(t.tab_id === this.shownTab)} title=${t.url}
          @click=${() => this.pick(t.tab_id)}>${t.title || t.url || 'new tab'}</button>`,
        )}
      </div>`
          : nothing
      }
      ${this.renderOwner()}
      <small class="muted browser-status" data-browser-status role="status">${this.status}</small>
      <!-- A role so the name is allowed (axe aria-prohibited-attr); "application" while keys go to the tab. -->
      <div class="screen-host ${this.inControl ? 'in-control' : ''} ${this.online ? '' : 'stale'}" data-screen-host tabindex=${this.inControl ? '0' : '-1'}
        role=${this.inControl ? 'application' : 'group'}
        aria-label=${this.inControl ? "The session's tab: your keys and clicks go to it; Esc gives control back" : "The session's tab (view only)"} @keydown=${this.key}>
        ${this.noBrowser ? html`<p class="no-browser" data-no-browser>No browser yet. It appears here when an agent opens a page.</p>` : nothing}
        <img class="screen" alt="The session's tab, live" data-frames="0" ?hidden=${!shown} @click=${this.clickScreen} @wheel=${this.wheel}>
      </div>`;
  }

  /** Says whose tab this is; loudly when it is not the focused session's (the operator must not mistake it). */
  private renderOwner() {
    if (this.owner === undefined || !this.shownTab) return nothing;
    if (this.owner === null)
      return html`<div class="browser-owner elsewhere" data-browser-owner="" role="note">A tab no session drives${this.sessionKey ? ", not the focused session's" : ''}</div>`;
    const name = sessionName({ ...this.owner, state: 'active' });
    const elsewhere = !!this.sessionKey && this.owner.sessionKey !== this.sessionKey;
    return html`<div class="browser-owner ${elsewhere ? 'elsewhere' : ''}" data-browser-owner=${this.owner.sessionKey} data-elsewhere=${String(elsewhere)} role="note">
      ${elsewhere ? html`Not the focused session's tab: this one is <strong>${name}</strong>'s` : html`The tab of <strong>${name}</strong>`}</div>`;
  }

  firstUpdated(): void {
    this.observer?.observe(this.querySelector('[data-screen-host]') as HTMLElement);
  }

  updated(changed: Map<string, unknown>): void {
    this.client?.on('browser.frame', this.onFrame);
    this.client?.on('browser.location', this.onLocation);
    if (changed.has('tabId') && this.picked && this.picked.while !== this.tabId) this.picked = null; // the agent moved on: follow it
    // The session's tab changed (a new tab, one closed): the strip is asked again at once, not only once the
    // screencast of the new tab has started, which a loaded machine can hold up past the operator's patience.
    if (this.active && (changed.has('tabId') || changed.has('sessionKey'))) void this.refreshTabs();
    if (!this.active && this.inControl) this.setControl(false);
    const tab = this.picked?.tab ?? this.tabId;
    const want = this.active ? `${tab ?? ''}|${this.sessionKey ?? ''}` : null;
    if (want === this.streaming) return;
    this.streaming = want;
    if (!want) {
      if (this.online) void this.client?.request('browser.screencast.stop').catch(() => {});
      return;
    }
    this.status = 'starting the screencast…';
    const viewport = this.viewport();
    void this.client
      .request('browser.screencast.start', {
        ...(tab ? { tab_id: tab } : {}),
        ...(this.sessionKey ? { sessionKey: this.sessionKey } : {}),
        ...(viewport ? { viewport } : {}),
      })
      .then(
        (r) => {
          this.noBrowser = false;
          this.owner = r.owner ?? null;
          this.status = r.title || '';
          this.url = r.url;
          if (r.tab_id !== this.shownTab) this.frames = 0;
          this.shownTab = r.tab_id;
          this.lastViewport = JSON.stringify(viewport);
          // The panel may have changed size while the screencast started (its status line appearing, the
          // tab strip): the resize observer fired too early to act on it, so the size is checked again.
          this.viewportChanged();
          void this.refreshTabs();
        },
        (e) => {
          this.noBrowser = /no browser yet/.test(e.message);
          this.status = this.noBrowser ? '' : e.message;
          this.shownTab = null;
          this.owner = undefined;
          this.frames = 0; // the last frame was of a tab no longer shown: not left on screen
          this.url = '';
        },
      );
  }

  /** The panel's drawing area in CSS pixels and the screen's pixel ratio: the size the tab is shown at. */
  private viewport(): Viewport | null {
    const host = this.querySelector('[data-screen-host]') as HTMLElement | null;
    if (!host || host.clientWidth < 50 || host.clientHeight < 50) return null;
    return { width: host.clientWidth, height: host.clientHeight, dpr: window.devicePixelRatio || 1 };
  }

  /** The panel was resized (dragged, docked elsewhere, the window changed): the tab follows, once it settles. */
  private viewportChanged(): void {
    clearTimeout(this.resizeTimer);
    this.resizeTimer = window.setTimeout(() => {
      const viewport = this.viewport();
      if (!viewport || !this.shownTab || !this.online || JSON.stringify(viewport) === this.lastViewport) return;
      this.lastViewport = JSON.stringify(viewport);
      void this.client.request('browser.screencast.resize', { viewport }).catch(() => {});
    }, 150);
  }

  private async refreshTabs(): Promise<void> {
    const asked = ++this.tabsAsked;
    if (!this.sessionKey || !this.online) {
      this.tabs = [];
      return;
    }
    const { tabs } = await this.client
      .request('browser.tabs', { sessionKey: this.sessionKey })
      .catch(() => ({ tabs: [] as TabRow[] }));
    if (asked === this.tabsAsked) this.tabs = tabs; // an older answer never replaces a newer one
  }

  private pick(tab: string): void {
    this.picked = tab === this.tabId ? null : { tab, while: this.tabId };
    this.requestUpdate();
  }

  private navigate(action: 'back' | 'forward' | 'reload'): void {
    if (!this.shownTab) return;
    void this.client.request('browser.navigate', { tab_id: this.shownTab, action }).catch((e) => {
      this.status = e.message;
    });
  }

  private go = (e: Event) => {
    e.preventDefault();
    const input = this.querySelector('[data-browser-url]') as HTMLInputElement;
    if (!this.shownTab || !input.value.trim()) return;
    void this.client.request('browser.navigate', { tab_id: this.shownTab, action: 'go', url: input.value }).then(
      () => input.blur(),
      (err) => {
        this.status = err.message;
      },
    );
  };

  /** Taking control focuses the page view (keys go to the tab); giving it back returns focus to the toggle. */
  private setControl(on: boolean): void {
    this.inControl = on;
    void this.updateComplete.then(() => {
      const target = on ? this.querySelector('[data-screen-host]') : this.querySelector('[data-take-control]');
      (target as HTMLElement | null)?.focus();
    });
  }

  private point(e: MouseEvent) {
    const img = e.currentTarget as HTMLImageElement;
    const rect = img.getBoundingClientRect();
    return {
      x: (e.clientX - rect.left) * (this.size.width / rect.width),
      y: (e.clientY - rect.top) * (this.size.height / rect.height),
    };
  }

  private send(input: Omit<Params<'browser.input'>, 'tab_id'>): void {
    if (!this.shownTab || !this.inControl) return;
    const tab = this.shownTab;
    // One at a time, in order: a key typed right after a click must not overtake the click's focus.
    this.inputQueue = this.inputQueue
      .then(() => this.client.request('browser.input', { tab_id: tab, ...input }))
      .catch((e) => {
        this.status = e.message;
      });
  }

  private clickScreen = (e: MouseEvent) => {
    if (this.inControl) this.send({ type: 'click', ...this.point(e) });
  };
  private wheel = (e: WheelEvent) => {
    if (!this.inControl) return;
    e.preventDefault();
    this.send({ type: 'wheel', ...this.point(e), deltaY: e.deltaY });
  };
  private key = (e: KeyboardEvent) => {
    // Not in control: nothing is captured (no keyboard trap). In control: Esc gives control back, every
    // other key (Tab too) goes to the page.
    if (!this.inControl) return;
    e.preventDefault();
    if (e.key === 'Escape') {
      this.setControl(false);
      return;
    }
    if (e.key.length === 1 && !e.ctrlKey && !e.metaKey) this.send({ type: 'text', text: e.key });
    else this.send({ type: 'key', key: e.key });
  };
}
customElements.define('verity-browser', BrowserPanel);
