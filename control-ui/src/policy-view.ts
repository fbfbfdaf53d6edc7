// The sidebar's Policy view: what agents may reach under the policy in force (gateway method policy.get),
// read-only. Fetched on each hello (a restarted gateway may have loaded another policy file).
import { LitElement, html, nothing } from 'lit';
import type { PolicySummary } from '../../server/gateway/protocol.js';
import type { GatewayClient } from './gateway.js';

export class PolicyView extends LitElement {
  static properties = { client: { attribute: false }, summary: { state: true } };
  client!: GatewayClient;
  summary: PolicySummary | null = null;
  private readonly load = () => {
    if (!this.client.hello?.methods.includes('policy.get')) return;
    void this.client.request('policy.get').then(
      (summary) => {
        this.summary = summary;
      },
      () => {
        this.summary = null;
      },
    );
  };

  createRenderRoot() {
    return this;
  }

  /** The client is set after the element is made (a property binding): listen once it is there. */
  private listening: GatewayClient | null = null;
  protected updated(): void {
    this.listen();
  }

  connectedCallback(): void {
    super.connectedCallback();
    this.listen();
  }

  private listen(): void {
    if (!this.client || this.listening === this.client) return;
    this.listening?.removeEventListener('hello', this.load);
    this.listening = this.client;
    this.client.addEventListener('hello', this.load);
    if (this.client.hello) this.load();
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    this.listening?.removeEventListener('hello', this.load);
    this.listening = null;
  }

  render() {
    const p = this.summary;
    if (!p) return nothing;
    const list = (items: string[] | null, any: string) =>
      items === null
        ? html`<em>${any}</em>`
        : items.length
          ? items.map((i) => html`<code>${i}</code> `)
          : html`<em>none</em>`;
    const row = (name: string, key: string, value: unknown) =>
      html`<dt>${name}</dt><dd data-policy-field=${key}>${value}</dd>`;
    return html`<details class="policy" data-policy>
      <summary><h2>Policy</h2> <small title=${p.source}>${p.source}</small></summary>
      <dl>
        ${row('Apps allowed', 'allowed_apps', list(p.allowed_apps, 'any app (but terminals)'))}
        ${row('Apps blocked', 'blocked_apps', list(p.blocked_apps, ''))}
        ${row('Origins allowed', 'allowed_origins', list(p.allowed_origins, 'any origin'))}
        ${row('Origins blocked', 'blocked_origins', list(p.blocked_origins, ''))}
        ${row('URL schemes', 'url_schemes', list(p.url_schemes, ''))}
        ${row('Needs approval', 'require_approval', list(p.require_approval, ''))}
        ${row('Always refused', 'always_refused', html`<ul>${p.always_refused.map((r) => html`<li>${r}</li>`)}</ul>`)}
      </dl>
    </details>`;
  }
}

customElements.define('verity-policy', PolicyView);
