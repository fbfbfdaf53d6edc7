// The page agent's text-field and value part: focusing a field with the caret where it belongs, reading
// fields and rich editors back, and setting control values.
import type { FieldState } from '../../contract/verdicts.js';
import { askCodeModel, codeEditorOf, type FoundCodeEditor, pasteInto } from './code-editors.js';
import {
  deepActiveElement,
  describe,
  element,
  isEnabled,
  nextFrame,
  secretKind,
  TEXT_INPUT_TYPES,
  valueOf,
} from './core.js';
import { heldField, holdField, releaseField, rewatchField } from './held.js';
import type {
  FieldHandle,
  FieldPrepared,
  FieldRearmed,
  FieldRefused,
  HeldReadBack,
  Pasted,
  Refused,
  TextFieldReady,
  ValueAssigned,
  ValueInputReady,
} from './replies.js';
import { hasEditContext, isCaretSizedSurface, renderedLines } from './surfaces.js';
import { prepareSink, sinkReason } from './sinks.js';

const EDITOR_SELECTION_SYNC_MS = 120;
const EDITOR_SETTLE_MS = 400;
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

// ---------- text fields ----------

/** A control's value as set_value reads it; `checked` is aria-checked's text on a custom control. */
export interface ValueReading {
  value: string;
  label: string;
  checked: boolean | string | null;
}

function editableOf(el: Element | null): Element | null {
  if (!el) return null;
  if (el.localName === 'textarea') return el;
  if (el.localName === 'input') return TEXT_INPUT_TYPES.has((el as HTMLInputElement).type) ? el : null;
  if (hasEditContext(el)) return el; // the element the EditContext delivers text to (Monaco's surface)
  const h = el as HTMLElement;
  if (h.isContentEditable) {
    let host: HTMLElement = h;
    while (host.parentElement?.isContentEditable) host = host.parentElement;
    return host;
  }
  return null;
}

/** email, number and others have no selection API: selectionStart reads null (or throws). */
function hasSelectionApi(f: HTMLInputElement | HTMLTextAreaElement): boolean {
  try {
    return f.selectionStart !== null;
  } catch {
    return false;
  }
}

/**
 * Placeholders some editors render inside their editable DOM (CodeMirror's cm-placeholder widget):
 * not part of the document, so left out of the text and the caret offsets.
 */
function placeholdersIn(host: Element): Element[] {
  return Array.from(
    host.querySelectorAll(
      '[contenteditable="false"][class*="placeholder" i], [aria-hidden="true"][class*="placeholder" i], [data-slate-placeholder]',
    ),
  );
}

// Zero-width characters editors keep as caret anchors in empty blocks (Slate's U+FEFF): not text.
const ANCHORS = /\uFEFF/g;

function editorText(host: HTMLElement): string {
  const text = (host.textContent ?? '').replace(ANCHORS, '');
  const holders = placeholdersIn(host);
  if (!holders.length) return text;
  let cut = 0;
  for (const h of holders) cut += (h.textContent ?? '').length;
  // Placeholders show only in an empty document: what remains is the document's text.
  return cut >= text.length
    ? ''
    : text.replace(holders.map((h) => (h.textContent ?? '').replace(ANCHORS, '')).join(''), '');
}

function selectionIn(host: Element): Selection | null {
  // Chrome's ShadowRoot.getSelection (not in the DOM typings) sees a selection inside a shadow root.
  const root = host.getRootNode() as Node & { getSelection?: () => Selection | null };
  const sel: Selection | null = typeof root.getSelection === 'function' ? root.getSelection() : document.getSelection();
  return sel;
}

