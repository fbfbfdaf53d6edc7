// type_text and set_value on native targets. AT-SPI EditableText insertion at the caret, read back through
// Text, is the confirmed route; without EditableText, XTest keystrokes (budgeted; characters the keymap
// lacks on borrowed keycodes), read back through Text where the element has it. Web content is delivered
// but never confirmed here.
import type { ActionResult, Evidence, ResolvedTarget, TypeOptions } from '../../../contract/driver.js';
import { Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { maskSecrets } from '../../../contract/secrets.js';
import { excerpt, judgeTextAt, judgeTextRead, judgeValue, stringIndex } from '../../../contract/verdicts.js';
import { IFACE, codePoints, type AccRef, type Atspi } from '../atspi/model.js';
import { dropDownValue, labelsUnder } from '../atspi/dropdown.js';
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
import { clickAt, moveTo, pollUntil, pressKeys, typeKeys, untypable } from '../transport/input.js';
import { SettleLog, settleBeforeKeys, withSettle } from '../transport/settle.js';
import { ROLE, STATE, TOGGLE_ROLES, calcCellEditorName, has } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { activeWindow } from '../transport/x11.js';
import { SYNTHESIS_BUDGET_MS, maxChunkChars } from '../../shared/key-pace.js';

/** How long typed keys get to show in the element's text before what it holds is judged. */
const KEYS_LANDED_WAIT_MS = 1000;

/** How to type, with the target's delivery_mode (carried on the target; the driver hands it on here). */
export type NativeTyping = TypeOptions & { deliveryMode: ResolvedTarget['deliveryMode'] };

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

/** Why an AT-SPI password text's content is masked in results. */
const PASSWORD_TEXT = 'a password text (AT-SPI role "password text")';

export async function typeNative(
  host: LinuxHost,
  target: ResolvedTarget,
  text: string,
  options: NativeTyping,
): Promise<ActionResult> {
  const sw = new Stopwatch();
  // A token's field: its text and caret are asked for right behind its states (one round trip, not two),
  // or were asked for already as the call arrived.
  const ref = target.element ? (target.element.ref as NativeRef) : null;
  const prefetched = ref ? host.takeField(ref) : null;
  const early = prefetched ? prefetched.textAndCaret : ref ? (await host.atspi()).textAndCaret(ref) : null;
  early?.catch(() => undefined); // a gone element is reported by aim's own read
  const a = await aim(host, target, prefetched?.states);
  const mode = options.deliveryMode;
  // A window whose toolkit exposes no AT-SPI tree (Tk, Java without its bridge): no field to find or
  // read, so keys go to its focused widget (after the px form's click), every check made before anything
  // is sent, and the verdict says that nothing can be read back.
  if (!a.element && !a.win.frame) {
    checkKeystrokes('this window', text, options);
    await requireKeyboardFocus(a.win, mode);
    return deliver(mode, a.win, () => blindKeys(host, a, text, options, sw));
  }
  return deliver(mode, a.win, async () => {
    const log = new SettleLog();
    const { el, states, clicked } = await fieldOf(host, target, a, log);
    checkEnabled(el, states);
    // Its units decide offsets and lengths: known since its window was listed, unless the AT-SPI
    // connection was made anew since.
    if (!a.atspi.knowsToolkit(el.bus)) await a.atspi.toolkit(el.bus);
    const editable = el.interfaces.includes(IFACE.editable) && acceptsEdits(a.atspi.knownToolkit(el.bus).atk, states);
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
    // A token's element says so from its snapshot; one found at a point is asked live.
    const editorOf = !editable ? null : a.element ? (el.calcCellEditor ?? null) : await calcCellEditor(a.atspi, el);
    if (editorOf)
      throw new Refusal(
        'not_supported',
        `this paragraph is LibreOffice Calc's cell editor ("${editorOf}"): text inserted into it reaches the sheet only through an open edit, and Calc lists it also when none is open (the text then goes nowhere), so nothing was typed; type into the cell itself (its element_token from get_window_state), which is typed and read back once committed`,
      );
    const typed =
      editable && !undrivenWeb
        ? await insertRoute(host, a, el, states, text, mode, sw, !!target.element && !clicked, early)
        : isSheetCell(el, states)
          ? await cellRoute(a, el, text, options, sw)
          : await keystrokeRoute(a, el, states, readable, text, options, sw, !!target.element, log);
    const settled = withSettle(typed, log);
    return el.role === ROLE.passwordText ? maskSecrets(settled, PASSWORD_TEXT, [text]) : settled;
  });
}

/** calcCellEditorName (roles.ts) for an element found at a point: its parent and grandparent read live. */
async function calcCellEditor(atspi: Atspi, el: NativeRef): Promise<string | null> {
  if (el.role !== ROLE.paragraph) return null;
  const up = async (ref: AccRef) => {
    const [bus, path] = (await atspi.prop(ref, IFACE.accessible, 'Parent')) as [string, string];
    const [role] = await atspi.call({ bus, path }, IFACE.accessible, 'GetRole');
    return { ref: { bus, path }, role: Number(role) };
  };
  try {
    const panel = await up(el);
    if (panel.role !== ROLE.panel) return null;
    const doc = await up(panel.ref);
    const name = String(await atspi.prop(panel.ref, IFACE.accessible, 'Name'));
    return calcCellEditorName(el.role, { role: panel.role, name }, doc);
  } catch {
    return null; // not read: the element's own route goes on, and its read-back judges it as before
  }
}

/**
 * Whether an element with EditableText takes edits. ATK toolkits (GTK 3) say `editable` and leave a
 * read-only field without it; Qt never says `editable` on some (spin boxes) and says `read only` instead.
 */
export function acceptsEdits(atk: boolean, states: [number, number]): boolean {
  if (has(states, STATE.readOnly)) return false;
  return has(states, STATE.editable) || !atk;
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
  const utf16 = atspi.knownToolkit(el.bus).utf16;
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

/**
 * A spreadsheet cell (LibreOffice Calc): Text to read, `editable`, but no EditableText. What it holds
 * changes only when an edit is committed, so it is typed as a user does: F2 (edit at the end of its
 * content), the keys, Enter (commit; the cursor moves to the next row).
 */
function isSheetCell(el: NativeRef, states: [number, number]): boolean {
  return (
    el.role === ROLE.tableCell &&
    el.interfaces.includes(IFACE.text) &&
    !el.interfaces.includes(IFACE.editable) &&
    has(states, STATE.editable)
  );
}

async function cellRoute(
  a: Aim,
  el: NativeRef,
  text: string,
  options: NativeTyping,
  sw: Stopwatch,
): Promise<ActionResult> {
  const { atspi } = a;
  const mode = options.deliveryMode;
  const label = `${el.name || 'cell'} (table cell)`;
  if (/[\n\r]/.test(text))
    throw new Refusal(
      'text_not_deliverable',
      `"${label}" is a spreadsheet cell: Enter commits it, so a newline cannot be typed into it; nothing was typed. Send the text without newlines (one cell per call)`,
    );
  const odd = untypable(text).slice(0, 10).join(' ');
  if (odd)
    throw new Refusal(
      'text_not_deliverable',
      `"${label}" takes text only as keystrokes, and control characters have none (${odd}); nothing was typed`,
      { characters: odd },
    );
  const chars = codePoints(text);
  const limit = maxChunkChars(options.delayMs);
  if (chars > limit)
    throw new Refusal(
      'type_text_synthesis_budget_exceeded',
      `"${label}" takes text only as synthesized keystrokes, and ${chars} characters at delay_ms ${options.delayMs} exceed the ${SYNTHESIS_BUDGET_MS} ms budget of one call; nothing was typed. Send at most ${limit} characters per call (or lower delay_ms)`,
      { max_chunk_chars: limit, delay_ms: options.delayMs, chars },
    );
  await requireKeyboardFocus(a.win, mode);
  // The sheet's cursor goes to the cell (Calc's GrabFocus selects it), proven by its `focused` state.
  await atspi.grabFocus(el).catch(() => false);
  const onCell = await pollUntil(async () => has(await atspi.states(el), STATE.focused), KEYS_LANDED_WAIT_MS);
  if (!onCell)
    throw new Refusal(
      'focus_failed',
      `the sheet's cursor did not move to "${label}", so nothing was typed; click the cell (px form) and type again`,
    );
  const before = await atspi.text(el);
  sw.lap('resolve');
  await pressKeys(['F2']);
  await typeKeys(text, options.delayMs);
  await pressKeys(['Enter']);
  sw.lap('deliver');
  const expected = before + text;
  await pollUntil(async () => (await atspi.text(el)) === expected, KEYS_LANDED_WAIT_MS);
  const after = await atspi.text(el);
  sw.lap('verify');
  const verdict = judgeTextAt(before, after, codePoints(before), text);
  const evidence: Evidence[] = [
    {
      kind: 'text',
      expected: excerpt(verdict.expected, before.length, text.length),
      observed: excerpt(after, before.length, text.length),
      detail:
        "AT-SPI Text of the cell read back after XTest F2, the keys and Enter (committed: the sheet's cursor moved on)",
    },
  ];
  return {
    ...nativeResult(verdict.effect, 'synthetic_events', sw, evidence, mode, {
      target: label,
      method: 'key_events',
      ...(verdict.effect === 'confirmed' ? {} : { observed: excerpt(after, 0, 400) }),
    }),
    delivery: { mode, delivered_count: verdict.delivered },
  };
}

/** Refuses, before anything is sent, text that keystrokes cannot carry or that exceeds one call's budget. */
function checkKeystrokes(what: string, text: string, options: NativeTyping): void {
  const odd = untypable(text).slice(0, 10).join(' ');
  if (odd) {
    throw new Refusal(
      'text_not_deliverable',
      `${what} has no accessible text insertion, and control characters have no keystroke (${odd}); nothing was typed. Send the text without them, or press_key for special keys`,
      { characters: odd },
    );
  }
  const chars = codePoints(text);
  const limit = maxChunkChars(options.delayMs);
  if (chars > limit) {
    throw new Refusal(
      'type_text_synthesis_budget_exceeded',
      `${what} takes text only as synthesized keystrokes, and ${chars} characters at delay_ms ${options.delayMs} exceed the ${SYNTHESIS_BUDGET_MS} ms budget of one call; nothing was typed. Send at most ${limit} characters per call (or lower delay_ms)`,
      { max_chunk_chars: limit, delay_ms: options.delayMs, chars },
    );
  }
}

/**
 * Keystrokes into a window with no AT-SPI tree (checked beforehand by the caller): the px form clicks its
 * point first, as a user focuses a field; then XTest keys to whatever has focus. Never confirmed: nothing
 * the window holds can be read back.
 */
async function blindKeys(
  host: LinuxHost,
  a: Aim,
  text: string,
  options: NativeTyping,
  sw: Stopwatch,
): Promise<ActionResult> {
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
  await host.stillThere(a.win.id);
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

function roleLabel(role: number): string {
  return role === ROLE.text || role === ROLE.entry ? 'text' : role === ROLE.terminal ? 'terminal' : `role ${role}`;
}

/** set_value: a Value (number), a toggle (true/false), a combo box or list selection, or a text's contents. */
export async function setValueNative(
  host: LinuxHost,
  target: ResolvedTarget,
  value: string,
  mode: 'background' | 'foreground' = 'background',
): Promise<ActionResult> {
  const sw = new Stopwatch();
  if (!target.element)
    throw new Refusal('invalid_arguments', 'set_value needs an element_token (from get_window_state)');
  const a = await aim(host, target);
  const el = a.element!;
  const { atspi } = a;
  checkEnabled(el, a.states);
  // A Qt combo box is set by keys, which reach only the focused window: set_value takes no delivery_mode,
  // so it is delivered in the foreground (raised, set, focus given back), and says so.
  const qtCombo =
    el.role === ROLE.comboBox && !el.interfaces.includes(IFACE.selection) && atspi.knownToolkit(el.bus).utf16;
  const dropDown =
    el.role === ROLE.comboBox && !el.interfaces.includes(IFACE.selection) && atspi.knownToolkit(el.bus).windowRelative;
  if (qtCombo || dropDown) mode = 'foreground';
  return deliver(mode, a.win, async () => {
    let evidence: Evidence[];
    let effect: ActionResult['effect'];
    /** The field's text before and after, when set_value replaced it (masked too in a password text). */
    let contents: string[] = [];
    const show = (v: unknown) => String(v);
    if (TOGGLE_ROLES.has(el.role)) {
      if (value !== 'true' && value !== 'false')
        throw new Refusal(
          'invalid_arguments',
          `value: "${el.name}" is a ${el.role === ROLE.radioButton ? 'radio button' : 'check box'}; pass "true" or "false"`,
        );
      const want = value === 'true';
      const was = has(a.states, STATE.checked);
      sw.lap('resolve');
      if (was !== want) await pressFirstAction(atspi, el);
      sw.lap('deliver');
      const now = has(await waitStates(atspi, el, (s) => has(s, STATE.checked) === want), STATE.checked);
      sw.lap('verify');
      evidence = [
        {
          kind: 'checked_state',
          expected: `checked=${want}`,
          observed: `checked=${now}`,
          detail: `before: checked=${was}`,
        },
      ];
      effect = judgeValue(want, was, now);
    } else if (
      el.interfaces.includes(IFACE.value) &&
      (!el.interfaces.includes(IFACE.editable) || (value.trim() !== '' && Number.isFinite(Number(value))))
    ) {
      // A number for a spin box goes through Value too (its text is the toolkit's formatting of it).
      const number = Number(value);
      if (!Number.isFinite(number) || value.trim() === '')
        throw new Refusal('invalid_arguments', `value: "${el.name}" takes a number`);
      const was = Number(await atspi.prop(el, IFACE.value, 'CurrentValue'));
      sw.lap('resolve');
      await atspi.setProp(el, IFACE.value, 'CurrentValue', 'd', number);
      sw.lap('deliver');
      const readValue = () => atspi.prop(el, IFACE.value, 'CurrentValue').then(Number);
      let now = await readValue();
      for (let i = 0; i < 25 && now !== number; i++) {
        await new Promise((r) => setTimeout(r, 20));
        now = await readValue();
      }
      sw.lap('verify');
      evidence = [{ kind: 'value', expected: show(number), observed: show(now), detail: `before: ${was}` }];
      effect = judgeValue(number, was, now);
    } else if (
      (el.role === ROLE.comboBox ||
        el.role === ROLE.list ||
        el.role === ROLE.listBox ||
        el.role === ROLE.pageTabList) &&
      el.interfaces.includes(IFACE.selection)
    ) {
      const options = await optionsOf(atspi, el);
      const index = options.findIndex((o) => o.name === value);
      if (index < 0)
        throw new Refusal(
          'no_such_option',
          `value: no option of "${el.name}" is named "${value}"; options: ${options.map((o) => o.name).join(', ')}`,
          { options: options.map((o) => o.name) },
        );
      const was = await selectedName(atspi, el);
      sw.lap('resolve');
      await atspi.selectChild(el, index);
      sw.lap('deliver');
      await new Promise((r) => setTimeout(r, 20));
      const now = await selectedName(atspi, el);
      sw.lap('verify');
      evidence = [{ kind: 'selection', expected: value, observed: now, detail: `before: ${was}` }];
      effect = judgeValue(value, was, now);
    } else if (qtCombo) {
      ({ effect, evidence } = await qtComboKeys(a, el, value, mode, sw));
    } else if (dropDown) {
      ({ effect, evidence } = await gtk4DropDown(a, el, value, sw));
    } else if (el.interfaces.includes(IFACE.editable)) {
      if (!acceptsEdits(atspi.knownToolkit(el.bus).atk, a.states))
        throw new Refusal('element_readonly', `"${el.name}" is read-only`);
      const was = await atspi.text(el);
      sw.lap('resolve');
      await atspi.setTextContents(el, value);
      sw.lap('deliver');
      const now = await atspi.text(el);
      sw.lap('verify');
      evidence = [{ kind: 'field_value', expected: value, observed: now, detail: `before: ${was}` }];
      effect = judgeValue(value, was, now);
      contents = [was, now];
    } else {
      throw new Refusal(
        'not_settable',
        `"${el.name || 'the element'}" (${el.role}) has no value AT-SPI can set (no Value, selection, toggle or EditableText)`,
      );
    }
    if (el.web && effect === 'confirmed') {
      evidence.push({
        kind: 'web_content',
        detail: 'under a "document web" ancestor: accessibility state is not proof of what the page holds',
      });
      const unproven = nativeResult('unverifiable', 'accessibility', sw, evidence, mode, {
        target: el.name,
        escalation: webEscalation(a.win, false, mode, 'set_value'),
      });
      return el.role === ROLE.passwordText ? maskSecrets(unproven, PASSWORD_TEXT, [value, ...contents]) : unproven;
    }
    const observed = evidence[0].observed;
    const set = nativeResult(effect, 'accessibility', sw, evidence, mode, {
      target: el.name,
      ...(effect === 'confirmed' ? {} : { observed }),
      // Web content that did not take the value: say which route can deliver there.
      ...(el.web ? { escalation: webEscalation(a.win, false, mode, 'set_value') } : {}),
    });
    return el.role === ROLE.passwordText ? maskSecrets(set, PASSWORD_TEXT, [value, ...contents]) : set;
  });
}

/**
 * A Qt combo box offers no Selection, and its options' own actions select them in the closed popup's view
 * only. Keys do what a user does: focus it, Home, then Down to the option; its name (Qt names a combo box
 * by its current text) proves the result. Keys need the window's keyboard focus.
 */
async function qtComboKeys(
  a: Aim,
  el: NativeRef,
  value: string,
  mode: 'background' | 'foreground',
  sw: Stopwatch,
): Promise<{ effect: ActionResult['effect']; evidence: Evidence[] }> {
  const { atspi } = a;
  const options = await optionsOf(atspi, el);
  const index = options.findIndex((o) => o.name === value);
  if (index < 0)
    throw new Refusal(
      'no_such_option',
      `value: no option of "${el.name}" is named "${value}"; options: ${options.map((o) => o.name).join(', ')}`,
      { options: options.map((o) => o.name) },
    );
  await requireKeyboardFocus(a.win, mode);
  const name = () => atspi.prop(el, IFACE.accessible, 'Name').then(String);
  const was = await name();
  // Qt's GrabFocus answers false for a combo box; a click opens its popup with the keyboard in it.
  const open = !has(a.states, STATE.focused) && !(await atspi.grabFocus(el).catch(() => false));
  sw.lap('resolve');
  if (open) {
    await moveTo(el.box.x + el.box.w / 2, el.box.y + el.box.h / 2);
    await clickAt('left', 1, []);
    await new Promise((r) => setTimeout(r, 150));
  }
  await pressKeys(['Home']);
  for (let i = 0; i < index; i++) await pressKeys(['Down']);
  if (open) await pressKeys(['Enter']);
  sw.lap('deliver');
  let now = await name();
  for (let i = 0; i < 25 && now !== value; i++) {
    await new Promise((r) => setTimeout(r, 20));
    now = await name();
  }
  sw.lap('verify');
  const evidence: Evidence[] = [
    {
      kind: 'selection',
      expected: value,
      observed: now,
      detail: `${open ? 'clicked open, ' : ''}XTest Home and Down x${index}${open ? ', Enter' : ''}; before: ${was}`,
    },
  ];
  return { effect: judgeValue(value, was, now), evidence };
}

/**
 * A GTK 4 drop-down offers no Selection, no action and no focus call; its options exist only while its
 * popup is open. So as a user would: click it open, read the options of its list, Home and Down to the
 * one asked for, Enter; the label it shows afterwards proves the result.
 */
async function gtk4DropDown(
  a: Aim,
  el: NativeRef,
  value: string,
  sw: Stopwatch,
): Promise<{ effect: ActionResult['effect']; evidence: Evidence[] }> {
  const { atspi } = a;
  const was = await dropDownValue(atspi, el);
  sw.lap('resolve');
  await moveTo(el.box.x + el.box.w / 2, el.box.y + el.box.h / 2);
  await clickAt('left', 1, []);
  let options: string[] = [];
  await pollUntil(async () => (options = await dropDownOptions(atspi, el)).length > 0, 1000);
  const index = options.indexOf(value);
  if (index < 0) {
    await pressKeys(['Escape']);
    if (!options.length)
      throw new Refusal('not_settable', `"${el.name}" showed no list of options when clicked open; nothing was chosen`);
    throw new Refusal(
      'no_such_option',
      `value: no option of "${el.name}" is named "${value}"; options: ${options.join(', ')}`,
      { options },
    );
  }
  await pressKeys(['Home']);
  for (let i = 0; i < index; i++) await pressKeys(['Down']);
  await pressKeys(['Enter']);
  sw.lap('deliver');
  let now = await dropDownValue(atspi, el);
  for (let i = 0; i < 25 && now !== value; i++) {
    await new Promise((r) => setTimeout(r, 20));
    now = await dropDownValue(atspi, el);
  }
  sw.lap('verify');
  const evidence: Evidence[] = [
    {
      kind: 'selection',
      expected: value,
      observed: now ?? '(none)',
      detail: `clicked open, XTest Home, Down x${index}, Enter; the label the drop-down shows, before: ${was}`,
    },
  ];
  return { effect: judgeValue(value, was, now), evidence };
}

/** The options of an open GTK 4 drop-down: the first label of each item of its popup's list. */
async function dropDownOptions(atspi: Aim['atspi'], el: NativeRef): Promise<string[]> {
  const children = await atspi.children(el);
  for (const popup of children.slice(1)) {
    const nodes = await labelsUnder(atspi, popup);
    const list = nodes.find((n) => n.role === ROLE.list);
    if (!list) continue;
    const items = await atspi.children(list.ref);
    const names = await Promise.all(
      items.map(async (item) => (await labelsUnder(atspi, item, 10)).find((n) => n.role === ROLE.label)?.name ?? ''),
    );
    return names;
  }
  return [];
}

/** The selectable options of a combo box (its popup menu's items) or list. */
async function optionsOf(atspi: Aim['atspi'], el: NativeRef): Promise<Array<{ name: string }>> {
  let children = await atspi.children(el);
  if (el.role === ROLE.comboBox && children.length === 1) {
    const [[role]] = [await atspi.call(children[0], IFACE.accessible, 'GetRole')];
    if (Number(role) === ROLE.menu || Number(role) === ROLE.list) children = await atspi.children(children[0]);
  }
  return Promise.all(
    children.map(async (c) => ({ name: String(await atspi.prop(c, IFACE.accessible, 'Name').catch(() => '')) })),
  );
}

async function selectedName(atspi: Aim['atspi'], el: NativeRef): Promise<string | null> {
  const [[bus, path]] = await atspi.call(el, IFACE.selection, 'GetSelectedChild', 'i', [0]).catch(() => [['', '']]);
  if (!bus || path === '/org/a11y/atspi/null') return null;
  return String(await atspi.prop({ bus, path }, IFACE.accessible, 'Name'));
}

/** Runs the element's first action (click / press / toggle / activate). */
export async function pressFirstAction(atspi: Aim['atspi'], el: NativeRef): Promise<string> {
  const names = await atspi.actions(el);
  const wanted = ['click', 'press', 'toggle', 'activate', 'jump', 'select'];
  let index = names.findIndex((n) => wanted.includes(n.toLowerCase()));
  if (index < 0) index = 0;
  if (!names.length) throw new Refusal('not_supported', `"${el.name}" offers no AT-SPI action`);
  const ok = await atspi.doAction(el, index);
  if (!ok) throw new Refusal('not_supported', `"${el.name}" refused its "${names[index]}" action`);
  return names[index];
}

/** Reads an element's states until `done` holds or ~500 ms passed (toolkits apply actions on idle). */
export async function waitStates(
  atspi: Aim['atspi'],
  el: NativeRef,
  done: (s: [number, number]) => boolean,
): Promise<[number, number]> {
  let states = await atspi.states(el);
  for (let i = 0; i < 25 && !done(states); i++) {
    await new Promise((r) => setTimeout(r, 20));
    states = await atspi.states(el);
  }
  return states;
}
