// Operator approvals: a tool the policy holds for approval waits (bounded) for an operator with the
// operator.approvals scope to approve or deny it. With no operator connected it is refused at once.
import { EventEmitter } from 'node:events';
import { Refusal } from './contract/refusal.js';
import { LIMITS } from './limits.js';

/**
 * What an approver sees (the tool, a one-line summary, the arguments whole) and how a request ended: wire
 * shapes, declared once in contract/wire.ts.
 */
export type { ApprovalRequest, ApprovalResolved as ApprovalOutcome, ApprovalTarget } from './contract/wire.js';
import type { ApprovalRequest, ApprovalResolved as ApprovalOutcome, ApprovalTarget } from './contract/wire.js';

export interface ApprovalOptions {
  timeoutMs?: number;
  /** The brake (or the session's end): the card goes, reason `cancelled`. */
  signal?: AbortSignal;
  /** The client gave up (its request cancelled, its connection closed): the card is withdrawn, its reason the detail. */
  clientGone?: AbortSignal;
  labels?: Record<string, string>;
  target?: ApprovalTarget;
}

/**
 * How long a held call waits by default (--approval-timeout-s): under the 60 s an MCP SDK client waits for
 * a reply by default, so such a client hears the time-out rather than giving up first.
 */
export const APPROVAL_TIMEOUT_MS = 55_000;

/** What approvals tell their listeners (the gateway sends both on; the audit trail notes both). */
interface ApprovalEvents {
  requested: [request: ApprovalRequest];
  resolved: [outcome: ApprovalOutcome];
}

export class Approvals extends EventEmitter<ApprovalEvents> {
  private readonly pending = new Map<
    string,
    { request: ApprovalRequest; decide: (approved: boolean, by?: string) => void }
  >();
  private counter = 0;
  /** Counts the connected operators who can approve: registered by the gateway; none without one. */
  private approvers: () => number = () => 0;

  /** The gateway tells how to count its approvers; returns the function that takes it back. */
  registerApprovers(count: () => number): () => void {
    this.approvers = count;
    return () => {
      if (this.approvers === count) this.approvers = () => 0;
    };
  }

  list(): ApprovalRequest[] {
    return [...this.pending.values()].map((p) => p.request);
  }

  /** Waits for an operator's decision; resolves with who approved, or refuses (denied, timed out, cancelled). */
  async request(
    tool: string,
    summary: string,
    sessionKey: string,
    args: Record<string, unknown> = {},
    options: ApprovalOptions = {},
  ): Promise<{ id: string; by?: string }> {
    const timeoutMs = options.timeoutMs ?? APPROVAL_TIMEOUT_MS;
    if (this.approvers() === 0) {
      throw new Refusal(
        'not_permitted',
        `${tool} needs an operator's approval under the policy, and no Control UI with the operator.approvals scope is connected; open the Control UI and call again`,
        { needs_approval: true, tool },
      );
    }
    if (this.pending.size >= LIMITS.pendingApprovals) {
      throw new Refusal(
        'too_many_approvals',
        `${LIMITS.pendingApprovals} calls already wait for an operator's approval (VERITY_MAX_PENDING_APPROVALS); call again once some are decided`,
        { needs_approval: true, tool, limit: LIMITS.pendingApprovals, retryable: true },
      );
    }
    const { signal, clientGone } = options;
    if (signal?.aborted) throw signal.reason;
    if (clientGone?.aborted) throw withdrawnRefusal(tool, clientGone);
    const now = Date.now();
    const request: ApprovalRequest = {
      id: `ap-${++this.counter}`,
      tool,
      summary,
      arguments: args,
      sessionKey,
      requestedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + timeoutMs).toISOString(),
      ...(options.labels && Object.keys(options.labels).length ? { labels: options.labels } : {}),
      ...(options.target ? { target: options.target } : {}),
    };
    const outcome = (
      approved: boolean,
      reason: ApprovalOutcome['reason'],
      by?: string,
      detail?: string,
    ): ApprovalOutcome => ({
      id: request.id,
      approved,
      reason,
      ...(by ? { by } : {}),
      ...(detail ? { detail } : {}),
      tool,
      sessionKey,
    });
    type Decision = { approved: boolean; by?: string } | null | 'cancelled' | 'withdrawn';
    const decision = await new Promise<Decision>((resolve) => {
      const finish = (value: Decision) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        clientGone?.removeEventListener('abort', onGone);
        resolve(value);
      };
      // Nobody is left to hear the answer: the card is withdrawn (marked so), not left counting down.
      const onGone = () => {
        this.pending.delete(request.id);
        this.emit('resolved', outcome(false, 'withdrawn', undefined, goneBecause(clientGone!)));
        finish('withdrawn');
      };
      // The brake stopped the agent (or its session ended): the card goes away and the call is refused with the brake's reason.
      const onAbort = () => {
        this.pending.delete(request.id);
        this.emit('resolved', outcome(false, 'cancelled'));
        finish('cancelled');
      };
      const timer = setTimeout(() => {
        this.pending.delete(request.id);
        this.emit('resolved', outcome(false, 'timeout'));
        finish(null);
      }, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      clientGone?.addEventListener('abort', onGone, { once: true });
      this.pending.set(request.id, { request, decide: (approved, by) => finish({ approved, by }) });
      this.emit('requested', request);
    });
    if (decision === 'cancelled') throw signal!.reason;
    if (decision === 'withdrawn') throw withdrawnRefusal(tool, clientGone!, request.id);
    if (decision === null)
      throw new Refusal(
        'not_permitted',
        `${tool} waited ${Math.round(timeoutMs / 1000)} s for an operator's approval and got none`,
        { needs_approval: true, tool, retryable: true, approval_id: request.id },
      );
    if (!decision.approved)
      throw new Refusal('not_permitted', `an operator${decision.by ? ` (${decision.by})` : ''} denied ${tool}`, {
        denied: true,
        tool,
        approval_id: request.id,
        ...(decision.by ? { denied_by: decision.by } : {}),
      });
    return { id: request.id, by: decision.by };
  }

  /** An operator's decision; `by` names the operator (shown on the card and in the audit trail). */
  resolve(id: string, approved: boolean, by?: string): boolean {
    const entry = this.pending.get(id);
    if (!entry) return false;
    this.pending.delete(id);
    entry.decide(approved, by);
    const outcome: ApprovalOutcome = {
      id,
      approved,
      reason: 'operator',
      ...(by ? { by } : {}),
      tool: entry.request.tool,
      sessionKey: entry.request.sessionKey,
    };
    this.emit('resolved', outcome);
    return true;
  }
}

/** Why a client is taken to have given up: its abort reason when it is a sentence, else that it cancelled. */
function goneBecause(clientGone: AbortSignal): string {
  const reason = clientGone.reason;
  if (typeof reason === 'string' && reason) return reason;
  return 'the client cancelled the request';
}

/** The refusal of a call whose client gave up waiting (it is recorded; the client itself hears nothing). */
function withdrawnRefusal(tool: string, clientGone: AbortSignal, approvalId?: string): Refusal {
  return new Refusal(
    'not_permitted',
    `${tool} was withdrawn from the approval queue before an operator decided: ${goneBecause(clientGone)}`,
    { needs_approval: true, tool, withdrawn: true, ...(approvalId ? { approval_id: approvalId } : {}) },
  );
}
