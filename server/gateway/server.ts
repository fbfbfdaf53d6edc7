// `verity start`: one loopback port serving the Control UI (/), MCP over HTTP (/mcp) and the gateway
// WebSocket (/gateway). Origins are checked before the upgrade; the first frame must be `connect` with
// the token; every method's scope is checked; events go only to connections whose scopes allow them,
// and a ui.command only ever to the one Control UI connection it targets.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type RawData } from 'ws';
import type { Verity } from '../core.js';
import { McpHttpEndpoint } from '../mcp/http.js';
import { tokenMatches } from '../token.js';
import { sessionSummary } from '../tools/sessions.js';
import type { Tab } from '../cdp/tab.js';
import { GatewayConnection } from './connection.js';
import { Links } from './links.js';
import { METHODS, type UiCommand } from './methods.js';
import { connectParams, EVENT_SCOPES, GatewayError, MAX_FRAME_BYTES, MAX_PRECONNECT_BYTES, missingScope, requestFrame } from './protocol.js';
import type { Terminal } from './terminal.js';
import { allowOrigin, loadAllowedOrigins } from './origins.js';
import { Relay } from './relay.js';
import { LIMITS } from '../limits.js';

const UI_DIR = fileURLToPath(new URL('../../../control-ui/dist/', import.meta.url));
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json' };
const CONNECT_TIMEOUT_MS = 10_000;

export type SessionRow = ReturnType<typeof sessionSummary> & { sessionKey: string; transport: string; client: string; tab_id: string | null };

export interface GatewayOptions { host: string; port: number; token: string; log: (line: string) => void }

export class Gateway {
  readonly http: Server;
  readonly links: Links;
  readonly connections = new Map<string, GatewayConnection>();
  readonly terminals = new Map<string, { term: Terminal; owner: string }>();
  readonly screencasts = new Map<string, () => void>();
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  private readonly mcp: McpHttpEndpoint;
  /** The session rows as last sent in sessions.changed (key -> row without idle_seconds), for the next delta. */
  private sentSessions = new Map<string, string>();
  private sessionsTimer: NodeJS.Timeout | null = null;
  /** Tabs shared from the operator's Chrome by the extension: a second source of tabs for the CDP route. */
  readonly relay: Relay;
  port = 0;

