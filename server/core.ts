// The composition root every front door (stdio MCP, HTTP MCP, the gateway) shares: it builds the parts
// and wires them, and holds no logic of its own. Routing (both drivers, tokens, tab ownership, the origin
// policy on tabs) is server/routing/router.ts; the call pipeline tools run in is server/mcp/pipeline.ts.
import { Activity } from './activity.js';
import { Approvals } from './approvals.js';
import { BrowserHost, type BrowserOptions } from './cdp/browser/browser.js';
import { CallPipeline } from './mcp/pipeline.js';
import { Policy } from './policy.js';
import type { NativeBackendChoice } from './routing/native-backend.js';
import { Router } from './routing/router.js';
import { CursorPreferences } from './sessions/cursor-preferences.js';
import { SessionManager, type Session } from './sessions/manager.js';
import { UiCommands } from './ui-commands.js';
import { Brake } from './sessions/brake.js';
import { AuditStore } from './audit/store.js';
import { noteApprovalRequested, noteApprovalResolved } from './audit/trail.js';
import type { AuditActor } from './audit/store.js';
import { POOL_CONNECT_TIMEOUT_MS, redactEndpoint } from './cdp/browser/pool.js';
import { CdpBrowserRoute, connectionBrowsers, pageOps } from './cdp/route.js';
import type { Tab } from './cdp/tab/tab.js';
import type { Capability } from './contract/capabilities.js';
import { SecretEcho } from './contract/secret-echo.js';
import { parseSessionKey } from './contract/session-key.js';

export interface VerityOptions extends BrowserOptions {
  allowJavascript?: boolean;
  /** Agents may read the clipboard (--allow-clipboard-read; clipboard_read is refused without it). */
  allowClipboardRead?: boolean;
  /** What agents may start with launch_app (--allow-launch); none: launch_app is refused. */
  allowLaunch?: string[];
  policy?: Policy;
  sessionIdleMs?: number;
  /** How long a call the policy holds waits for an operator (--approval-timeout-s; default 55). */
  approvalTimeoutS?: number;
  onSessionEnd?: (session: Session, reason: string, hook: string) => void;
  /** The agent cursor in driven tabs (default on; VERITY_CURSOR=off turns it off). */
  cursor?: boolean;
  /** The agent cursor jumps instead of gliding (--reduced-motion). */
  reducedMotion?: boolean;
  /** Native apps are called on their own AT-SPI socket when they offer one (--atspi-direct; default on). */
  atspiDirect?: boolean;
  /** Which tool definitions tools/list sends: the lean default, or `full` (--tools full, VERITY_TOOLS). */
  tools?: 'default' | 'full';
  /** Families of rarely needed tools turned on (--caps, VERITY_CAPS; contract/capabilities.ts). */
  caps?: Capability[];
  /** URL schemes beyond http, https, data and about:blank that agents may open (--allow-url-schemes). */
  allowUrlSchemes?: string[];
  /** Folders set_input_files may read from (--upload-root); none = uploads refused. */
  uploadRoots?: string[];
  /** A browser pool's WebSocket endpoint (--browser-endpoint): every MCP connection gets its own browser from it. */
  browserEndpoint?: string;
  /** Headers for the pool's handshake (--browser-header "Name: value"). */
  browserHeaders?: Record<string, string>;
  /** How long a connection waits for the pool to give it a browser (--browser-connect-timeout). */
  browserConnectTimeoutMs?: number;
  /** A browser context per MCP connection in the one local browser (--isolated). */
  isolated?: boolean;
  /** The audit trail: `verity start` passes its durable store (<config dir>/audit); else one in memory. */
  audit?: AuditStore;
  /** The native route's backend (--native-backend): `auto` (the platform's own) or `nutjs` (pixels and keys). */
  nativeBackend?: NativeBackendChoice;
}

/** One MCP connection as the operator sees it: how it came, the client's clientInfo, the credential's id. */
export interface McpConnection {
  transport: string;
  /** `name version`, for the session list. */
  client: string;
  since: string;
  clientName: string;
  clientVersion: string;
  /** The credential it connected with, as an id (audit trail actors): never the secret. */
  credential: string;
}

/** A session's agent (the audit trail's actor), from its connection while that is open. */
function actorOf(connections: ReadonlyMap<string, McpConnection>, sessionKey: string): AuditActor | undefined {
  const { connectionId: connection, label } = parseSessionKey(sessionKey);
  const c = connections.get(connection);
  if (!c) return undefined;
  return {
    client: c.clientName,
    client_version: c.clientVersion,
    credential: c.credential,
    connection,
    session: label,
    transport: c.transport,
  };
}

