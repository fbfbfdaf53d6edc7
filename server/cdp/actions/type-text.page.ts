// The page agent's part of type_text: focusing a field with the caret where it belongs (a text field, a
// rich editor, a code editor, a value input such as a date, or a widget's keyboard sink), holding it for
// the action, and reading it back at once and after the page settled.
import type { FieldState } from '../../contract/verdicts.js';
import { askCodeModel, codeEditorOf, type FoundCodeEditor, pasteInto } from '../page-agent/code-editors.js';
import { deepActiveElement, describe, element, isEnabled, nextFrame, reobserve } from '../page-agent/core.js';
import { heldField, holdField, releaseField, rewatchField } from '../page-agent/held.js';
import type {
  FieldHandle,
  FieldPrepared,
  FieldRearmed,
  FieldRefused,
  HeldReadBack,
  Pasted,
  TextFieldReady,
  ValueAssigned,
  ValueInputReady,
} from '../page-agent/replies.js';
import { hasEditContext, isCaretSizedSurface } from '../page-agent/surfaces.js';
import { prepareSink, sinkReason } from '../page-agent/sinks.js';
import {
  editableOf,
  hasSelectionApi,
  editorText,
  selectionIn,
  editorOffsets,
  readField,
  refused,
  nativeSetValue,
  isCombobox,
} from '../page-agent/fields.js';

const EDITOR_SELECTION_SYNC_MS = 120;
const EDITOR_SETTLE_MS = 400;
/**
 * How long a code editor that formats what is pasted (Monaco's formatOnPaste) is given to do it: Monaco
 * sends its formatter's edits through its editor worker and gives up on the worker after 1 s of timer time,
 * so the format lands within about 1 s of the paste on a machine with time to spare; three times that on
 * a busy one, where the worker starts and answers late.
 */
const FORMAT_ON_PASTE_WAIT_MS = 3000;

// Inputs that hold one value and have no caret to insert at: type_text sets the whole value.
const VALUE_INPUT_TYPES = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range']);
const VALUE_FORMS: Record<string, string> = {
  date: 'yyyy-mm-dd',
  time: 'hh:mm or hh:mm:ss',
  'datetime-local': 'yyyy-mm-ddThh:mm',
  month: 'yyyy-mm',
  week: 'yyyy-Www',
  color: '#rrggbb (lower case)',
  range: 'a number within its min, max and step',
};

function caretAtEnd(host: HTMLElement): boolean {
  const { start, end } = editorOffsets(host);
  return start === end && end === editorText(host).length;
}

/**
 * Moves the caret to the editor's end and gives the editor time to read it into its model. Its
 * throttle (Slate: 100 ms) starts when selectionchange is dispatched, which a busy page can delay:
 * wait for the event (bounded), then for the throttle, then a frame for a render it causes.
 */
async function caretToEnd(editable: Element): Promise<void> {
  const sel = selectionIn(editable);
  const changed = new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      document.removeEventListener('selectionchange', done);
      resolve();
    };
    const timer = setTimeout(done, EDITOR_SELECTION_SYNC_MS);
    document.addEventListener('selectionchange', done);
  });
  if (sel) {
    sel.selectAllChildren(editable);
    sel.collapseToEnd();
  }
  await changed;
  await new Promise((r) => setTimeout(r, EDITOR_SELECTION_SYNC_MS));
  await nextFrame();
}

/**
 * Whether the page may have deferred work after a focus (a select-on-focus timer): yes unless the page's
 * world hook (cdp/tab/handler-hook.ts) says no focus listener was ever added and no element has an onfocus
 * attribute. A page that assigns `onfocus` from script is not seen here: the read-back's verdict still
 * catches text that replaced a selection (never confirmed).
 */
function focusMayDefer(): boolean {
  let answer: string | null = null;
  const hear = (e: Event) => {
    answer = String((e as CustomEvent).detail);
  };
  document.addEventListener('verity-focus-answer', hear);
  try {
    document.dispatchEvent(new Event('verity-focus-listeners'));
  } finally {
    document.removeEventListener('verity-focus-answer', hear);
  }
  return answer !== 'no' || !!document.querySelector('[onfocus], [onfocusin]');
}

/** Places the caret again (at most three times) until it stays at the end; false if the page keeps moving it. */
async function keepCaretAtEnd(atEnd: () => boolean, place: () => Promise<void>): Promise<boolean> {
  for (let attempt = 0; attempt < 3 && !atEnd(); attempt++) await place();
  return atEnd();
}

/**
 * Resolves the field to type into: the token's element (focused first, caret at the end unless it was
 * already focused) or the focused element. Reports why a field cannot take text instead of guessing.
 */
