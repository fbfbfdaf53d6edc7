// Operator approvals: a tool the policy holds for approval waits (bounded) for an operator with the
// operator.approvals scope to approve or deny it. With no operator connected it is refused at once.
import { EventEmitter } from 'node:events';
import { Refusal } from './routing/refusal.js';
import { LIMITS } from './limits.js';

/** What an approver sees: the tool, a one-line summary, and the call's arguments whole (never cut). */
export interface ApprovalRequest { id: string; tool: string; summary: string; arguments: Record<string, unknown>; sessionKey: string; requestedAt: string }

export const APPROVAL_TIMEOUT_MS = 120_000;

export class Approvals extends EventEmitter {
  private readonly pending = new Map<string, { request: ApprovalRequest; decide: (approved: boolean) => void }>();
  private counter = 0;
  /** Counts the connected operators who can approve: registered by the gateway; none without one. */
  private approvers: () => number = () => 0;

  /** The gateway tells how to count its approvers; returns the function that takes it back. */
  registerApprovers(count: () => number): () => void {
    this.approvers = count;
    return () => { if (this.approvers === count) this.approvers = () => 0; };
  }

  list(): ApprovalRequest[] { return [...this.pending.values()].map((p) => p.request); }

  async request(tool: string, summary: string, sessionKey: string, args: Record<string, unknown> = {}, timeoutMs = APPROVAL_TIMEOUT_MS): Promise<void> {
    if (this.approvers() === 0) {
      throw new Refusal('not_permitted', `${tool} needs an operator's approval under the policy, and no Control UI with the operator.approvals scope is connected; open the Control UI and call again`, { needs_approval: true, tool });
    }
    if (this.pending.size >= LIMITS.pendingApprovals) {
      throw new Refusal('too_many_approvals', `${LIMITS.pendingApprovals} calls already wait for an operator's approval (VERITY_MAX_PENDING_APPROVALS); call again once some are decided`, { needs_approval: true, tool, limit: LIMITS.pendingApprovals, retryable: true });
    }
    const request: ApprovalRequest = { id: `ap-${++this.counter}`, tool, summary, arguments: args, sessionKey, requestedAt: new Date().toISOString() };
    const approved = await new Promise<boolean | null>((resolve) => {
      const timer = setTimeout(() => { this.pending.delete(request.id); this.emit('resolved', { id: request.id, approved: false, reason: 'timeout' }); resolve(null); }, timeoutMs);
      this.pending.set(request.id, { request, decide: (ok) => { clearTimeout(timer); resolve(ok); } });
      this.emit('requested', request);
    });
    if (approved === null) throw new Refusal('not_permitted', `${tool} waited ${Math.round(timeoutMs / 1000)} s for an operator's approval and got none`, { needs_approval: true, tool, retryable: true });
    if (!approved) throw new Refusal('not_permitted', `an operator denied ${tool}`, { denied: true, tool });
  }

  resolve(id: string, approved: boolean): boolean {
    const entry = this.pending.get(id);
    if (!entry) return false;
    this.pending.delete(id);
    entry.decide(approved);
    this.emit('resolved', { id, approved, reason: 'operator' });
    return true;
  }
}
