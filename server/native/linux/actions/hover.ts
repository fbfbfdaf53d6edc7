// hover on a native target: pointer motion onto the element or point. A hover is unverifiable with the way
// to look (what it opens is not read back here); move_cursor (`pointer`) is confirmed by the pointer's
// position read back from the X server.
import type { ActionArgs } from '../../../contract/actions.js';
import type { ActionResult, Evidence, ResolvedTarget } from '../../../contract/driver.js';
import { Stopwatch } from '../../../contract/driver.js';
import { aim, deliver, nativeResult } from './aim.js';
import type { LinuxHost } from '../host.js';
import { moveTo } from '../transport/input.js';
import { Refusal } from '../../../contract/refusal.js';
import { pointerPosition } from '../transport/x11.js';
import { roleName } from '../atspi/roles.js';
import { elementAt, pointOf, pointerOf } from './pointing.js';

/**
 * hover on a native window: XTest pointer motion onto the element or point. What a hover opens (a tooltip,
 * a menu) is not read back here, so the verdict is unverifiable with the way to look.
 */
export async function hover(host: LinuxHost, target: ResolvedTarget, args: ActionArgs['hover']): Promise<ActionResult> {
  const mode = target.deliveryMode;
  const sw = new Stopwatch();
  const a = await aim(host, target);
  return deliver(mode, a.win, async () => {
    const p = pointOf(a);
    const hit = a.element ?? (await elementAt(a, p));
    sw.lap('resolve');
    await moveTo(p.x, p.y);
    sw.lap('deliver');
    const label = hit ? `${hit.name || 'element'} (${roleName(hit.role)})` : `window ${a.win.id}`;
    const moved: Evidence = {
      kind: 'pixel_event',
      detail: `${pointerOf(a)} motion to screen (${Math.round(p.x)}, ${Math.round(p.y)}) over ${label}`,
    };
    // A Wayland session tells no one where its pointer is (pointerPosition refuses): unverifiable there.
    const observed = args.pointer
      ? await pointerPosition().catch((e) => {
          if (e instanceof Refusal) return null;
          throw e;
        })
      : null;
    if (observed) {
      // XTest moves to whole pixels: the pointer is where it was sent when it reads back there.
      const expected = { x: Math.round(p.x), y: Math.round(p.y) };
      sw.lap('verify');
      const there = Math.abs(observed.x - expected.x) <= 1 && Math.abs(observed.y - expected.y) <= 1;
      return nativeResult(
        there ? 'confirmed' : 'mismatch',
        'pixel',
        sw,
        [moved, { kind: 'pointer_position', expected, observed, detail: 'QueryPointer on the root window' }],
        mode,
        {
          target: label,
          method: 'pointer_motion',
          ...(there
            ? {}
            : {
                escalation: {
                  target: 'verify',
                  reason: `the pointer reads back at (${observed.x}, ${observed.y}), not (${expected.x}, ${expected.y}): a grab or another client moved it`,
                },
              }),
        },
      );
    }
    sw.lap('verify');
    return nativeResult('unverifiable', 'pixel', sw, [moved], mode, {
      target: label,
      method: 'pointer_motion',
      escalation: {
        target: 'verify',
        reason: args.pointer
          ? 'the pointer moved; a Wayland compositor tells no client where the pointer is, so its position is not read back'
          : 'the pointer moved; what the hover opened is not read back here: call get_window_state to see it',
      },
    });
  });
}
