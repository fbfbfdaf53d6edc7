// The fleet in the sidebar, with a shared audit store (fleet.sessions, fleet.changed): the gateways and
// whether each is live, the other gateways' sessions with the gateway that holds each (a gone gateway's
// shown ended, "gateway gone"), their brake one by one, and the brake for every agent of the fleet
// (fleet.brake). A click on another gateway's session opens it in a pane of this console (its actions, live
// from the shared trail: main.ts). This gateway's own sessions stay in the session list above, with their
// full controls; the calls held on other gateways are cards in the approvals queue (main.ts, fleet.resolve).
import { LitElement, html, nothing } from 'lit';
import type { FleetView } from '../../server/gateway/protocol.js';
import type { GatewayClient } from './gateway.js';
import { type FleetSession, fleetPaneKey, fleetState, otherSessions, sessionName } from './console.js';

type FleetVerb = 'stop' | 'pause' | 'resume';

export class FleetPanel extends LitElement {
  static properties = {
    client: { attribute: false },
    view: { attribute: false },
    current: { attribute: false },
    status: { state: true },
  };
  client!: GatewayClient;
  view: FleetView | null = null;
  /** The focused pane's key: the row of the session it shows (fleetPaneKey) is marked current. */
  current: string | null = null;
  /** What the last fleet brake did (sent to how many gateways, by whom). */
  status = '';

  createRenderRoot() {
    return this;
  }

  private error(message: string): void {
    this.dispatchEvent(new CustomEvent('brake-error', { detail: message, bubbles: true }));
  }

  /** The brake for the whole fleet, one gateway, or one session of another gateway. */
  private async brake(verb: FleetVerb, target: { gateway?: string; sessionKey?: string } = {}): Promise<void> {
    try {
      const r = await this.client.request('fleet.brake', { verb, ...target });
      const what = target.sessionKey ? `a session on ${target.gateway}` : 'every agent of the fleet';
      this.status = `${verb} ${what}: sent to ${r.gateways} gateway${r.gateways === 1 ? '' : 's'} by ${r.by}`;
    } catch (e) {
      this.error(`fleet ${verb}: ${(e as Error).message}`);
    }
  }

  private history(s: FleetSession): void {
    this.dispatchEvent(
      new CustomEvent('fleet-history', { detail: { gateway: s.gateway, sessionKey: s.row.sessionKey }, bubbles: true }),
    );
  }

  /** Opens the session in a pane of this console: its action log from the shared trail (main.ts). */
  private openPane(s: FleetSession): void {
    this.dispatchEvent(
      new CustomEvent('fleet-open', { detail: { gateway: s.gateway, sessionKey: s.row.sessionKey }, bubbles: true }),
    );
  }

  render() {
    const view = this.view;
    if (!view?.shared) return nothing;
    const others = otherSessions(view);
    return html`<section class="fleet" data-fleet data-fleet-gateway=${view.gateway ?? ''} aria-labelledby="fleet-heading">
      <h2 id="fleet-heading">Fleet <small>${view.gateways.filter((g) => g.live).length} of ${view.gateways.length} gateways live</small></h2>
      <ul class="fleet-gateways">${view.gateways.map(
        (g) =>
          html`<li data-fleet-gateway-row=${g.gateway} data-live=${String(g.live)} title=${`last heartbeat ${new Date(g.heartbeat).toLocaleTimeString()}`}>${g.gateway}${g.gateway === view.gateway ? ' (this one)' : ''}${g.live ? nothing : html` <b class="gone">gone</b>`}</li>`,
      )}</ul>
      <div class="fleet-brake" role="group" aria-label="Brake for every agent of the fleet">
        <button class="brake-pause" data-fleet-brake="pause" title="Pause every agent on every live gateway" aria-label="Pause every agent of the fleet" @click=${() => this.brake('pause')}>Pause all</button>
        <button class="brake-resume" data-fleet-brake="resume" title="Resume every agent on every live gateway" aria-label="Resume every agent of the fleet" @click=${() => this.brake('resume')}>Resume all</button>
        <button class="brake-stop" data-fleet-brake="stop" title="Stop every agent on every live gateway: their calls are refused" aria-label="Stop every agent of the fleet" @click=${() => this.brake('stop')}>Stop all</button>
      </div>
      ${this.status ? html`<small class="muted" data-fleet-status role="status">${this.status}</small>` : nothing}
      <h3 class="fleet-sub">On other gateways <small>${others.length}</small></h3>
      ${others.length === 0 ? html`<p class="muted">No sessions on the other gateways.</p>` : nothing}
      <ul class="sessions fleet-sessions">${others.map((s) => this.renderRow(s))}</ul>
    </section>`;
  }

  private renderRow(s: FleetSession) {
    const name = sessionName(s.row);
    const state = s.row.brake?.state ?? 'running';
    const target = { gateway: s.gateway, sessionKey: s.row.sessionKey };
    const current = this.current === fleetPaneKey(s.gateway, s.row.sessionKey);
    return html`<li class="${s.live ? '' : 'closed'} ${current ? 'current' : ''}" data-fleet-session=${`${s.gateway}/${s.row.sessionKey}`} data-gateway=${s.gateway}
      data-session-key=${s.row.sessionKey} data-live=${String(s.live)} data-state=${s.row.state} data-brake-state=${state}>
      <button class="link fleet-name" data-fleet-open aria-label=${`Show ${name} on ${s.gateway} in a pane`} title="Its actions in a pane, live from the shared audit trail" @click=${() => this.openPane(s)}>${name}</button>
      <small>on <b data-session-gateway>${s.gateway}</b> · ${s.row.transport} · <span data-session-state>${fleetState(s)}</span></small>
      <span class="row-actions">
        ${
          s.live
            ? html`${
                state === 'running'
                  ? html`<button class="brake-pause" data-fleet-session-brake="pause" aria-label=${`Pause ${name} on ${s.gateway}`} @click=${() => this.brake('pause', target)}>Pause</button>`
                  : html`<button class="brake-resume" data-fleet-session-brake="resume" aria-label=${`Resume ${name} on ${s.gateway}`} @click=${() => this.brake('resume', target)}>Resume</button>`
              }
              ${state !== 'stopped' ? html`<button class="brake-stop" data-fleet-session-brake="stop" aria-label=${`Stop ${name} on ${s.gateway}`} @click=${() => this.brake('stop', target)}>Stop</button>` : nothing}`
            : nothing
        }
        <button data-fleet-history aria-label=${`History of ${name} on ${s.gateway} in the audit log`} title="Its history in the audit log" @click=${() => this.history(s)}>History</button>
      </span>
    </li>`;
  }
}

customElements.define('verity-fleet', FleetPanel);
