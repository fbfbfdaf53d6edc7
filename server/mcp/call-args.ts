// One call's arguments, read once and carried: bounded (checkLimits) before anything walks them, the
// session key built, its element tokens resolved and labelled, parsed against the tool's schema, masked
// for secrets once for the approval card (before the call runs) and once for what is kept of it after
// (the audit trail, the operators' action log, a recording, the secret echoes), and summarized once as the
// log line. The call pipeline builds one per call and hands it to each part; no part masks or summarizes
// the arguments again.
import { labelledSummary } from '../activity.js';
import { checkLimits, type LimitBreach } from '../arg-limits.js';
import { maskedArgs, maskedForApproval } from '../contract/secrets.js';
import { type SessionKey, sessionKeyOfCall } from '../contract/session-key.js';
import type { ResolvedToken } from '../routing/snapshots.js';

/** How often the arguments were masked and summarized (debug stats: the unit test counts one of each per call). */
export interface ArgumentPasses {
  /** The approval card's view, masked by what the call's tokens name (before the call ran). */
  shown: number;
  /** After the reply: the sent and the parsed arguments, masked by what it says (kept, recorded, learned from). */
  kept: number;
  /** The log line (the audit trail's and the action log's summary). */
  summary: number;
}

/** The arguments masked by what the reply says: as sent, and as the tool ran them (recordings, secret echoes). */
export interface MaskedArguments {
  sent: Record<string, unknown>;
  parsed: Record<string, unknown> | undefined;
}

/** What the audit trail and the action log keep of the arguments once the reply is known. */
export interface KeptArguments {
  /** As the agent sent them (no defaults), masked by what the reply says and of the session's secrets. */
  sent: Record<string, unknown>;
  /** The tool's lead and `key=value` per argument, each token shown as its element's label. */
  summary: string;
}

export class CallArguments {
  /** The arguments as sent when they are within bounds; `{}` when not an object or out of bounds. */
  readonly sent: Record<string, unknown>;
  /** Why the arguments are out of bounds (depth, size, a string's length): the call is refused for it. */
  readonly breach: LimitBreach | null;
  /** The session the call names, as every part keys it. */
  readonly sessionKey: SessionKey;
  /** Each element token the call names, resolved before it runs (a stale or invalid one is left out). */
  tokens: ReadonlyMap<string, ResolvedToken> = new Map();
  /** `role "name"` per resolved token, for the audit trail, the approval card and the action log. */
  labels: Record<string, string> | undefined;
  /** As the tool's schema parsed them (defaults filled in); undefined until then, and for a refused call. */
  parsed: Record<string, unknown> | undefined;
  private shownView: Record<string, unknown> | undefined;
  private maskedView: MaskedArguments | undefined;
  private keptView: KeptArguments | undefined;

  constructor(
    rawArgs: unknown,
    connectionId: string,
    /** Counted into: the pipeline's debug stats. */
    private readonly passes: ArgumentPasses,
    /** The tool called: its summary leads with what it does (contract/call-summary.ts). */
    private readonly tool?: string,
  ) {
    // Depth, size and string lengths first: everything after this (labels, approvals, the audit trail,
    // the action log, recording) walks or stringifies the arguments, and must only ever see bounded ones.
    this.breach = checkLimits(rawArgs);
    this.sent = (!this.breach && rawArgs && typeof rawArgs === 'object' ? rawArgs : {}) as Record<string, unknown>;
    this.sessionKey = sessionKeyOfCall(connectionId, this.sent.session);
  }

  /** Why the element a token names holds a secret (a password, one-time code or card field), or undefined. */
  secretOf = (token: string): string | undefined => secretOf(this.tokens, token);

  /**
   * The parsed arguments with text bound for a field its snapshot knew as a secret masked: what an operator
   * approving the call is shown (as sent: `approvalView`), and what the secret echoes learn before it runs.
   */
  get shown(): Record<string, unknown> {
    if (!this.parsed) throw new Error('the arguments are shown once parsed');
    if (!this.shownView) {
      this.passes.shown++;
      this.shownView = maskedForApproval(this.parsed, this.secretOf);
    }
    return this.shownView;
  }

  /** What the operator approving the call is shown: the arguments the agent sent, not the defaults, masked. */
  get approvalView(): Record<string, unknown> {
    const shown = this.shown;
    return Object.fromEntries(Object.keys(this.sent).flatMap((k) => (k in shown ? [[k, shown[k]]] : [])));
  }

  /**
   * The arguments masked by what the reply says: a call whose result (or a run_actions step's) says
   * `masked` has that text masked, as sent and as parsed. Once per call, on first use.
   */
  masked(structured: unknown): MaskedArguments {
    if (!this.maskedView) {
      this.passes.kept++;
      this.maskedView = {
        sent: maskedArgs(this.sent, structured),
        parsed: this.parsed && maskedArgs(this.parsed, structured),
      };
    }
    return this.maskedView;
  }

  /**
   * What the audit trail and the action log keep: the sent arguments masked (`masked`), then `scrub`bed of
   * the texts the session typed into secret fields, and their log line. Once per call, after the reply.
   */
  kept(structured: unknown, scrub: <T>(value: T) => T): KeptArguments {
    if (!this.keptView) {
      const sent = scrub(this.masked(structured).sent);
      this.passes.summary++;
      this.keptView = { sent, summary: labelledSummary(sent, this.labels, this.tool) };
    }
    return this.keptView;
  }
}

/** The element tokens in a call's arguments (run_actions steps too), at most 64. */
export function tokensIn(args: Record<string, unknown>): string[] {
  const tokens = new Set<string>();
  const visit = (value: unknown, depth: number) => {
    if (depth > 4 || !value || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value)) {
      if (k === 'element_token' && typeof v === 'string') tokens.add(v);
      else if (typeof v === 'object') visit(v, depth + 1);
    }
  };
  visit(args, 0);
  return [...tokens].slice(0, 64);
}

/** `role "name"` for every token a call's arguments named, from their resolution before the call ran. */
export function labelsOf(resolved: ReadonlyMap<string, ResolvedToken>): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  for (const [token, { element }] of resolved)
    labels[token] = element.label ? `${element.role} ${JSON.stringify(element.label.slice(0, 80))}` : element.role;
  return Object.keys(labels).length ? labels : undefined;
}

/** Why the element a token names holds a secret (a password, one-time code or card field), or undefined. */
export function secretOf(resolved: ReadonlyMap<string, ResolvedToken>, token: string): string | undefined {
  const element = resolved.get(token)?.element; // absent: stale or invalid, and the call itself says so
  if (!element) return undefined;
  return (
    element.secret ?? (element.role === 'password text' ? 'a password text (AT-SPI role "password text")' : undefined)
  );
}
