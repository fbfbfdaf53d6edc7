// A session as agents (get_session, list_sessions) and operators (the gateway's session list) see it.
import type { CursorPreferences } from './cursor-preferences.js';
import type { Session } from './manager.js';

type Motion = Pick<CursorPreferences, 'motionOf'>;

export function cursorOf(cursor: Motion, session: Session) {
  return { visible: session.cursor.visible, motion: cursor.motionOf(session), theme: session.cursor.theme };
}

export function sessionSummary(cursor: Motion, session: Session) {
  return {
    session: session.label,
    implicit: session.label === null,
    state: session.state,
    cursor: cursorOf(cursor, session),
    recording_active: session.recordingDir !== null,
    idle_seconds: Math.floor((Date.now() - session.lastActive) / 1000),
  };
}

/** A row of the operator's session list (the gateway's sessions.list and sessions.changed). */
/** A row of the operator's session list; `brake` is the agent's brake state (sessions/brake.ts). */
export type SessionRow = ReturnType<typeof sessionSummary> & {
  sessionKey: string;
  transport: string;
  client: string;
  tab_id: string | null;
  brake: import('./brake.js').BrakeStatus;
  /** An agent connected and made no call yet: the row of the default session its first call will have. */
  awaiting_first_call?: boolean;
};