export async function prepareField(snapshotId: string | null, index: number): Promise<FieldPrepared> {
  const el: Element | null = snapshotId ? element(snapshotId, index) : deepActiveElement();
  // The body is "nothing focused", unless it is the editing host itself (TinyMCE's iframe body).
  if (!el || (el === document.body && !(el as HTMLElement).isContentEditable)) return { kind: 'nothing_focused' };
  if (el.localName === 'input' && VALUE_INPUT_TYPES.has((el as HTMLInputElement).type))
    return prepareValueInput(el as HTMLInputElement);
  const code = codeEditorOf(el);
  if (code) return prepareCodeEditor(code);
  const editable = editableOf(el);
  // An inline-edit widget (task boards): a role=textbox element that becomes an <input> when clicked.
  if (!editable) return refused('not_editable', el, { inline: el.getAttribute('role') === 'textbox' });
  if (!isEnabled(editable)) return refused('element_disabled', editable);
  if ((editable as HTMLInputElement).readOnly) return refused('element_readonly', editable);
  // A field nobody can see (a web terminal's keyboard sink): typed with keys, judged by what the widget shows.
  // One that shows itself once focused (a search box that expands on focus) is an ordinary field: it is
  // let go again, so the ordinary path focuses it and places its caret as for any other.
  const hidden = sinkReason(editable);
  if (hidden) {
    const wasActive = deepActiveElement() === editable;
    if (!wasActive) {
      (editable as HTMLElement).focus({ preventScroll: true });
      await nextFrame();
    }
    if (sinkReason(editable)) return prepareSink(editable as HTMLElement, hidden);
    if (!wasActive) (editable as HTMLElement).blur();
  }
  // In an iframe the element can be its document's active one (TinyMCE's body always is) while the frame
  // itself is not focused: keys and inserted text then go elsewhere. Focused means this frame has focus too.
  const wasFocused =
    document.hasFocus() && (deepActiveElement() === editable || editable.contains(deepActiveElement()));
  if (!wasFocused) {
    if (window !== window.top) window.focus(); // focus moves into this frame first
    (editable as HTMLElement).focus({ preventScroll: false });
    // An editor whose caret lives in its own model (an EditContext has no DOM selection; a caret-sized
    // textarea is rewritten by its editor, which ignores a selection set from script): Ctrl+End, as a
    // user would, moves the editor's own caret to the end of its document.
    if (hasEditContext(editable) || isCaretSizedSurface(editable)) {
      await nextFrame(); // the editor's focus handler writes its state into the surface first
      return finishPrepare(editable, 'Ctrl+End');
    }
    let placed: boolean;
    if (editable.localName === 'input' || editable.localName === 'textarea') {
      // A page may select the whole value a moment after focus (select-on-focus): typing then would
      // replace it. Place the caret once in any case, then until it stays at the end.
      const f = editable as HTMLInputElement;
      if (!hasSelectionApi(f)) {
        // No selection API (email, number): the caret cannot be read or placed from here; the
        // End key (sent by the driver) puts it at the end. A deferred select() runs first.
        await new Promise((r) => setTimeout(r, 0));
        return finishPrepare(editable, 'End');
      }
      const defers = focusMayDefer();
      const place = async () => {
        try {
          f.setSelectionRange(f.value.length, f.value.length);
        } catch {
          /* type without selection */
        }
        // A timer the focus handlers set (the usual deferred select()) runs before this one. Not a
        // frame: that would add one to every call into a field that was not focused. With no focus
        // listener on the page there is nothing to wait for (the timer costs 3-13 ms after a focus).
        if (defers) await new Promise((r) => setTimeout(r, 0));
      };
      await place();
      placed = await keepCaretAtEnd(() => {
        try {
          return f.selectionStart === f.value.length && f.selectionEnd === f.value.length;
        } catch {
          return true;
        }
      }, place);
    } else {
      // Editors restore their own selection when focused (CodeMirror, Lexical): let them, then move
      // the caret to the end and give them time to read it back into their model (Slate throttles
      // its selectionchange handler to 100 ms; typing before that lands at its stale selection).
      // An editor that re-renders on focus (Slate) can also put its model's selection back afterwards.
      await nextFrame();
      placed = await keepCaretAtEnd(
        () => caretAtEnd(editable as HTMLElement),
        () => caretToEnd(editable),
      );
    }
    if (!placed) return refused('caret_not_placed', editable);
  }
  // Already focused: the text goes where the user's caret is, so the caret is left alone.
  return finishPrepare(editable, false);
}

/**
 * A code editor (code-editors.ts): its input surface focused, its caret at the end of its document by the
 * editor's own Ctrl+End (the driver presses it; its caret lives in its model) unless it was focused already,
 * when the text goes where its caret is. A read-only one (its model says so) is refused.
 */
