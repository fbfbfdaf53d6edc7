// Gateway methods of the brake (sessions.stop/pause/resume/end, scope operator.write) and of the audit
// trail (audit.*, scope operator.read), and the one-time download route of an export (GET /audit/export).
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { GatewayConnection } from './connection.js';
import type { SessionManager } from '../sessions/manager.js';
import type { Brake } from '../sessions/brake.js';
import type { AuditStore } from '../audit/store.js';
import { GatewayError, type AuditExportParams, type Method } from './protocol.js';
import type { MethodHandler } from './method-handler.js';
import { connectionOfKey } from '../sessions/brake.js';
import { Refusal } from '../contract/refusal.js';
import { exportJsonl, exportZip, noteBrake, noteOperatorInput, recordingImage } from '../audit/trail.js';

/** What these methods use of the gateway (a part of methods.ts's MethodContext, declared here: no import cycle). */
export interface BrakeMethodContext {
  readonly brake: Brake;
  readonly audit: AuditStore;
  readonly sessions: Pick<SessionManager, 'all' | 'keyOf' | 'list' | 'end'>;
  agentConnected(connectionId: string): boolean;
}

/** Who did it, for the audit trail and the cards: the client's name and a short connection id (two UIs apart). */
export function operatorName(conn: GatewayConnection): string {
  const client = conn.hello?.client;
  return `${client?.displayName || client?.id || 'operator'} #${conn.connId.slice(0, 4)}`;
}

/** The agent (MCP connection) a session row belongs to; NOT_FOUND when it is gone. */
function agentOf(gw: BrakeMethodContext, sessionKey: string): string {
  const connectionId = connectionOfKey(sessionKey);
  if (!gw.agentConnected(connectionId) && !gw.sessions.list(connectionId).length) {
    throw new GatewayError(
      'NOT_FOUND',
      `no agent connection for ${sessionKey}; sessions.list names the current sessions`,
    );
  }
  return connectionId;
}

function parseTime(value: string | number | undefined, field: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new GatewayError('INVALID_REQUEST', `audit.query: ${field}: not a time (an ISO date or epoch milliseconds)`);
  return ms;
}

/** One-time export downloads: unguessable, valid for a minute, at most a few at once. */
const EXPORT_TTL_MS = 60_000;
const EXPORT_TICKETS_MAX = 16;
const tickets = new Map<string, { params: AuditExportParams; expires: number }>();

type BrakeMethod = Extract<
  Method,
  `sessions.${'stop' | 'pause' | 'resume' | 'end'}` | `audit.${string}` | 'fleet.sessions' | 'fleet.brake'
>;

/**
 * A fleet brake decision, as this gateway applies it to its own agents: every active session's agent (or the
 * session named, when this gateway holds it), each noted in the trail with who decided it and from where.
 */
export function applyFleetBrake(
  gw: BrakeMethodContext,
  verb: 'stop' | 'pause' | 'resume',
  sessionKey: string | null,
  by: string,
): void {
  const keys = new Set(
    gw.sessions
      .all()
      .filter((s) => s.state === 'active')
      .map((s) => gw.sessions.keyOf(s) as string)
      .filter((key) => sessionKey === null || key === sessionKey),
  );
  for (const key of keys) {
    const agent = connectionOfKey(key);
    if (verb === 'stop') gw.brake.stop(agent, by);
    else if (verb === 'pause') {
      if (gw.brake.status(agent).state === 'stopped') continue;
      gw.brake.pause(agent, by);
    } else if (!gw.brake.resume(agent)) continue;
    noteBrake(gw.audit, key, verb, by);
  }
}