/** Text before the caret, measured the same way as the whole text (innerText) so offsets agree. */
function editorOffsets(host: HTMLElement): { start: number; end: number } {
  const sel = selectionIn(host);
  if (!sel || sel.rangeCount === 0) return { start: -1, end: -1 };
  const range = sel.getRangeAt(0);
  if (!host.contains(range.startContainer)) return { start: -1, end: -1 };
  const measure = (node: Node, offset: number) => {
    const r = document.createRange();
    r.setStart(host, 0);
    r.setEnd(node, offset);
    let length = r.toString().replace(ANCHORS, '').length; // compare against editorText (see readField)
    for (const h of placeholdersIn(host))
      if (r.intersectsNode(h)) length -= Math.min(length, (h.textContent ?? '').length);
    return length;
  };
  return { start: measure(range.startContainer, range.startOffset), end: measure(range.endContainer, range.endOffset) };
}

function readField(el: Element): FieldState {
  const editable = editableOf(el) ?? el;
  const focused = deepActiveElement() === editable || (editable as HTMLElement).contains?.(deepActiveElement());
  const code = codeEditorOf(editable);
  if (code) return readCodeEditor(code, editable, focused);
  if (hasEditContext(editable) || isCaretSizedSurface(editable))
    return readEditorSurface(editable as HTMLElement, focused);
  if (editable.localName === 'input' || editable.localName === 'textarea') {
    const f = editable as HTMLInputElement;
    let start = -1,
      end = -1;
    // email, number, ...: no selection API (start -1); the caret was put at the end with the End key.
    try {
      start = f.selectionStart ?? -1;
      end = f.selectionEnd ?? -1;
    } catch {
      /* number inputs have none */
    }
    const secret = secretKind(f);
    return {
      kind: 'value',
      text: f.value,
      start,
      end,
      maxLength: f.maxLength,
      focused,
      describe: describe(f),
      lines: 0,
      ...(secret ? { secret } : {}),
    };
  }
  const host = editable as HTMLElement;
  const { start, end } = editorOffsets(host);
  // Line breaks live in the block structure, not in textContent: count them from innerText.
  // A blank editor is one empty block (`<p><br></p>`, innerText "\n"): that is no line break.
  const text = editorText(host);
  const lines =
    text === '' && !host.querySelector('br + br, p + p, div + div') ? 0 : (host.innerText.match(/\n+/g) ?? []).length;
  return { kind: 'editor', text, start, end, maxLength: -1, focused, describe: describe(host), lines };
}

/**
 * An editor typed through a surface that is not its text, read from what it shows: an EditContext holds
 * only a window the editor keeps for itself, and a caret-sized textarea holds what the editor last wrote
 * into it (text that lands there and that the editor refuses stays until it rewrites it). A caret-sized
 * surface's lines are rendered beside it (Monaco's view lines); an EditContext host that renders its own
 * text is read like a contenteditable. The caret lives in the editor's model: unknown (-1).
 */
function readEditorSurface(host: HTMLElement, focused: boolean): FieldState {
  const state = { kind: 'editor' as const, start: -1, end: -1, maxLength: -1, focused, describe: describe(host) };
  if (!isCaretSizedSurface(host)) {
    const text = editorText(host);
    return { ...state, text, lines: text === '' ? 0 : (host.innerText.match(/\n+/g) ?? []).length };
  }
  const shown = renderedLines(host);
  if (!shown)
    return {
      ...state,
      text: '',
      lines: 0,
      unreadable: `${describe(host)} is an editor's caret-sized input surface; the editor shows its text elsewhere, in no view Verity can read`,
    };
  const { lines, whole } = shown;
  return {
    ...state,
    text: lines.join(''),
    lines: Math.max(0, lines.length - 1),
    ...(whole ? {} : { partial: 'the editor shows only the lines in view, not all of its text' }),
  };
}

/**
 * A code editor's whole document and its caret, from the editor's own model (code-editors.ts). Where the
 * page gives no handle to the model, what the editor shows beside a caret-sized surface (Monaco's view
 * lines, joined by line breaks: whole when all of its lines are in view, else partial); else unreadable.
 */
