// One approval card: what will run (the element by its role and name, the arguments whole), how long it
// still waits (a countdown to its time-out), and Approve / Deny that look nothing alike.
import { LitElement, html, nothing } from 'lit';
import type { ApprovalRequest } from '../../server/gateway/protocol.js';

/** An approval request as the gateway sends it (approval.requested, approvals.list). */
export type Approval = ApprovalRequest;

export class ApprovalCard extends LitElement {
  static properties = { approval: { attribute: false }, sessionTitle: { attribute: false }, now: { state: true } };
  approval!: Approval;
  sessionTitle = '';
  now = Date.now();
  private timer: number | undefined;

  createRenderRoot() {
    return this;
  }

  connectedCallback(): void {
    super.connectedCallback();
    this.timer = window.setInterval(() => {
      this.now = Date.now();
    }, 1000);
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    window.clearInterval(this.timer);
  }

  private decide(approve: boolean): void {
    this.dispatchEvent(
      new CustomEvent('approval-decide', { detail: { id: this.approval.id, approve }, bubbles: true }),
    );
  }

  render() {
    const a = this.approval;
    const left = a.expiresAt ? Math.max(0, Math.round((Date.parse(a.expiresAt) - this.now) / 1000)) : null;
    const labels = Object.entries(a.labels ?? {});
    return html`<div class="approval-card">
      <div class="approval-head"><strong>${a.tool}</strong> <small>${this.sessionTitle}</small>
        ${left !== null ? html`<span class="countdown ${left <= 15 ? 'soon' : ''}" data-approval-countdown=${left} title="Refused on its own when this reaches 0">${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}</span>` : nothing}</div>
      ${labels.length ? html`<div class="approval-target" data-approval-labels>${labels.map(([token, label]) => html`<span title=${token}>on ${label}</span>`)}</div>` : nothing}
      <pre class="approval-args" data-approval-args tabindex="0" aria-label="The call's arguments">${a.arguments ? JSON.stringify(a.arguments, null, 2) : a.summary}</pre>
      <div class="approval-buttons">
        <button class="approve" aria-label=${`Approve ${a.tool}`} @click=${() => this.decide(true)}>✓ Approve</button>
        <button class="deny" aria-label=${`Deny ${a.tool}`} @click=${() => this.decide(false)}>✕ Deny</button>
      </div>
    </div>`;
  }
}

customElements.define('verity-approval', ApprovalCard);