/** Their entries in the method table (methods.ts): params and results are declared in protocol.ts. */
export const BRAKE_HANDLERS: { [M in BrakeMethod]: MethodHandler<M, BrakeMethodContext> } = {
  'sessions.stop': {
    scope: 'operator.write',
    handler: (p, conn, gw) => {
      const agent = agentOf(gw, p.sessionKey);
      const by = operatorName(conn);
      gw.brake.stop(agent, by);
      noteBrake(gw.audit, p.sessionKey, 'stop', by);
      return gw.brake.status(agent);
    },
  },
  'sessions.pause': {
    scope: 'operator.write',
    handler: (p, conn, gw) => {
      const agent = agentOf(gw, p.sessionKey);
      const by = operatorName(conn);
      if (gw.brake.status(agent).state === 'stopped')
        throw new GatewayError('INVALID_REQUEST', `${p.sessionKey} is stopped; sessions.resume lets it run again`);
      gw.brake.pause(agent, by);
      noteBrake(gw.audit, p.sessionKey, 'pause', by);
      return gw.brake.status(agent);
    },
  },
  'sessions.resume': {
    scope: 'operator.write',
    handler: (p, conn, gw) => {
      const agent = agentOf(gw, p.sessionKey);
      if (gw.brake.resume(agent)) noteBrake(gw.audit, p.sessionKey, 'resume', operatorName(conn));
      return gw.brake.status(agent);
    },
  },
  // As if the agent had called end_session: its cleanup hooks run once, its label is a tombstone (the next
  // call is refused session_ended), and what its running calls wait for is cancelled.
  'sessions.end': {
    scope: 'operator.write',
    handler: async (p, conn, gw) => {
      const session = gw.sessions.all().find((s) => s.state === 'active' && gw.sessions.keyOf(s) === p.sessionKey);
      if (!session) throw new GatewayError('NOT_FOUND', `no active session ${p.sessionKey}; sessions.list names them`);
      const by = operatorName(conn);
      gw.brake.cancelSession(
        p.sessionKey,
        new Refusal('session_ended', `an operator (${by}) ended this session`, { by }),
      );
      await gw.sessions.end(session, 'end_session');
      noteBrake(gw.audit, p.sessionKey, 'end', by);
      return { ok: true, sessionKey: p.sessionKey };
    },
  },
  'audit.query': {
    scope: 'operator.read',
    handler: (p, _c, gw) =>
      gw.audit.search({
        sessionKey: p?.sessionKey,
        tool: p?.tool || undefined,
        verdict: p?.verdict || undefined,
        kind: p?.kind,
        client: p?.client || undefined,
        gateway: p?.gateway || undefined,
        text: p?.text,
        from: parseTime(p?.from, 'from'),
        to: parseTime(p?.to, 'to'),
        before: p?.before,
        limit: p?.limit ?? 100,
      }),
  },
  'audit.sessions': {
    scope: 'operator.read',
    handler: (_p, _c, gw) => ({
      sessions: gw.audit.sessions(),
      bytes: gw.audit.bytes,
      max_bytes: gw.audit.retention.maxBytes,
      share_bytes: gw.audit.shareBytes,
      dir: gw.audit.dir,
    }),
  },
  'fleet.brake': {
    scope: 'operator.write',
    handler: async (p, conn, gw) => {
      const here = gw.audit.fleetName;
      const by = `${operatorName(conn)} on ${here ?? 'this gateway'}`;
      if (!here)
        throw new GatewayError(
          'UNAVAILABLE',
          'fleet.brake needs a shared audit store (--audit-store postgres://…); sessions.stop and sessions.pause brake this gateway',
        );
      const gateways = await gw.audit.brakeFleet(p.verb, p.gateway ?? null, p.sessionKey ?? null, by);
      if (!gateways)
        throw new GatewayError(
          'NOT_FOUND',
          `no live gateway${p.gateway ? ` named ${p.gateway}` : ''} in the shared store`,
        );
      return { ok: true as const, by, gateways };
    },
  },
  'fleet.sessions': {
    scope: 'operator.read',
    handler: (_p, _c, gw) => gw.audit.fleet(),
  },
  'audit.image': {
    scope: 'operator.read',
    handler: (p, _c, gw) => {
      const entry = gw.audit.get(p.id);
      if (!entry) throw new GatewayError('NOT_FOUND', `no audit entry ${p.id} (retention may have removed it)`);
      const png = recordingImage(entry, p.which);
      if (!png)
        throw new GatewayError(
          'NOT_FOUND',
          `entry ${p.id} has no ${p.which} image: only calls of a recording session (start_session recording_dir) keep before/after images`,
        );
      return { mimeType: 'image/png', data: png.toString('base64') };
    },
  },
  'audit.export': {
    scope: 'operator.read',
    handler: (p) => {
      const now = Date.now();
      for (const [t, v] of tickets) if (v.expires < now) tickets.delete(t);
      if (tickets.size >= EXPORT_TICKETS_MAX)
        throw new GatewayError(
          'TOO_MANY',
          `${EXPORT_TICKETS_MAX} exports wait to be downloaded; download them or wait a minute`,
          { limit: 'audit exports' },
        );
      const ticket = randomBytes(24).toString('base64url');
      tickets.set(ticket, { params: p, expires: now + EXPORT_TTL_MS });
      return { url: `/audit/export?ticket=${ticket}`, filename: exportName(p), expiresInMs: EXPORT_TTL_MS };
    },
  },
};

function exportName(p: AuditExportParams): string {
  return `verity-${p.sessionKey.replace(/[^\w.-]+/g, '_').slice(0, 80)}.${p.format}`;
}

/** GET /audit/export?ticket=…: the ticket is the credential (one use, a minute), so a plain link downloads it. */
export function serveAuditExport(
  gw: Pick<BrakeMethodContext, 'audit'>,
  url: URL,
  res: ServerResponse,
  headers: Record<string, string>,
): void {
  const ticket = url.searchParams.get('ticket') ?? '';
  const found = tickets.get(ticket);
  tickets.delete(ticket);
  if (!found || found.expires < Date.now()) {
    res
      .writeHead(404, { 'content-type': 'text/plain', ...headers })
      .end(
        'no such export, or it expired (a download link works once, for a minute): export again from the Control UI (audit.export)',
      );
    return;
  }
  const entries = gw.audit.sessionEntries(found.params.sessionKey);
  const body =
    found.params.format === 'zip'
      ? exportZip(entries, found.params.sessionKey)
      : Buffer.from(exportJsonl(entries, found.params.sessionKey));
  res
    .writeHead(200, {
      'content-type': found.params.format === 'zip' ? 'application/zip' : 'application/x-ndjson',
      'content-disposition': `attachment; filename="${exportName(found.params)}"`,
      'cache-control': 'no-store',
      ...headers,
    })
    .end(body);
}

/** Logs the operator's input in the browser panel under the session that drives that tab (or `operator`). */
export function logOperatorInput(
  gw: BrakeMethodContext,
  conn: GatewayConnection,
  input: { tab_id: string; type: string; x?: number; y?: number; key?: string; text?: string; deltaY?: number },
): void {
  const owner = gw.sessions.all().find((s) => s.state === 'active' && s.tabs.has(input.tab_id));
  noteOperatorInput(gw.audit, owner ? gw.sessions.keyOf(owner) : 'operator', input, operatorName(conn));
}