function readCodeEditor(code: FoundCodeEditor, input: Element, focused: boolean): FieldState {
  const state = { kind: 'code' as const, maxLength: -1, focused, describe: describe(input) };
  const model = askCodeModel(code);
  if (model) {
    return {
      ...state,
      text: model.text,
      start: Math.min(model.anchor, model.head),
      end: Math.max(model.anchor, model.head),
      lines: (model.text.match(/\n/g) ?? []).length,
      source: `${code.label}'s own model`,
    };
  }
  const shown = isCaretSizedSurface(input) ? renderedLines(input as HTMLElement) : null;
  if (shown)
    return {
      ...state,
      text: shown.lines.join('\n'),
      start: -1,
      end: -1,
      lines: Math.max(0, shown.lines.length - 1),
      source: `the lines ${code.label} shows (the page gives no handle to its model)`,
      ...(shown.whole ? {} : { partial: 'the editor shows only the lines in view, not all of its text' }),
    };
  return {
    ...state,
    text: '',
    start: -1,
    end: -1,
    lines: 0,
    unreadable: `${describe(input)} is ${code.label}'s input; ${code.label} keeps its document in its own model, which this page gives Verity no handle to`,
  };
}

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

/** Places the caret again (at most three times) until it stays at the end; false if the page keeps moving it. */
/**
 * Whether the page may have deferred work after a focus (a select-on-focus timer): yes unless the page's
 * world hook (cdp/handler-hook.ts) says no focus listener was ever added and no element has an onfocus
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

/** A field's refusal, tagged, naming the field. */
export function refused(code: Refused['refusal'], el: Element, more: { inline?: boolean } = {}): FieldRefused {
  return { kind: 'refused', refusal: code, detail: describe(el), ...more };
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
  const target = heldField(handle)?.target;
  if (!target?.isConnected) return { kind: 'gone' };
  return { kind: 'pasted', taken: pasteInto(target, text) };
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
 * (`held: false`).
 */
export async function readBack(handle: FieldHandle): Promise<HeldReadBack> {
  const field = heldField(handle);
  const target = field?.target ?? deepActiveElement();
  if (!target) return { first: null, settled: null, events: [], held: !!field };
  const first = readField(target);
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
  // The watch of the field now held (a rearmField between two read-backs watches it afresh).
  const events = heldField(handle)?.watch.events.slice() ?? [];
  const heard = events.some((e) => e.type === 'beforeinput' || e.type === 'input');
  if (heard) releaseField(handle);
  return { first, settled, events, held: !heard && !!heldField(handle) };
}

/** Resolves once the page's pending tasks (a framework's scheduled render) have run, or after `ms`. */
function idle(ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (typeof requestIdleCallback === 'function') requestIdleCallback(() => resolve(), { timeout: Math.max(1, ms) });
    else setTimeout(resolve, 0);
  });
}

export async function settledValue(snapshotId: string, index: number) {
  await nextFrame();
  await new Promise((r) => setTimeout(r, 0));
  return readValue(element(snapshotId, index));
}

// ---------- values (select, checkbox, range, date, ...) ----------

function nativeSetValue(el: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, value: string) {
  // Use the prototype's setter so frameworks that track the value (React) see a real change.
  const proto = Object.getPrototypeOf(el);
  const setter = Object.getOwnPropertyDescriptor(proto, 'value')?.set;
  if (setter) setter.call(el, value);
  else el.value = value;
  el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
}

function readValue(el: Element): ValueReading {
  const tag = el.localName;
  if (tag === 'select') {
    const sel = el as HTMLSelectElement;
    return { value: sel.value, label: sel.selectedOptions[0]?.label ?? '', checked: null };
  }
  if (tag === 'input' || tag === 'textarea') {
    const input = el as HTMLInputElement;
    return {
      value: input.value,
      label: '',
      checked: input.type === 'checkbox' || input.type === 'radio' ? input.checked : null,
    };
  }
  return { value: valueOf(el) ?? '', label: '', checked: el.getAttribute('aria-checked') };
}

// ---------- select-like comboboxes (react-select, Downshift, ARIA 1.2 comboboxes) ----------

const isCombobox = (el: Element) => el.getAttribute('role') === 'combobox' && el.localName !== 'select';

