// A refusal: nothing was done, and the caller is told why and what to do next. Tools turn it into the
// contract's `{status: "refused", refusal: {code, message, ...details}}` with isError.

/**
 * Every refusal code, with what it means to the caller: the one list the type, docs/tools.md and the
 * tests read. A new code: one line here.
 */
export const REFUSAL_CODES = {
  stale_element_token: 'a newer get_window_state of that target replaced the token: observe again',
  invalid_element_token: 'not a token, or an index the snapshot does not have',
  conflicting_target: 'two ways of naming the target in one call (a token and a target, say)',
  target_not_found: 'the tab, window, app or element is not there (closed, or never was)',
  element_disabled: 'the element is disabled',
  element_covered: 'another element covers the point (it is named)',
  element_readonly: 'the element is read-only',
  not_editable: 'the element takes no text',
  not_visible: 'the element is not visible',
  type_text_synthesis_budget_exceeded: 'a keystroke route would take too long: send chunks of max_chunk_chars',
  session_ended: 'the session ended',
  session_unavailable: "another connection's session",
  invalid_arguments: 'an argument is missing or malformed (the message names the field)',
  unavailable: 'what the call needs is not on this machine (the message says what and how to get it)',
  not_permitted: "the operator's policy or an operator refused it",
  approval_required: 'the call waits for an operator',
  text_not_deliverable: 'the text has characters this route cannot type',
  no_such_option: 'no option of the list has that value (the message lists them)',
  not_settable: 'the element has no value to set',
  focus_failed: 'the element could not be focused',
  timeout: 'a bounded wait ran out (the message names what it waited for)',
  dialog_open: 'a JavaScript dialog blocks the page: page handle_dialog first',
  not_supported: 'this route or target cannot do that',
  target_busy: 'another action holds the target: retry',
  too_many_sessions: 'a cap on sessions is reached (the message names it and when a slot frees)',
  too_many_approvals: 'too many calls wait for an operator',
  too_many_audit_bytes:
    "the audit trail, or this session's share of it, is full: nothing runs that it could not record (retry_after_s says when entries age out)",
  session_stopped: 'the operator stopped this agent',
  session_paused: 'the operator paused this agent',
  browser_pool_full: 'the browser pool has no browser free: retry',
  browser_pool_unauthorized: 'the browser pool refused its token',
  browser_lost: "the session's browser went away while the call ran",
  internal_error: 'a defect in Verity, contained to this one call (the server stays up; its log has the stack)',
} as const;

export type RefusalCode = keyof typeof REFUSAL_CODES;

export class Refusal extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
