// Who may talk to the gateway, decided in one place: the Host every request and upgrade must name (DNS
// rebinding), the origins a browser may come from (our own, or the fixed extension's while it is paired),
// the agent credential that /mcp takes (and only /mcp), and the credential a WebSocket's connect frame
// presents: the operator's (or its challenge proof, or a reloaded Control UI's resume ticket), a paired
// extension's relay secret (good only with the tab-relay cap), never the agent's. Scopes come from the
// credential, intersected with what the client asked for; nothing in a request decides them.
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { tokenMatches } from '../token.js';
import type { GatewayConnection } from './connection.js';
import { EXTENSION_ID } from './extension-id.js';
import type { Pairings } from './origins.js';
import { type ConnectParams, GatewayError, PROOF_PREFIX, ROLE_SCOPES, type Role } from './protocol.js';
import { ResumeTickets } from './resume.js';

export interface Credentials {
  /** The operator credential (Control UI, gateway, pairing) and the agent credential (/mcp only). */
  operatorToken: string;
  agentToken: string;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * The host to put in URLs for a bound address: a wildcard bind is reached (and accepted, see fixNames) as
 * 127.0.0.1, never as 0.0.0.0; IPv6 literals get their brackets.
 */
export function urlHost(bound: string): string {
  if (bound === '0.0.0.0' || bound === '::' || bound === '[::]') return '127.0.0.1';
  return bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound;
}

export class GatewayAuth {
  /** Host header values (lowercase) and origins this gateway answers to; fixed once it listens. */
  private readonly hosts = new Set<string>();
  private readonly origins = new Set<string>();
  private port = 0;
  /** Single-use tickets a reloaded Control UI connects with (the credential is never in web storage). */
  readonly resume = new ResumeTickets();
  /** The nonce each challenged connection (`/gateway?challenge=1`) proves the operator credential with. */
  private readonly challenges = new WeakMap<GatewayConnection, string>();

  constructor(
    private readonly credentials: Credentials,
    private readonly pairings: Pairings,
    private readonly extensionId: string = EXTENSION_ID,
  ) {}

  /**
   * Which Host values and origins are this gateway's: the loopback names on the bound port, the bound
   * address itself when it is a specific one, and the names configured with --allowed-hosts (with or
   * without the port, since a reverse proxy may drop it; http and https origins). Built from the
   * configuration only: a Host header never decides what counts as our own origin.
   */
  fixNames(boundHost: string, port: number, allowedHosts: readonly string[]): void {
    this.port = port;
    const bound = urlHost(boundHost).toLowerCase();
    const names = [...new Set([...LOOPBACK_NAMES, bound])];
    for (const name of names) {
      this.hosts.add(`${name}:${port}`);
      this.origins.add(`http://${name}:${port}`);
    }
    for (const raw of allowedHosts) {
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
  get home(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  hostAllowed(req: IncomingMessage): boolean {
    return typeof req.headers.host === 'string' && this.hosts.has(req.headers.host.toLowerCase());
  }

  hostRefusal(req: IncomingMessage): string {
    return `Host ${JSON.stringify(req.headers.host ?? '')} is not this gateway's (a DNS-rebinding guard): open ${this.home}/, or start it with --allowed-hosts NAME to answer to another name`;
  }

  /**
   * Browsers send Origin; non-browser clients (CLI, tests, agents) do not and pass on the credential
   * alone. A browser origin must be one of ours, or the fixed extension's while it is paired.
   */
  originAllowed(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    if (this.origins.has(origin.toLowerCase())) return true;
    return origin === `chrome-extension://${this.extensionId}` && this.pairings.origins().includes(origin);
  }

  /** Whether a token is the operator credential (what POST /pair takes). */
  isOperator(token: string): boolean {
    return tokenMatches(token, this.credentials.operatorToken);
  }

  /**
   * Why /mcp refuses this request's credential, or null when it is the agent's. The operator's is refused
   * on purpose: a client that holds it could also open /gateway and approve its own calls, so it must not
   * end up in agent configs.
   */
  mcpRefusal(req: IncomingMessage): string | null {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (tokenMatches(bearer, this.credentials.agentToken)) return null;
    return bearer !== '' && this.isOperator(bearer)
      ? 'that is the operator credential (for the Control UI); MCP clients use the agent credential: the "Authorization: Bearer …" on the /mcp line `verity start` printed, or the agent-token file in the config dir'
      : 'missing or wrong credential: send "Authorization: Bearer <agent credential>"; it is on the /mcp line `verity start` printed (and in the agent-token file in the config dir)';
  }

  /** A fresh nonce the connection proves the credential with (`/gateway?challenge=1`), kept for its connect. */
  challenge(conn: GatewayConnection): string {
    const nonce = randomBytes(24).toString('base64url');
    this.challenges.set(conn, nonce);
    return nonce;
  }

  /**
   * The connect frame's credential decides the connection's role, its pairing and the scopes it holds (of
   * those it asked for); a wrong, agent or misused relay credential is refused, and the socket closed a
   * moment later (after the refusal is sent).
   */
  admit(
    conn: GatewayConnection,
    params: ConnectParams,
  ): { role: Role; pairingId: string | null; scopes: ConnectParams['scopes'] } {
    const token = params.auth.token;
    const proven = this.proves(conn, token);
    const who =
      this.roleOf(token) ??
      (proven ? { role: proven } : this.resume.redeem(token) ? { role: 'operator' as const } : null);
    if (!who) {
      setTimeout(() => conn.socket.close(4001, 'wrong token'), 50);
      // The extension shows this to its user: a relay secret fails when its pairing is gone.
      if (params.caps.includes('tab-relay'))
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
    const wantsRelay = params.caps.includes('tab-relay');
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
    return {
      role: who.role,
      pairingId: who.pairingId ?? null,
      scopes: params.scopes.filter((s) => held.includes(s)),
    };
  }

  /** Which role a credential holds: the operator's, a paired extension's relay secret, the agent's, or none. */
  private roleOf(token: string): { role: Role | 'agent'; pairingId?: string } | null {
    if (this.isOperator(token)) return { role: 'operator' };
    if (tokenMatches(token, this.credentials.agentToken)) return { role: 'agent' };
    const pairing = this.pairings.bySecret(token);
    return pairing ? { role: 'relay', pairingId: pairing.id } : null;
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
    if (tokenMatches(token, proof(this.credentials.operatorToken))) return 'operator';
    if (tokenMatches(token, proof(this.credentials.agentToken))) return 'agent';
    return null;
  }
}
