// type_text on a tab. Text goes in with Input.insertText (trusted input, one commit, the way
// an IME delivers it); a rich editor gets Enter between lines, and a code editor takes it through its own
// paste path (page-agent/code-editors.ts), where its auto-indent, bracket closing and completion do not act.
// The field is read back at once and again after the page settles (a code editor's whole document from
// its model), and the result says exactly what landed. A second method is tried only when the read-back
// proves nothing landed, so text can never arrive twice.
import type { ActionArgs } from '../../contract/actions.js';
import type { ActionResult, Evidence, ResolvedTarget, TypeOptions } from '../../contract/driver.js';
import { Stopwatch } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import { describeEvents, dialogResult, focusedFrame, result, tabOf, withSideEffects, type CdpRoute } from './aim.js';
import { click } from './click.js';
import { keepReread, quickFrameOf, type TabElementRef } from '../snapshot.js';
import type { Frame, Tab } from '../tab/tab.js';
import type {
  FieldPrepared,
  HeldReadBack,
  Pasted,
  SinkReady,
  TextFieldReady,
  ValueInputReady,
} from '../page-agent/replies.js';
import { queueCursor } from '../tab/cursor-overlay.js';
import { CTRL, DialogOpened, fieldRefusal, pressEnter, pressNamedKey, send } from './field-input.js';
import {
  excerpt,
  judgeShownText,
  judgeText,
  judgeValue,
  numberFieldRejects,
  type FieldState,
} from '../../contract/verdicts.js';
import { maskSecrets } from '../../contract/secrets.js';

// The verdict rules are pure and live in contract/verdicts.ts (unit-tested).
const judge = judgeText;

/** type_text, with what arrived during it (no extra listening). */
export function typeText(
  route: CdpRoute,
  target: ResolvedTarget,
  { text, ...options }: ActionArgs['typeText'],
): Promise<ActionResult> {
  return withSideEffects(route, target, () => typeIntoTab(route, target, text, options));
}

async function typeIntoTab(
  route: CdpRoute,
  target: ResolvedTarget,
  text: string,
  _options: TypeOptions,
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const tab = tabOf(target);
  if (target.point && !target.element) await click(route, target, { button: 'left', count: 1, modifiers: [] });
  let frame: Frame;
  let prepared: FieldPrepared;
  if (target.element) {
    const ref = target.element.ref as TabElementRef;
    frame = quickFrameOf(tab, ref);
    prepared = await tab.call(frame, 'prepareField', target.element.snapshotId, ref.local);
  } else {
    frame = await focusedFrame(tab);
    prepared = await tab.call(frame, 'prepareField', null, 0);
  }
  if (prepared.kind === 'refused' && prepared.refusal === 'not_editable' && prepared.inline && target.element) {
    // Clicked as a user would, an inline-edit widget swaps itself for a field and focuses it: type there.
    const described = prepared.detail ?? 'the element';
    await click(route, target, { button: 'left', count: 1, modifiers: [] });
    frame = await focusedFrame(tab);
    prepared = await tab.call(frame, 'prepareField', null, 0);
    if (prepared.kind === 'nothing_focused' || prepared.kind === 'refused')
      throw new Refusal(
        'not_editable',
        `${described} is a textbox without a field, and a click on it focused no field (${prepared.kind === 'refused' ? `${prepared.refusal}: ${prepared.detail}` : 'nothing focused'}); nothing was typed`,
      );
  }
  switch (prepared.kind) {
    case 'nothing_focused':
      throw new Refusal(
        'target_not_found',
        'nothing is focused to type into; pass an element_token from get_window_state, or x,y of the field',
      );
    case 'refused':
      throw fieldRefusal(prepared.refusal, prepared.detail ?? '');
    case 'value_input':
      return typeIntoValueInput(tab, frame, sw, text, prepared);
    case 'sink':
      return typeIntoSink(tab, frame, sw, text, prepared);
  }
  const field = prepared.handle;
  // The page holds the field until the action's last read of it: freed there, or here when the action
  // ends another way (a refusal, a dialog) or its last read did not free it (`held` in its reply).
  let held = true;
  try {
    return await typeIntoField(target, tab, frame, sw, text, prepared, (read) => {
      held = read.held;
    });
  } finally {
    if (held) await tab.call(frame, 'releaseField', field).catch(() => undefined);
  }
}

