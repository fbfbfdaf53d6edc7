// A refusal: nothing was done, and the caller is told why and what to do next. Tools turn it into the
// contract's `{status: "refused", refusal: {code, message, ...details}}` with isError.

export type RefusalCode =
  | 'stale_element_token'
  | 'invalid_element_token'
  | 'conflicting_target'
  | 'target_not_found'
  | 'element_disabled'
  | 'element_covered'
  | 'element_readonly'
  | 'not_editable'
  | 'not_visible'
  | 'type_text_synthesis_budget_exceeded'
  | 'session_ended'
  | 'session_unavailable'
  | 'invalid_arguments'
  | 'unavailable'
  | 'not_permitted'
  | 'approval_required'
  | 'text_not_deliverable'
  | 'no_such_option'
  | 'not_settable'
  | 'focus_failed'
  | 'timeout'
  | 'dialog_open'
  | 'not_supported'
  | 'target_busy'
  | 'too_many_sessions'
  | 'too_many_approvals'
  | 'session_stopped'
  | 'session_paused'
  // A browser pool (--browser-endpoint): it is full (HTTP 429), it refused the token, the session's browser went away.
  | 'browser_pool_full'
  | 'browser_pool_unauthorized'
  | 'browser_lost'
  // A defect in Verity, contained to the one call it happened in (the server stays up; the log has the stack).
  | 'internal_error';

export class Refusal extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** Runs `work`, refusing with `timeout` (naming what was awaited) if it takes longer than `ms`. */
export async function bounded<T>(work: Promise<T>, ms: number, waitingFor: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Refusal('timeout', `gave up after ${ms} ms waiting for ${waitingFor}`, { retryable: true })),
      ms,
    );
  });
  try {
    return await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}
