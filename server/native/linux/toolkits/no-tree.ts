// Apps whose toolkit exposes no AT-SPI tree (Tk, Java Swing without its accessibility bridge): they name no
// toolkit, so a window of theirs is known by having no frame. No field to find or read: type_text sends
// keys to its focused widget (after the px form's click), every check made before anything is sent, and
// the verdict says that nothing can be read back; pointer actions go by pixels. Such an app lists no
// _NET_WM_PING, so its keys wait on the X server and the window manager, then a wait scaled by the machine's
// load (transport/settle.ts decides that from WM_PROTOCOLS, below any toolkit).
import type { ActionResult } from '../../../contract/driver.js';
import type { Stopwatch } from '../../../contract/driver.js';
import { codePoints } from '../atspi/model.js';
import type { WindowInfo } from '../atspi/window.js';
import { deliver, nativeResult, requireKeyboardFocus, type Aim } from '../actions/aim.js';
import { checkKeystrokes, type NativeTyping } from '../actions/element.js';
import { clickAt, moveTo, typeKeys } from '../transport/input.js';
import { SettleLog, settleBeforeKeys, withSettle } from '../transport/settle.js';

/** type_text into a window with no tree: checked, then keys to whatever has its focus. */
async function typeText(a: Aim, text: string, options: NativeTyping, sw: Stopwatch): Promise<ActionResult> {
  const mode = options.deliveryMode;
  checkKeystrokes('this window', text, options);
  await requireKeyboardFocus(a.win, mode);
  return deliver(mode, a.win, () => blindKeys(a, text, options, sw));
}

/**
 * Keystrokes into a window with no AT-SPI tree (checked beforehand by the caller): the px form clicks its
 * point first, as a user focuses a field; then XTest keys to whatever has focus. Never confirmed: nothing
 * the window holds can be read back.
 */
async function blindKeys(a: Aim, text: string, options: NativeTyping, sw: Stopwatch): Promise<ActionResult> {
  const mode = options.deliveryMode;
  const log = new SettleLog();
  sw.lap('resolve');
  if (a.screenPoint) {
    await moveTo(a.screenPoint.x, a.screenPoint.y);
    await clickAt('left', 1, []);
  }
  // The click (or deliver's focus change) has reached the app before its first key (settle.ts).
  await settleBeforeKeys(a.win.id, !!a.screenPoint, log);
  await typeKeys(text, options.delayMs, { window: a.win.id, log });
  sw.lap('deliver');
  await new Promise((r) => setTimeout(r, 30));
  await a.host.stillThere(a.win.id);
  sw.lap('verify');
  const where = a.screenPoint
    ? `clicked at (${a.screenPoint.x - a.win.bounds.x}, ${a.screenPoint.y - a.win.bounds.y}) of the window, then `
    : '';
  return withSettle(
    {
      ...nativeResult(
        'unverifiable',
        'synthetic_events',
        sw,
        [
          {
            kind: 'key_event',
            detail: `${where}XTest keystrokes for ${codePoints(text)} characters to window ${a.win.id} ("${a.win.title}"), to whichever of its widgets has keyboard focus`,
          },
          {
            kind: 'no_accessibility_tree',
            detail: `window ${a.win.id} exposes no AT-SPI tree (its toolkit has no accessibility bridge): which widget took the keys and what it holds now cannot be read back`,
          },
        ],
        mode,
        {
          target: `window ${a.win.id}`,
          method: 'key_events',
          escalation: {
            target: 'verify',
            reason:
              'the keys were sent (sending them again would type them twice); call get_window_state with include_screenshot and look at the window to see what it holds',
          },
        },
      ),
      delivery: { mode, delivered_count: codePoints(text) },
    },
    log,
  );
}

/** The profile of a window with no AT-SPI tree (its hooks: type_text). */
export interface NoTreeProfile {
  typeText(a: Aim, text: string, options: NativeTyping, sw: Stopwatch): Promise<ActionResult>;
}

export const noTree: NoTreeProfile = { typeText };

/** Whether `win` exposes no AT-SPI tree (no frame was found for it). */
export const hasNoTree = (win: WindowInfo): boolean => !win.frame;