async function prepareCodeEditor(code: FoundCodeEditor): Promise<FieldPrepared> {
  const input = code.input;
  if (!input) return refused('not_editable', code.root);
  if (askCodeModel(code)?.readOnly) return refused('element_readonly', input);
  const active = deepActiveElement();
  if (document.hasFocus() && (active === input || input.contains(active))) return finishPrepare(input, false, code);
  if (window !== window.top) window.focus();
  (input as HTMLElement).focus({ preventScroll: false });
  await nextFrame(); // the editor's focus handler runs first
  return finishPrepare(input, 'Ctrl+End', code);
}

/** The events a text field's watch listens for: what tells an insertion (or a key, or a paste) reached it. */
const TEXT_EVENTS = ['beforeinput', 'input', 'keydown', 'paste'];

function finishPrepare(
  editable: Element,
  pressEnd: TextFieldReady['pressEnd'],
  code?: FoundCodeEditor,
): TextFieldReady | FieldRefused {
  const nowFocused = deepActiveElement() === editable || editable.contains(deepActiveElement());
  if (!nowFocused) return refused('focus_failed', editable);
  const box = editable.getBoundingClientRect();
  const type = editable.localName === 'input' ? (editable as HTMLInputElement).type : '';
  const state = readField(editable);
  return {
    kind: 'text',
    handle: holdField(editable, TEXT_EVENTS),
    state,
    singleLine: editable.localName === 'input',
    // A value takes the text in one insertion; a rich editor a line at a time with Enter between (a newline
    // is a paragraph break in its model); a code editor as its table entry says (code-editors.ts).
    delivery: code ? code.delivery : state.kind === 'value' ? 'insert_text' : 'lines',
    ...(code ? { editor: code.label } : {}),
    pressEnd,
    inputType: type,
    combobox: isCombobox(editable),
    center: { x: box.x + Math.min(box.width / 2, 40), y: box.y + box.height / 2 },
  };
}

/** The held field read again (after the driver pressed a key to place its caret); null when it is not held. */
export async function preparedFieldNow(handle: FieldHandle): Promise<FieldState | null> {
  const target = heldField(handle)?.target;
  if (!target) return null;
  await nextFrame(); // the editor writes its new caret into the surface on the key
  return readField(target);
}

/**
 * The held field watched afresh, for the key events type_text sends when its insertion was not heard; unless
 * the focus has left it (keys go to the focused element: typing them then could deliver the text a second
 * time, where the insertion went).
 */
export function rearmField(handle: FieldHandle): FieldRearmed {
  const target = heldField(handle)?.target;
  // Not held in this world: the frame navigated since (its new page is not the field).
  if (!target) return { kind: 'focus_moved', focused: 'a new page (the frame navigated)' };
  const active = deepActiveElement();
  if (!(document.hasFocus() && (active === target || target.contains(active))))
    return { kind: 'focus_moved', focused: active ? describe(active) : 'nothing' };
  rewatchField(handle, TEXT_EVENTS);
  return { kind: 'watching' };
}

/**
 * Delivers `text` to the held code editor through its paste path (code-editors.ts) and says whether the
 * editor took it; `gone` when the field is no longer held here (the frame navigated) or left the page.
 */
export function pasteIntoField(handle: FieldHandle, text: string): Pasted {
  const field = heldField(handle);
  const target = field?.target;
  if (!field || !target?.isConnected) return { kind: 'gone' };
  const taken = pasteInto(target, text);
  // Read in the same task as the paste: an editor's format on paste (asynchronous) cannot have run yet.
  const code = taken ? codeEditorOf(target) : null;
  const model = code ? askCodeModel(code) : null;
  if (model?.formatsOnPaste) field.formatsAfterPaste = model.text;
  return { kind: 'pasted', taken };
}

/** Frees a held field (the action that held it is over). */
export function releaseHeldField(handle: FieldHandle): void {
  releaseField(handle);
}

/** Checks `text` against what the field would store, without touching the field (a detached probe). */
function probeValue(f: HTMLInputElement, text: string): string {
  const probe = document.createElement('input');
  probe.type = f.type;
  for (const a of ['min', 'max', 'step']) {
    const v = f.getAttribute(a);
    if (v !== null) probe.setAttribute(a, v);
  }
  probe.value = text;
  return probe.value;
}

/** date, time, color, range...: one value and no caret. type_text sets it whole (refused if the field would store something else). */
function prepareValueInput(f: HTMLInputElement): ValueInputReady | FieldRefused {
  if (!isEnabled(f)) return refused('element_disabled', f);
  if (f.readOnly) return refused('element_readonly', f);
  return {
    kind: 'value_input',
    handle: holdField(f, []),
    inputType: f.type,
    form: VALUE_FORMS[f.type] ?? '',
    state: readField(f),
    describe: describe(f),
  };
}

