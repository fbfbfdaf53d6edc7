// Pairing the companion extension over HTTP (POST /pair) and revoking a pairing. The pairings themselves
// (their file, relay secrets, expiry) are origins.ts's; this is what the gateway does around them: who may
// pair (the operator credential, from the fixed extension id's origin only), and what revoking cuts (the
// pairing's relay connections, and the extension's pages when its origin leaves the allow-list).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayConnection } from './connection.js';
import { EXTENSION_ID } from './extension-id.js';
import { BASE_HEADERS } from './http-routes.js';
import type { Pairings } from './origins.js';

export interface PairingDeps {
  pairings: Pairings;
  /** Whether a token is the operator credential. */
  isOperator(token: string): boolean;
  /** The gateway connections open now (revoking closes a pairing's). */
  connections(): Iterable<GatewayConnection>;
  /** The gateway's port, for the WebSocket address the extension is told. */
  port(): number;
  log: (line: string) => void;
  /** The companion extension's id (default: the published build's). */
  extensionId?: string;
}

export class PairingEndpoint {
  constructor(private readonly deps: PairingDeps) {}

  /**
   * POST /pair {token, replaces?} from the extension's pairing page: with the operator credential, and
   * only from the fixed extension id's origin, a pairing is made: the origin goes on the allow-list and
   * the answer carries the pairing's relay secret (the extension presents it to connect as the relay).
   * `replaces` names the extension's previous pairing, so pairing again does not pile pairings up.
   */
  async pair(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin ?? '';
    const ours = `chrome-extension://${this.deps.extensionId ?? EXTENSION_ID}`;
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
    if (!token || !this.deps.isOperator(token)) {
      return answer(401, {
        error:
          'wrong or stale pairing token: copy a fresh pairing link from `verity start` (the line "Pair the Chrome extension: chrome-extension://…") and open it again',
      });
    }
    const { pairings } = this.deps;
    pairings.load();
    if (replaces) this.revoke(replaces);
    const made = pairings.add(origin);
    if (!made)
      return answer(409, {
        error: 'too many pairings: revoke old ones in the Control UI (Paired extensions), then pair again',
        code: 'too_many_pairings',
      });
    this.deps.log(`paired the extension ${origin} (pairing ${made.pairing.id})`);
    return answer(200, {
      ok: true,
      origin,
      gateway: `ws://127.0.0.1:${this.deps.port()}/gateway`,
      pairing_id: made.pairing.id,
      relay_secret: made.secret,
    });
  }

  /**
   * Revokes a pairing: its relay secret stops working at once (its connections are closed), and when it
   * was the last pairing the extension's origin leaves the allow-list (its pages are disconnected too).
   */
  revoke(id: string): boolean {
    const removed = this.deps.pairings.remove(id);
    if (!removed) return false;
    const originGone = !this.deps.pairings.origins().includes(removed.origin);
    for (const conn of this.deps.connections()) {
      if (conn.pairingId === id || (originGone && conn.origin === removed.origin))
        conn.socket.close(4003, 'pairing revoked');
    }
    this.deps.log(`revoked the extension pairing ${id}`);
    return true;
  }
}
