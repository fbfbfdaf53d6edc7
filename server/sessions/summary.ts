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

/** A row of the operator's session list (the gateway's sessions.list and sessions.changed): contract/wire.ts. */
export type { SessionRow } from '../contract/wire.js';
