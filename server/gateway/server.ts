// `verity start`: one loopback port serving the Control UI (/), MCP over HTTP (/mcp) and the gateway
// WebSocket (/gateway). Every request and upgrade must name this gateway in its Host (DNS rebinding) and
// come from its own origin, a paired extension, or no browser at all; the first frame must be `connect`
// with a credential, and the scopes come from that credential, not from the request; every method's scope
// is checked; events go only to connections whose scopes allow them, and a ui.command only ever to the
// one Control UI connection it targets.
//
// This file puts the parts together and holds the connections: the HTTP routes are one table (the
// constructor's `routes`, typed in http-routes.ts), who may talk is auth.ts, pairing is pairing.ts, the
// Control UI's files static-files.ts, the sessions feed session-feed.ts, the operator's tabs tabs.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer, type RawData } from 'ws';
import type { Verity } from '../core.js';
import { McpHttpEndpoint } from '../mcp/http.js';
import type { SessionRow } from '../sessions/summary.js';
import { GatewayConnection, operatorView } from './connection.js';
import { Links } from './links.js';
import { callMethod, isMethod, METHOD_NAMES, methodScope, type MethodContext, type UiCommand } from './methods.js';
import {
  CONNECT_CHALLENGE,
  connectParams,
  EVENT_SCOPES,
  GatewayError,
  MAX_FRAME_BYTES,
  MAX_PRECONNECT_BYTES,
  missingScope,
  requestFrame,
  requestId,
  type EventName,
  type EventPayload,
  type HelloOk,
} from './protocol.js';
import { Terminals } from './terminal.js';
import type { Screencast } from './screencast.js';
import { pairingMaxIdleMs, Pairings } from './origins.js';
import { Relay } from './relay.js';
import { LIMITS } from '../limits.js';
import { applyFleetBrake, serveAuditExport } from './brake-methods.js';
import { checkLimits } from '../arg-limits.js';
import { isDefect } from '../errors.js';
import { type Credentials, GatewayAuth, urlHost } from './auth.js';
import { answerText, BASE_HEADERS, type HttpRoute, methodAllowed, requestUrl, routeOf } from './http-routes.js';
import { PairingEndpoint } from './pairing.js';
import { SessionFeed } from './session-feed.js';
import { serveStatic } from './static-files.js';
import { OperatorTabs } from './tabs.js';

/** How long an idle keep-alive HTTP socket stays open (the server's constructor says why). */
const KEEP_ALIVE_MS = 65_000;

export { urlHost } from './auth.js';
export { CONTROL_UI_CSP } from './static-files.js';
export type { SessionRow };

const CONNECT_TIMEOUT_MS = 10_000;

export interface GatewayOptions extends Credentials {
  host: string;
  port: number;
  /** Host names (besides loopback) this gateway answers to when bound elsewhere: --allowed-hosts. */
  allowedHosts?: string[];
  log: (line: string) => void;
  /** The companion extension's id, for a build signed with another key (default: the published build's). */
  extensionId?: string;
  /** An extension pairing unused this many days is removed (--pairing-max-idle-days; default 30). */
  pairingMaxIdleDays?: number;
  /** The environment the terminal panel's shells start from (the CLI gives its own; absent: none but theirs). */
  env?: Readonly<Record<string, string | undefined>>;
}

export class Gateway {
  readonly http: Server;
  private readonly links: Links;
  private readonly auth: GatewayAuth;
  private readonly connections = new Map<string, GatewayConnection>();
  private readonly terminals = new Terminals(
    (connId, event, payload) => this.connections.get(connId)?.event(event, payload),
    () => LIMITS.terminalDetachMs,
    () => this.options.env ?? {},
  );
  private readonly screencasts = new Map<string, Screencast>();
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  private readonly mcp: McpHttpEndpoint;
  private readonly sessions: SessionFeed;
  /** Tabs shared from the operator's Chrome by the extension: a second source of tabs for the CDP route. */
  private readonly relay: Relay;
  private readonly pairings: Pairings;
  private readonly pairing: PairingEndpoint;
  /** The HTTP routes, in one place (http-routes.ts says how a request finds its row). */
  private readonly routes: readonly HttpRoute[];
  /** What the method table's handlers see of the gateway (methods.ts). */
  private readonly methodContext: MethodContext;
  /** Registrations with the core, taken back on close. */
  private readonly unregister: Array<() => void> = [];
  port = 0;

