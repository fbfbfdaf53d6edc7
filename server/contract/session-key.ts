// A session's key: `<connectionId>/<label>`, or `<connectionId>/implicit` for a connection's implicit session.
// It names a session everywhere outside the session manager: the audit trail, the operators' action log,
// approvals, the brake, secret echoes, recordings' owners, a tab action's download quota and the Control
// UI's panes (gateway sessionKey). Built and taken apart here only, so every part agrees on one spelling.
import { notPlain } from './names.js';

/** A key built by sessionKeyOf (a string on the wire; the brand keeps a bare label or id from passing for one). */
export type SessionKey = string & { readonly __brand: 'SessionKey' };

/** What the key says for a connection's implicit session (the label the manager keeps as null). */
export const IMPLICIT_LABEL = 'implicit';

/** The key's part for a call whose `session` it will be refused for: one key for all of them, never the agent's string. */
const INVALID_LABEL = '(invalid label)';

/** As contract/tool-args.ts `session` bounds a label. */
const SESSION_LABEL_MAX = 128;

/**
 * A label as sessions know it: trimmed; none, `default` and `implicit` all name the connection's implicit
 * session (null). `implicit` is what the key says for that session, so a label spelled so names it too (two
 * sessions with one key would share their audit room, brake and Control UI pane).
 */
export function normalizeLabel(label: string | null | undefined): string | null {
  const trimmed = label?.trim();
  return !trimmed || trimmed === 'default' || trimmed === IMPLICIT_LABEL ? null : trimmed;
}

/** The key of a connection's session (`label` as normalizeLabel gives it, or as a call sent it). */
export function sessionKeyOf(connectionId: string, label: string | null | undefined): SessionKey {
  return `${connectionId}/${normalizeLabel(label) ?? IMPLICIT_LABEL}` as SessionKey;
}

/**
 * The key of the session a call's `session` argument names, before the call's arguments are checked: a
 * label the call will be refused for (not a string, too long, not plain text) names no session, and the
 * trail keeps one short key for all such calls of a connection.
 */
export function sessionKeyOfCall(connectionId: string, session: unknown): SessionKey {
  const label = typeof session === 'string' ? session.trim() : '';
  if (label.length > SESSION_LABEL_MAX || notPlain(label)) return `${connectionId}/${INVALID_LABEL}` as SessionKey;
  return sessionKeyOf(connectionId, label);
}

/**
 * A key taken apart: its connection and its label (`implicit` for the implicit session). Connection ids have
 * no slash and labels may, so the first slash divides them; a key without one (the operator's own input when
 * no session owns the tab: `operator`) is all connection.
 */
export function parseSessionKey(key: string): { connectionId: string; label: string } {
  const slash = key.indexOf('/');
  if (slash <= 0) return { connectionId: key, label: IMPLICIT_LABEL };
  return { connectionId: key.slice(0, slash), label: key.slice(slash + 1) };
}
