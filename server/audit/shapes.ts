// The shapes the audit trail's callers and its stores share (store.ts re-exports them): a query of the
// trail, the retention the operator set, the brake verbs a console sends the fleet, and why an entry is not
// yet where the operators read it or why a session may add nothing more.
import type { AuditKind } from '../gateway/protocol.js';

export interface AuditQuery {
  sessionKey?: string;
  tool?: string;
  verdict?: string;
  kind?: AuditKind;
  /** The agent: its actor's client name, across its sessions. */
  client?: string;
  /** A shared store's filter: the gateway that wrote the entry (this trail's own entries name none). */
  gateway?: string;
  text?: string;
  /** ISO times or epoch ms: entries at or after `from`, before `to`. */
  from?: number;
  to?: number;
  /** Page back: only entries with an id below this. */
  before?: number;
  limit?: number;
}

export interface Retention {
  /** Entries older than this leave (whole segments); nothing younger is ever deleted. */
  maxAgeMs: number;
  /** The trail's size cap: never exceeded; agents are refused before it would be. */
  maxBytes: number;
}

/** The brake verbs a console may send to the whole fleet (fleet.brake). */
export type FleetBrakeVerb = 'stop' | 'pause' | 'resume';

/** Why an entry is not yet where the operators read it: said in the call's result and on stderr. */
export interface AuditUnavailable {
  code: 'audit_unavailable';
  message: string;
}

/** Why a session may add nothing more to the trail now, and when room is expected (the oldest segment ages out). */
export interface NoRoom {
  message: string;
  retryAfterS: number;
}

/** Retention from the environment: VERITY_AUDIT_MAX_AGE_DAYS (default 30) and VERITY_AUDIT_MAX_MB (default 256). */
export function retentionOf(maxAgeDays: number | undefined, maxMb: number | undefined): Retention {
  return { maxAgeMs: (maxAgeDays ?? 30) * 86_400_000, maxBytes: (maxMb ?? 256) * 1024 * 1024 };
}
