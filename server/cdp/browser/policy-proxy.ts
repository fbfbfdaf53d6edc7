// The origin policy where the browser cannot route around it: a forward proxy Verity runs on 127.0.0.1 for a
// browser it launches, started when the policy lists origins. Chromium sends it everything (loopback too,
// with --proxy-bypass-list=<-loopback>): plain http as absolute-form requests, and https, ws and wss as
// CONNECT host:port tunnels. Each is checked with the policy (Policy.requestAllowed, Policy.hostPortAllowed)
// before a byte goes out, whoever in the browser asked: a page, a frame, a dedicated, shared or service
// worker, a WebSocket, an EventSource, a beacon, a prefetch, each hop of a redirect. CDP's Fetch
// interception (guard.ts) stays as the layer that also holds in a browser Verity attaches to; it does not
// see WebSockets at all, this does.
//
// An operator's own --proxy-server is chained to when it is a plain http proxy; a socks or https proxy (or a
// per-scheme list) cannot be, and is refused at start (chainedUpstream): with a socks upstream the names
// would be resolved and the tunnels opened by that proxy in a dialect this one does not speak, and passing it
// to Chromium instead would take this proxy out of the path. Everything is bounded: client connections,
// header sizes, idle sockets; it listens on loopback only and is closed with the browser.
import { lookup } from 'node:dns/promises';
import {
  Agent,
  createServer,
  request,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import type { Policy } from '../../policy.js';

/** Client connections held at once (a page opens six per host; a busy session a few dozen). */
const MAX_CLIENT_CONNECTIONS = 256;
/** Connections to origins kept for reuse, and open at once. */
const MAX_ORIGIN_SOCKETS = 256;
/** Request and response headers (Node's default is 16 KiB; cookie-heavy sites go past it). */
const MAX_HEADER_BYTES = 64 * 1024;
/** A client that sends no complete request head within this is dropped. */
const HEADERS_TIMEOUT_MS = 30_000;
/** A plain request or keep-alive connection with no traffic either way for this long is closed. */
const IDLE_TIMEOUT_MS = 5 * 60_000;
/** A tunnel (https, a WebSocket) with no traffic either way for this long is closed. */
const TUNNEL_IDLE_TIMEOUT_MS = 15 * 60_000;
/** Opening a connection to an origin or to the upstream proxy, and its CONNECT answer. */
const CONNECT_TIMEOUT_MS = 30_000;

/** Headers that belong to one hop (RFC 9110 7.6.1), never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Where the proxy sends what it allows: straight to the origin, or through the operator's http proxy. */
export interface Upstream {
  host: string;
  port: number;
}

/**
 * The operator's --proxy-server as an upstream this proxy can chain to: a plain http proxy
 * ([http://]host[:port]). Anything else is refused with a message naming both options.
 */
export function chainedUpstream(proxyServer: string): Upstream {
  const m = /^(?:http:\/\/)?(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(\d{1,5}))?\/?$/i.exec(proxyServer.trim());
  const port = m ? Number(m[2] ?? 80) : 0;
  if (!m || port < 1 || port > 65535)
    throw new Error(
      `--proxy-server ${proxyServer} cannot be used with an origin policy (allowed_origins or blocked_origins in --policy): Verity puts its own policy proxy in front of the browser it launches and chains only to a plain http proxy (http://host:port), not to a socks or https proxy or a per-scheme list; give an http --proxy-server, or drop the origin lists from the policy`,
    );
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}

/** Browser arguments that would take the proxy out of the browser's path (the last one given wins in Chromium). */
const PROXY_SWITCHES = /^--(proxy-server|no-proxy-server|proxy-pac-url|proxy-auto-detect|proxy-bypass-list)(=|$)/;

/** Refuses --browser-arg values that would undo the policy proxy (said at start, naming them). */
export function checkBrowserArgs(args: readonly string[]): void {
  const bad = args.filter((a) => PROXY_SWITCHES.test(a));
  if (bad.length)
    throw new Error(
      `--browser-arg ${bad.join(' ')} cannot be used with an origin policy (allowed_origins or blocked_origins in --policy): the browser's requests must go through Verity's policy proxy; give an upstream http proxy with --proxy-server instead`,
    );
}

export interface PolicyProxyOptions {
  policy: Policy;
  /** The operator's --proxy-server, chained to (see chainedUpstream). */
  upstream?: string;
}

export class PolicyProxy {
  private readonly tunnels = new Set<Socket>();
  private readonly agent = new Agent({
    keepAlive: true,
    maxSockets: MAX_ORIGIN_SOCKETS,
    maxTotalSockets: MAX_ORIGIN_SOCKETS,
    timeout: IDLE_TIMEOUT_MS,
  });
  private closed = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly policy: Policy,
    private readonly upstream: Upstream | null,
  ) {}

  /** Starts the proxy on 127.0.0.1 (an ephemeral port). Throws when the upstream cannot be chained to. */
  static async start(options: PolicyProxyOptions): Promise<PolicyProxy> {
    const upstream = options.upstream ? chainedUpstream(options.upstream) : null;
    const server = createServer({
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: 0, // an upload may take long; idle sockets are bounded below
      keepAliveTimeout: IDLE_TIMEOUT_MS,
    });
    server.maxConnections = MAX_CLIENT_CONNECTIONS;
    server.setTimeout(IDLE_TIMEOUT_MS); // with no 'timeout' listener, an idle socket is destroyed
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // It must never keep the process alive on its own: the browser's closing (or the process's) closes it.
    server.unref();
    const proxy = new PolicyProxy(server, (server.address() as { port: number }).port, options.policy, upstream);
    server.on('request', (req, res) => void proxy.forward(req, res));
    server.on('connect', (req, socket: Socket, head) => void proxy.tunnel(req, socket, head));
    // A request with Upgrade in absolute form (Chromium sends WebSockets as CONNECT): not served.
    server.on('upgrade', (_req, socket: Socket) => refuseSocket(socket, 400, 'upgrade requests are not proxied'));
    server.on('clientError', (e: Error & { code?: string }, socket: Socket) =>
      e.code === 'HPE_HEADER_OVERFLOW'
        ? refuseSocket(socket, 431, 'request headers too large')
        : refuseSocket(socket, 400, 'bad request'),
    );
    return proxy;
  }

  /** The proxy as Chromium names one (--proxy-server, Target.createBrowserContext's proxyServer). */
  get proxyServer(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The browser's flags that send every request through this proxy, loopback included. */
  get chromiumArgs(): string[] {
    return [
      `--proxy-server=${this.proxyServer}`,
      // Chromium otherwise never proxies loopback (an implicit bypass); <-loopback> takes that rule away.
      '--proxy-bypass-list=<-loopback>',
      // WebRTC may use UDP only through a proxy, i.e. not at all (measured on Chromium 156: no UDP candidate
      // is gathered, where without it each interface gives one); its TCP goes through CONNECT like the rest.
      '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    ];
  }

  /** Stops listening and ends every connection it holds. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const socket of this.tunnels) socket.destroy();
    this.tunnels.clear();
    this.agent.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** A plain http request (absolute form): forwarded when the policy allows its URL, else 403. */
  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return void refuse(res, 400, 'only absolute http:// URLs are proxied');
    }
    if (url.protocol !== 'http:') return void refuse(res, 400, 'only absolute http:// URLs are proxied');
    if (!this.policy.requestAllowed(url.href)) return void refuse(res, 403, `the origin policy refuses ${url.origin}`);
    const port = Number(url.port || 80);
    let address: string;
    if (this.upstream) address = this.upstream.host;
    else {
      const resolved = await this.resolve(url.hostname, port);
      if (resolved === null) return void refuse(res, 403, `the origin policy refuses ${url.origin}`);
      if (resolved instanceof Error) return void refuse(res, 502, `${url.hostname} does not resolve`);
      address = resolved;
    }
    const headers: Record<string, string | string[]> = {};
    const dropped = connectionTokens(req.headers.connection);
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name) && !dropped.has(name)) headers[name] = value;
    headers.host = url.host;
    const out = request(
      {
        host: address,
        port: this.upstream ? this.upstream.port : port,
        method: req.method,
        // To an upstream proxy the absolute form again; to the origin its path.
        path: this.upstream ? url.href : `${url.pathname}${url.search}`,
        headers,
        agent: this.agent,
        maxHeaderSize: MAX_HEADER_BYTES,
        timeout: CONNECT_TIMEOUT_MS,
      },
      (answer) => {
        out.setTimeout(IDLE_TIMEOUT_MS);
        const back: Record<string, string | string[]> = {};
        const droppedBack = connectionTokens(answer.headers.connection);
        for (const [name, value] of Object.entries(answer.headers))
          if (value !== undefined && !HOP_BY_HOP.has(name) && !droppedBack.has(name)) back[name] = value;
        if (answer.statusMessage) res.writeHead(answer.statusCode ?? 502, answer.statusMessage, back);
        else res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    out.on('timeout', () => out.destroy(new Error('timed out')));
    out.on('error', () => {
      if (!res.headersSent) refuse(res, 502, `${url.host} could not be reached`);
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  }

  /** CONNECT host:port (https, ws, wss): a tunnel when the policy allows an origin there, else 403. */
  private async tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const target = authorityOf(req.url ?? '');
    if (!target || !this.policy.hostPortAllowed(target.host, target.port))
      return refuseSocket(client, 403, `the origin policy refuses ${req.url ?? ''}`.slice(0, 300));
    let address: string;
    if (this.upstream) address = this.upstream.host;
    else {
      const resolved = await this.resolve(target.host, target.port);
      if (resolved === null) return refuseSocket(client, 403, `the origin policy refuses ${req.url}`);
      if (resolved instanceof Error) return refuseSocket(client, 502, `${target.host} does not resolve`);
      address = resolved;
    }
    if (this.closed || client.destroyed) return void client.destroy();
    const remote = connect({
      host: address.replace(/^\[|\]$/g, ''),
      port: this.upstream ? this.upstream.port : target.port,
    });
    this.tunnels.add(client);
    const end = () => {
      this.tunnels.delete(client);
      client.destroy();
      remote.destroy();
    };
    client.on('close', end);
    remote.on('close', end);
    remote.on('error', () => {
      if (!client.destroyed) refuseSocket(client, 502, `${target.host}:${target.port} could not be reached`);
      end();
    });
    remote.setTimeout(CONNECT_TIMEOUT_MS, end);
    remote.once('connect', async () => {
      if (this.upstream) {
        const authority = `${target.host}:${target.port}`;
        remote.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
        const rest = await upstreamAnswer(remote);
        if (rest === null) {
          if (!client.destroyed) refuseSocket(client, 502, `the upstream proxy refused ${authority}`);
          return end();
        }
        if (rest.length) client.write(rest);
      }
      remote.setTimeout(TUNNEL_IDLE_TIMEOUT_MS, end);
      client.setTimeout(TUNNEL_IDLE_TIMEOUT_MS, end);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) remote.write(head);
      client.pipe(remote);
      remote.pipe(client);
    });
  }

  /**
   * The address to connect to for a name the policy allowed: null when it resolves to the gateway's own
   * origin (a name like `gw.localtest.me` that points at 127.0.0.1), an Error when it does not resolve.
   */
  private async resolve(host: string, port: number): Promise<string | null | Error> {
    const bare = host.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIP(bare)) addresses = [bare];
    else {
      try {
        addresses = (await lookup(bare, { all: true })).map((a) => a.address);
      } catch (e) {
        return e as Error;
      }
    }
    if (!addresses.length) return new Error(`${host} has no address`);
    const asUrl = (a: string) => `http://${a.includes(':') ? `[${a}]` : a}:${port}/`;
    if (addresses.some((a) => this.policy.isGateway(asUrl(a)))) return null;
    return addresses[0];
  }
}

