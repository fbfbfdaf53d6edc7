// `verity start`: one loopback port serving the Control UI (/), MCP over HTTP (/mcp) and the gateway
// WebSocket (/gateway). Every request and upgrade must name this gateway in its Host (DNS rebinding) and
// come from its own origin, a paired extension, or no browser at all; the first frame must be `connect`
// with a credential, and the scopes come from that credential, not from the request; every method's scope
// is checked; events go only to connections whose scopes allow them, and a ui.command only ever to the
// one Control UI connection it targets.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocketServer, type RawData } from 'ws';
import type { Verity } from '../core.js';
import { McpHttpEndpoint } from '../mcp/http.js';
import { tokenMatches } from '../token.js';
import { EXTENSION_ID } from './extension-id.js';
import { sessionSummary, type SessionRow } from '../sessions/summary.js';
import { newSession } from '../sessions/manager.js';
import type { Tab } from '../cdp/tab.js';
import { GatewayConnection } from './connection.js';
import { Links } from './links.js';
import { ResumeTickets } from './resume.js';
import { callMethod, isMethod, METHOD_NAMES, methodScope, type MethodContext, type UiCommand } from './methods.js';
import {
  CONNECT_CHALLENGE,
  connectParams,
  EVENT_SCOPES,
  GatewayError,
  MAX_FRAME_BYTES,
  MAX_PRECONNECT_BYTES,
  missingScope,
  PROOF_PREFIX,
  requestFrame,
  requestId,
  ROLE_SCOPES,
  type EventName,
  type EventPayload,
  type HelloOk,
  type Role,
} from './protocol.js';
import { Terminals } from './terminal.js';
import type { Screencast } from './screencast.js';
import { Pairings } from './origins.js';
import { Relay } from './relay.js';
import { LIMITS } from '../limits.js';
import { serveAuditExport } from './brake-methods.js';
import { checkLimits } from '../arg-limits.js';
import { isDefect } from '../errors.js';

const UI_DIR = fileURLToPath(new URL('../../../control-ui/dist/', import.meta.url));
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};
const CONNECT_TIMEOUT_MS = 10_000;

export type { SessionRow };

export interface GatewayOptions {
  host: string;
  port: number;
  /** The operator credential (Control UI, gateway, pairing) and the agent credential (/mcp only). */
  operatorToken: string;
  agentToken: string;
  /** Host names (besides loopback) this gateway answers to when bound elsewhere: --allowed-hosts. */
  allowedHosts?: string[];
  log: (line: string) => void;
}

/** Response headers of every HTTP answer; the Control UI's pages add the CSP below. */
const BASE_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };
/**
 * The Control UI loads only its own scripts, styles and sockets; images are its own, data: (thumbnails,
 * screencast frames, the icon) and blob:; inline styles are needed by Lit/xterm's runtime style elements.
 * It is never framed (clickjacking the Approve button).
 */
export const CONTROL_UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * The host to put in URLs for a bound address: a wildcard bind is reached (and accepted, see fixNames) as
 * 127.0.0.1, never as 0.0.0.0; IPv6 literals get their brackets.
 */
export function urlHost(bound: string): string {
  if (bound === '0.0.0.0' || bound === '::' || bound === '[::]') return '127.0.0.1';
  return bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound;
}

/** The request's target as a URL, or null when it is not one (`//[` makes the URL parser throw). */
function requestUrl(req: IncomingMessage): URL | null {
  try {
    return new URL(req.url ?? '/', 'http://gateway');
  } catch {
    return null;
  }
}

