// The brake's and the audit trail's shapes on the wire (protocol.ts re-exports them: import from there; the
// audit store keeps entries in this shape): who acted, an entry, a query and its page, the sessions the trail
// knows, the fleet's view with a shared store, and the image and export requests. Zod only (bundled for the browser).
import { z } from 'zod';
import { approvalRequest, evidenceItem, sessionRow } from '../../contract/wire.js';

/** A session key as the gateway's methods take it. */
export const sessionKey = z.string().min(1).max(512);
/** sessions.stop / sessions.pause / sessions.resume / sessions.end (scope operator.write). */
export const brakeParams = z.strictObject({ sessionKey });
export type BrakeParams = z.infer<typeof brakeParams>;

/**
 * Who acted, as the trail keeps it for good (the session may end, the gateway restart): the MCP client's
 * name and version (initialize's clientInfo), the credential it connected with (an id, never the secret),
 * its connection and the session label.
 */
export const auditActor = z.strictObject({
  client: z.string(),
  client_version: z.string(),
  /** `agent` (the agent credential over /mcp), `agent+link:<id>` (with an agent link; the id is a hash, not the link), `stdio` (started by its client). */
  credential: z.string(),
  connection: z.string(),
  /** The session label; `implicit` for the connection's default session. */
  session: z.string(),
  transport: z.string(),
});
export type AuditActor = z.infer<typeof auditActor>;

export const auditKinds = ['call', 'approval', 'brake', 'operator_input'] as const;
export type AuditKind = (typeof auditKinds)[number];

/**
 * One entry of the audit trail: audit/store.ts writes it as one JSONL line, audit.query pages through
 * them, and the audit.entry event carries each new one (without its result).
 */
export const auditEntry = z.strictObject({
  id: z.number().int(),
  at: z.string(),
  kind: z.enum(auditKinds),
  sessionKey: z.string(),
  /** The tool of a call or approval; the brake's verb (stop, pause, resume, end); browser.input for operator input. */
  tool: z.string(),
  /**
   * A call: its effect (confirmed, mismatch, ...), `refused`, `ok` or `failed`. An approval: requested,
   * approved, denied, timed_out, cancelled. The brake: stopped, paused, resumed, ended. Input: input.
   */
  verdict: z.string(),
  /** One line for the log: the arguments with element tokens shown as their labels. */
  summary: z.string(),
  args: z.record(z.string(), z.unknown()).optional(),
  result: z.unknown().optional(),
  isError: z.boolean().optional(),
  refusal: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  evidence: z.array(evidenceItem).optional(),
  /** element_token -> `role "name"` at the time of the call. */
  labels: z.record(z.string(), z.string()).optional(),
  /** Who did it, for what an operator did (approve, deny, stop, input). */
  by: z.string().optional(),
  /** The agent whose session this is (every entry of a session that had a connection). */
  actor: auditActor.optional(),
  /** An approval: the page or app the held call acted on. */
  target: approvalRequest.shape.target,
  /** The approval a call went through, and who gave it. */
  approval: z.strictObject({ id: z.string(), by: z.string().optional() }).optional(),
  duration_ms: z.number().optional(),
  /** With a shared audit store (--audit-store postgres://…): the gateway that wrote it (its own id is local to that gateway). */
  gateway: z.string().optional(),
  /** The call's recording step: the folder and its before/after PNG file names. */
  recording: z
    .strictObject({
      dir: z.string(),
      step: z.number().int(),
      before: z.string().optional(),
      after: z.string().optional(),
      /** Where the call's target element was in the images (CSS pixels of the page), when a token named it. */
      target: z.strictObject({ x: z.number(), y: z.number(), w: z.number(), h: z.number() }).optional(),
    })
    .optional(),
});
export type AuditEntry = z.infer<typeof auditEntry>;

const when = z.union([z.string().max(64), z.number()]).optional();
/** audit.query: newest first, paged back with `before` (the previous page's next_before). Times are ISO strings or epoch ms. */
export const auditQueryParams = z
  .strictObject({
    sessionKey: sessionKey.optional(),
    tool: z.string().max(128).optional(),
    verdict: z.string().max(64).optional(),
    kind: z.enum(auditKinds).optional(),
    /** The agent: entries whose actor's client (clientInfo name) is this, across its sessions. */
    client: z.string().max(256).optional(),
    /** With a shared audit store: only the entries this gateway wrote (entry.gateway). */
    gateway: z.string().max(256).optional(),
    text: z.string().max(500).optional(),
    from: when,
    to: when,
    before: z.number().int().min(1).optional(),
    limit: z.number().int().min(1).max(500).default(100),
  })
  .optional();
export type AuditQueryParams = z.infer<typeof auditQueryParams>;
/** A page of audit.query: `next_before` continues the search (null: the beginning of the trail). */
export const auditPage = z.strictObject({
  entries: z.array(auditEntry),
  next_before: z.number().int().nullable(),
  total: z.number().int(),
});
export type AuditPage = z.infer<typeof auditPage>;
/** The sessions the trail knows, newest first. */
export const auditSession = z.strictObject({
  sessionKey: z.string(),
  entries: z.number().int(),
  /** What its entries take of the trail (each session may hold up to the result's share_bytes). */
  bytes: z.number().int(),
  /** Its calls that were refused and not kept because it or the trail had no room (too_many_audit_bytes). */
  refused: z.number().int().optional(),
  last: z.string(),
  /** Who the session's agent was (kept after it ended). */
  actor: auditActor.optional(),
});
export type AuditSession = z.infer<typeof auditSession>;
/**
 * The fleet's sessions (fleet.sessions, fleet.changed): with a shared audit store every gateway publishes its
 * session rows and a heartbeat to the database; a gateway whose heartbeat is older than the bound is gone,
 * and its sessions are shown ended (`ended_reason: "gateway gone"`). Without one: `shared` false, this
 * gateway alone (its own rows are sessions.list).
 */
export const fleetView = z.strictObject({
  shared: z.boolean(),
  /** This gateway's name in the shared trail (entry.gateway), null without one. */
  gateway: z.string().nullable(),
  /** A gateway is gone when its heartbeat is older than this. */
  gone_after_ms: z.number().int(),
  gateways: z.array(z.strictObject({ gateway: z.string(), heartbeat: z.string(), live: z.boolean() })),
  sessions: z.array(
    z.strictObject({
      gateway: z.string(),
      live: z.boolean(),
      ended_reason: z.literal('gateway gone').optional(),
      row: sessionRow,
    }),
  ),
  /** Calls held for an operator on every live gateway (this one's too): any console may decide them (fleet.resolve). */
  approvals: z.array(z.strictObject({ gateway: z.string(), request: approvalRequest })),
});
export type FleetView = z.infer<typeof fleetView>;

/** audit.image: a recorded call's before or after PNG, base64. */
export const auditImageParams = z.strictObject({ id: z.number().int().min(1), which: z.enum(['before', 'after']) });
/** audit.export: a one-time download URL (GET, valid 60 s) for a session's trail as JSONL or a zip with its images. */
export const auditExportParams = z.strictObject({ sessionKey, format: z.enum(['jsonl', 'zip']).default('jsonl') });
export type AuditExportParams = z.infer<typeof auditExportParams>;