/** Text of `root` without its listboxes, live regions, visually hidden helper text and labels. */
function shownText(root: Element): string {
  let out = '';
  const walk = (n: Node) => {
    if (n.nodeType === Node.TEXT_NODE) {
      out += n.textContent;
      return;
    }
    if (!(n instanceof Element)) return;
    const role = n.getAttribute('role');
    if (
      role === 'listbox' ||
      role === 'log' ||
      role === 'status' ||
      n.hasAttribute('aria-live') ||
      n.localName === 'label' ||
      n.localName === 'script' ||
      n.localName === 'style'
    )
      return;
    if (n.localName === 'input') {
      out += ' ' + (n as HTMLInputElement).value + ' ';
      return;
    }
    for (const c of Array.from(n.childNodes)) walk(c);
    out += ' ';
  };
  walk(root);
  return out.replace(/\s+/g, ' ').trim();
}

/** What a combobox shows as chosen: its own text and value, or the nearest ancestor (3 levels) that shows any. */
function comboboxShows(el: Element): string {
  const own = el.localName === 'input' ? (el as HTMLInputElement).value.trim() : shownText(el);
  let context = '';
  let node: Element | null = el;
  for (let depth = 0; depth < 3 && node?.parentElement && !context; depth++) {
    node = node.parentElement;
    if (node.querySelectorAll('[role="combobox"]').length > 1) break;
    context = shownText(node);
  }
  return [own, context].filter(Boolean).join(' | ');
}

function listboxOf(el: Element): Element | null {
  for (const attr of ['aria-controls', 'aria-owns']) {
    const id = el.getAttribute(attr);
    const found = id ? ((el.getRootNode() as Document).getElementById?.(id) ?? document.getElementById(id)) : null;
    if (found) return found;
  }
  return null;
}

let optionClicks = 0;
const countClick = (e: Event) => {
  if (e.isTrusted) optionClicks++;
};

/**
 * Waits (bounded) for the combobox's listbox to list an option whose text is `value` (case and spaces
 * aside), and returns where to click it. Lists what it offers when none matches.
 */
/** Where to click the matching option, or what the list offers instead. */
export type OptionFound =
  | { refusal?: undefined; found: true; x: number; y: number; label: string; describe: string }
  | { refusal?: undefined; found: false; offered: string[] };

export async function findOption(snapshotId: string, index: number, value: string): Promise<Refused | OptionFound> {
  const el = element(snapshotId, index);
  const want = value.trim().toLowerCase();
  const deadline = performance.now() + 1500;
  let offered: string[] = [];
  while (true) {
    const box = listboxOf(el);
    const opts = box ? Array.from(box.querySelectorAll('[role="option"]')) : [];
    offered = opts.map((o) => (o.textContent ?? '').trim());
    const match = opts.find((o) => (o.textContent ?? '').trim().toLowerCase() === want);
    if (match) {
      if (match.getAttribute('aria-disabled') === 'true')
        return { refusal: 'element_disabled', detail: describe(match) };
      (match as HTMLElement).scrollIntoView({ block: 'nearest' });
      await nextFrame();
      const r = match.getBoundingClientRect();
      optionClicks = 0;
      match.addEventListener('click', countClick);
      return {
        found: true,
        x: r.x + r.width / 2,
        y: r.y + r.height / 2,
        label: (match.textContent ?? '').trim(),
        describe: describe(match),
      };
    }
    if (performance.now() > deadline) return { found: false, offered: offered.slice(0, 30) };
    await nextFrame();
  }
}

/** The options the combobox's listbox lists now (after a render), for a refusal that says what it offers. */
export async function offeredOptions(snapshotId: string, index: number): Promise<string[]> {
  const el = element(snapshotId, index);
  for (let i = 0; i < 3; i++) await nextFrame();
  const box = listboxOf(el);
  return box
    ? Array.from(box.querySelectorAll('[role="option"]'))
        .map((o) => (o.textContent ?? '').trim())
        .slice(0, 30)
    : [];
}