export class Gateway {
  readonly http: Server;
  private readonly links: Links;
  /** Single-use tickets a reloaded Control UI connects with (the credential is never in web storage). */
  private readonly resume = new ResumeTickets();
  /** The nonce each challenged connection (`/gateway?challenge=1`) proves the operator credential with. */
  private readonly challenges = new WeakMap<GatewayConnection, string>();
  private readonly connections = new Map<string, GatewayConnection>();
  private readonly terminals = new Terminals(
    (connId, event, payload) => this.connections.get(connId)?.event(event, payload),
    () => LIMITS.terminalDetachMs,
  );
  private readonly screencasts = new Map<string, Screencast>();
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  private readonly mcp: McpHttpEndpoint;
  /** The session rows as last sent in sessions.changed (key -> row without idle_seconds), for the next delta. */
  private sentSessions = new Map<string, string>();
  private sessionsTimer: NodeJS.Timeout | null = null;
  /** Tabs shared from the operator's Chrome by the extension: a second source of tabs for the CDP route. */
  private readonly relay: Relay;
  private readonly pairings: Pairings;
  /** What the method table's handlers see of the gateway (methods.ts). */
  private readonly methodContext: MethodContext;
  /** Registrations with the core, taken back on close. */
  private readonly unregister: Array<() => void> = [];
  port = 0;
  /** Host header values (lowercase) and origins this gateway answers to; fixed once it listens. */
  private hosts = new Set<string>();
  private origins = new Set<string>();

