// The one gateway client, used by the Control UI and by the extension's service worker (which bundles it
// from here): the connect handshake, requests typed by the protocol (server/gateway/protocol.ts), events,
// and reconnect with one back-off policy. It reports its state so a UI can show it (never stale: a dropped
// socket says so at once). It needs only what a page, a service worker and Node (with `ws`) all have.
import type {
  ConnectParams,
  ErrorCode,
  EventName,
  EventPayload,
  HelloOk,
  Method,
  Params,
  Result,
  ServerFrame,
} from '../../server/gateway/protocol.js';

export type ConnState = 'connecting' | 'connected' | 'closed' | 'unauthorized';

export interface GatewayOptions {
  url: string;
  token: string;
  caps: string[];
  scopes: ConnectParams['scopes'];
  clientId: string;
  mode?: string;
  displayName?: string;
  /** The WebSocket class (the platform's by default; tests in Node pass `ws`'s). */
  WebSocket?: WebSocketClass;
  /** Bound on requests waiting for an answer (MAX_PENDING by default). */
  maxPending?: number;
  /**
   * Never send the credential: open `/gateway?challenge=1` and answer the gateway's nonce with an HMAC of
   * it (the Control UI page, whose port anyone may bind while the gateway is down). A resume ticket is
   * sent as it is (it opens only the gateway process that issued it). Without WebCrypto (a page that is
   * not a secure context) the credential is sent as before.
   */
  proveCredential?: boolean;
}

