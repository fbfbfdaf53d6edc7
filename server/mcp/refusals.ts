// Failures that are not Verity's own refusals (the browser, a tab, the extension relay) as the refusals the
// contract names, saying what happened and whether a retry is safe.
import { PROTOCOL_TIMEOUT_MS } from '../cdp/browser/browser.js';
import { errorCodeOf, isDefect } from '../errors.js';
import { Refusal } from '../contract/refusal.js';

/** Protocol-level failures (a tab closed mid-call, the browser gone) as refusals that say what happened. */
export function asRefusal(e: unknown): Refusal {
  if (e instanceof Refusal) return e;
  const message = e instanceof Error ? e.message : String(e);
  const code = errorCodeOf(e);
  if (code === 'delivery_unknown') {
    // The extension relay dropped with this command in flight: it may have reached the page. Not retryable
    // blindly (that could do it twice): the caller reads the page first.
    return new Refusal(
      'unavailable',
      `the link to the shared tab dropped while the command was in flight, so whether it reached the page is unknown and it was not resent; read the page (get_window_state) before retrying (${message.slice(0, 200)})`,
      { retryable: false, delivery: 'unknown' },
    );
  }
  if (code === 'not_delivered') {
    return new Refusal(
      'unavailable',
      `the shared tab's debugger was detached, so nothing was sent to the page; the extension is attaching it again: retry (${message.slice(0, 200)})`,
      { retryable: true, delivery: 'none' },
    );
  }
  if (
    /Target closed|Session closed|No target with given id|Target.detachedFromTarget|frame was detached|No frame for given id/i.test(
      message,
    )
  ) {
    return new Refusal('target_not_found', `the tab or frame closed during the call (${message.slice(0, 160)})`);
  }
  if (
    /Connection closed|WebSocket is not open|Protocol error.*closed|browser has disconnected|socket hang up/i.test(
      message,
    )
  ) {
    return new Refusal(
      'unavailable',
      `the browser went away during the call (${message.slice(0, 160)}); a launched browser is relaunched on the next call`,
      { retryable: true },
    );
  }
  const protocol = /^([\w.]+) timed out\. Increase the 'protocolTimeout'/.exec(message);
  if (protocol) {
    return new Refusal(
      'timeout',
      `gave up after ${PROTOCOL_TIMEOUT_MS} ms waiting for the tab to answer ${protocol[1]}; the page is not responding (a script may be stuck)`,
      { retryable: true, waited_for: protocol[1] },
    );
  }
  if (/timed out/i.test(message)) return new Refusal('timeout', message.slice(0, 300), { retryable: true });
  // The engine's own errors (a property of undefined, a stack overflow) are Verity's defects, not the environment's.
  if (isDefect(e)) return new Refusal('internal_error', `internal error: ${message.slice(0, 300)}`);
  return new Refusal('unavailable', `internal error: ${message.slice(0, 300)}`);
}