/** host:port of a CONNECT request line, as the URL parser writes it (lower case, IPv6 bracketed), or null. */
function authorityOf(authority: string): { host: string; port: number } | null {
  if (!/^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+):\d{1,5}$/i.test(authority)) return null;
  let url: URL;
  try {
    url = new URL(`http://${authority}/`);
  } catch {
    return null;
  }
  const port = Number(authority.slice(authority.lastIndexOf(':') + 1));
  return port >= 1 && port <= 65535 ? { host: url.hostname, port } : null;
}

/** The upstream proxy's answer to CONNECT: the bytes after its head when it said 2xx, else null (bounded). */
function upstreamAnswer(socket: Socket): Promise<Buffer | null> {
  return new Promise((resolve) => {
    let seen = Buffer.alloc(0);
    const done = (value: Buffer | null) => {
      socket.off('data', onData);
      socket.off('close', onClose);
      resolve(value);
    };
    const onClose = () => done(null);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const end = seen.indexOf('\r\n\r\n');
      if (end < 0) {
        if (seen.length > MAX_HEADER_BYTES) done(null);
        return;
      }
      socket.pause();
      const ok = /^HTTP\/1\.[01] 2\d\d /.test(seen.subarray(0, end).toString('latin1'));
      done(ok ? seen.subarray(end + 4) : null);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

/** The header names a Connection header lists (they are hop-by-hop too). */
function connectionTokens(value: string | undefined): Set<string> {
  return new Set(
    (value ?? '')
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
}

function refuse(res: ServerResponse, status: number, why: string): void {
  if (res.headersSent) return void res.destroy();
  const body = `Verity: ${why}\n`;
  res
    .writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    })
    .end(body);
}

function refuseSocket(socket: Socket, status: number, why: string): void {
  if (socket.destroyed) return;
  const body = `Verity: ${why}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  // A client that never closes its side is not waited for.
  socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy());
}
