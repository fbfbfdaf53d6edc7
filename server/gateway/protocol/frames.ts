// The gateway protocol's frames (protocol.ts re-exports them: import from there): the scopes and roles, the
// bounds on a frame, the request, response and event frames, the error codes and GatewayError, and the
// connect handshake. Zod only, so that Vite and esbuild bundle it for the browser as it is.
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

// ---- frames ----

export const requestId = z.union([z.string().min(1).max(128), z.number().int()]);

export const requestFrame = z.strictObject({
  type: z.literal('req'),
  id: requestId,
  method: z.string().min(1).max(128),
  params: z.unknown().optional(),
});
export type RequestFrame = z.infer<typeof requestFrame>;

/** TOO_MANY: a bound on a table a client grows (links, connections, ...) was reached; details.limit says which. */
export const ERROR_CODES = [
  'INVALID_REQUEST',
  'FORBIDDEN',
  'UNAUTHORIZED',
  'UNAVAILABLE',
  'NOT_FOUND',
  'TOO_LARGE',
  'TOO_MANY',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const errorShape = z.strictObject({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** The answer to a request; id is null when the request could not even be read. */
export const responseFrame = z.union([
  z.strictObject({ type: z.literal('res'), id: requestId.nullable(), ok: z.literal(true), payload: z.unknown() }),
  z.strictObject({ type: z.literal('res'), id: requestId.nullable(), ok: z.literal(false), error: errorShape }),
]);
export type ResponseFrame = z.infer<typeof responseFrame>;

/** An event; seq counts the events of one connection (1, 2, 3, ...). */
export const eventFrame = z.strictObject({
  type: z.literal('event'),
  event: z.string(),
  payload: z.unknown(),
  seq: z.number().int(),
});
export type EventFrame = z.infer<typeof eventFrame>;

/** Every frame the gateway sends. */
export type ServerFrame = ResponseFrame | EventFrame;

// ---- connect ----

export const connectParams = z.strictObject({
  client: z.strictObject({
    id: z.string().min(1).max(128),
    version: z.string().max(64),
    mode: z.string().min(1).max(32),
    displayName: z.string().max(128).optional(),
  }),
  caps: z.array(z.string().max(64)).max(64).default([]),
  role: z.literal('operator'),
  scopes: z.array(z.enum(SCOPES)).max(8),
  auth: z.strictObject({ token: z.string().min(1).max(512) }),
});
export type ConnectParams = z.infer<typeof connectParams>;

/**
 * The one frame before connect, sent only to a socket opened as `/gateway?challenge=1`: a nonce the
 * client proves the operator credential with (`auth.token` = `proof.` + hex HMAC-SHA256(credential,
 * nonce)) instead of sending it, so whatever answers on the port in the gateway's absence never sees it.
 */
export const CONNECT_CHALLENGE = 'connect.challenge' as const;
export const connectChallenge = z.strictObject({
  type: z.literal('event'),
  event: z.literal(CONNECT_CHALLENGE),
  payload: z.strictObject({ nonce: z.string() }),
  seq: z.literal(0),
});
export const PROOF_PREFIX = 'proof.' as const;

export const helloOk = z.strictObject({
  type: z.literal('hello-ok'),
  connId: z.string(),
  scopes: z.array(z.string()),
  /** The methods and events this connection's scopes reach. */
  methods: z.array(z.string()),
  events: z.array(z.string()),
  policy: z.strictObject({ maxPayload: z.number().int() }),
  /**
   * Operator connections: a single-use ticket that connects once more in place of the credential (as
   * `auth.token`), for a reloaded page that keeps no credential in web storage (gateway/resume.ts).
   */
  resume_token: z.string().optional(),
});
export type HelloOk = z.infer<typeof helloOk>;

// ---- errors and scopes ----

export class GatewayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Whether granted scopes satisfy a required one: admin satisfies everything, write satisfies read. */
export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (granted.includes('operator.admin')) return true;
  if (required === 'operator.read' && granted.includes('operator.write')) return true;
  return granted.includes(required);
}

export function missingScope(method: string, required: Scope): GatewayError {
  return new GatewayError(
    'FORBIDDEN',
    `${method} needs the ${required} scope; reconnect with "${required}" in connect.scopes (the Control UI asks for it; scopes come from the credential: operator.admin and operator.approvals only from the operator credential)`,
    { missingScope: required, requiredScopes: [required] },
  );
}