  constructor(readonly core: Verity, private readonly options: GatewayOptions) {
    this.links = new Links(() => `http://${this.options.host}:${this.port}/mcp`);
    this.mcp = new McpHttpEndpoint(core, (token) => this.links.resolve(token), options.log);
    this.relay = new Relay(options.log);
    core.browser.addPeer(this.relay.host);
    this.http = createServer((req, res) => this.onHttp(req, res));
    this.http.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket as import('node:net').Socket, head));
    core.uiRouter = (connId, command) => this.dispatchUiCommand(connId, command as UiCommand);
    core.activity.on('action', (entry) => this.broadcast('action', entry));
    core.activity.on('thumbnail', (entry) => this.broadcast('action', entry));
    core.activity.on('sessions', () => this.sessionsChanged());
    core.approvals.on('requested', (request) => this.broadcast('approval.requested', request));
    core.approvals.on('resolved', (outcome) => this.broadcast('approval.resolved', outcome));
  }

  get token(): string { return this.options.token; }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => { this.http.once('error', reject); this.http.listen(this.options.port, this.options.host, resolve); });
    this.port = (this.http.address() as { port: number }).port;
    return this.port;
  }

  private ownOrigin(req: IncomingMessage): string { return `http://${req.headers.host ?? `${this.options.host}:${this.port}`}`; }

  /** Browsers send Origin; non-browser clients (CLI, tests, agents) do not and pass on the token alone. */
  private originAllowed(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    if (!origin) return true;
    if (origin === this.ownOrigin(req)) return true;
    return origin.startsWith('chrome-extension://') && loadAllowedOrigins().includes(origin);
  }

  private onHttp(req: IncomingMessage, res: ServerResponse): void {
    if (this.stopping) {
      res.writeHead(503, { 'content-type': 'text/plain', connection: 'close' }).end('the gateway is shutting down; connect again once `verity start` is back');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://gateway');
    // Pairing comes from an extension origin that is not on the allow-list yet: the token decides.
    if (url.pathname === '/pair') { void this.pair(req, res); return; }
    if (!this.originAllowed(req)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`origin ${req.headers.origin} is not allowed; open the Control UI from ${this.ownOrigin(req)}/ or pair the extension with the link \`verity start\` printed`);
      return;
    }
    if (url.pathname === '/mcp') {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if (!tokenMatches(bearer, this.options.token)) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'missing or wrong token: send "Authorization: Bearer <token>"; the token is in the URL `verity start` printed' }));
        return;
      }
      void this.mcp.handle(req, res).catch((e) => { if (!res.headersSent) res.writeHead(500).end(String(e)); });
      return;
    }
    this.serveStatic(url.pathname, res);
  }

  /**
   * POST /pair {token} from the extension's pairing page: with the gateway token, the request's
   * chrome-extension:// origin goes on the allow-list (so its pages and service worker may connect).
   */
  private async pair(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin ?? '';
    const answer = (status: number, body: Record<string, unknown>) => {
      const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-store' };
      if (/^chrome-extension:\/\/[a-p]{32}$/.test(origin)) { headers['access-control-allow-origin'] = origin; headers['access-control-allow-headers'] = 'content-type'; headers.vary = 'origin'; }
      res.writeHead(status, headers).end(JSON.stringify(body));
    };
    if (req.method === 'OPTIONS') return answer(204, {});
    if (req.method !== 'POST') return answer(405, { error: 'pairing is POST /pair {"token": "<gateway token>"} from the Verity extension\'s pairing page' });
    if (!/^chrome-extension:\/\/[a-p]{32}$/.test(origin)) return answer(400, { error: 'pairing is for the Verity Chrome extension: open the pairing link `verity start` printed in Chrome' });
    let body = '';
    for await (const chunk of req) { body += chunk; if (body.length > 4096) return answer(413, { error: 'pairing request too large' }); }
    let token = '';
    try { token = String((JSON.parse(body) as { token?: unknown }).token ?? ''); } catch { /* answered below */ }
    if (!token || !tokenMatches(token, this.options.token)) {
      return answer(401, { error: 'wrong or stale pairing token: copy a fresh pairing link from `verity start` (the line "Pair the Chrome extension: chrome-extension://…") and open it again' });
    }
    allowOrigin(origin);
    this.options.log(`paired the extension ${origin}`);
    return answer(200, { ok: true, origin, gateway: `ws://${req.headers.host ?? `${this.options.host}:${this.port}`}/gateway` });
  }

  private serveStatic(pathname: string, res: ServerResponse): void {
    const safe = normalize(pathname).replace(/^(\.\.[/\\])+/, '');
    let file = join(UI_DIR, safe === '/' ? 'index.html' : safe);
    if (!file.startsWith(UI_DIR) || !existsSync(file) || statSync(file).isDirectory()) file = join(UI_DIR, 'index.html');
    if (!existsSync(file)) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('the Control UI is not built; run `npm start` (or `npx vite build control-ui`)');
      return;
    }
    const immutable = file.includes(`${join(UI_DIR, 'assets')}`);
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': immutable ? 'max-age=31536000, immutable' : 'no-cache' });
    res.end(readFileSync(file));
  }

  private onUpgrade(req: IncomingMessage, socket: import('node:net').Socket, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const refuse = (status: number, message: string) => {
      socket.end(`HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Not Found'}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${message}`);
    };
    if (url.pathname !== '/gateway') return refuse(404, 'the gateway WebSocket is at /gateway');
    if (!this.originAllowed(req)) return refuse(403, `origin ${req.headers.origin} is not allowed; open the Control UI from ${this.ownOrigin(req)}/, or pair the extension so its origin is on the allow-list`);
    if (this.connections.size >= LIMITS.gatewayConnections) {
      socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nTOO_MANY: the gateway already has ${LIMITS.gatewayConnections} connections (VERITY_MAX_GATEWAY_CONNECTIONS); close a Control UI tab and retry`);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new GatewayConnection(ws, req.headers.origin ?? null, this.options.log);
      this.connections.set(conn.connId, conn);
      const timer = setTimeout(() => { if (!conn.hello) ws.close(4008, 'connect timeout: send a connect request first'); }, CONNECT_TIMEOUT_MS);
      ws.on('message', (data, isBinary) => void this.onFrame(conn, data, isBinary));
      // Oversized or malformed frames surface here (ws closes with 1009/1002); they must not crash the gateway.
      ws.on('error', (e) => this.options.log(`gateway connection ${conn.connId}: ${e.message}`));
      ws.on('close', () => {
        clearTimeout(timer);
        this.connections.delete(conn.connId);
        conn.dispose();
        this.links.forget(conn.connId);
        this.updateApprovers();
      });
    });
  }

  private async onFrame(conn: GatewayConnection, data: RawData, isBinary: boolean): Promise<void> {
    const bytes = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
    if (isBinary) return conn.fail(null, new GatewayError('INVALID_REQUEST', 'frames must be JSON text'));
    if (!conn.hello && bytes > MAX_PRECONNECT_BYTES) { conn.socket.close(1009, 'connect frame too large'); return; }
    let frame: ReturnType<typeof requestFrame.parse>;
    try {
      const parsed = requestFrame.safeParse(JSON.parse(data.toString()));
      if (!parsed.success) throw new GatewayError('INVALID_REQUEST', `not a request frame: ${parsed.error.issues[0].path.join('.') || 'frame'}: ${parsed.error.issues[0].message}`);
      frame = parsed.data;
    } catch (e) {
      return conn.fail(null, e instanceof GatewayError ? e : new GatewayError('INVALID_REQUEST', 'frames must be JSON: {type:"req", id, method, params}'));
    }
    try {
      if (!conn.hello) {
        if (frame.method !== 'connect') throw new GatewayError('INVALID_REQUEST', 'the first request must be connect');
        return conn.respond(frame.id, this.connect(conn, frame.params));
      }
      const spec = METHODS[frame.method];
      if (!spec) throw new GatewayError('INVALID_REQUEST', `unknown method ${frame.method}; hello-ok lists the methods`);
      if (!conn.can(spec.scope)) throw missingScope(frame.method, spec.scope);
      const params = spec.params.safeParse(frame.params);
      if (!params.success) throw new GatewayError('INVALID_REQUEST', `${frame.method}: ${params.error.issues[0].path.join('.') || 'params'}: ${params.error.issues[0].message}`);
      conn.respond(frame.id, await spec.handler(params.data, conn, this));
    } catch (e) {
      conn.fail(frame.id, e instanceof GatewayError ? e : new GatewayError('UNAVAILABLE', (e as Error).message));
    }
  }

  private connect(conn: GatewayConnection, raw: unknown) {
    const parsed = connectParams.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new GatewayError('INVALID_REQUEST', `connect: ${issue.path.join('.') || 'params'}: ${issue.message}`);
    }
    if (!tokenMatches(parsed.data.auth.token, this.options.token)) {
      setTimeout(() => conn.socket.close(4001, 'wrong token'), 50);
      throw new GatewayError('UNAUTHORIZED', 'wrong gateway token: open the Control UI with the URL `verity start` printed (it carries ?token=), or read the token from ~/.config/verity/token', { recommendedNextStep: 'update_auth_credentials' });
    }
    conn.hello = parsed.data;
    this.updateApprovers();
    return {
      type: 'hello-ok', connId: conn.connId, scopes: conn.scopes,
      methods: Object.entries(METHODS).filter(([, m]) => conn.can(m.scope)).map(([name]) => name),
      events: this.eventsFor(conn),
      policy: { maxPayload: MAX_FRAME_BYTES },
    };
  }

  private eventsFor(conn: GatewayConnection): string[] {
    return Object.entries(EVENT_SCOPES).filter(([, scope]) => scope === null || conn.can(scope)).map(([event]) => event);
  }

  private updateApprovers(): void {
    this.core.approvals.approvers = [...this.connections.values()].filter((c) => c.hello && c.can('operator.approvals')).length;
  }

  /** Sends an event to every connection whose scopes allow it (the connection checks). */
  broadcast(event: string, payload: unknown): void {
    for (const conn of this.connections.values()) conn.event(event, payload);
  }

  /**
   * Session changes are gathered for a moment, then sent as one delta: rows added, rows updated, keys
   * removed. Sending the whole list on every change cost O(n) per change and O(n^2) bytes per burst
   * (600 labels pushed 110 MB to one Control UI); `sessions.list` still returns the full list.
   */
  private sessionsChanged(): void {
    if (this.sessionsTimer) return;
    this.sessionsTimer = setTimeout(() => {
      this.sessionsTimer = null;
      const delta = this.sessionsDelta();
      if (delta) this.broadcast('sessions.changed', delta);
    }, LIMITS.sessionsDebounceMs);
  }

  private sessionsDelta(): { added: SessionRow[]; updated: SessionRow[]; removed: string[] } | null {
    const now = new Map<string, string>();
    const added: SessionRow[] = [], updated: SessionRow[] = [];
    for (const row of this.sessionList()) {
      // idle_seconds changes every second by itself: it is not a change worth a frame.
      const { idle_seconds: _idle, ...compared } = row;
      const text = JSON.stringify(compared);
      now.set(row.sessionKey, text);
      const before = this.sentSessions.get(row.sessionKey);
      if (before === undefined) added.push(row); else if (before !== text) updated.push(row);
    }
    const removed = [...this.sentSessions.keys()].filter((key) => !now.has(key));
    this.sentSessions = now;
    return added.length || updated.length || removed.length ? { added, updated, removed } : null;
  }

  /** A ui.command goes to exactly one Control UI connection, or nowhere. Never a broadcast. */
  dispatchUiCommand(connId: string, command: UiCommand): boolean {
    const conn = this.connections.get(connId);
    if (!conn || !conn.hello || !conn.caps.includes('ui-commands') || !conn.open) return false;
    return conn.event('ui.command', { command });
  }

  sessionList(): SessionRow[] {
    return this.core.sessions.all().filter((s) => s.state !== 'ended').map((s) => ({
      sessionKey: this.core.sessions.keyOf(s), ...sessionSummary(this.core, s),
      transport: this.core.connections.get(s.connectionId)?.transport ?? 'unknown',
      client: this.core.connections.get(s.connectionId)?.client ?? '', tab_id: s.currentTabId ?? null,
    }));
  }

  async tabFor(tabId: string | undefined, sessionKey: string | undefined): Promise<Tab> {
    if (tabId) return this.core.browser.findTab(tabId);
    const session = this.core.sessions.all().find((s) => this.core.sessions.keyOf(s) === sessionKey);
    if (session?.currentTabId) return this.core.browser.findTab(session.currentTabId);
    const tabs = await this.core.browser.tabs_();
    if (!tabs[0]) throw new GatewayError('NOT_FOUND', 'no tab to show yet: an agent opens one with its first browser action');
    return tabs[0];
  }

  ownTerminal(id: string, conn: GatewayConnection): Terminal {
    const entry = this.terminals.get(id);
    if (!entry || entry.owner !== conn.connId) throw new GatewayError('NOT_FOUND', `no terminal ${id} on this connection`);
    return entry.term;
  }

  stopScreencast(conn: GatewayConnection): void {
    const stop = this.screencasts.get(conn.connId);
    if (stop) { this.screencasts.delete(conn.connId); stop(); }
  }

  /** The gateway is shutting down: requests that still arrive on kept-alive sockets are answered 503. */
  private stopping = false;

  /**
   * Stops accepting: the listening socket closes at once (a restarted gateway can bind the port) and idle
   * kept-alive sockets are closed, so no client sends its next request to this process.
   */
  stopAccepting(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.http.close();
    this.http.closeIdleConnections();
  }

  async close(): Promise<void> {
    this.stopAccepting();
    if (this.sessionsTimer) { clearTimeout(this.sessionsTimer); this.sessionsTimer = null; }
    for (const conn of this.connections.values()) { conn.dispose(); conn.socket.close(1012, 'gateway shutting down'); }
    await this.mcp.close();
    // Whatever is still open (a long-lived MCP stream, a socket mid-request) is cut, and WebSockets whose
    // close handshake has not finished (a client that does not read) are ended, so the process can exit.
    this.http.closeAllConnections();
    for (const conn of this.connections.values()) conn.socket.terminate();
  }
}