  constructor(
    readonly core: Verity,
    private readonly options: GatewayOptions,
  ) {
    this.links = new Links(() => `http://${urlHost(this.options.host)}:${this.port}/mcp`);
    this.pairings = new Pairings({
      inUse: () => this.connectedPairings(),
      onExpired: (p) =>
        options.log(
          `removed the extension pairing ${p.id}: unused since ${p.lastUsedAt} (--pairing-max-idle-days); pair the extension again to use it`,
        ),
    });
    this.mcp = new McpHttpEndpoint(core, (token) => this.links.resolve(token), options.log);
    this.relay = new Relay(options.log);
    core.browser.addPeer(this.relay.host);
    // Each request, upgrade and frame is its own boundary: a defect in one is logged and answered (500,
    // a destroyed socket, an error frame), never an uncaught exception that takes every session down.
    this.http = createServer((req, res) => {
      try {
        this.onHttp(req, res);
      } catch (e) {
        this.httpDefect(res, 'request', e);
      }
    });
    this.http.on('upgrade', (req, socket, head) => {
      try {
        this.onUpgrade(req, socket as import('node:net').Socket, head);
      } catch (e) {
        this.defect('upgrade', e);
        socket.destroy();
      }
    });
    this.unregister.push(
      core.uiCommands.register((connId, command) => this.dispatchUiCommand(connId, command as UiCommand)),
      core.approvals.registerApprovers(() => this.approverCount()),
    );
    // An action may change a session's row (recording started, tab switched): the row follows at once.
    core.activity.on('action', (entry) => {
      this.broadcast('action', entry);
      this.sessionsChanged();
    });
    core.activity.on('thumbnail', (entry) => this.broadcast('action', entry));
    core.activity.on('sessions', () => this.sessionsChanged());
    core.approvals.on('requested', (request) => this.broadcast('approval.requested', request));
    core.approvals.on('resolved', (outcome) => this.broadcast('approval.resolved', outcome));
    core.brake.on('changed', () => this.sessionsChanged());
    // The live log needs the line, not the whole result (audit.query has it): events stay small.
    core.audit.on('entry', (entry) => this.broadcast('audit.entry', { ...entry, result: undefined }));
    this.methodContext = {
      activity: core.activity,
      approvals: core.approvals,
      browser: core.browser,
      sessions: core.sessions,
      brake: core.brake,
      audit: core.audit,
      agentConnected: (connectionId) => core.connections.has(connectionId),
      assignTab: (tabId, connectionId) => core.router.assignTab(tabId, connectionId),
      operatorInput: (tabId, work) => core.router.operatorInput(tabId, work),
      sessionList: () => this.sessionList(),
      dispatchUiCommand: (connId, command) => this.dispatchUiCommand(connId, command),
      links: this.links,
      agentToken: options.agentToken,
      terminals: this.terminals,
      pairings: this.pairings,
      connectedPairings: () => this.connectedPairings(),
      revokePairing: (id) => this.revokePairing(id),
      tabFor: (tabId, sessionKey) => this.tabFor(tabId, sessionKey),
      tabOwner: (tabId) => this.tabOwner(tabId),
      screencasts: this.screencasts,
      stopScreencast: (conn) => this.stopScreencast(conn),
      relay: this.relay,
      policy: core.policy,
    };
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.options.port, this.options.host, resolve);
    });
    this.port = (this.http.address() as { port: number }).port;
    this.fixNames();
    return this.port;
  }

  /**
   * Which Host values and origins are this gateway's: the loopback names on the bound port, the bound
   * address itself when it is a specific one, and the names configured with --allowed-hosts (with or
   * without the port, since a reverse proxy may drop it; http and https origins). Built from the
   * configuration only: a Host header never decides what counts as our own origin.
   */
  private fixNames(): void {
    const port = this.port;
    const bound = urlHost(this.options.host).toLowerCase();
    const names = [...new Set([...LOOPBACK_NAMES, bound])];
    for (const name of names) {
      this.hosts.add(`${name}:${port}`);
      this.origins.add(`http://${name}:${port}`);
    }
    for (const raw of this.options.allowedHosts ?? []) {
      const name = raw.trim().toLowerCase();
      if (!name) continue;
      for (const h of [name, `${name}:${port}`]) {
        this.hosts.add(h);
        this.origins.add(`http://${h}`);
        this.origins.add(`https://${h}`);
      }
    }
  }

  /** The first own origin (loopback): what messages tell a person to open. */
  private get home(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private hostAllowed(req: IncomingMessage): boolean {
    return typeof req.headers.host === 'string' && this.hosts.has(req.headers.host.toLowerCase());
  }

  /**
   * Browsers send Origin; non-browser clients (CLI, tests, agents) do not and pass on the credential
   * alone. A browser origin must be one of ours, or the fixed extension's while it is paired.
   */
  private originAllowed(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    if (this.origins.has(origin.toLowerCase())) return true;
    return origin === `chrome-extension://${EXTENSION_ID}` && this.pairings.origins().includes(origin);
  }

  private hostRefusal(req: IncomingMessage): string {
    return `Host ${JSON.stringify(req.headers.host ?? '')} is not this gateway's (a DNS-rebinding guard): open ${this.home}/, or start it with --allowed-hosts NAME to answer to another name`;
  }

  /** The pairing ids of the tab relays connected now. */
  private connectedPairings(): Set<string> {
    return new Set([...this.connections.values()].map((c) => c.pairingId).filter((id): id is string => !!id));
  }

  /** Which role a credential holds: the operator's, a paired extension's relay secret, the agent's, or none. */
  private roleOf(token: string): { role: Role | 'agent'; pairingId?: string } | null {
    if (tokenMatches(token, this.options.operatorToken)) return { role: 'operator' };
    if (tokenMatches(token, this.options.agentToken)) return { role: 'agent' };
    const pairing = this.pairings.bySecret(token);
    return pairing ? { role: 'relay', pairingId: pairing.id } : null;
  }

  private onHttp(req: IncomingMessage, res: ServerResponse): void {
    if (this.stopping) {
      res
        .writeHead(503, { 'content-type': 'text/plain', connection: 'close' })
        .end('the gateway is shutting down; connect again once `verity start` is back');
      return;
    }
    const url = requestUrl(req);
    if (!url) {
      res
        .writeHead(400, { 'content-type': 'text/plain', ...BASE_HEADERS })
        .end(`the request target ${JSON.stringify(String(req.url).slice(0, 100))} is not a path`);
      return;
    }
    if (!this.hostAllowed(req)) {
      res.writeHead(403, { 'content-type': 'text/plain', ...BASE_HEADERS }).end(this.hostRefusal(req));
      return;
    }
    // Pairing comes from the extension's origin before it is on the allow-list: the credential decides.
    if (url.pathname === '/pair') {
      void this.pair(req, res).catch((e) => this.httpDefect(res, '/pair', e));
      return;
    }
    if (!this.originAllowed(req)) {
      res
        .writeHead(403, { 'content-type': 'text/plain', ...BASE_HEADERS })
        .end(
          `origin ${req.headers.origin} is not allowed; open the Control UI from ${this.home}/ or pair the extension with the link \`verity start\` printed`,
        );
      return;
    }
    if (url.pathname === '/mcp') {
      // /mcp takes the agent credential only. The operator's is refused here on purpose: a client that
      // holds it could also open /gateway and approve its own calls, so it must not end up in agent configs.
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if (!tokenMatches(bearer, this.options.agentToken)) {
        const operator = bearer !== '' && tokenMatches(bearer, this.options.operatorToken);
        res.writeHead(401, { 'content-type': 'application/json', ...BASE_HEADERS }).end(
          JSON.stringify({
            error: operator
              ? 'that is the operator credential (for the Control UI); MCP clients use the agent credential: the "Authorization: Bearer …" on the /mcp line `verity start` printed, or the agent-token file in the config dir'
              : 'missing or wrong credential: send "Authorization: Bearer <agent credential>"; it is on the /mcp line `verity start` printed (and in the agent-token file in the config dir)',
          }),
        );
        return;
      }
      void this.mcp.handle(req, res).catch((e) => this.httpDefect(res, '/mcp', e));
      return;
    }
    if (url.pathname === '/audit/export') return serveAuditExport(this.core, url, res, BASE_HEADERS);
    this.serveStatic(url.pathname, res);
  }

  /**
   * POST /pair {token, replaces?} from the extension's pairing page: with the operator credential, and
   * only from the fixed extension id's origin, a pairing is made: the origin goes on the allow-list and
   * the answer carries the pairing's relay secret (the extension presents it to connect as the relay).
   * `replaces` names the extension's previous pairing, so pairing again does not pile pairings up.
   */
  private async pair(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin ?? '';
    const ours = `chrome-extension://${EXTENSION_ID}`;
    const answer = (status: number, body: Record<string, unknown>) => {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        ...BASE_HEADERS,
      };
      if (origin === ours) {
        headers['access-control-allow-origin'] = origin;
        headers['access-control-allow-headers'] = 'content-type';
        headers.vary = 'origin';
      }
      res.writeHead(status, headers).end(JSON.stringify(body));
    };
    if (req.method === 'OPTIONS') return answer(204, {});
    if (req.method !== 'POST')
      return answer(405, {
        error: 'pairing is POST /pair {"token": "<operator credential>"} from the Verity extension\'s pairing page',
      });
    if (origin !== ours)
      return answer(403, {
        error: `pairing is only for the Verity Chrome extension (${ours}); open the pairing link \`verity start\` printed in Chrome`,
      });
    let body = '';
    for await (const chunk of req) {
      body += chunk;
      if (body.length > 4096) return answer(413, { error: 'pairing request too large' });
    }
    let token = '',
      replaces: string | undefined;
    try {
      const parsed = JSON.parse(body) as { token?: unknown; replaces?: unknown };
      token = String(parsed.token ?? '');
      if (typeof parsed.replaces === 'string' && parsed.replaces.length <= 64) replaces = parsed.replaces;
    } catch {
      /* answered below */
    }
    if (!token || !tokenMatches(token, this.options.operatorToken)) {
      return answer(401, {
        error:
          'wrong or stale pairing token: copy a fresh pairing link from `verity start` (the line "Pair the Chrome extension: chrome-extension://…") and open it again',
      });
    }
    this.pairings.load();
    if (replaces) this.revokePairing(replaces);
    const made = this.pairings.add(origin);
    if (!made)
      return answer(409, {
        error: 'too many pairings: revoke old ones in the Control UI (Paired extensions), then pair again',
        code: 'too_many_pairings',
      });
    this.options.log(`paired the extension ${origin} (pairing ${made.pairing.id})`);
    return answer(200, {
      ok: true,
      origin,
      gateway: `ws://127.0.0.1:${this.port}/gateway`,
      pairing_id: made.pairing.id,
      relay_secret: made.secret,
    });
  }

  /**
   * Revokes a pairing: its relay secret stops working at once (its connections are closed), and when it
   * was the last pairing the extension's origin leaves the allow-list (its pages are disconnected too).
   */
  private revokePairing(id: string): boolean {
    const removed = this.pairings.remove(id);
    if (!removed) return false;
    const originGone = !this.pairings.origins().includes(removed.origin);
    for (const conn of this.connections.values()) {
      if (conn.pairingId === id || (originGone && conn.origin === removed.origin))
        conn.socket.close(4003, 'pairing revoked');
    }
    this.options.log(`revoked the extension pairing ${id}`);
    return true;
  }

  private serveStatic(pathname: string, res: ServerResponse): void {
    const safe = normalize(pathname).replace(/^(\.\.[/\\])+/, '');
    let file = join(UI_DIR, safe === '/' ? 'index.html' : safe);
    if (!file.startsWith(UI_DIR) || !existsSync(file) || statSync(file).isDirectory())
      file = join(UI_DIR, 'index.html');
    if (!existsSync(file)) {
      res
        .writeHead(503, { 'content-type': 'text/plain', ...BASE_HEADERS })
        .end('the Control UI is not built; run `npm start` (or `npx vite build control-ui`)');
      return;
    }
    const immutable = file.includes(`${join(UI_DIR, 'assets')}`);
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cache-control': immutable ? 'max-age=31536000, immutable' : 'no-cache',
      'content-security-policy': CONTROL_UI_CSP,
      'x-frame-options': 'DENY',
      ...BASE_HEADERS,
    });
    res.end(readFileSync(file));
  }

  private onUpgrade(req: IncomingMessage, socket: import('node:net').Socket, head: Buffer): void {
    const url = requestUrl(req);
    const refuse = (status: number, message: string) => {
      const reason = { 400: 'Bad Request', 403: 'Forbidden' }[status] ?? 'Not Found';
      socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${message}`);
    };
    if (!url) return refuse(400, 'the request target is not a path');
    if (!this.hostAllowed(req)) return refuse(403, this.hostRefusal(req));
    if (url.pathname !== '/gateway') return refuse(404, 'the gateway WebSocket is at /gateway');
    if (!this.originAllowed(req))
      return refuse(
        403,
        `origin ${req.headers.origin} is not allowed; open the Control UI from ${this.home}/, or pair the extension so its origin is on the allow-list`,
      );
    if (this.connections.size >= LIMITS.gatewayConnections) {
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nTOO_MANY: the gateway already has ${LIMITS.gatewayConnections} connections (VERITY_MAX_GATEWAY_CONNECTIONS); close a Control UI tab and retry`,
      );
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new GatewayConnection(ws, req.headers.origin ?? null, this.options.log);
      this.connections.set(conn.connId, conn);
      if (url.searchParams.get('challenge') === '1') {
        const nonce = randomBytes(24).toString('base64url');
        this.challenges.set(conn, nonce);
        ws.send(JSON.stringify({ type: 'event', event: CONNECT_CHALLENGE, payload: { nonce }, seq: 0 }));
      }
      const timer = setTimeout(() => {
        if (!conn.hello) ws.close(4008, 'connect timeout: send a connect request first');
      }, CONNECT_TIMEOUT_MS);
      ws.on(
        'message',
        (data, isBinary) => void this.onFrame(conn, data, isBinary).catch((e) => this.frameDefect(conn, e)),
      );
      // Oversized or malformed frames surface here (ws closes with 1009/1002); they must not crash the gateway.
      ws.on('error', (e) => this.options.log(`gateway connection ${conn.connId}: ${e.message}`));
      ws.on('close', () => {
        clearTimeout(timer);
        this.connections.delete(conn.connId);
        // A relay's pairing was in use until now: its idle time (before it expires) starts here.
        if (conn.pairingId) this.pairings.touch(conn.pairingId);
        conn.dispose();
        this.links.forget(conn.connId);
        this.resume.closed(conn.connId);
        this.terminals.detachAll(conn.connId);
      });
    });
  }

  private async onFrame(conn: GatewayConnection, data: RawData, isBinary: boolean): Promise<void> {
    const bytes = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer).byteLength;
    if (isBinary) return conn.fail(null, new GatewayError('INVALID_REQUEST', 'frames must be JSON text'));
    if (!conn.hello && bytes > MAX_PRECONNECT_BYTES) {
      conn.socket.close(1009, 'connect frame too large');
      return;
    }
    let frame: ReturnType<typeof requestFrame.parse>;
    try {
      const json: unknown = JSON.parse(data.toString());
      // Bounded before anything walks it (zod's issue paths, handlers, the audit trail, events back out).
      const breach = checkLimits(json);
      if (breach) {
        const id = json && typeof json === 'object' ? (json as { id?: unknown }).id : undefined;
        return conn.fail(
          requestId.safeParse(id).success ? (id as string | number) : null,
          new GatewayError('INVALID_REQUEST', `frame ${breach.message}`, { field: breach.field }),
        );
      }
      const parsed = requestFrame.safeParse(json);
      if (!parsed.success)
        throw new GatewayError(
          'INVALID_REQUEST',
          `not a request frame: ${parsed.error.issues[0].path.join('.') || 'frame'}: ${parsed.error.issues[0].message}`,
        );
      frame = parsed.data;
    } catch (e) {
      return conn.fail(
        null,
        e instanceof GatewayError
          ? e
          : new GatewayError('INVALID_REQUEST', 'frames must be JSON: {type:"req", id, method, params}'),
      );
    }
    try {
      if (!conn.hello) {
        if (frame.method !== 'connect') throw new GatewayError('INVALID_REQUEST', 'the first request must be connect');
        return conn.respond(frame.id, this.connect(conn, frame.params));
      }
      const method = frame.method;
      if (!isMethod(method))
        throw new GatewayError('INVALID_REQUEST', `unknown method ${method}; hello-ok lists the methods`);
      const scope = methodScope(method);
      if (!conn.can(scope)) throw missingScope(method, scope);
      conn.respond(frame.id, await callMethod(method, frame.params, conn, this.methodContext));
    } catch (e) {
      if (e instanceof GatewayError) return conn.fail(frame.id, e);
      if (isDefect(e)) this.defect(`method ${frame.method}`, e);
      conn.fail(frame.id, new GatewayError('UNAVAILABLE', e instanceof Error ? e.message : String(e)));
    }
  }

  /** A defect in Verity's own code, written to the log with its stack. */
  private defect(where: string, e: unknown): void {
    this.options.log(`internal error in ${where}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  }

  /** A request whose handling failed: logged, and answered 500 when nothing was sent yet (else cut). */
  private httpDefect(res: ServerResponse, where: string, e: unknown): void {
    this.defect(where, e);
    try {
      if (!res.headersSent)
        res
          .writeHead(500, { 'content-type': 'text/plain', ...BASE_HEADERS })
          .end('internal error: the request failed; the gateway is still up (its log has the details)');
      else res.destroy();
    } catch {
      res.destroy();
    }
  }

  /** A frame whose handling failed outside every answer: logged, and answered once with an error frame. */
  private frameDefect(conn: GatewayConnection, e: unknown): void {
    this.defect(`frame on ${conn.connId}`, e);
    try {
      conn.fail(null, new GatewayError('UNAVAILABLE', 'internal error handling that frame; the gateway is still up'));
    } catch {
      conn.socket.terminate();
    }
  }

  private connect(conn: GatewayConnection, raw: unknown): HelloOk {
    const parsed = connectParams.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new GatewayError('INVALID_REQUEST', `connect: ${issue.path.join('.') || 'params'}: ${issue.message}`);
    }
    const token = parsed.data.auth.token;
    const proven = this.proves(conn, token);
    const who =
      this.roleOf(token) ??
      (proven ? { role: proven } : this.resume.redeem(token) ? { role: 'operator' as const } : null);
    if (!who) {
      setTimeout(() => conn.socket.close(4001, 'wrong token'), 50);
      // The extension shows this to its user: a relay secret fails when its pairing is gone.
      if (parsed.data.caps.includes('tab-relay'))
        throw new GatewayError(
          'UNAUTHORIZED',
          'that relay secret matches no pairing (revoked, replaced, or unused for --pairing-max-idle-days): pair the extension again with the link `verity start` prints',
          { recommendedNextStep: 'update_auth_credentials' },
        );
      throw new GatewayError(
        'UNAUTHORIZED',
        'wrong gateway token: open the Control UI with the URL `verity start` printed (it carries ?token=), or read the operator credential from the token file in the config dir (~/.config/verity/token)',
        { recommendedNextStep: 'update_auth_credentials' },
      );
    }
    // The agent credential reaches /mcp only: at the gateway it would read every session and drive tabs.
    if (who.role === 'agent') {
      setTimeout(() => conn.socket.close(4003, 'agent credential'), 50);
      throw new GatewayError(
        'FORBIDDEN',
        'that is the agent credential: it reaches MCP at /mcp only; the gateway (Control UI) needs the operator credential',
        { credential: 'agent' },
      );
    }
    // Only a paired extension, with its pairing's relay secret, may stand in as the tab relay.
    // and a relay secret is good for nothing else.
    const wantsRelay = parsed.data.caps.includes('tab-relay');
    if (wantsRelay !== (who.role === 'relay')) {
      setTimeout(() => conn.socket.close(4003, wantsRelay ? 'tab-relay needs a pairing' : 'relay secret'), 50);
      throw new GatewayError(
        'FORBIDDEN',
        wantsRelay
          ? 'the tab-relay cap needs the relay secret of an extension pairing (the extension presents it); pair the extension with the link `verity start` prints'
          : "that is an extension pairing's relay secret: it connects only with the tab-relay cap; the Control UI needs the operator credential",
        { cap: 'tab-relay' },
      );
    }
    // Scopes are what the credential holds, intersected with what the client asked for.
    const held = ROLE_SCOPES[who.role];
    conn.role = who.role;
    conn.pairingId = who.pairingId ?? null;
    if (conn.pairingId) this.pairings.touch(conn.pairingId);
    conn.hello = { ...parsed.data, scopes: parsed.data.scopes.filter((s) => held.includes(s)) };
    return {
      type: 'hello-ok',
      connId: conn.connId,
      scopes: [...conn.scopes],
      methods: METHOD_NAMES.filter((name) => conn.can(methodScope(name))),
      events: this.eventsFor(conn),
      policy: { maxPayload: MAX_FRAME_BYTES },
      ...(conn.role === 'operator' ? { resume_token: this.resume.issue(conn.connId) } : {}),
    };
  }

  /**
   * Which credential the token proves on this connection (its challenge's HMAC), usable once: the operator's,
   * or the agent's, so that a Control UI opened with the agent credential is told so (and refused) rather
   * than told its token is wrong.
   */
  private proves(conn: GatewayConnection, token: string): 'operator' | 'agent' | null {
    const nonce = this.challenges.get(conn);
    if (!nonce || !token.startsWith(PROOF_PREFIX)) return null;
    this.challenges.delete(conn);
    const proof = (secret: string) => PROOF_PREFIX + createHmac('sha256', secret).update(nonce).digest('hex');
    if (tokenMatches(token, proof(this.options.operatorToken))) return 'operator';
    if (tokenMatches(token, proof(this.options.agentToken))) return 'agent';
    return null;
  }

  private eventsFor(conn: GatewayConnection): string[] {
    return Object.entries(EVENT_SCOPES)
      .filter(([, scope]) => scope === null || conn.can(scope))
      .map(([event]) => event);
  }

  /** How many connected operators can approve a held call now (asked by Approvals on each request). */
  private approverCount(): number {
    return [...this.connections.values()].filter((c) => c.hello && c.role === 'operator' && c.can('operator.approvals'))
      .length;
  }

  /** Sends an event to every connection whose scopes allow it (the connection checks). */
  broadcast<E extends EventName>(event: E, payload: EventPayload<E>): void {
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
    const added: SessionRow[] = [],
      updated: SessionRow[] = [];
    for (const row of this.sessionList()) {
      // idle_seconds changes every second by itself: it is not a change worth a frame.
      const { idle_seconds: _idle, ...compared } = row;
      const text = JSON.stringify(compared);
      now.set(row.sessionKey, text);
      const before = this.sentSessions.get(row.sessionKey);
      if (before === undefined) added.push(row);
      else if (before !== text) updated.push(row);
    }
    const removed = [...this.sentSessions.keys()].filter((key) => !now.has(key));
    this.sentSessions = now;
    return added.length || updated.length || removed.length ? { added, updated, removed } : null;
  }

  /** A ui.command goes to exactly one Control UI connection, or nowhere. Never a broadcast. */
  private dispatchUiCommand(connId: string, command: UiCommand): boolean {
    const conn = this.connections.get(connId);
    if (!conn?.hello || !conn.caps.includes('ui-commands') || !conn.open) return false;
    return conn.event('ui.command', { command });
  }

  private sessionList(): SessionRow[] {
    const sessions = this.core.sessions.all();
    const rows: SessionRow[] = sessions
      .filter((s) => s.state !== 'ended')
      .map((s) => ({
        sessionKey: this.core.sessions.keyOf(s),
        ...sessionSummary(this.core.cursor, s),
        transport: this.core.connections.get(s.connectionId)?.transport ?? 'unknown',
        client: this.core.connections.get(s.connectionId)?.client ?? '',
        tab_id: s.currentTabId ?? null,
        brake: this.core.brake.status(s.connectionId),
      }));
    // An agent is listed as soon as it connects, not only after its first call: until then, as the default
    // session that call will have (marked, so the console tells it apart and does not call it "closed").
    for (const [connectionId, conn] of this.core.connections) {
      if (sessions.some((s) => s.connectionId === connectionId)) continue;
      const session = newSession(connectionId, null);
      session.lastActive = Date.parse(conn.since) || Date.now();
      rows.push({
        sessionKey: this.core.sessions.keyOf(session),
        ...sessionSummary(this.core.cursor, session),
        transport: conn.transport,
        client: conn.client,
        tab_id: null,
        brake: this.core.brake.status(connectionId),
        awaiting_first_call: true,
      });
    }
    return rows;
  }

  /** The session driving a tab (its current tab first, then any it drove), for the browser panel to name. */
  private tabOwner(tabId: string): SessionRow | null {
    const active = this.core.sessions.all().filter((s) => s.state === 'active');
    const owner = active.find((s) => s.currentTabId === tabId) ?? active.find((s) => s.tabs.has(tabId));
    if (!owner) return null;
    const key = this.core.sessions.keyOf(owner);
    return this.sessionList().find((row) => row.sessionKey === key) ?? null;
  }

  private async tabFor(tabId: string | undefined, sessionKey: string | undefined): Promise<Tab> {
    const session = tabId
      ? undefined
      : this.core.sessions.all().find((s) => this.core.sessions.keyOf(s) === sessionKey);
    // The panel follows one session: once that session has ended it shows nothing, never another agent's
    // tab in its place (the panel says whose tab it shows; it would be someone else's).
    if (!tabId && sessionKey && !this.sessionList().some((r) => r.sessionKey === sessionKey))
      throw new GatewayError(
        'NOT_FOUND',
        `the session ${sessionKey} has ended: the panel shows no other session's tab in its place`,
        {
          reason: 'session_ended',
        },
      );
    const wanted = tabId ?? session?.currentTabId;
    // Showing a tab never launches a browser: without one (and without a shared tab) the panel says so.
    if (!this.core.browser.running && !(wanted && this.core.browser.isShared(wanted))) {
      throw new GatewayError('NOT_FOUND', 'no browser yet: an agent opens one with its first browser action', {
        reason: 'no_browser',
      });
    }
    if (wanted) return this.core.browser.findTab(wanted);
    const tabs = await this.core.browser.tabs_();
    if (!tabs[0])
      throw new GatewayError('NOT_FOUND', 'no tab to show yet: an agent opens one with its first browser action');
    return tabs[0];
  }

  private stopScreencast(conn: GatewayConnection): void {
    const cast = this.screencasts.get(conn.connId);
    if (cast) {
      this.screencasts.delete(conn.connId);
      cast.stop();
    }
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
    for (const undo of this.unregister.splice(0)) undo();
    if (this.sessionsTimer) {
      clearTimeout(this.sessionsTimer);
      this.sessionsTimer = null;
    }
    for (const conn of this.connections.values()) {
      conn.dispose();
      conn.socket.close(1012, 'gateway shutting down');
    }
    this.terminals.killAll();
    await this.mcp.close();
    // Whatever is still open (a long-lived MCP stream, a socket mid-request) is cut, and WebSockets whose
    // close handshake has not finished (a client that does not read) are ended, so the process can exit.
    this.http.closeAllConnections();
    for (const conn of this.connections.values()) conn.socket.terminate();
  }
}
