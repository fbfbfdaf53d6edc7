// The errors an AT-SPI call ends with (model.ts explains a failed D-Bus call as one of them): the app did
// not answer in time, or its object or app went away.
import { Refusal } from '../../../contract/refusal.js';

/** The error an AT-SPI call ends with when the app did not answer within the call's bound. */
export class CallTimeout extends Refusal {
  constructor(message: string) {
    super('timeout', message, { retryable: true });
  }
}

/** The error an AT-SPI call ends with when its object or app went away. */
export class Gone extends Refusal {
  constructor(what: string) {
    super(
      'target_not_found',
      `${what} is gone (its window or app closed, or the element was removed); call list_windows and get_window_state again`,
    );
  }
}
