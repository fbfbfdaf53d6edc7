// type_text on native targets. AT-SPI EditableText insertion at the caret, read back through
// Text, is the confirmed route; without EditableText, XTest keystrokes (budgeted; characters the keymap
// lacks on borrowed keycodes), read back through Text where the element has it. Web content is delivered
// but never confirmed here.
import type { ActionArgs } from '../../../contract/actions.js';
import type { ActionResult, Evidence, ResolvedTarget } from '../../../contract/driver.js';
import { Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { maskSecrets } from '../../../contract/secrets.js';
import { excerpt, judgeTextAt, judgeTextRead, stringIndex } from '../../../contract/verdicts.js';
import { IFACE, codePoints } from '../atspi/model.js';
import {
  aim,
  checkEnabled,
  deliver,
  FOCUS_SETTLE_MS,
  focusedIn,
  focusedSettled,
  nativeResult,
  refFor,
  requireKeyboardFocus,
  textAncestor,
  webEscalation,
  webLike,
  type Aim,
} from './aim.js';
import type { LinuxHost } from '../host.js';
import { clickAt, moveTo, pollUntil, typeKeys } from '../transport/input.js';
import { SettleLog, settleBeforeKeys, withSettle } from '../transport/settle.js';
import { ROLE, STATE, has } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { activeWindow } from '../transport/x11.js';
import { checkKeystrokes, KEYS_LANDED_WAIT_MS, type NativeTyping, PASSWORD_TEXT, roleLabel } from './element.js';
import { hasNoTree, noTree, profileOf } from '../toolkits/index.js';

/** The element to type into: the token's, the one under the px point (clicked first), or the focused one. */
async function fieldOf(
  host: LinuxHost,
  target: ResolvedTarget,
  a: Aim,
  log: SettleLog,
): Promise<{ el: NativeRef; states: [number, number]; clicked: boolean }> {
  if (a.element) return { el: a.element, states: a.states, clicked: false };
  if (a.screenPoint) {
    await moveTo(a.screenPoint.x, a.screenPoint.y);
    await clickAt('left', 1, []);
    // The app has taken the click in (settle.ts) before its focus is read and keys go in.
    await settleBeforeKeys(a.win.id, true, log);
    await new Promise((r) => setTimeout(r, 60));
    let focused = await focusedIn(a.atspi, a.win);
    // The focused element is what the keys reach, if it is where the click was: Qt leaves `focused` on an
    // item of a closed combo box popup.
    if (focused) {
      const box = await a.atspi.extents(focused.item.ref, a.win.bounds).catch(() => null);
      const p = a.screenPoint;
      if (box && box.w > 0 && (p.x < box.x || p.y < box.y || p.x >= box.x + box.w || p.y >= box.y + box.h))
        focused = null;
    }
    const hit =
      focused?.item.ref ??
      (a.win.frame ? await a.atspi.at(a.win.frame, a.screenPoint.x, a.screenPoint.y, a.win.bounds) : null);
    if (!hit) throw new Refusal('target_not_found', 'nothing at that point takes text');
    // A point in a Qt text edit lands on its viewport: the text edit above it is what takes the text.
    const at = focused?.item.interfaces.includes(IFACE.text) ? hit : await textAncestor(a.atspi, hit);
    const found = await refFor(a.atspi, a.win, at, focused?.web ?? null);
    return { el: found.ref, states: found.states, clicked: true };
  }
  void host;
  void target;
  const focused = await focusedSettled(a.atspi, a.win);
  if (!focused) {
    throw new Refusal(
      'target_not_found',
      `nothing in window ${a.win.id} ("${a.win.title}") reported keyboard focus within ${FOCUS_SETTLE_MS} ms${a.win.browserLike ? ' (a browser without a renderer accessibility tree shows none)' : ''}; pass an element_token from get_window_state, or x,y of the field`,
    );
  }
  const found = await refFor(a.atspi, a.win, focused.item.ref, focused.web);
  return { el: found.ref, states: found.states, clicked: false };
}

export async function typeText(
  host: LinuxHost,
  target: ResolvedTarget,
  { text, ...args }: ActionArgs['typeText'],
): Promise<ActionResult> {
  const options: NativeTyping = { ...args, deliveryMode: target.deliveryMode };
  const sw = new Stopwatch();
  // A token's field: its text and caret are asked for right behind its states (one round trip, not two),
  // or were asked for already as the call arrived.
  const ref = target.element ? (target.element.ref as NativeRef) : null;
  const prefetched = ref ? host.takeField(ref) : null;
  const early = prefetched ? prefetched.textAndCaret : ref ? (await host.atspi()).textAndCaret(ref) : null;
  early?.catch(() => undefined); // a gone element is reported by aim's own read
  const a = await aim(host, target, prefetched?.states);
  const mode = options.deliveryMode;
  // A window whose toolkit exposes no AT-SPI tree (Tk, Java without its bridge): toolkits/no-tree.ts.
  if (!a.element && hasNoTree(a.win)) return noTree.typeText(a, text, options, sw);
  return deliver(mode, a.win, async () => {
    const log = new SettleLog();
    const { el, states, clicked } = await fieldOf(host, target, a, log);
    checkEnabled(el, states);
    // Its units decide offsets and lengths: known since its window was listed, unless the AT-SPI
    // connection was made anew since.
    if (!a.atspi.knownToolkit(el.bus)) await a.atspi.toolkit(el.bus);
    const profile = profileOf(a.atspi, el.bus);
    const editable = el.interfaces.includes(IFACE.editable) && profile.acceptsEdits(states);
    const readable = el.interfaces.includes(IFACE.text);
    // Web content of a browser Verity does not drive: its accessibility insertion does not reach the page
    // (Firefox takes it and shows nothing), so it gets keystrokes, as a user's typing would, judged
    // honestly (never confirmed from accessibility text). Its states do not say what the page accepts
    // (Firefox's document offers EditableText without `editable`): the keys go where its focus is.
    const undrivenWeb = webLike(a.win, el) && !a.win.driven;
    if (el.interfaces.includes(IFACE.editable) && !editable && !undrivenWeb)
      throw new Refusal('element_readonly', `"${el.name || 'the field'}" is read-only; nothing was typed`);
    if (has(states, STATE.singleLine) && text.includes('\n')) {
      throw new Refusal(
        'text_not_deliverable',
        `"${el.name || 'the field'}" is a single-line field and cannot hold a newline; send the lines separately, or press_key Enter to submit`,
      );
    }
    // An editable element its toolkit says text would not reach (LibreOffice Calc's cell editor).
    const refusal = editable ? await profile.refusesInsert?.(a, el) : null;
    if (refusal) throw refusal;
    const ownRoute = editable && !undrivenWeb ? null : (profile.typeRoute?.(el, states) ?? null);
    const typed =
      editable && !undrivenWeb
        ? await insertRoute(host, a, el, states, text, mode, sw, !!target.element && !clicked, early)
        : ownRoute
          ? await ownRoute(a, el, text, options, sw)
          : await keystrokeRoute(a, el, states, readable, text, options, sw, !!target.element, log);
    const settled = withSettle(typed, log);
    return el.role === ROLE.passwordText ? maskSecrets(settled, PASSWORD_TEXT, [text]) : settled;
  });
}

async function insertRoute(
  host: LinuxHost,
  a: Aim,
  el: NativeRef,
  states: [number, number],
  text: string,
  mode: NativeTyping['deliveryMode'],
  sw: Stopwatch,
  fromToken: boolean,
  early: Promise<[string, number]> | null,
): Promise<ActionResult> {
  const { atspi } = a;
  const wasFocused = has(states, STATE.focused);
  // GTK's GrabFocus also presents the window: in the background it is used only when the window already
  // has focus, and otherwise the text goes in at the field's end without moving focus.
  const grabbed =
    fromToken &&
    !wasFocused &&
    (mode === 'foreground' || (await activeWindow()) === a.win.id) &&
    (await atspi.grabFocus(el).catch(() => false));
  // Taking focus may move the caret or selection: read again then.
  const [before, caret] = early && !grabbed ? await early : await atspi.textAndCaret(el);
  // A token's field that did not have focus takes the text at its end; a focused one at its caret. Both
  // in the app's own unit (UTF-16 units for Qt, code points elsewhere).
  const utf16 = atspi.hooks(el.bus).countsUtf16;
  const length = atspi.units(el.bus, before);
  const position = fromToken && !wasFocused ? length : caret >= 0 ? Math.min(caret, length) : length;
  sw.lap('resolve');
  // The read-back is sent right behind the insertion on the same connection: the app answers calls in
  // order, so it reads the field after the insertion was handled. An app that applies text later is read
  // once more before anything short of confirmed is reported.
  // The read-back is the whole text and the app's own character count: a toolkit that padded the text
  // with NULs (which D-Bus cannot carry) holds more than it reads back, and the count shows it.
  const inserting = atspi.insertText(el, position, text);
  const readingBack = atspi.textChecked(el);
  readingBack.catch(() => undefined);
  const caretAfter = atspi.caret(el).catch(() => -1);
  const accepted = await inserting;
  sw.lap('deliver');
  const readAfter = () =>
    atspi.textChecked(el).catch(async (e) => {
      await host.stillThere(el.windowId);
      throw e;
    });
  let read = await readingBack.catch(readAfter);
  let verdict = judgeTextRead(before, read, position, text, utf16);
  if (verdict.effect !== 'confirmed') {
    read = await readAfter();
    verdict = judgeTextRead(before, read, position, text, utf16);
  }
  const after = read.text;
  // The caret follows the text (the next call appends after it). GTK's entries move it themselves, so it
  // is read with the text and set only where it stayed behind; calls on one connection stay in order.
  const end = position + atspi.units(el.bus, text);
  if (after !== before && (await caretAfter) !== end) void atspi.setCaret(el, end).catch(() => false);
  sw.lap('verify');
  // Evidence stays small for a long text (as the browser route's): a window around the insertion.
  const at = stringIndex(before, position, utf16);
  const evidence: Evidence[] = [
    {
      kind: 'field_value',
      expected: excerpt(verdict.expected, at, text.length),
      observed: excerpt(after, at, text.length),
      detail: `AT-SPI Text read back after EditableText.InsertText at offset ${position}${accepted ? '' : ' (the app answered false)'}${read.whole ? '' : `; the app counts ${read.count} characters where ${atspi.units(el.bus, after)} read back: it holds characters the read-back cannot carry (NULs)`}`,
    },
  ];
  const label = `${el.name || 'field'} (${roleLabel(el.role)})`;
  if (el.web) {
    evidence.push({
      kind: 'web_content',
      detail:
        'the field is under a "document web" ancestor: its accessibility text is not proof of what the page holds',
    });
    return {
      ...nativeResult('unverifiable', 'accessibility', sw, evidence, mode, {
        target: label,
        method: 'accessibility_insert',
        escalation: webEscalation(a.win, false, mode),
      }),
      delivery: { mode, delivered_count: verdict.delivered },
    };
  }
  return {
    ...nativeResult(verdict.effect, 'accessibility', sw, evidence, mode, {
      target: label,
      method: 'accessibility_insert',
      ...(verdict.effect === 'confirmed' ? {} : { observed: excerpt(after, 0, 400) }),
      ...(verdict.effect === 'unverifiable'
        ? {
            escalation: {
              target: 'verify',
              reason:
                "the field's text cannot be read back whole through AT-SPI; call get_window_state and check the screenshot before typing again",
            },
          }
        : {}),
    }),
    delivery: { mode, delivered_count: verdict.delivered },
  };
}

async function keystrokeRoute(
  a: Aim,
  el: NativeRef,
  states: [number, number],
  readable: boolean,
  text: string,
  options: NativeTyping,
  sw: Stopwatch,
  fromToken: boolean,
  log: SettleLog,
): Promise<ActionResult> {
  const { atspi } = a;
  const mode = options.deliveryMode;
  const chars = codePoints(text);
  checkKeystrokes(`"${el.name || 'this element'}"`, text, options);
  await requireKeyboardFocus(a.win, mode);
  if (fromToken && !has(states, STATE.focused)) {
    const ok = el.interfaces.includes(IFACE.component) && (await atspi.grabFocus(el).catch(() => false));
    if (!ok)
      throw new Refusal(
        'focus_failed',
        `"${el.name || 'the element'}" would not take focus, so nothing was typed; use the px form (x, y) to click it first`,
      );
  }
  const before = readable ? await atspi.text(el).catch(() => null) : null;
  sw.lap('resolve');
  // Keys are read by the app in its own time: its text, read back until it has grown by all of them
  // (bounded), proves when; without a text to read, it gets a moment.
  const landed =
    before === null ? undefined : async () => codePoints(await atspi.text(el)) >= codePoints(before) + chars;
  await settleBeforeKeys(a.win.id, false, log); // a focus change by deliver (foreground)
  await typeKeys(text, options.delayMs, { window: a.win.id, log });
  sw.lap('deliver');
  if (landed) await pollUntil(landed, KEYS_LANDED_WAIT_MS);
  else await new Promise((r) => setTimeout(r, 30));
  const after = readable ? await atspi.text(el).catch(() => null) : null;
  sw.lap('verify');
  const label = `${el.name || 'element'} (${roleLabel(el.role)})`;
  const base = { target: label, method: 'key_events' };
  if (before === null || after === null) {
    return {
      ...nativeResult(
        'unverifiable',
        'synthetic_events',
        sw,
        [{ kind: 'text', detail: 'the element exposes no AT-SPI Text to read back' }],
        mode,
        {
          ...base,
          escalation:
            webLike(a.win, el) && a.win.driven
              ? webEscalation(a.win, true, mode)
              : {
                  target: 'verify',
                  reason:
                    'the keys were sent (sending them again would type them twice); call get_window_state and check the screenshot',
                },
        },
      ),
      delivery: { mode, delivered_count: chars },
    };
  }
  // Keystrokes land at the caret; without one known, the end of the text is the likeliest place.
  const caretGuess = codePoints(after) - chars >= 0 && after.startsWith(before) ? codePoints(before) : -1;
  const position = caretGuess >= 0 ? caretGuess : codePoints(before);
  const verdict = judgeTextAt(before, after, position, text);
  const at = stringIndex(before, position);
  const evidence: Evidence[] = [
    {
      kind: 'text',
      expected: excerpt(verdict.expected, at, text.length),
      observed: excerpt(after, at, text.length),
      detail: `AT-SPI Text read back after ${a.win.surface === 'wayland' ? 'virtual-keyboard (wtype)' : 'XTest'} keystrokes`,
    },
  ];
  if (webLike(a.win, el)) {
    evidence.push({
      kind: 'web_content',
      detail: el.web
        ? 'the element is under a "document web" ancestor: its accessibility text is not proof of what the page holds'
        : 'the keys went to a browser window where its page is drawn, which exposes no renderer tree: its text is not proof of what the page holds',
    });
    // The keys were sent: retrying (in the foreground or by pixels) would type them twice. Look instead.
    const escalation = a.win.driven
      ? webEscalation(a.win, true, mode)
      : {
          target: 'verify' as const,
          reason:
            'the keys went by XTest to the focused field of a browser Verity does not drive, whose page cannot be proven through accessibility; check the screenshot from get_window_state before typing again',
        };
    return {
      ...nativeResult('unverifiable', 'synthetic_events', sw, evidence, mode, { ...base, escalation }),
      delivery: { mode, delivered_count: chars },
    };
  }
  return {
    ...nativeResult(verdict.effect, 'synthetic_events', sw, evidence, mode, {
      ...base,
      ...(verdict.effect === 'confirmed' ? {} : { observed: excerpt(after, 0, 400) }),
    }),
    delivery: { mode, delivered_count: verdict.delivered },
  };
}