  constructor(
    readonly core: Verity,
    private readonly options: GatewayOptions,
  ) {
    this.links = new Links(() => `http://${urlHost(this.options.host)}:${this.port}/mcp`);
    this.pairings = new Pairings({
      maxIdleMs: pairingMaxIdleMs(options.pairingMaxIdleDays),
      inUse: () => this.connectedPairings(),
      onExpired: (p) =>
        options.log(
          `removed the extension pairing ${p.id}: unused since ${p.lastUsedAt} (--pairing-max-idle-days); pair the extension again to use it`,
        ),
    });
    this.auth = new GatewayAuth(options, this.pairings, options.extensionId);
    this.pairing = new PairingEndpoint({
      pairings: this.pairings,
      isOperator: (token) => this.auth.isOperator(token),
      connections: () => this.connections.values(),
      port: () => this.port,
      log: options.log,
      extensionId: options.extensionId,
    });
    this.sessions = new SessionFeed(core, (delta) => {
      this.broadcast('sessions.changed', delta);
      core.audit.sessionsChanged(); // a shared audit store publishes them to the fleet
    });
    this.mcp = new McpHttpEndpoint(core, (token) => this.links.resolve(token), options.log);
    this.relay = new Relay(options.log);
    core.browser.addPeer(this.relay.host);
    this.routes = [
      // Pairing comes from the extension's origin before it is on the allow-list: the credential decides.
      {
        path: '/pair',
        methods: null,
        originChecked: false,
        handle: (req, res) => void this.pairing.pair(req, res).catch((e) => this.httpDefect(res, '/pair', e)),
      },
      { path: '/mcp', methods: null, originChecked: true, handle: (req, res) => this.serveMcp(req, res) },
      {
        path: '/audit/export',
        methods: ['GET'],
        originChecked: true,
        handle: (_req, res, url) => serveAuditExport(this.core, url, res, BASE_HEADERS),
      },
      {
        path: null,
        methods: ['GET', 'HEAD'],
        originChecked: true,
        handle: (_req, res, url) => serveStatic(url.pathname, res),
      },
    ];
    // Each request, upgrade and frame is its own boundary: a defect in one is logged and answered (500,
    // a destroyed socket, an error frame), never an uncaught exception that takes every session down.
    this.http = createServer((req, res) => {
      try {
        this.onHttp(req, res);
      } catch (e) {
        this.httpDefect(res, 'request', e);
      }
    });
    // An idle keep-alive socket is closed after this long. Node's 5 s default races clients that reuse one
    // just then (undici's fetch sends on a socket the server is closing: "fetch failed", nodejs/undici#3141),
    // and a busy machine's late timers widen that window until MCP clients waiting on a person hit it; a
    // minute makes it a gap no call sequence leaves.
    this.http.keepAliveTimeout = KEEP_ALIVE_MS;
    this.http.on('upgrade', (req, socket, head) => {
      try {
        this.onUpgrade(req, socket as Socket, head);
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
      this.sessions.changed();
    });
    core.activity.on('thumbnail', (entry) => this.broadcast('action', entry));
    core.activity.on('sessions', () => this.sessions.changed());
    core.approvals.on('requested', (request) => this.broadcast('approval.requested', request));
    core.approvals.on('resolved', (outcome) => this.broadcast('approval.resolved', outcome));
    core.brake.on('changed', () => this.sessions.changed());
    // The live log needs the line, not the whole result (audit.query has it): events stay small.
    // With a shared store each entry names its gateway (this one's own entries too, for the log's gateway filter).
    core.audit.on('entry', (entry) =>
      this.broadcast('audit.entry', {
        ...entry,
        result: undefined,
        gateway: entry.gateway ?? core.audit.fleetName ?? undefined,
      }),
    );
    // With a shared audit store: every gateway's sessions, and which gateway holds each (a gone one's ended).
    core.audit.on('fleet', (view) => this.broadcast('fleet.changed', view));
    core.audit.shareSessions(() => this.sessions.list());
    core.audit.shareApprovals(core.approvals);
    this.methodContext = {
      activity: core.activity,
      approvals: core.approvals,
      sessions: core.sessions,
      brake: core.brake,
      audit: core.audit,
      agentConnected: (connectionId) => core.connections.has(connectionId),
      tabs: new OperatorTabs(core.router, core.browser, core.sessions, () => this.sessions.list()),
      operatorInput: (tabId, work) => core.router.operatorInput(tabId, work),
      sessionList: () => this.sessions.list(),
      dispatchUiCommand: (connId, command) => this.dispatchUiCommand(connId, command),
      links: this.links,
      agentToken: options.agentToken,
      terminals: this.terminals,
      pairings: this.pairings,
      connectedPairings: () => this.connectedPairings(),
      revokePairing: (id) => this.pairing.revoke(id),
      screencasts: this.screencasts,
      stopScreencast: (conn) => this.stopScreencast(conn),
      relay: this.relay,
      policy: core.policy,
    };
    // With a shared audit store: a brake sent to the fleet from any console is applied here to this gateway's agents.
    core.audit.shareBrake((verb, sessionKey, by) => applyFleetBrake(this.methodContext, verb, sessionKey, by));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.options.port, this.options.host, resolve);
    });
    this.port = (this.http.address() as { port: number }).port;
    this.auth.fixNames(this.options.host, this.port, this.options.allowedHosts ?? []);
    return this.port;
  }

  /** The pairing ids of the tab relays connected now. */
  private connectedPairings(): Set<string> {
    return new Set([...this.connections.values()].map((c) => c.pairingId).filter((id): id is string => !!id));
  }

  /** Every request: refused while stopping, without a path, or naming another Host; then its route's row. */
  private onHttp(req: IncomingMessage, res: ServerResponse): void {
    if (this.stopping) {
      res
        .writeHead(503, { 'content-type': 'text/plain', connection: 'close' })
        .end('the gateway is shutting down; connect again once `verity start` is back');
      return;
    }
    const url = requestUrl(req);
    if (!url)
      return answerText(res, 400, `the request target ${JSON.stringify(String(req.url).slice(0, 100))} is not a path`);
    if (!this.auth.hostAllowed(req)) return answerText(res, 403, this.auth.hostRefusal(req));
    const route = routeOf(this.routes, url.pathname);
    if (!route) return answerText(res, 404, `nothing is served at ${url.pathname.slice(0, 100)}`);
    if (route.originChecked && !this.auth.originAllowed(req))
      return answerText(
        res,
        403,
        `origin ${req.headers.origin} is not allowed; open the Control UI from ${this.auth.home}/ or pair the extension with the link \`verity start\` printed`,
      );
    if (!methodAllowed(route, req, res, url.pathname)) return;
    route.handle(req, res, url);
  }

  /** /mcp takes the agent credential only (auth.ts says why the operator's is refused). */
  private serveMcp(req: IncomingMessage, res: ServerResponse): void {
    const refusal = this.auth.mcpRefusal(req);
    if (refusal) {
      res
        .writeHead(401, { 'content-type': 'application/json', ...BASE_HEADERS })
        .end(JSON.stringify({ error: refusal }));
      return;
    }
    void this.mcp.handle(req, res).catch((e) => this.httpDefect(res, '/mcp', e));
  }

  private onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const url = requestUrl(req);
    const refuse = (status: number, message: string) => {
      const reason = { 400: 'Bad Request', 403: 'Forbidden' }[status] ?? 'Not Found';
      socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${message}`);
    };
    if (!url) return refuse(400, 'the request target is not a path');
    if (!this.auth.hostAllowed(req)) return refuse(403, this.auth.hostRefusal(req));
    if (url.pathname !== '/gateway') return refuse(404, 'the gateway WebSocket is at /gateway');
    if (!this.auth.originAllowed(req))
      return refuse(
        403,
        `origin ${req.headers.origin} is not allowed; open the Control UI from ${this.auth.home}/, or pair the extension so its origin is on the allow-list`,
      );
    if (this.connections.size >= LIMITS.gatewayConnections) {
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nTOO_MANY: the gateway already has ${LIMITS.gatewayConnections} connections (VERITY_MAX_GATEWAY_CONNECTIONS); close a Control UI tab and retry`,
      );
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new GatewayConnection(ws, req.headers.origin ?? null, this.options.log, (frame) =>
        operatorView(this.core.echo, frame),
      );
      this.connections.set(conn.connId, conn);
      if (url.searchParams.get('challenge') === '1') {
        const nonce = this.auth.challenge(conn);
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
        this.auth.resume.closed(conn.connId);
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

  /** The connect frame: the credential decides the role and scopes (auth.ts); hello-ok says what they reach. */
  private connect(conn: GatewayConnection, raw: unknown): HelloOk {
    const parsed = connectParams.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new GatewayError('INVALID_REQUEST', `connect: ${issue.path.join('.') || 'params'}: ${issue.message}`);
    }
    const admitted = this.auth.admit(conn, parsed.data);
    conn.role = admitted.role;
    conn.pairingId = admitted.pairingId;
    if (conn.pairingId) this.pairings.touch(conn.pairingId);
    conn.hello = { ...parsed.data, scopes: admitted.scopes };
    return {
      type: 'hello-ok',
      connId: conn.connId,
      scopes: [...conn.scopes],
      methods: METHOD_NAMES.filter((name) => conn.can(methodScope(name))),
      events: this.eventsFor(conn),
      policy: { maxPayload: MAX_FRAME_BYTES },
      ...(conn.role === 'operator' ? { resume_token: this.auth.resume.issue(conn.connId) } : {}),
    };
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

  /** A ui.command goes to exactly one Control UI connection, or nowhere. Never a broadcast. */
  private dispatchUiCommand(connId: string, command: UiCommand): boolean {
    const conn = this.connections.get(connId);
    if (!conn?.hello || !conn.caps.includes('ui-commands') || !conn.open) return false;
    return conn.event('ui.command', { command });
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
    this.sessions.close();
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