/** type_text into a prepared text field or editor (`prepared`, held by the page until its last read-back). */
async function typeIntoField(
  target: ResolvedTarget,
  tab: Tab,
  frame: Frame,
  sw: Stopwatch,
  text: string,
  prepared: TextFieldReady,
  onRead: (read: HeldReadBack) => void,
): Promise<ActionResult> {
  let before = prepared.state;
  // A refusal on a secret field says so too: the call's arguments are masked in the audit trail and the log.
  const secretDetail = before.secret ? { masked: before.secret } : {};
  const dropped = prepared.inputType === 'number' ? numberFieldRejects(text) : null;
  if (dropped) {
    throw new Refusal(
      'text_not_deliverable',
      `${before.describe} is a number field: it accepts only digits, a sign, a decimal point and an exponent, and would drop "${dropped}"; nothing was typed`,
    );
  }
  if (prepared.singleLine && text.includes('\n')) {
    throw new Refusal(
      'text_not_deliverable',
      `${before.describe} is a single-line field and cannot hold a newline; send the lines separately, or press_key Enter if you mean to submit`,
      secretDetail,
    );
  }
  // The cursor glides to the field; in the top frame its viewport is the tab's (iframes are skipped).
  if (target.cursor && prepared.center && frame.session === tab.session && frame.frameId === tab.mainFrameId) {
    queueCursor(tab, prepared.center.x, prepared.center.y, target.cursor, 'type');
  }
  sw.lap('resolve');

  let pasted: Pasted | null = null;
  try {
    // A field without a selection API (email, number) cannot have its caret placed from the page:
    // the End key puts it after the value, where the text belongs.
    if (prepared.pressEnd === 'End') await pressNamedKey(tab, 'End', 35);
    if (prepared.pressEnd === 'Ctrl+End') {
      // An editor that keeps its caret in its own model: its own Ctrl+End puts it at the end, then the
      // field is read again, so the verdict starts from where the caret is now.
      await pressNamedKey(tab, 'End', 35, CTRL);
      before = (await tab.call(frame, 'preparedFieldNow', prepared.handle)) ?? before;
    }
    if (prepared.delivery === 'paste') {
      // A code editor: one paste, dispatched at its input surface. One it does not take (no paste handler
      // there) gets the whole text as one insertion instead; a field no longer held gets nothing.
      pasted = await tab.call(frame, 'pasteText', prepared.handle, text);
      if (pasted.kind === 'pasted' && !pasted.taken) await send(tab, 'Input.insertText', { text });
    } else await insertText(tab, text, prepared.delivery);
  } catch (e) {
    if (e instanceof DialogOpened) {
      sw.lap('deliver');
      return dialogResult(sw, before.describe, 'typing');
    }
    throw e;
  }
  sw.lap('deliver');
  // The last read of the field also re-reads the document for the result's `changes` (one round trip fewer),
  // when the field is in the top document of a tab whose frames all answer through its own session.
  const inTop = frame.session === tab.session && frame.frameId === tab.mainFrameId;
  const rereadFor = target.observed && inTop && tab.singleSession ? target.observed : null;
  const readAgain = async () => {
    const read = await tab.call(frame, 'readBack', prepared.handle, rereadFor);
    if (read.reread !== undefined) keepReread(target, tab, rereadFor!, read.reread);
    onRead(read);
    return read;
  };
  let read = await readAgain();
  sw.lap('verify');
  const pasteTaken = pasted?.kind === 'pasted' && pasted.taken;
  let method = pasteTaken ? 'paste' : 'insert_text';
  let verdict = judge(before, read, text);

  const cancelled = read.events.some((e) => e.type === 'beforeinput' && e.prevented);
  // An editor that took the paste heard the text: what it did with it is the verdict, no keys follow.
  const anyInput = pasteTaken || read.events.some((e) => e.type === 'beforeinput' || e.type === 'input');
  let focusMoved: string | undefined;
  if (verdict.effect === 'no_effect' && !cancelled && !anyInput) {
    // Nothing landed and the page did not refuse it: key events are the next rung, and cannot double.
    // The prepared field is watched afresh for them (not whatever holds the focus now); when the focus has
    // left it, keys would go where the insertion may already have landed: they are not sent.
    const rearmed = await tab.call(frame, 'rearmField', prepared.handle);
    if (rearmed.kind === 'focus_moved') focusMoved = rearmed.focused;
    else {
      const dialog = await keysOrDialog(tab, text, sw, before.describe);
      if (dialog) return dialog;
      read = await readAgain();
      sw.lap('verify');
      method = 'key_events';
      verdict = judge(before, read, text);
    }
  }
  const evidence: Evidence[] = [
    ...verdict.evidence,
    { kind: 'event', observed: describeEvents({ target: before.describe, events: read.events }) },
  ];
  if (focusMoved)
    evidence.push({
      kind: 'focus',
      expected: before.describe,
      observed: focusMoved,
      detail:
        'the page moved the focus away from the field before the text reached it; key events were not tried, so the text cannot arrive twice',
    });
  if (prepared.editor)
    evidence.push({
      kind: 'code_editor',
      detail: pasteTaken
        ? `${prepared.editor}: the text went in through its own paste path, one insertion that its auto-indent, bracket and quote closing and completion leave alone`
        : `${prepared.editor}: it did not take the text as a paste; it was inserted as one piece instead`,
    });
  if (pasteTaken && verdict.effect === 'no_effect')
    evidence.push({
      kind: 'paste',
      observed: 'taken (its default cancelled)',
      detail: "the paste was taken and the editor's document did not change: the editor or the page refused it",
    });
  if (prepared.combobox) {
    evidence.push({
      kind: 'combobox',
      detail:
        "this field is a combobox: the text is its search text and filters its options; nothing is chosen until an option is (set_value with the option's text, or click the option)",
    });
  }
  if (cancelled && verdict.effect === 'no_effect')
    evidence.push({
      kind: 'beforeinput',
      observed: 'cancelled by the page (preventDefault)',
      detail: 'the page refused the input',
    });
  const typed: ActionResult = {
    ...result(verdict.effect, sw, evidence, { target: before.describe, method }),
    delivery: { mode: 'background', delivered_count: verdict.delivered },
    ...(verdict.effect === 'confirmed' ? {} : { observed: heldNow(before, read) }),
  };
  const secret = before.secret ?? read.settled?.secret ?? read.first?.secret;
  return secret ? maskSecrets(typed, secret, [text, before.text, read.first?.text, read.settled?.text]) : typed;
}

