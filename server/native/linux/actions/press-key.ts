// press_key on native targets: the key with its modifiers to the window's focused element (given focus first
// when the call names one), through XTest or the virtual keyboard; unverifiable but for the focused text's
// change, said as evidence.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type Evidence, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { IFACE } from '../atspi/model.js';
import { has, STATE } from '../atspi/roles.js';
import type { LinuxHost } from '../host.js';
import { pressKeys } from '../transport/input.js';
import { SettleLog, settleBeforeKeys, withSettle } from '../transport/settle.js';
import { aim, deliver, focusedIn, nativeResult, requireKeyboardFocus, webEscalation, webLike } from './aim.js';

export async function pressKey(
  host: LinuxHost,
  target: ResolvedTarget,
  { key, modifiers }: ActionArgs['pressKey'],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const a = await aim(host, target);
  const mode = target.deliveryMode;
  await requireKeyboardFocus(a.win, mode);
  return deliver(mode, a.win, async () => {
    const log = new SettleLog();
    if (a.element && !has(a.states, STATE.focused)) {
      const ok =
        a.element.interfaces.includes(IFACE.component) && (await a.atspi.grabFocus(a.element).catch(() => false));
      if (!ok) throw new Refusal('focus_failed', `"${a.element.name}" would not take focus, so no key was pressed`);
    }
    const focused = a.element
      ? {
          ref: a.element,
          web: a.element.web,
          role: a.element.role,
          name: a.element.name,
          text: a.element.interfaces.includes(IFACE.text),
        }
      : await focusedIn(a.atspi, a.win).then(
          (f) =>
            f && {
              ref: f.item.ref,
              web: f.web,
              role: f.item.role,
              name: f.item.name,
              text: f.item.interfaces.includes(IFACE.text),
            },
        );
    const before = focused?.text ? await a.atspi.text(focused.ref).catch(() => null) : null;
    sw.lap('resolve');
    await settleBeforeKeys(a.win.id, false, log); // deliver's focus change (foreground) reached the app
    await pressKeys([...modifiers, key], { window: a.win.id, log });
    sw.lap('deliver');
    await new Promise((r) => setTimeout(r, 30));
    await host.stillThere(a.win.id).catch((e) => {
      throw e;
    });
    const after = focused?.text ? await a.atspi.text(focused.ref).catch(() => null) : null;
    sw.lap('verify');
    const evidence: Evidence[] = [
      {
        kind: 'key_event',
        detail: `${a.win.surface === 'wayland' ? 'virtual keyboard (wtype)' : 'XTest'} ${[...modifiers, key].join('+')} to window ${a.win.id} with focus on ${focused ? `"${focused.name}"` : 'an element AT-SPI does not report'}`,
      },
    ];
    if (before !== null && after !== null)
      evidence.push({
        kind: 'text',
        observed:
          before === after
            ? "the focused element's text did not change"
            : `text changed from ${JSON.stringify(before.slice(-60))} to ${JSON.stringify(after.slice(-60))}`,
      });
    const escalation = webLike(a.win, focused)
      ? webEscalation(a.win, true, mode)
      : {
          target: 'verify' as const,
          reason: 'a key press has no effect AT-SPI can prove in general; call get_window_state to see what it did',
        };
    return withSettle(
      nativeResult('unverifiable', 'synthetic_events', sw, evidence, mode, {
        target: focused?.name ?? `window ${a.win.id}`,
        escalation,
      }),
      log,
    );
  });
}
