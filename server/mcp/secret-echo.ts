// The call pipeline's side of secret echoes (contract/secret-echo.ts): which texts a call sent to secret
// fields, learned for its session before and after it runs, and its reply scrubbed before anyone sees it.
import { type SecretEcho, secretsSent } from '../contract/secret-echo.js';
import type { Reply } from '../tools/context.js';
import type { CallArguments } from './call-args.js';

/**
 * Before a call runs: text bound for a field its snapshot knew as a secret (a password, one-time code or
 * card field), so that a call that then times out or fails has still taught it, and nothing the page echoes
 * while the call runs gets out.
 */
export function expectSecrets(echo: SecretEcho, owner: string, args: CallArguments): void {
  echo.learn(owner, secretsSent(args.parsed, args.shown));
}

/** After a call ran: the texts its result says it masked (run_actions steps too) are learned, then its reply is scrubbed. */
export function settleSecrets(echo: SecretEcho, owner: string, args: CallArguments, reply: Reply): Reply {
  echo.learn(owner, secretsSent(args.parsed, args.masked(reply.structured).parsed));
  return echo.scrubReply(reply);
}