/** Whether a session key names a session that has not ended (its secrets are still masked everywhere). */
function liveKeys(sessions: SessionManager): (key: string) => boolean {
  const live = new Set<string>(sessions.all().flatMap((s) => (s.state === 'ended' ? [] : [sessions.keyOf(s)])));
  return (key) => live.has(key);
}

export class Verity {
  readonly browser: BrowserHost;
  readonly router: Router<Tab>;
  readonly sessions: SessionManager;
  readonly policy: Policy;
  readonly cursor: CursorPreferences;
  readonly activity = new Activity();
  readonly approvals = new Approvals();
  /** The operator's brake on each agent (stop, pause, resume): sessions/brake.ts. */
  readonly brake = new Brake();
  /** Every call, approval, brake and operator input: durable under the gateway (audit/store.ts), in memory otherwise. */
  readonly audit: AuditStore;
  /** Where the `screen` tool's ui.commands go: the gateway registers its delivery. */
  readonly uiCommands = new UiCommands();
  readonly pipeline: CallPipeline;
  /** MCP connections, for the operator's session list and the audit trail's actor (who each agent is). */
  readonly connections = new Map<string, McpConnection>();
  /**
   * What live sessions typed into secret fields, masked wherever it comes back: in every session's results
   * (the pipeline) and in all the gateway sends operators. A session's texts are forgotten when it ends.
   */
  readonly echo = new SecretEcho();

  constructor(readonly options: VerityOptions) {
    this.audit = options.audit ?? new AuditStore(null);
    this.policy = options.policy ?? new Policy();
    this.policy.allowSchemes([...(options.allowUrlSchemes ?? []), ...(options.allowJavascript ? ['javascript'] : [])]);
    // The browser holds the origin policy for all it loads (workers, WebSockets...), not only for driven tabs.
    const browserOptions: VerityOptions = { ...options, policy: this.policy };
    // With a pool, the server has no browser of its own: each connection's comes from the pool.
    this.browser = new BrowserHost(
      options.browserEndpoint
        ? {
            ...browserOptions,
            peersOnly: `this server drives one browser per session from the pool at ${redactEndpoint(options.browserEndpoint)} (--browser-endpoint); it has no browser of its own`,
          }
        : browserOptions,
    );
    this.sessions = new SessionManager({
      idleMs: options.sessionIdleMs ?? 5 * 60_000,
      onEnd: options.onSessionEnd,
      onChange: () => {
        if (this.echo.size) this.echo.retainOnly(liveKeys(this.sessions));
        this.activity.emit('sessions');
      },
    });
    this.cursor = new CursorPreferences(options.cursor !== false, options.reducedMotion === true);
    // The routes are built here, and the router is handed them by their contracts (contract/browser-route.ts,
    // contract/native-host.ts): it imports nothing of server/cdp/ or server/native/.
    const browserRoute = new CdpBrowserRoute(this.browser, this.policy);
    this.router = new Router({
      browser: browserRoute,
      pageOps,
      // The native route is imported on the first native call, and only where it can run (Router.nativeRoute).
      loadNative: async (backend, nativeOptions) =>
        (await import('./native/backends.js')).loadNativeRoute(backend, nativeOptions),
      policy: this.policy,
      cursorFor: (session) => this.cursor.forDriver(session),
      onCurrentTabChanged: () => this.activity.emit('sessions'),
      nativeBackend: options.nativeBackend,
      atspiDirect: options.atspiDirect,
      env: options.env,
      perConnection: {
        open: connectionBrowsers(browserRoute, {
          endpoint: options.browserEndpoint
            ? {
                url: options.browserEndpoint,
                headers: options.browserHeaders ?? {},
                connectTimeoutMs: options.browserConnectTimeoutMs ?? POOL_CONNECT_TIMEOUT_MS,
              }
            : undefined,
          isolated: options.isolated,
          browser: browserOptions,
        }),
        log: browserOptions.log,
        sessions: this.sessions,
      },
    });
    this.audit.actorOf = (sessionKey) => actorOf(this.connections, sessionKey);
    this.approvals.on('requested', (request) => noteApprovalRequested(this.audit, this.echo.scrub(request)));
    this.approvals.on('resolved', (outcome) => noteApprovalResolved(this.audit, outcome));
    // Cleanup every session needs: its cursor leaves the tab it drove.
    this.sessions.addGlobalHook('cursor', (session) => this.router.hideCursorOf(session));
    this.pipeline = new CallPipeline({
      router: this.router,
      sessions: this.sessions,
      policy: this.policy,
      approvals: this.approvals,
      activity: this.activity,
      cursor: this.cursor,
      uiCommands: this.uiCommands,
      options,
      brake: this.brake,
      audit: this.audit,
      echo: this.echo,
    });
  }

  async close(): Promise<void> {
    await this.sessions.shutdown();
    await this.audit.close();
    await this.router.close();
  }
}