/** Sets the held value-type input to `text` and reads it back after the page settled; the action's last call: frees it. */
export async function assignPreparedValue(handle: FieldHandle, text: string): Promise<ValueAssigned> {
  const f = heldField(handle)?.target as HTMLInputElement | undefined;
  releaseField(handle);
  if (!f?.isConnected) return { kind: 'refused', refusal: 'target_not_found', detail: 'the field left the page' };
  const stored = probeValue(f, text);
  if (stored !== text) return { kind: 'refused', refusal: 'value_rejected', detail: describe(f), stored };
  const before = f.value;
  f.focus();
  nativeSetValue(f, text);
  const first = f.value;
  await nextFrame();
  await new Promise((r) => setTimeout(r, 0));
  return { kind: 'assigned', before, first, settled: f.value };
}

/**
 * Reads the held field right after delivery, then again once the page has settled (after the frame that
 * followed the input), so a framework that reverts or rewrites the value is caught. One round trip for
 * both. A field no longer held here (the frame navigated: a new world) is the focused element. Once input
 * was heard the action tries nothing more on the field, so it is freed here, in the same round trip
 * (`held: false`). With `rereadFor` (the snapshot id the action's `changes` compare with), the document is
 * re-read after the field, in the same round trip too (`reread`).
 */
export async function readBack(
  handle: FieldHandle,
  rereadFor: string | null = null,
): Promise<HeldReadBack & { reread?: Reread }> {
  const field = heldField(handle);
  const target = field?.target ?? deepActiveElement();
  if (!target) return { first: null, settled: null, events: [], held: !!field };
  const read = await readHeldField(handle, field, target);
  // cdp/snapshot.ts takes this instead of asking again; `full` (the document does not stand alone: frames,
  // custom elements not looked into) sends it straight to the re-read of every frame.
  return rereadFor === null ? read : { ...read, reread: reobserve(rereadFor, true) };
}

async function readHeldField(
  handle: FieldHandle,
  field: ReturnType<typeof heldField>,
  target: Element,
): Promise<HeldReadBack> {
  const first = readField(target);
  // A code editor that formats what was just pasted does it a while later, after a round trip to its
  // worker that no frame or idle period waits for (on a busy machine the read-back below came first, and
  // read the text as typed): its model is read each frame until the format has changed the document the
  // paste left, bounded. A format that changes nothing, or has not come by the bound, leaves the read
  // pending (never confirmed).
  const pasted = field?.formatsAfterPaste;
  let pending: string | undefined;
  if (pasted !== undefined && first.kind === 'code') {
    const deadline = performance.now() + FORMAT_ON_PASTE_WAIT_MS;
    let now = first;
    while (now.text === pasted && performance.now() < deadline) {
      await nextFrame();
      now = readField(target);
    }
    if (now.text === pasted)
      pending = `the editor formats what is pasted (formatOnPaste, with a formatter for its language), and its model was as the paste left it ${FORMAT_ON_PASTE_WAIT_MS} ms after the paste: its format may still change the text`;
  }
  // What a framework reverts or rewrites the value with (a microtask, a timer, a frame callback) has run
  // once the frame after the last input has: that frame was requested when the input was heard, so a
  // read-back that arrives after it does not wait for another. Nothing heard: the next frame.
  await (field?.watch.afterInput?.settled ?? nextFrame());
  let settled = readField(target);
  if (settled.kind !== 'value') {
    // Rich editors reconcile their DOM with their own model asynchronously (a render after the
    // input, which a busy page can push past a few frames): wait until the text has held still for
    // two frames and then through an idle period, bounded.
    const deadline = performance.now() + EDITOR_SETTLE_MS;
    for (let still = 0; still < 3 && performance.now() < deadline; ) {
      await (still === 2 ? idle(deadline - performance.now()) : nextFrame());
      const next = readField(target);
      still = next.text === settled.text ? still + 1 : 0;
      settled = next;
    }
  }
  if (pending && settled.text === pasted) settled = { ...settled, pending };
  // The watch of the field now held (a rearmField between two read-backs watches it afresh).
  const events = heldField(handle)?.watch.events.slice() ?? [];
  const heard = events.some((e) => e.type === 'beforeinput' || e.type === 'input');
  if (heard) releaseField(handle);
  return { first, settled, events, held: !heard && !!heldField(handle) };
}

/** This document re-read against its latest snapshot, as the page agent's reobserve gives it. */
type Reread = ReturnType<typeof reobserve>;

/** Resolves once the page's pending tasks (a framework's scheduled render) have run, or after `ms`. */
function idle(ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (typeof requestIdleCallback === 'function') requestIdleCallback(() => resolve(), { timeout: Math.max(1, ms) });
    else setTimeout(resolve, 0);
  });
}