/**
 * What the field holds now, for a verdict other than confirmed: its start (most fields), or for a code editor
 * the part around where the text went (what stands there now, with some context), from its whole document.
 */
function heldNow(before: FieldState, read: HeldReadBack): string {
  const now = read.settled?.text ?? read.first?.text ?? '';
  if (before.kind !== 'code') return excerpt(now, 0, 400);
  const at = Math.max(0, before.start);
  const replaced = Math.max(0, before.end - at);
  return excerpt(now, at, Math.max(0, now.length - before.text.length + replaced));
}

async function insertText(tab: Tab, text: string, delivery: 'insert_text' | 'lines'): Promise<void> {
  if (delivery === 'insert_text') {
    await send(tab, 'Input.insertText', { text });
    return;
  }
  // Rich editors keep their own document model: a newline there is a paragraph break, i.e. Enter.
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (i > 0) await pressEnter(tab);
    if (lines[i]) await send(tab, 'Input.insertText', { text: lines[i] });
  }
}

/**
 * date, time, color, range...: a field that holds one value and has no caret. The text becomes its whole
 * value, checked first against what the field would store (nothing is done when it would store
 * something else), then read back after the page settled.
 */
async function typeIntoValueInput(
  tab: Tab,
  frame: Frame,
  sw: Stopwatch,
  text: string,
  prepared: ValueInputReady,
): Promise<ActionResult> {
  sw.lap('resolve');
  const r = await tab.call(frame, 'assignPreparedValue', prepared.handle, text);
  if (r.kind === 'refused' && r.refusal === 'value_rejected') {
    throw new Refusal(
      'text_not_deliverable',
      `${prepared.describe} is a ${prepared.inputType} field holding one value in the form ${prepared.form}; "${text}" is not one (the field would store "${r.stored}"); nothing was set`,
    );
  }
  if (r.kind === 'refused') throw new Refusal('target_not_found', `${r.refusal}: ${r.detail}`);
  sw.lap('deliver');
  sw.lap('verify');
  const evidence: Evidence[] = [
    {
      kind: 'field_value',
      expected: text,
      observed: r.settled,
      detail: `a ${prepared.inputType} field has no caret: the text was set as its whole value (before: "${r.before}")`,
    },
  ];
  if (r.first !== r.settled)
    evidence.unshift({
      kind: 'field_value',
      observed: r.first,
      detail: 'read back at once, before the page rewrote it',
    });
  const effect = judgeValue(text, r.before, r.settled);
  return {
    ...result(effect, sw, evidence, { target: prepared.describe, method: 'set_value' }),
    delivery: { mode: 'background', delivered_count: effect === 'confirmed' ? [...text].length : 0 },
    ...(effect === 'confirmed' ? {} : { observed: r.settled }),
  };
}

