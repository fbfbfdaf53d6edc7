// The Control UI's gateway client: connect handshake, requests with ids, events, and reconnect with
// backoff. It reports its state so the UI can show it (never stale: a dropped socket says so at once).

export type ConnState = 'connecting' | 'connected' | 'closed' | 'unauthorized';

export interface GatewayOptions { url: string; token: string; caps: string[]; scopes: string[]; clientId: string }

type Pending = { resolve: (v: any) => void; reject: (e: Error) => void; timer: number };

export class GatewayClient extends EventTarget {
  private socket: WebSocket | null = null;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private backoffMs = 500;
  private stopped = false;
  state: ConnState = 'closed';
  hello: { connId: string; methods: string[]; scopes: string[] } | null = null;
  lastError = '';

  constructor(readonly options: GatewayOptions) { super(); }

  start(): void { this.stopped = false; this.open(); }

  stop(): void { this.stopped = true; this.socket?.close(); }

  private setState(state: ConnState, error = ''): void {
    this.state = state;
    this.lastError = error;
    this.dispatchEvent(new CustomEvent('state', { detail: { state, error } }));
  }

  private open(): void {
    this.setState('connecting');
    const socket = new WebSocket(this.options.url);
    this.socket = socket;
    socket.onopen = async () => {
      try {
        this.hello = await this.request('connect', {
          client: { id: this.options.clientId, version: '0.1.0', mode: 'ui' }, caps: this.options.caps, role: 'operator',
          scopes: this.options.scopes, auth: { token: this.options.token },
        });
        this.backoffMs = 500;
        this.setState('connected');
        this.dispatchEvent(new CustomEvent('hello', { detail: this.hello }));
      } catch (e) {
        this.setState('unauthorized', (e as Error).message);
        this.stopped = true; // a wrong token does not get better by retrying
      }
    };
    socket.onmessage = (msg) => {
      const frame = JSON.parse(String(msg.data));
      if (frame.type === 'res') {
        const waiter = this.pending.get(frame.id);
        if (!waiter) return;
        this.pending.delete(frame.id);
        clearTimeout(waiter.timer);
        if (frame.ok) waiter.resolve(frame.payload);
        else waiter.reject(Object.assign(new Error(frame.error?.message ?? 'request failed'), { code: frame.error?.code }));
      } else if (frame.type === 'event') {
        this.dispatchEvent(new CustomEvent(frame.event, { detail: frame.payload }));
      }
    };
    socket.onclose = (e) => {
      for (const waiter of this.pending.values()) { clearTimeout(waiter.timer); waiter.reject(new Error('the gateway connection closed')); }
      this.pending.clear();
      if (this.state !== 'unauthorized') this.setState('closed', e.reason || (e.code === 1006 ? 'gateway unreachable' : ''));
      if (!this.stopped) {
        setTimeout(() => { if (!this.stopped) this.open(); }, this.backoffMs);
        this.backoffMs = Math.min(this.backoffMs * 2, 15_000);
      }
    };
  }

  request<T = any>(method: string, params?: unknown, timeoutMs = 15_000): Promise<T> {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return Promise.reject(new Error('not connected to the gateway'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = window.setTimeout(() => { this.pending.delete(id); reject(new Error(`${method}: no answer in ${timeoutMs / 1000} s`)); }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      socket.send(JSON.stringify({ type: 'req', id, method, params }));
    });
  }
}
