// Errors Verity recognises by code, never by their wording. Most stay typed inside the process; a failure
// of the extension relay reaches the tool through puppeteer, whose protocol errors keep only text, so the
// relay puts its code in the CDP error's `data`, which puppeteer appends to the message as one tag that
// errorCodeOf reads back (the prose around it is free to change).

/** Why a command relayed to a shared tab failed, when it says something about delivery. */
export type RelayErrorCode =
  /** The link to the extension dropped with the command in flight: it may have reached the page. */
  | 'delivery_unknown'
  /** The extension says it never reached the page (the tab's debugger was detached): safe to retry. */
  | 'not_delivered';

const CODES: readonly RelayErrorCode[] = ['delivery_unknown', 'not_delivered'];
const TAG = /\[verity-error:([a-z_]+)\]/;

export class RelayCommandError extends Error {
  constructor(
    readonly code: RelayErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RelayCommandError';
  }
}

/** The tag a code travels as across the CDP boundary (the `data` of the protocol error). */
export function errorTag(code: RelayErrorCode): string {
  return `[verity-error:${code}]`;
}

/** The code of an error: typed, or carried as a tag through a protocol error; null when it has none. */
export function errorCodeOf(e: unknown): RelayErrorCode | null {
  if (e instanceof RelayCommandError) return e.code;
  const found = e instanceof Error ? TAG.exec(e.message)?.[1] : undefined;
  return found && (CODES as readonly string[]).includes(found) ? (found as RelayErrorCode) : null;
}

/** An error the JavaScript engine throws for a bug (TypeError, RangeError, ReferenceError), not a failure outside. */
export function isDefect(e: unknown): boolean {
  return e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError;
}
