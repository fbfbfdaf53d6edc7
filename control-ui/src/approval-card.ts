// One approval card: what will run (the page by its origin and title, or the app; the element by its role
// and name; the call in one line as words, `Format › Character… on window 4 (pid 7)`, its main line; the
// arguments as the agent sent them, whole, below it, open until the operator folds them), how long it
// still waits (a countdown to its time-out), and Approve / Deny that look nothing alike. A call whose
// client gave up stays, marked withdrawn.
import { LitElement, html, nothing } from 'lit';
import type { ApprovalRequest } from '../../server/gateway/protocol.js';

/** An approval request as the gateway sends it (approval.requested, approvals.list); `withdrawn` says why its client gave up. */
export type Approval = ApprovalRequest & { withdrawn?: string };

/** What the call acts on, in one line: `https://example.com · "Claims"`, or `the app gedit (pid 4242)`. */
export function targetLine(target: ApprovalRequest['target']): string | null {
  if (!target) return null;
  if (target.kind === 'app') return `the app ${target.app ?? '?'}${target.pid ? ` (pid ${target.pid})` : ''}`;
  return `${target.origin ?? 'a tab'}${target.title ? ` · ${JSON.stringify(target.title)}` : ''}`;
}

/** The call in one line, each element token it names shown as its element (`… in the context menu of cell "B2"`). */
export function summaryLine(a: Pick<ApprovalRequest, 'summary' | 'labels'>): string {
  let line = a.summary;
  for (const [token, label] of Object.entries(a.labels ?? {})) line = line.split(token).join(label);
  return line;
}

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
    const target = targetLine(a.target);
    const line = summaryLine(a);
    return html`<div class="approval-card ${a.withdrawn ? 'withdrawn' : ''}">
      <div class="approval-head"><strong>${a.tool}</strong> <small>${this.sessionTitle}</small>
        ${left !== null && !a.withdrawn ? html`<span class="countdown ${left <= 15 ? 'soon' : ''}" data-approval-countdown=${left} title="Refused on its own when this reaches 0">${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}</span>` : nothing}</div>
      ${target ? html`<div class="approval-page" data-approval-target=${a.target!.kind}>${a.target!.kind === 'tab' ? 'page ' : ''}<b>${target}</b></div>` : nothing}
      ${labels.length ? html`<div class="approval-target" data-approval-labels>${labels.map(([token, label]) => html`<span title=${token}>on ${label}</span>`)}</div>` : nothing}
      ${
        a.arguments
          ? html`${line ? html`<p class="approval-summary" data-approval-summary>${line}</p>` : nothing}
        <details class="approval-details" open><summary>Arguments, exactly as they will run</summary><pre class="approval-args" data-approval-args tabindex="0" aria-label="The call's arguments, as the agent sent them">${JSON.stringify(a.arguments, null, 2)}</pre></details>`
          : html`<pre class="approval-args" data-approval-args tabindex="0" aria-label="The call's arguments, as the agent sent them">${a.summary}</pre>`
      }
      ${
        a.withdrawn
          ? html`<p class="withdrawn-note" data-approval-withdrawn role="status">Withdrawn: ${a.withdrawn}. Nothing ran; the call left the queue.</p>
        <div class="approval-buttons"><button class="dismiss" aria-label=${`Dismiss the withdrawn ${a.tool}`} @click=${() => this.decide(false)}>Dismiss</button></div>`
          : html`<div class="approval-buttons">
        <button class="approve" aria-label=${`Approve ${a.tool}`} @click=${() => this.decide(true)}>✓ Approve</button>
        <button class="deny" aria-label=${`Deny ${a.tool}`} @click=${() => this.decide(false)}>✕ Deny</button>
      </div>`
      }
    </div>`;
  }
}

customElements.define('verity-approval', ApprovalCard);
