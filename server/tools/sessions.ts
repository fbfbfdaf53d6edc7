// Session tools (seed 000). Sessions carry lifecycle only (cursor, recording, per-session config,
// cleanup); the connection supplies all authority.
import { z } from 'zod';
import type { CallContext, ToolContext } from './context.js';
import { Refusal } from '../contract/refusal.js';
import { STYLES, TIMINGS, type MotionInput } from '../sessions/cursor-config.js';
import { newSession, type Session } from '../sessions/manager.js';
import { claimRecording, recordingOwner, recordingPath, startRecording } from '../sessions/recording.js';
import { cursorOf, sessionSummary } from '../sessions/summary.js';
import { DESTRUCTIVE, READ_ONLY, defineTool } from './define.js';
import { plainName, session as sessionArg } from './schemas.js';

const effectToggle = z.union([z.boolean(), z.literal('default')]);
/** Numbers are accepted as given and clamped to the seed's ranges (never refused for being out of range). */
export const cursorMotion = z.strictObject({
  style: z.enum(STYLES).optional(),
  timing: z.enum(TIMINGS).optional(),
  arc_flow: z.number().finite().optional(),
  arc_size: z.number().finite().optional(),
  start_handle: z.number().finite().optional(),
  end_handle: z.number().finite().optional(),
  spring: z.number().finite().optional(),
  glide_duration_ms: z.number().finite().optional(),
  dwell_after_click_ms: z.number().finite().optional(),
  idle_hide_ms: z.number().finite().optional(),
  turn_radius: z.number().finite().optional(),
  effects: z
    .strictObject({
      trail: effectToggle.optional(),
      click_ripple: effectToggle.optional(),
      follow_through: effectToggle.optional(),
    })
    .optional(),
});
const cursorTheme = z.strictObject({
  theme_id: plainName(200, 1).optional(),
  reduced_motion: z.enum(['auto', 'on', 'off']).optional(),
});

/**
 * The summary with `cursor.visible` read back from the tab the session drives: true only while the agent
 * cursor is really drawn there (not merely because an action resolved a target, and not after it idled out).
 */
async function summaryRead(core: ToolContext, session: Session) {
  const summary = sessionSummary(core.cursor, session);
  // A closed tab or a busy page shows no cursor.
  summary.cursor.visible =
    session.cursor.visible &&
    session.state === 'active' &&
    !!session.currentTabId &&
    (await core.cursorShown(session.currentTabId));
  return summary;
}

function visible(core: ToolContext, ctx: CallContext, label: string | undefined): Session {
  const found = core.sessions.find(ctx.connectionId, label);
  if (found) return found;
  if (label !== undefined && !['', 'default'].includes(label.trim()))
    throw new Refusal('target_not_found', `no session "${label}" on this connection; start_session creates it`);
  return notYetStarted(ctx.connectionId);
}

/**
 * A connection's implicit session as it is before its first action creates it (seed 000: "omit session to
 * inspect its implicit session"). Reading it creates nothing, so list_sessions stays as it was.
 */
function notYetStarted(connectionId: string): Session {
  return newSession(connectionId, null);
}

const summaryOutput = z.object({
  session: z.string().nullable(),
  implicit: z.boolean(),
  state: z.enum(['active', 'ending', 'ended']),
  cursor: z.object({
    visible: z.boolean(),
    motion: z.record(z.string(), z.unknown()),
    theme: z.record(z.string(), z.unknown()),
  }),
  recording_active: z.boolean(),
  idle_seconds: z.number().int(),
});

