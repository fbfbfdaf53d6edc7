// The terminal panel: xterm.js over a real PTY on the host (operator.admin). A shell started here is
// bound to this Control UI: `verity mcp` run in it relays to the gateway with this connection's link.
import { LitElement, html } from 'lit';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import type { GatewayClient } from './gateway.js';
import type { EventPayload } from '../../server/gateway/protocol.js';

export class TerminalPanel extends LitElement {
  static properties = { client: { attribute: false }, active: { type: Boolean }, status: { state: true } };
  client!: GatewayClient;
  active = false;
  status = '';
  private term: Terminal | null = null;
  private fit = new FitAddon();
  private terminalId: string | null = null;
  private observer: ResizeObserver | null = null;

  createRenderRoot() { return this; }

  render() {
    return html`<div class="panel-head"><strong>Terminal</strong> <small class="muted" data-terminal-status>${this.status}</small></div><div class="term-host"></div>`;
  }

  updated(): void {
    if (this.active && !this.term) void this.openTerminal();
    if (!this.active && this.term) this.closeTerminal();
  }

  private async openTerminal(): Promise<void> {
    const host = this.querySelector('.term-host') as HTMLElement;
    const term = new Terminal({ fontSize: 13, convertEol: false, cursorBlink: true, theme: { background: '#0f1117' } });
    this.term = term;
    term.loadAddon(this.fit);
    term.open(host);
    this.fit.fit();
    this.status = 'starting a shell…';
    try {
      const opened = await this.client.request('terminal.open', { cols: term.cols, rows: term.rows });
      this.terminalId = opened.terminalId;
      this.status = `pid ${opened.pid}`;
    } catch (e) {
      this.status = (e as Error).message;
      return;
    }
    const onData = (e: Event) => {
      const { terminalId, data } = (e as CustomEvent<EventPayload<'terminal.data'>>).detail;
      if (terminalId === this.terminalId) term.write(data);
    };
    const onExit = (e: Event) => { if ((e as CustomEvent<EventPayload<'terminal.exit'>>).detail.terminalId === this.terminalId) this.status = 'the shell exited'; };
    this.client.addEventListener('terminal.data', onData);
    this.client.addEventListener('terminal.exit', onExit);
    term.onData((data) => { if (this.terminalId) void this.client.request('terminal.input', { terminalId: this.terminalId, data }).catch(() => {}); });
    this.observer = new ResizeObserver(() => {
      this.fit.fit();
      if (this.terminalId) void this.client.request('terminal.resize', { terminalId: this.terminalId, cols: term.cols, rows: term.rows }).catch(() => {});
    });
    this.observer.observe(host);
    term.focus();
  }

  private closeTerminal(): void {
    if (this.terminalId) void this.client.request('terminal.close', { terminalId: this.terminalId }).catch(() => {});
    this.observer?.disconnect();
    this.term?.dispose();
    this.term = null;
    this.terminalId = null;
  }
}
customElements.define('verity-terminal', TerminalPanel);
