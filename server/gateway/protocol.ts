// The gateway's wire protocol (contract section 4): JSON text frames, the connect handshake, scopes,
// and errors that tell a person what to do next.
import { z } from 'zod';

export const SCOPES = ['operator.read', 'operator.write', 'operator.admin', 'operator.approvals'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Who a credential is, and the scopes it holds (the server grants the intersection with what connect
 * asks for). The agent credential holds none here: it reaches /mcp only and is refused at the gateway.
 * A relay is a paired extension presenting its pairing's relay secret.
 */
export type Role = 'operator' | 'relay';
export const ROLE_SCOPES: Record<Role | 'agent', readonly Scope[]> = {
  operator: SCOPES,
  relay: ['operator.read', 'operator.write'],
  agent: [],
};

/** Frames larger than this are refused (before connect: much smaller). */
export const MAX_FRAME_BYTES = 1024 * 1024;
export const MAX_PRECONNECT_BYTES = 64 * 1024;

export const requestFrame = z.strictObject({
  type: z.literal('req'),
  id: z.union([z.string().min(1).max(128), z.number().int()]),
  method: z.string().min(1).max(128),
  params: z.unknown().optional(),
});
export type RequestFrame = z.infer<typeof requestFrame>;

export const connectParams = z.strictObject({
  client: z.strictObject({ id: z.string().min(1).max(128), version: z.string().max(64), mode: z.string().min(1).max(32), displayName: z.string().max(128).optional() }),
  caps: z.array(z.string().max(64)).max(64).default([]),
  role: z.literal('operator'),
  scopes: z.array(z.enum(SCOPES)).max(8),
  auth: z.strictObject({ token: z.string().min(1).max(512) }),
});
export type ConnectParams = z.infer<typeof connectParams>;

/** TOO_MANY: a bound on a table a client grows (links, connections, ...) was reached; details.limit says which. */
export type ErrorCode = 'INVALID_REQUEST' | 'FORBIDDEN' | 'UNAUTHORIZED' | 'UNAVAILABLE' | 'NOT_FOUND' | 'TOO_LARGE' | 'TOO_MANY';

export class GatewayError extends Error {
  constructor(readonly code: ErrorCode, message: string, readonly details?: Record<string, unknown>) { super(message); }
}

/** Whether granted scopes satisfy a required one: admin satisfies everything, write satisfies read. */
export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (granted.includes('operator.admin')) return true;
  if (required === 'operator.read' && granted.includes('operator.write')) return true;
  return granted.includes(required);
}

export function missingScope(method: string, required: Scope): GatewayError {
  return new GatewayError('FORBIDDEN', `${method} needs the ${required} scope; reconnect with "${required}" in connect.scopes (the Control UI asks for it; scopes come from the credential: operator.admin and operator.approvals only from the operator credential)`, { missingScope: required, requiredScopes: [required] });
}

/** Which scope each event needs: a connection only hears what its scopes allow. */
export const EVENT_SCOPES: Record<string, Scope | null> = {
  'sessions.changed': 'operator.read',
  'action': 'operator.read',
  'approval.requested': 'operator.approvals',
  'approval.resolved': 'operator.approvals',
  'ui.command': 'operator.write',
  'terminal.data': 'operator.admin',
  'terminal.exit': 'operator.admin',
  'browser.frame': 'operator.read',
  // The browser panel's tab navigated (its URL bar follows): {tab_id, url, title}; only to the panel's connection.
  'browser.location': 'operator.read',
  // Sent only to the extension's relay connection (cap tab-relay), never broadcast.
  'relay.command': 'operator.write',
  // Each new audit trail entry (audit/store.ts), for the Control UI's log view.
  'audit.entry': 'operator.read',
  'tick': null,
};

// The brake and the audit trail (sessions/brake.ts, audit/): params of their methods.
const sessionKey = z.string().min(1).max(512);
/** sessions.stop / sessions.pause / sessions.resume / sessions.end (scope operator.write). */
export const brakeParams = z.strictObject({ sessionKey });
export type BrakeParams = z.infer<typeof brakeParams>;
/** What sessions.stop/pause/resume answer: the agent's brake state after the change. */
export const brakeStatus = z.object({ state: z.enum(['running', 'paused', 'stopped']), by: z.string().nullable(), since: z.string().nullable(), waiting: z.number().int() });
export type BrakeStatusPayload = z.infer<typeof brakeStatus>;

const when = z.union([z.string().max(64), z.number()]).optional();
export const auditKinds = ['call', 'approval', 'brake', 'operator_input'] as const;
/** audit.query: newest first, paged back with `before` (the previous page's next_before). Times are ISO strings or epoch ms. */
export const auditQueryParams = z.strictObject({
  sessionKey: sessionKey.optional(), tool: z.string().max(128).optional(), verdict: z.string().max(64).optional(),
  kind: z.enum(auditKinds).optional(), text: z.string().max(500).optional(), from: when, to: when,
  before: z.number().int().min(1).optional(), limit: z.number().int().min(1).max(500).default(100),
}).optional();
export type AuditQueryParams = z.infer<typeof auditQueryParams>;
/** audit.image: a recorded call's before or after PNG, base64. */
export const auditImageParams = z.strictObject({ id: z.number().int().min(1), which: z.enum(['before', 'after']) });
/** audit.export: a one-time download URL (GET, valid 60 s) for a session's trail as JSONL or a zip with its images. */
export const auditExportParams = z.strictObject({ sessionKey, format: z.enum(['jsonl', 'zip']).default('jsonl') });
export type AuditExportParams = z.infer<typeof auditExportParams>;
