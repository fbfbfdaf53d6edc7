// The page agent's reading of fields: what a text field, a rich editor or a code editor holds (its text and
// where the caret is), a control's value, and the refusal a field is given; shared by type_text's page part
// (actions/type-text.page.ts) and set_value's (actions/set-value.page.ts).
import type { FieldState } from '../../contract/verdicts.js';
import { askCodeModel, codeEditorOf, type FoundCodeEditor } from './code-editors.js';
import { deepActiveElement, describe, secretKind, TEXT_INPUT_TYPES, valueOf } from './core.js';
import type { FieldRefused, Refused } from './replies.js';
import { hasEditContext, isCaretSizedSurface, renderedLines } from './surfaces.js';

/** A control's value as set_value reads it; `checked` is aria-checked's text on a custom control. */
export interface ValueReading {
  value: string;
  label: string;
  checked: boolean | string | null;
}

export function editableOf(el: Element | null): Element | null {
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
export function hasSelectionApi(f: HTMLInputElement | HTMLTextAreaElement): boolean {
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

export function editorText(host: HTMLElement): string {
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

export function selectionIn(host: Element): Selection | null {
  // Chrome's ShadowRoot.getSelection (not in the DOM typings) sees a selection inside a shadow root.
  const root = host.getRootNode() as Node & { getSelection?: () => Selection | null };
  const sel: Selection | null = typeof root.getSelection === 'function' ? root.getSelection() : document.getSelection();
  return sel;
}

/** Text before the caret, measured the same way as the whole text (innerText) so offsets agree. */
export function editorOffsets(host: HTMLElement): { start: number; end: number } {
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

export function readField(el: Element): FieldState {
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

/** A field's refusal, tagged, naming the field. */
export function refused(code: Refused['refusal'], el: Element, more: { inline?: boolean } = {}): FieldRefused {
  return { kind: 'refused', refusal: code, detail: describe(el), ...more };
}

export function nativeSetValue(el: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, value: string) {
  // Use the prototype's setter so frameworks that track the value (React) see a real change.
  const proto = Object.getPrototypeOf(el);
  const setter = Object.getOwnPropertyDescriptor(proto, 'value')?.set;
  if (setter) setter.call(el, value);
  else el.value = value;
  el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
}

export function readValue(el: Element): ValueReading {
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

export const isCombobox = (el: Element) => el.getAttribute('role') === 'combobox' && el.localName !== 'select';
