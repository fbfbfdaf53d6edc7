// scroll on a native target: wheel events through XTest (or the virtual pointer) at the element or point,
// confirmed when one of the window's scroll bars moved the asked way.
import type { ActionArgs } from '../../../contract/actions.js';
import type { ActionResult, Evidence, ResolvedTarget } from '../../../contract/driver.js';
import { Stopwatch } from '../../../contract/driver.js';
import { IFACE } from '../atspi/model.js';
import { aim, deliver, nativeResult, webEscalation, type Aim } from './aim.js';
import type { LinuxHost } from '../host.js';
import { walkWindow } from '../atspi/walk.js';
import { moveTo, wheel } from '../transport/input.js';
import { ROLE } from '../atspi/roles.js';
import { checkUncovered, pointOf } from './pointing.js';

/** The window's scroll bars and their values (what a wheel event moves). */
async function scrollBars(a: Aim): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!a.win.frame || !a.win.app) return out;
  await Promise.all(
    (await walkWindow(a.atspi, a.win.frame)).rows
      .filter((r) => r.item.role === ROLE.scrollBar && r.item.interfaces.includes(IFACE.value))
      .map(async ({ item }) => {
        const v = await a.atspi.prop(item.ref, IFACE.value, 'CurrentValue').catch(() => null);
        if (v !== null) out.set(item.ref.path, Number(v));
      }),
  );
  return out;
}

export async function scroll(
  host: LinuxHost,
  target: ResolvedTarget,
  options: ActionArgs['scroll'],
): Promise<ActionResult> {
  const mode = target.deliveryMode;
  const sw = new Stopwatch();
  const a = await aim(host, target);
  return deliver(mode, a.win, async () => {
    const p = pointOf(a);
    await checkUncovered(a, p);
    const before = await scrollBars(a);
    sw.lap('resolve');
    await moveTo(p.x, p.y);
    await wheel(options.direction, options.amount * (options.by === 'page' ? 10 : 1));
    sw.lap('deliver');
    await new Promise((r) => setTimeout(r, 80));
    const after = await scrollBars(a);
    sw.lap('verify');
    const sign = options.direction === 'down' || options.direction === 'right' ? 1 : -1;
    const moved = [...after].filter(([k, v]) => before.has(k) && v !== before.get(k));
    const evidence: Evidence[] = [
      {
        kind: 'scroll_bars',
        expected: `a scroll bar moves ${options.direction}`,
        observed: moved.length
          ? moved.map(([k, v]) => `${k}: ${before.get(k)} → ${v}`).join('; ')
          : `no scroll bar moved (${after.size} in the window)`,
      },
    ];
    const web = a.element?.web || a.win.browserLike;
    if (web)
      return nativeResult('unverifiable', 'pixel', sw, evidence, mode, {
        escalation: webEscalation(a.win, true, mode),
      });
    if (moved.some(([k, v]) => Math.sign(v - before.get(k)!) === sign))
      return nativeResult('confirmed', 'pixel', sw, evidence, mode);
    return nativeResult(
      after.size ? 'no_effect' : 'unverifiable',
      'pixel',
      sw,
      evidence,
      mode,
      after.size
        ? {}
        : { escalation: { target: 'verify', reason: 'nothing here reports a scroll position; check the screenshot' } },
    );
  });
}
