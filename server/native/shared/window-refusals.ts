// The refusals both native backends give for a window target that is not there (closed, or another process's),
// worded once so the two routes say the same.
import { Refusal } from '../../contract/refusal.js';

/** The error for a window that is gone (closed before or during an action). */
export function windowGone(id: number): Refusal {
  return new Refusal(
    'target_not_found',
    `window ${id} does not exist (it closed); call list_windows for the open windows`,
    { window_id: id },
  );
}

/** The error for a window target whose `pid` is not the window's own (`actual`). */
export function windowOfOtherPid(id: number, pid: number, actual: number | null): Refusal {
  return new Refusal('target_not_found', `window ${id} belongs to pid ${actual}, not ${pid}; call list_windows`, {
    window_id: id,
    pid: actual,
  });
}
