// The call pipeline's side of secret echoes (contract/secret-echo.ts): which texts a call sent to secret
// fields, learned for its session before and after it runs, and its reply scrubbed before anyone sees it.
import { secretOf } from '../audit/trail.js';
import { type SecretEcho, secretsSent } from '../contract/secret-echo.js';
import { maskedArgs, maskedForApproval } from '../contract/secrets.js';
import type { ResolvedToken } from '../routing/snapshots.js';
import type { Reply } from '../tools/context.js';

/**
 * Before a call runs: text bound for a field its snapshot knew as a secret (a password, one-time code or
 * card field), so that a call that then times out or fails has still taught it, and nothing the page echoes
 * while the call runs gets out.
 */
export function expectSecrets(
  echo: SecretEcho,
  owner: string,
  args: Record<string, unknown>,
  tokens: ReadonlyMap<string, ResolvedToken> | undefined,
): void {
  const shown = maskedForApproval(args, (token) => (tokens ? secretOf(tokens, token) : undefined));
  echo.learn(owner, secretsSent(args, shown));
}

/** After a call ran: the texts its result says it masked (run_actions steps too) are learned, then its reply is scrubbed. */
export function settleSecrets(echo: SecretEcho, owner: string, args: Record<string, unknown>, reply: Reply): Reply {
  echo.learn(owner, secretsSent(args, maskedArgs(args, reply.structured)));
  return echo.scrubReply(reply);
}