export const startSession = defineTool({
  name: 'start_session',
  description: 'Start or revive a session label (every tool takes session).',
  input: z.strictObject({
    session: sessionArg,
    capture_scope: z.enum(['auto', 'window', 'desktop']).optional().describe('Deprecated compatibility policy.'),
    cursor_motion: cursorMotion.optional(),
    cursor_theme: cursorTheme.optional(),
    recording_dir: plainName(4096, 1)
      .optional()
      .describe('Folder (relative, under <config dir>/recordings/) recording each action: call, result, screenshots.'),
  }),
  output: summaryOutput.extend({ active: z.boolean(), revived: z.boolean(), recording_path: z.string().optional() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  sessionless: true,
  advanced: ['capture_scope', 'cursor_motion', 'cursor_theme'],
  async handler(args, core, ctx) {
    const recordTo = args.recording_dir ? recordingPath(args.recording_dir) : undefined; // refused before anything changes
    if (recordTo && args.recording_dir)
      claimRecording(
        recordTo,
        recordingOwner(core.sessions.keyFor(ctx.connectionId, args.session)),
        args.recording_dir,
      );
    const { session, revived } = core.sessions.start(ctx.connectionId, args.session);
    if (args.cursor_motion) session.cursor.start = args.cursor_motion as MotionInput;
    if (args.cursor_theme) session.cursor.theme = { ...session.cursor.theme, ...args.cursor_theme };
    if (args.capture_scope) session.captureScope = args.capture_scope;
    if (recordTo && session.recordingDir !== recordTo) startRecording(session, recordTo);
    const text = `Session '${session.label ?? 'implicit'}' is active${revived ? ' (revived)' : ''}.${recordTo ? ` Recording into ${recordTo}.` : ''}`;
    return {
      structured: {
        ...(await summaryRead(core, session)),
        active: true,
        revived,
        ...(recordTo ? { recording_path: recordTo } : {}),
      },
      text,
    };
  },
});

export const escalateSession = defineTool({
  name: 'escalate_session',
  description: 'Deprecated: legacy capture scope.',
  input: z.strictObject({
    session: plainName(128, 1),
    reason: z.enum([
      'ax_tree_pixel_mismatch',
      'background_delivery_failed',
      'foreground_ineffective',
      'no_window_target',
      'other',
    ]),
    detail: z.string().max(500).optional(),
  }),
  output: z.object({
    session: z.string(),
    capture_scope: z.string(),
    effective_scope: z.string(),
    escalation_reason: z.string(),
    deprecated: z.boolean(),
  }),
  annotations: DESTRUCTIVE,
  deprecated: true,
  async handler(args, _core, ctx) {
    const session = ctx.session!;
    session.captureScope = 'desktop';
    return {
      structured: {
        session: args.session,
        capture_scope: 'desktop',
        effective_scope: 'desktop',
        escalation_reason: args.reason,
        deprecated: true,
      },
    };
  },
});

export const getSession = defineTool({
  name: 'get_session',
  description: "A session's state, cursor, recording and idle time.",
  input: z.strictObject({ session: sessionArg }),
  output: summaryOutput,
  annotations: READ_ONLY,
  sessionless: true,
  async handler(args, core, ctx) {
    return { structured: await summaryRead(core, visible(core, ctx, args.session)) };
  },
});

export const getSessionState = defineTool({
  name: 'get_session_state',
  description: 'Deprecated alias of get_session with the legacy capture scope.',
  input: z.strictObject({ session: sessionArg }),
  output: summaryOutput.extend({ capture_scope: z.string(), effective_scope: z.string(), deprecated: z.boolean() }),
  annotations: READ_ONLY,
  sessionless: true,
  deprecated: true,
  async handler(args, core, ctx) {
    const session = visible(core, ctx, args.session);
    const scope = session.captureScope === 'auto' ? 'window' : session.captureScope;
    return {
      structured: {
        ...(await summaryRead(core, session)),
        capture_scope: session.captureScope,
        effective_scope: scope,
        deprecated: true,
      },
    };
  },
});

const listCursor = (offset: number) => Buffer.from(`o:${offset}`).toString('base64url');

export const listSessions = defineTool({
  name: 'list_sessions',
  description: "This connection's sessions (paged: limit, cursor).",
  input: z.strictObject({ cursor: z.string().max(64).optional(), limit: z.number().int().min(0).max(100).default(50) }),
  output: z.object({ sessions: z.array(summaryOutput), next_cursor: z.string().nullable() }),
  annotations: READ_ONLY,
  sessionless: true,
  async handler(args, core, ctx) {
    let offset = 0;
    if (args.cursor !== undefined) {
      const decoded = /^o:(\d+)$/.exec(Buffer.from(args.cursor, 'base64url').toString());
      if (!decoded) throw new Refusal('invalid_arguments', 'cursor: not a cursor returned by list_sessions');
      offset = Number(decoded[1]);
    }
    const all = core.sessions.list(ctx.connectionId);
    const page = await Promise.all(all.slice(offset, offset + args.limit).map((s) => summaryRead(core, s)));
    const next = offset + args.limit < all.length && args.limit > 0 ? listCursor(offset + args.limit) : null;
    return { structured: { sessions: page, next_cursor: next } };
  },
});

export const endSession = defineTool({
  name: 'end_session',
  description: 'End a session and run its cleanup once.',
  input: z.strictObject({ session: sessionArg }),
  output: z.object({ session: z.string(), active: z.boolean(), cleanup_complete: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  sessionless: true,
  async handler(args, core, ctx) {
    const found = core.sessions.find(ctx.connectionId, args.session);
    if (found) await core.sessions.end(found, 'end_session');
    const name = found?.label ?? args.session ?? 'implicit';
    return { structured: { session: name, active: false, cleanup_complete: true }, text: `Session '${name}' ended.` };
  },
});

export const setAgentCursorMotion = defineTool({
  name: 'set_agent_cursor_motion',
  description:
    "The agent cursor's motion: style, timing, reduced_motion; clamped numbers arc_flow, arc_size, start_handle, end_handle, spring, glide_duration_ms, dwell_after_click_ms, idle_hide_ms, turn_radius; effects.",
  input: cursorMotion.extend({ session: sessionArg, reduced_motion: z.enum(['auto', 'on', 'off']).optional() }),
  output: z.object({ session: z.string().nullable(), motion: z.record(z.string(), z.unknown()) }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  advanced: [
    'arc_flow',
    'arc_size',
    'start_handle',
    'end_handle',
    'spring',
    'glide_duration_ms',
    'dwell_after_click_ms',
    'idle_hide_ms',
    'turn_radius',
    'effects',
  ],
  async handler(args, core, ctx) {
    const session = ctx.session!;
    const { session: _label, reduced_motion, ...motion } = args;
    session.cursor.set = { ...session.cursor.set, ...motion } as MotionInput;
    if (reduced_motion) session.cursor.theme = { ...session.cursor.theme, reduced_motion };
    session.hooks.set('config', (s) => {
      s.cursor.set = undefined;
      s.cursor.start = undefined;
    });
    return { structured: { session: session.label, motion: cursorOf(core.cursor, session).motion } };
  },
});

export const sessionTools = [
  startSession,
  escalateSession,
  getSession,
  listSessions,
  getSessionState,
  endSession,
  setAgentCursorMotion,
];
