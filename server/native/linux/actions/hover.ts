// hover on a native target: pointer motion onto the element or point, unverifiable with the way to look.
import type { ActionArgs } from '../../../contract/actions.js';
import type { ActionResult, ResolvedTarget } from '../../../contract/driver.js';
import { Stopwatch } from '../../../contract/driver.js';
import { aim, deliver, nativeResult } from './aim.js';
import type { LinuxHost } from '../host.js';
import { moveTo } from '../transport/input.js';
import { roleName } from '../atspi/roles.js';
import { elementAt, pointOf, pointerOf } from './pointing.js';

/**
 * hover on a native window: XTest pointer motion onto the element or point. What a hover opens (a tooltip,
 * a menu) is not read back here, so the verdict is unverifiable with the way to look.
 */
export async function hover(
  host: LinuxHost,
  target: ResolvedTarget,
  _args: ActionArgs['hover'],
): Promise<ActionResult> {
  const mode = target.deliveryMode;
  const sw = new Stopwatch();
  const a = await aim(host, target);
  return deliver(mode, a.win, async () => {
    const p = pointOf(a);
    const hit = a.element ?? (await elementAt(a, p));
    sw.lap('resolve');
    await moveTo(p.x, p.y);
    sw.lap('deliver');
    sw.lap('verify');
    const label = hit ? `${hit.name || 'element'} (${roleName(hit.role)})` : `window ${a.win.id}`;
    return nativeResult(
      'unverifiable',
      'pixel',
      sw,
      [
        {
          kind: 'pixel_event',
          detail: `${pointerOf(a)} motion to screen (${Math.round(p.x)}, ${Math.round(p.y)}) over ${label}`,
        },
      ],
      mode,
      {
        target: label,
        method: 'pointer_motion',
        escalation: {
          target: 'verify',
          reason: 'the pointer moved; what the hover opened is not read back here: call get_window_state to see it',
        },
      },
    );
  });
}