/**
 * A keyboard sink (a hidden input a widget collects keys with): each character as a real key press
 * (keydown with its text, so keypress, beforeinput and input follow, then keyup), since the widget acts
 * on the keys and may never read the value. The verdict is the widget's visible text, not the sink's value.
 */
async function typeIntoSink(
  tab: Tab,
  frame: Frame,
  sw: Stopwatch,
  text: string,
  prepared: SinkReady,
): Promise<ActionResult> {
  sw.lap('resolve');
  const dialog = await keysOrDialog(tab, text, sw, prepared.describe);
  if (dialog) return dialog;
  // One call reads the widget's text and what the sink heard, and frees the sink in the page.
  const read = await tab.call(frame, 'sinkShown', prepared.handle, text);
  const shown = read.kind === 'shown' ? read : null;
  const seen = read.watched;
  sw.lap('verify');
  const verdict = judgeShownText(shown?.before ?? null, shown?.after ?? null, text, shown?.area ?? prepared.area);
  const evidence: Evidence[] = [
    ...verdict.evidence,
    {
      kind: 'keyboard_sink',
      detail: `${prepared.describe} is a hidden (${prepared.hidden}) input a widget collects keys with: typed as key presses, judged by what the widget shows`,
    },
    { kind: 'event', observed: describeEvents(seen) },
  ];
  return {
    ...result(verdict.effect, sw, evidence, { target: prepared.describe, method: 'key_events' }),
    delivery: { mode: 'background', delivered_count: verdict.delivered },
    ...(verdict.escalation ? { escalation: verdict.escalation } : {}),
  };
}

/**
 * Types `text` as key events and laps the delivery; a dialog a key opened ends the action, as its result
 * (null when the keys went through).
 */
async function keysOrDialog(
  tab: Tab,
  text: string,
  sw: Stopwatch,
  describe: Parameters<typeof dialogResult>[1],
): Promise<ActionResult | null> {
  try {
    await typeKeys(tab, text);
  } catch (e) {
    if (!(e instanceof DialogOpened)) throw e;
    sw.lap('deliver');
    return dialogResult(sw, describe, 'typing');
  }
  sw.lap('deliver');
  return null;
}

async function typeKeys(tab: Tab, text: string): Promise<void> {
  for (const char of text) {
    if (char === '\n') {
      await pressEnter(tab);
      continue;
    }
    const key = keyOf(char);
    await send(tab, 'Input.dispatchKeyEvent', { type: 'keyDown', ...key, text: char, unmodifiedText: char });
    await send(tab, 'Input.dispatchKeyEvent', { type: 'keyUp', ...key });
  }
}

/**
 * The key a character is typed with: letters, digits and space carry their code and key code (keydown
 * handlers that read e.code or e.keyCode, as terminals do, see the key); other characters only their key.
 */
function keyOf(char: string): { key: string; code?: string; windowsVirtualKeyCode?: number } {
  if (/^[a-z]$/i.test(char))
    return { key: char, code: `Key${char.toUpperCase()}`, windowsVirtualKeyCode: char.toUpperCase().charCodeAt(0) };
  if (/^[0-9]$/.test(char)) return { key: char, code: `Digit${char}`, windowsVirtualKeyCode: char.charCodeAt(0) };
  if (char === ' ') return { key: char, code: 'Space', windowsVirtualKeyCode: 32 };
  return { key: char };
}