/** After the option was clicked: whether it got the trusted click, and what the combobox shows now (settled). */
export async function comboboxAfter(snapshotId: string, index: number) {
  const el = element(snapshotId, index);
  for (let i = 0; i < 3; i++) await nextFrame();
  await new Promise((r) => setTimeout(r, 0));
  return {
    clicked: optionClicks,
    expanded: el.getAttribute('aria-expanded') === 'true',
    shows: comboboxShows(el),
    describe: describe(el),
  };
}

/** How set_value goes on: the agent set it already (select, value), or the server delivers input (text, toggle, combobox). */
export type ValuePlan =
  | {
      refusal?: undefined;
      kind: 'select' | 'value' | 'text';
      before: ValueReading;
      expected: ValueReading;
      /** Why the field's text is a secret (masked in the result), when it is one. */
      secret?: string;
    }
  | { refusal?: undefined; kind: 'toggle'; before: ValueReading; expected: ValueReading; needsClick: boolean }
  | {
      refusal?: undefined;
      kind: 'combobox';
      typeable: boolean;
      before: ValueReading;
      expected: ValueReading;
      describe: string;
    };

export function setValue(snapshotId: string, index: number, value: string): Refused | ValuePlan {
  const el = element(snapshotId, index);
  if (!isEnabled(el)) return { refusal: 'element_disabled', detail: describe(el) };
  if ((el as HTMLInputElement).readOnly) return { refusal: 'element_readonly', detail: describe(el) };
  if (isCombobox(el)) {
    // Choosing is the only way to set a select-like combobox: its search text is not its value.
    const shows = comboboxShows(el);
    return {
      kind: 'combobox',
      typeable: el.localName === 'input',
      before: { value: shows, label: '', checked: null },
      expected: { value, label: '', checked: null },
      describe: describe(el),
    };
  }
  const before = readValue(el);
  const tag = el.localName;
  if (tag === 'select') {
    const sel = el as HTMLSelectElement;
    const want = value.trim().toLowerCase();
    const option =
      Array.from(sel.options).find((o) => o.value === value) ??
      Array.from(sel.options).find(
        (o) => o.label.trim().toLowerCase() === want || o.text.trim().toLowerCase() === want,
      );
    if (!option)
      return {
        refusal: 'no_such_option',
        detail: `options: ${Array.from(sel.options)
          .map((o) => `${o.value} (${o.label})`)
          .join(', ')}`,
      };
    nativeSetValue(sel, option.value);
    return { before, expected: { value: option.value, label: option.label, checked: null }, kind: 'select' };
  }
  if (tag === 'input') {
    const input = el as HTMLInputElement;
    if (input.type === 'checkbox' || input.type === 'radio') {
      const want = /^(true|1|on|yes|checked)$/i.test(value.trim());
      if (!want && input.type === 'radio')
        return {
          refusal: 'invalid_arguments',
          detail: 'a radio button can only be selected (value "true"); select another one to clear it',
        };
      return {
        before,
        expected: { value: input.value, label: '', checked: want },
        kind: 'toggle',
        needsClick: input.checked !== want,
      };
    }
    const secret = secretKind(input) ?? undefined;
    if (TEXT_INPUT_TYPES.has(input.type) && input.type !== 'number')
      return { before, expected: { value, label: '', checked: null }, kind: 'text', secret };
    nativeSetValue(input, value);
    return { before, expected: { value, label: '', checked: null }, kind: 'value', secret };
  }
  if (tag === 'textarea')
    return { before, expected: { value, label: '', checked: null }, kind: 'text', secret: secretKind(el) ?? undefined };
  return { refusal: 'not_settable', detail: describe(el) };
}

/** Selects the whole content of a text field so the next insertion replaces it (set_value on text). */
export function selectAllIn(snapshotId: string, index: number): boolean {
  const el = element(snapshotId, index) as HTMLInputElement;
  el.focus();
  el.select();
  return deepActiveElement() === el;
}

export function readElementValue(snapshotId: string, index: number) {
  return readValue(element(snapshotId, index));
}
