// The terminal panel: xterm.js over a real PTY on the host (operator.admin). A shell started here is
// bound to this Control UI: `verity mcp` run in it relays to the gateway with this connection's link.
//
// Hiding the panel detaches the shell instead of killing it: the gateway keeps it (bounded,
// VERITY_TERMINAL_DETACH_MS) and showing the panel again, or reloading the page, attaches it again with
// the tail of its output. Its id is kept in this browser tab's sessionStorage for that.
import { LitElement, html } from 'lit';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import type { GatewayClient } from './gateway.js';
import type { EventPayload } from '../../server/gateway/protocol.js';

const STORED_ID = 'verity.terminal';

export class TerminalPanel extends LitElement {
  static properties = {
    client: { attribute: false },
    open: { type: Boolean },
    online: { type: Boolean },
    status: { state: true },
  };
  client!: GatewayClient;
  open = false;
  online = false;
  status = '';
  private term: Terminal | null = null;
  private fit = new FitAddon();
  private terminalId: string | null = null;
  /** Whether this page holds the shell now (attached), as opposed to having detached it or lost the gateway. */
  private attached = false;
  private busy = false;
  /** The shell exited: no new one starts until the panel is shown again. */
  private exited = false;
  private observer: ResizeObserver | null = null;
  private onData = ({ terminalId, data }: EventPayload<'terminal.data'>) => {
    if (terminalId === this.terminalId && this.attached) this.term?.write(data);
  };
  private onExit = ({ terminalId }: EventPayload<'terminal.exit'>) => {
    if (terminalId !== this.terminalId) return;
    this.status = 'the shell exited';
    this.exited = true;
    this.terminalId = null;
    this.attached = false;
    sessionStorage.removeItem(STORED_ID);
  };

  createRenderRoot() {
    return this;
  }

  render() {
    return html`<div class="panel-head"><small class="muted" data-terminal-status role="status">${this.status}</small></div><div class="term-host"></div>`;
  }

  disconnectedCallback(): void {
    super.disconnectedCallback();
    this.observer?.disconnect();
  }

  updated(): void {
    if (!this.online) {
      this.attached = false;
      return;
    } // the gateway went away: it detached the shell itself
    if (this.busy) return;
    if (!this.open) this.exited = false;
    if (this.open && !this.attached && !this.exited) void this.show();
    if (!this.open && this.attached) this.hide();
  }

  private ensureXterm(): Terminal {
    if (this.term) return this.term;
    const host = this.querySelector('.term-host') as HTMLElement;
    const term = new Terminal({ fontSize: 13, convertEol: false, cursorBlink: true, theme: { background: '#0f1117' } });
    this.term = term;
    term.loadAddon(this.fit);
    term.open(host);
    term.onData((data) => {
      if (this.terminalId && this.attached)
        void this.client.request('terminal.input', { terminalId: this.terminalId, data }).catch(() => {});
    });
    this.observer = new ResizeObserver(() => {
      if (!this.open) return;
      this.fit.fit();
      if (this.terminalId && this.attached)
        void this.client
          .request('terminal.resize', { terminalId: this.terminalId, cols: term.cols, rows: term.rows })
          .catch(() => {});
    });
    this.observer.observe(host);
    return term;
  }

  /** Shown: attach the shell this page had (hidden, or before a reload), else start one. */
  private async show(): Promise<void> {
    this.busy = true;
    try {
      this.client.on('terminal.data', this.onData);
      this.client.on('terminal.exit', this.onExit);
      const term = this.ensureXterm();
      await this.updateComplete;
      this.fit.fit();
      const held = this.terminalId ?? sessionStorage.getItem(STORED_ID);
      if (held) {
        try {
          const back = await this.client.request('terminal.attach', {
            terminalId: held,
            cols: term.cols,
            rows: term.rows,
          });
          term.reset();
          term.write(back.tail);
          this.use(back.terminalId, back.pid, 'attached again');
          return;
        } catch {
          /* it exited or was killed after the detach bound: a new shell */
        }
      }
      this.status = 'starting a shell…';
      const opened = await this.client.request('terminal.open', { cols: term.cols, rows: term.rows });
      this.use(opened.terminalId, opened.pid, '');
    } catch (e) {
      this.status = (e as Error).message;
    } finally {
      this.busy = false;
      if (this.attached && !this.open) this.hide(); // hidden again while it was starting
    }
  }

  private use(terminalId: string, pid: number, note: string): void {
    this.terminalId = terminalId;
    this.attached = true;
    sessionStorage.setItem(STORED_ID, terminalId);
    this.status = `pid ${pid}${note ? ` · ${note}` : ''}`;
    this.term?.focus();
  }

  /** Hidden: the shell is detached, not killed (the gateway kills it if it stays hidden past its bound). */
  private hide(): void {
    if (this.terminalId) void this.client.request('terminal.detach', { terminalId: this.terminalId }).catch(() => {});
    this.attached = false;
    this.status = 'detached: the shell keeps running for a while';
  }
}
customElements.define('verity-terminal', TerminalPanel);