/** What the client needs of a WebSocket (the platform's and `ws`'s both have it). */
interface SocketLike {
  readonly readyState: number;
  onopen: ((e: unknown) => void) | null;
  onmessage: ((e: { data: unknown }) => void) | null;
  onclose: ((e: { code: number; reason: string }) => void) | null;
  onerror: ((e: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
type WebSocketClass = new (url: string) => SocketLike;

const OPEN = 1;
// Written out (the protocol module is imported for its types only, so zod stays out of the bundles); the
// types make the build fail if they ever differ from protocol.ts.
const CONNECT_CHALLENGE: typeof import('../../server/gateway/protocol.js').CONNECT_CHALLENGE = 'connect.challenge';
const PROOF_PREFIX: typeof import('../../server/gateway/protocol.js').PROOF_PREFIX = 'proof.';
export const CLIENT_VERSION = '0.1.0';
/** Requests waiting for an answer at once, at most; one more is refused (TOO_MANY_PENDING). */
export const MAX_PENDING = 256;
export const REQUEST_TIMEOUT_MS = 15_000;

/**
 * The back-off policy (both clients): the first retry after 250 ms, then doubling, at most 5 s apart. A
 * local gateway that restarts is back within a few seconds, so the cap is low; one failed try costs a
 * refused TCP connect on loopback, so retrying every 5 s is cheap.
 */
export function reconnectDelay(attempt: number): number {
  return Math.min(250 * 2 ** Math.max(0, attempt), 5_000);
}

/** Why a request got no answer: the gateway's own error code, or the client's. */
export type RequestErrorCode = ErrorCode | 'NOT_CONNECTED' | 'CLOSED' | 'TIMEOUT' | 'TOO_MANY_PENDING';

export class GatewayRequestError extends Error {
  constructor(
    readonly code: RequestErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

interface Pending {
  resolve(payload: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export interface StateDetail {
  state: ConnState;
  error: string /** The close code, when the socket closed. */;
  code?: number /** Whether the link was up (hello-ok) before it closed. */;
  wasConnected?: boolean;
}

/**
 * Events: 'state' (StateDetail), 'hello' (HelloOk), and every gateway event by its name with its payload
 * as `detail`. `on()` is the typed way to listen.
 */
export class GatewayClient extends EventTarget {
  private socket: SocketLike | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private attempt = 0;
  private stopped = true;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  state: ConnState = 'closed';
  hello: HelloOk | null = null;
  lastError = '';
  /** Each `on` listener's DOM handler, so that adding it again or `off` finds the same one. */
  private readonly handlers = new WeakMap<object, (e: Event) => void>();

  constructor(readonly options: GatewayOptions) {
    super();
  }

  /** Starts connecting (and reconnecting); a no-op while already running. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.attempt = 0;
    this.open();
  }

  /** Stops for good (until start): closes the socket, refuses what is waiting, retries nothing. */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onclose = null;
      socket.close();
    }
    this.failPending('the gateway client was stopped');
    if (this.state !== 'unauthorized') this.setState({ state: 'closed', error: '' });
  }

  get running(): boolean {
    return !this.stopped;
  }

  /**
   * Listens to one gateway event, typed by the protocol; returns the way to stop listening. Like
   * addEventListener, the same listener added twice is called once, and `off` takes it away again.
   */
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    let handler = this.handlers.get(listener);
    if (!handler) {
      // The one place a DOM event becomes a payload: dispatched below from frames of this event's name.
      handler = (e: Event) => listener((e as CustomEvent<EventPayload<E>>).detail);
      this.handlers.set(listener, handler);
    }
    this.addEventListener(event, handler);
    return () => this.off(event, listener);
  }

  off<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): void {
    const handler = this.handlers.get(listener);
    if (handler) this.removeEventListener(event, handler);
  }

  private setState(detail: StateDetail): void {
    this.state = detail.state;
    this.lastError = detail.error;
    this.dispatchEvent(new CustomEvent('state', { detail }));
  }

  private open(): void {
    this.setState({ state: 'connecting', error: '' });
    const Socket = this.options.WebSocket ?? (globalThis.WebSocket as unknown as WebSocketClass);
    let socket: SocketLike;
    const challenged = this.options.proveCredential && !this.options.token.startsWith('resume.') && !!subtle();
    try {
      socket = new Socket(
        challenged ? `${this.options.url}${this.options.url.includes('?') ? '&' : '?'}challenge=1` : this.options.url,
      );
    } catch (e) {
      // A malformed address never gets better: say so and stop.
      this.stopped = true;
      this.setState({
        state: 'unauthorized',
        error: `the gateway address ${this.options.url} is not usable (${(e as Error).message})`,
      });
      return;
    }
    this.socket = socket;
    let wasConnected = false;
    // With a challenge, the gateway's nonce comes first; no nonce in time (not a gateway): close and retry.
    let nonce: ((n: string) => void) | null = null;
    const credential = challenged
      ? new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no connect.challenge')), REQUEST_TIMEOUT_MS);
          nonce = (n) => {
            clearTimeout(timer);
            resolve(proof(this.options.token, n));
          };
        })
      : Promise.resolve(this.options.token);
    credential.catch(() => {});
    socket.onopen = () =>
      void credential.then(
        (token) => {
          if (this.socket === socket) this.connect(socket, token, () => (wasConnected = true));
        },
        () => {
          if (this.socket === socket) socket.close();
        },
      );
    socket.onmessage = (message) => {
      let frame: ServerFrame;
      try {
        frame = JSON.parse(String(message.data)) as ServerFrame;
      } catch {
        return;
      }
      if (nonce && frame.type === 'event' && (frame.event as string) === CONNECT_CHALLENGE) {
        nonce((frame.payload as { nonce: string }).nonce);
        nonce = null;
        return;
      }
      this.onFrame(frame);
    };
    socket.onerror = () => {
      /* onclose follows and says what happened */
    };
    socket.onclose = (e) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.hello = null;
      this.failPending('the gateway connection closed');
      if (this.state !== 'unauthorized') {
        this.setState({
          state: 'closed',
          error: e.reason || (e.code === 1006 ? 'gateway unreachable' : ''),
          code: e.code,
          wasConnected,
        });
      }
      if (!this.stopped) this.retry();
    };
  }

