// The browser panel: a live screencast of the focused session's tab; the operator's clicks, wheel and
// keys are forwarded to that tab as trusted input.
import { LitElement, html } from 'lit';
import type { GatewayClient } from './gateway.js';
import type { Params, ScreencastFrame } from '../../server/gateway/protocol.js';

export class BrowserPanel extends LitElement {
  static properties = { client: { attribute: false }, active: { type: Boolean }, sessionKey: { attribute: false }, tabId: { attribute: false }, status: { state: true }, frames: { state: true } };
  client!: GatewayClient;
  active = false;
  sessionKey: string | null = null;
  tabId: string | null = null;
  status = '';
  frames = 0;
  private streaming: string | null = null;
  /** The tab the screencast actually shows (the one input goes to), as the gateway answered. */
  private shownTab: string | null = null;
  private inputQueue: Promise<unknown> = Promise.resolve();
  private size = { width: 1, height: 1 };
  private onFrame = (e: Event) => {
    const frame = (e as CustomEvent<ScreencastFrame>).detail;
    const img = this.querySelector('img.screen') as HTMLImageElement | null;
    if (!img) return;
    img.src = `data:image/jpeg;base64,${frame.data}`;
    this.size = { width: frame.width, height: frame.height };
    this.frames++;
    img.dataset.frames = String(this.frames);
  };

  createRenderRoot() { return this; }

  connectedCallback(): void { super.connectedCallback(); this.client?.addEventListener('browser.frame', this.onFrame); }
  disconnectedCallback(): void { super.disconnectedCallback(); this.client?.removeEventListener('browser.frame', this.onFrame); }

  render() {
    return html`<div class="panel-head"><strong>Browser</strong> <small class="muted" data-browser-status>${this.status}</small></div>
      <div class="screen-host" tabindex="0" @keydown=${this.key}>
        <img class="screen" alt="the session's tab" data-frames="0" @click=${this.clickScreen} @wheel=${this.wheel}>
      </div>`;
  }

  updated(): void {
    this.client?.removeEventListener('browser.frame', this.onFrame);
    this.client?.addEventListener('browser.frame', this.onFrame);
    const want = this.active ? `${this.tabId ?? this.shownTab ?? ''}|${this.sessionKey ?? ''}` : null;
    if (want === this.streaming) return;
    this.streaming = want;
    if (!want) { void this.client?.request('browser.screencast.stop').catch(() => {}); return; }
    this.status = 'starting the screencast…';
    void this.client.request('browser.screencast.start', { ...(this.tabId ? { tab_id: this.tabId } : {}), ...(this.sessionKey ? { sessionKey: this.sessionKey } : {}) })
      .then((r) => {
        this.status = r.url;
        this.shownTab = r.tab_id;
        this.streaming = `${r.tab_id}|${this.sessionKey ?? ''}`; // learning the tab's id is not a reason to restart
      }, (e) => { this.status = e.message; this.streaming = null; });
  }

  private point(e: MouseEvent) {
    const img = e.currentTarget as HTMLImageElement;
    const rect = img.getBoundingClientRect();
    return { x: (e.clientX - rect.left) * (this.size.width / rect.width), y: (e.clientY - rect.top) * (this.size.height / rect.height) };
  }

  private send(input: Omit<Params<'browser.input'>, 'tab_id'>): void {
    if (!this.shownTab) return;
    const tab = this.shownTab;
    // One at a time, in order: a key typed right after a click must not overtake the click's focus.
    this.inputQueue = this.inputQueue.then(() => this.client.request('browser.input', { tab_id: tab, ...input })).catch((e) => { this.status = e.message; });
  }

  private clickScreen = (e: MouseEvent) => { (this.querySelector('.screen-host') as HTMLElement).focus(); this.send({ type: 'click', ...this.point(e) }); };
  private wheel = (e: WheelEvent) => { e.preventDefault(); this.send({ type: 'wheel', ...this.point(e), deltaY: e.deltaY }); };
  private key = (e: KeyboardEvent) => {
    e.preventDefault();
    if (e.key.length === 1 && !e.ctrlKey && !e.metaKey) this.send({ type: 'text', text: e.key });
    else this.send({ type: 'key', key: e.key });
  };
}
customElements.define('verity-browser', BrowserPanel);
