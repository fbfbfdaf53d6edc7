// The brake on an agent, as the operator uses it: Pause/Resume, Stop and End on a session's row and on its
// pane (one component for both), and keyboard shortcuts for the focused session:
//   Alt+Shift+S stop · Alt+Shift+P pause / resume · Alt+Shift+E end
// The gateway holds the state (sessions.stop/pause/resume/end); the rows show it as sessions.changed
// brings it, so two Control UIs agree.
import { LitElement, html, nothing } from 'lit';
import type { BrakeStatus } from '../../server/gateway/protocol.js';
import type { GatewayClient } from './gateway.js';

export type { BrakeStatus };

export type BrakeVerb = 'stop' | 'pause' | 'resume' | 'end';

/** Sends one brake command; a failure is reported through `onError` (the app's error line). */
export async function brake(
  client: GatewayClient,
  sessionKey: string,
  verb: BrakeVerb,
  onError: (message: string) => void,
): Promise<void> {
  try {
    await client.request(`sessions.${verb}`, { sessionKey });
  } catch (e) {
    onError(`${verb} ${sessionKey}: ${(e as Error).message}`);
  }
}

export class BrakeControls extends LitElement {
  static properties = {
    client: { attribute: false },
    sessionKey: { attribute: false },
    status: { attribute: false },
    name: { attribute: false },
    compact: { type: Boolean },
  };
  client!: GatewayClient;
  sessionKey = '';
  /** The session as the UI names it ("client · label"): each button's accessible name says which session it acts on. */
  name = '';
  status: BrakeStatus | undefined;
  /** The sidebar row's smaller form. */
  compact = false;

  createRenderRoot() {
    return this;
  }

  private send(e: Event, verb: BrakeVerb): void {
    e.stopPropagation(); // a click on the pane's header must not also focus/navigate
    void brake(this.client, this.sessionKey, verb, (message) =>
      this.dispatchEvent(new CustomEvent('brake-error', { detail: message, bubbles: true })),
    );
  }

  render() {
    const state = this.status?.state ?? 'running';
    const held = state !== 'running';
    const session = `session ${this.name || this.sessionKey}`;
    return html`<span class="brake ${this.compact ? 'compact' : ''}" data-brake-state=${state} role="group" aria-label=${`Brake for ${session}`}>
      ${held ? html`<span class="brake-mark ${state}" title=${`${state} by ${this.status?.by ?? 'an operator'}`}>${state === 'paused' ? '⏸ paused' : '■ stopped'}${this.status?.waiting ? html` · ${this.status.waiting} waiting` : nothing}</span>` : nothing}
      ${
        state === 'running'
          ? html`<button class="brake-pause" data-brake="pause" title="Pause: the agent's calls wait until you resume (Alt+Shift+P)" aria-label=${`Pause ${session}`} @click=${(e: Event) => this.send(e, 'pause')}>Pause</button>`
          : html`<button class="brake-resume" data-brake="resume" title="Resume: the agent's calls run again (Alt+Shift+P)" aria-label=${`Resume ${session}`} @click=${(e: Event) => this.send(e, 'resume')}>Resume</button>`
      }
      ${state !== 'stopped' ? html`<button class="brake-stop" data-brake="stop" title="Stop: refuse the agent's calls and cancel what it waits for (Alt+Shift+S)" aria-label=${`Stop ${session}`} @click=${(e: Event) => this.send(e, 'stop')}>Stop</button>` : nothing}
      <button class="brake-end" data-brake="end" title="End this session, as end_session does (Alt+Shift+E)" aria-label=${`End ${session}`} @click=${(e: Event) => this.send(e, 'end')}>End</button>
    </span>`;
  }
}

customElements.define('verity-brake', BrakeControls);

/**
 * The brake's shortcuts act on the focused session. Alt+Shift keeps them off what an operator types into
 * the terminal or the browser panel (neither forwards Alt+Shift chords as text).
 */
export function installBrakeShortcuts(
  target: EventTarget,
  focused: () => { client: GatewayClient; sessionKey: string | null; status?: BrakeStatus },
  onError: (message: string) => void,
): () => void {
  const onKey = (event: Event) => {
    const e = event as KeyboardEvent;
    if (!e.altKey || !e.shiftKey || e.ctrlKey || e.metaKey) return;
    const verb = ({ KeyS: 'stop', KeyE: 'end', KeyP: 'pause' } as Record<string, BrakeVerb | undefined>)[e.code];
    if (!verb) return;
    const { client, sessionKey, status } = focused();
    if (!sessionKey) return;
    e.preventDefault();
    const resolved: BrakeVerb = verb === 'pause' && status && status.state !== 'running' ? 'resume' : verb;
    void brake(client, sessionKey, resolved, onError);
  };
  target.addEventListener('keydown', onKey);
  return () => target.removeEventListener('keydown', onKey);
}
