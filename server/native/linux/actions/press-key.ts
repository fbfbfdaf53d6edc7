// press_key on native targets: the key with its modifiers to the window's focused element (given focus first
// when the call names one), through XTest or the virtual keyboard; unverifiable but for the focused text's
// change, said as evidence.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type Evidence, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { IFACE } from '../atspi/model.js';
import { has, ROLE, STATE } from '../atspi/roles.js';
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
    // A copy (ctrl+c, ctrl+Insert) or cut has one effect to prove: the clipboard then holds what was selected.
    const copy =
      isCopy(key, modifiers) && focused?.text && before !== null ? await copyExpectation(a, focused.ref, before) : null;
    const clipboardBefore = copy ? await host.readClipboard().catch(() => null) : null;
    sw.lap('resolve');
    await settleBeforeKeys(a.win.id, false, log); // deliver's focus change (foreground) reached the app
    await pressKeys([...modifiers, key], { window: a.win.id, log });
    sw.lap('deliver');
    await new Promise((r) => setTimeout(r, 30));
    await host.stillThere(a.win.id).catch((e) => {
      throw e;
    });
    const after = focused?.text ? await a.atspi.text(focused.ref).catch(() => null) : null;
    const copied = copy && clipboardBefore ? await copiedText(host, copy, clipboardBefore.text) : null;
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
    if (copy && copied) {
      // The clipboard's text is not sent back (the operator grants reading it): only whether it is the selection.
      evidence.push({
        kind: 'clipboard_read_back',
        expected: `the ${copy.what} (${copy.text.length} characters)`,
        observed: copied.same
          ? `the clipboard holds the same ${copy.text.length} characters`
          : copied.changed
            ? `the clipboard changed, to ${copied.length} other characters`
            : 'the clipboard did not change',
        detail: `read again after the keys (within ${COPY_BOUND_MS} ms); the app may add a line end, which is not counted`,
      });
      // Held already before the keys: nothing proves that they copied it.
      const heldBefore = clipboardBefore?.text.replace(/\r?\n$/, '') === copy.text;
      if (heldBefore) evidence[evidence.length - 1]!.detail += '; it held that text before the keys already';
      if (copied.same && !heldBefore && !webLike(a.win, focused))
        return withSettle(
          nativeResult('confirmed', 'synthetic_events', sw, evidence, mode, {
            target: focused?.name ?? `window ${a.win.id}`,
          }),
          log,
        );
    }
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

/** How long a copy is given to reach the clipboard, read every 50 ms. */
const COPY_BOUND_MS = 1500;

const isCopy = (key: string, modifiers: string[]) => {
  const mods = modifiers.map((m) => m.toLowerCase()).map((m) => (m === 'control' ? 'ctrl' : m));
  const k = key.toLowerCase();
  return mods.length === 1 && mods[0] === 'ctrl' && (k === 'c' || k === 'x' || k === 'insert');
};

/**
 * What a copy from the focused element should put on the clipboard: its selected text when it has a
 * selection, else (a spreadsheet cell, which a copy takes whole when nothing inside it is selected) its
 * whole text when it is a table cell; null when nothing says what a copy would take.
 */
async function copyExpectation(
  a: Awaited<ReturnType<typeof aim>>,
  ref: Parameters<typeof a.atspi.text>[0],
  text: string,
): Promise<{ text: string; what: string } | null> {
  const [count] = await a.atspi.call(ref, IFACE.text, 'GetNSelections').catch(() => [0]);
  if (Number(count) > 0) {
    const [start, end] = (await a.atspi
      .call(ref, IFACE.text, 'GetSelection', 'i', [0])
      .catch(() => [0, 0])) as number[];
    if (end > start) return { text: [...text].slice(start, end).join(''), what: 'selected text' };
  }
  const role =
    a.element?.role ??
    (await a.atspi
      .call(ref, IFACE.accessible, 'GetRole')
      .then(([r]) => Number(r))
      .catch(() => -1));
  return role === ROLE.tableCell && text ? { text, what: "focused cell's text" } : null;
}

/** The clipboard read until it holds the expected text (a trailing line end aside) or the bound passes. */
async function copiedText(host: LinuxHost, copy: { text: string }, before: string) {
  const began = Date.now();
  for (;;) {
    const now = await host.readClipboard().catch(() => null);
    const text = now?.text.replace(/\r?\n$/, '') ?? null;
    if (text === copy.text) return { same: true, changed: true, length: text.length };
    if (Date.now() - began >= COPY_BOUND_MS)
      return { same: false, changed: now !== null && now.text !== before, length: text?.length ?? 0 };
    await new Promise((r) => setTimeout(r, 50));
  }
}