  /** The connect handshake on an open socket, with this credential (or proof of it). */
  private connect(socket: SocketLike, token: string, connected: () => void): void {
    const hello: ConnectParams = {
      client: {
        id: this.options.clientId,
        version: CLIENT_VERSION,
        mode: this.options.mode ?? 'ui',
        ...(this.options.displayName ? { displayName: this.options.displayName } : {}),
      },
      caps: this.options.caps,
      role: 'operator',
      scopes: this.options.scopes,
      auth: { token },
    };
    this.send<HelloOk>('connect', hello).then(
      (ok) => {
        if (this.socket !== socket) return;
        this.hello = ok;
        this.attempt = 0;
        connected();
        this.setState({ state: 'connected', error: '' });
        this.dispatchEvent(new CustomEvent('hello', { detail: ok }));
      },
      (e: GatewayRequestError) => {
        if (this.socket !== socket) return;
        // Only the gateway's own refusal is one; a link that dropped (or never answered) is retried.
        if (e.code === 'CLOSED' || e.code === 'TIMEOUT' || e.code === 'NOT_CONNECTED') {
          socket.close();
          return;
        }
        this.stopped = true; // a refused credential does not get better by retrying
        this.setState({ state: 'unauthorized', error: e.message });
        socket.close();
      },
    );
  }

  private onFrame(frame: ServerFrame): void {
    if (frame.type === 'res') {
      const waiter = typeof frame.id === 'number' ? this.pending.get(frame.id) : undefined;
      if (!waiter || typeof frame.id !== 'number') return; // an answer nobody waits for (notify)
      this.pending.delete(frame.id);
      clearTimeout(waiter.timer);
      if (frame.ok) waiter.resolve(frame.payload);
      else waiter.reject(new GatewayRequestError(frame.error.code, frame.error.message, frame.error.details));
    } else if (frame.type === 'event') {
      this.dispatchEvent(new CustomEvent(frame.event, { detail: frame.payload }));
    }
  }

  private retry(): void {
    if (this.retryTimer) return;
    const delay = reconnectDelay(this.attempt++);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) this.open();
    }, delay);
  }

  private failPending(why: string): void {
    for (const waiter of this.pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(new GatewayRequestError('CLOSED', why));
    }
    this.pending.clear();
  }

  /** A method call, typed by the protocol: its params and its result. */
  request<M extends Method>(
    method: M,
    ...args: undefined extends Params<M>
      ? [params?: Params<M>, timeoutMs?: number]
      : [params: Params<M>, timeoutMs?: number]
  ): Promise<Result<M>>;
  request(method: Method, ...args: [params?: unknown, timeoutMs?: number]): Promise<unknown> {
    const [params, timeoutMs] = args;
    if (!this.hello)
      return Promise.reject(new GatewayRequestError('NOT_CONNECTED', `${method}: not connected to the gateway`));
    return this.send<unknown>(method, params, timeoutMs);
  }

  /**
   * A request whose answer nobody waits for (the extension's relay results and debugger events): it takes
   * no place among the pending requests. False when it could not be sent.
   */
  notify<M extends Method>(method: M, params: Params<M>): boolean {
    const socket = this.socket;
    if (!this.hello || !socket || socket.readyState !== OPEN) return false;
    socket.send(JSON.stringify({ type: 'req', id: `n${this.nextId++}`, method, params }));
    return true;
  }

  private send<T>(method: string, params: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<T> {
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN)
      return Promise.reject(new GatewayRequestError('NOT_CONNECTED', `${method}: not connected to the gateway`));
    const limit = this.options.maxPending ?? MAX_PENDING;
    if (this.pending.size >= limit) {
      return Promise.reject(
        new GatewayRequestError(
          'TOO_MANY_PENDING',
          `${method}: ${limit} requests are already waiting for the gateway's answer; wait for them before sending more`,
          { limit },
        ),
      );
    }
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new GatewayRequestError('TIMEOUT', `${method}: no answer from the gateway in ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (payload: unknown) => void, reject, timer });
      socket.send(JSON.stringify({ type: 'req', id, method, params }));
    });
  }
}

/** WebCrypto's subtle API where the platform has it (pages in a secure context, workers, Node). */
function subtle(): SubtleCrypto | undefined {
  return (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
}

/** The proof of a credential for one challenge: `proof.` + hex HMAC-SHA256(credential, nonce). */
async function proof(credential: string, nonce: string): Promise<string> {
  const bytes = (text: string) => new TextEncoder().encode(text);
  const key = await subtle()!.importKey('raw', bytes(credential), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await subtle()!.sign('HMAC', key, bytes(nonce)));
  return PROOF_PREFIX + Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
}
