import {
  deepActiveElement,
  describe,
  element,
  isEnabled,
  nextFrame,
  secretKind,
  TEXT_INPUT_TYPES,
} from '../page-agent/core.js';
import type { Refused } from '../page-agent/replies.js';
import { type ValueReading, nativeSetValue, readValue, isCombobox } from '../page-agent/fields.js';
import { pageState } from '../page-agent/state.js';

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();
const optionText = (o: Element) => (o.textContent ?? '').replace(/\s+/g, ' ').trim();

function listboxOptions(box: Element): Element[] {
  return Array.from(box.querySelectorAll('[role="option"]'));
}

/** What a list's selection reads as, in the list's order: labels of the chosen options. */
function selectionOf(el: Element): string[] {
  if (el.localName === 'select') return Array.from((el as HTMLSelectElement).selectedOptions).map((o) => o.label);
  return listboxOptions(el)
    .filter((o) => o.getAttribute('aria-selected') === 'true')
    .map(optionText);
}

/** How set_value with a list goes on: set already (a native list), or these options to Ctrl+click (a listbox). */
export type ChoicePlan =
  | { refusal?: undefined; kind: 'select'; before: string[]; expected: string[]; describe: string }
  | { refusal?: undefined; kind: 'listbox'; before: string[]; expected: string[]; describe: string; toggle: number[] };

export function planChoices(snapshotId: string, index: number, values: string[]): Refused | ChoicePlan {
  const el = element(snapshotId, index);
  if (!isEnabled(el)) return { refusal: 'element_disabled', detail: describe(el) };
  const native = el.localName === 'select';
  const multi = native
    ? (el as HTMLSelectElement).multiple
    : el.getAttribute('role') === 'listbox' && el.getAttribute('aria-multiselectable') === 'true';
  if (!multi)
    return {
      refusal: 'invalid_arguments',
      detail: `a list of values needs a multi-select list (a select with multiple, or a listbox with aria-multiselectable="true"); ${describe(el)} takes one value: pass a string`,
    };
  const options: Element[] = native ? Array.from((el as HTMLSelectElement).options) : listboxOptions(el);
  const labelOf = (o: Element) => (native ? (o as HTMLOptionElement).label : optionText(o));
  const matchOf = (v: string) =>
    (native ? options.find((o) => (o as HTMLOptionElement).value === v) : undefined) ??
    options.find((o) => norm(labelOf(o)) === norm(v));
  const chosen = new Set<Element>();
  const missing: string[] = [];
  for (const v of values) {
    const o = matchOf(v);
    if (o) chosen.add(o);
    else missing.push(v);
  }
  if (missing.length)
    return {
      refusal: 'no_such_option',
      detail: `no option matches ${missing.map((m) => `"${m}"`).join(', ')}; options: ${options
        .map((o) => (native ? `${(o as HTMLOptionElement).value} (${labelOf(o)})` : labelOf(o)))
        .slice(0, 50)
        .join(', ')}`,
    };
  const disabled = [...chosen].find(
    (o) => (o as HTMLOptionElement).disabled || o.getAttribute('aria-disabled') === 'true',
  );
  if (disabled) return { refusal: 'element_disabled', detail: describe(disabled) };
  const before = selectionOf(el);
  const expected = options.filter((o) => chosen.has(o)).map(labelOf);
  if (native) {
    const sel = el as HTMLSelectElement;
    for (const o of sel.options) o.selected = chosen.has(o);
    sel.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    sel.dispatchEvent(new Event('change', { bubbles: true }));
    return { kind: 'select', before, expected, describe: describe(el) };
  }
  const toggle = options
    .map((o, i) => ((o.getAttribute('aria-selected') === 'true') !== chosen.has(o) ? i : -1))
    .filter((i) => i >= 0);
  return { kind: 'listbox', before, expected, describe: describe(el), toggle };
}

/** Where to click the listbox's option `n` (scrolled into view first), in the frame's CSS pixels. */
export async function choicePoint(snapshotId: string, index: number, n: number): Promise<{ x: number; y: number }> {
  const option = listboxOptions(element(snapshotId, index))[n];
  option.scrollIntoView({ block: 'nearest' });
  await nextFrame();
  const r = option.getBoundingClientRect();
  return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
}

/** The list's whole selection after the page settled. */
export async function choicesNow(snapshotId: string, index: number): Promise<string[]> {
  await nextFrame();
  await new Promise((r) => setTimeout(r, 0));
  return selectionOf(element(snapshotId, index));
}

export async function settledValue(snapshotId: string, index: number) {
  await nextFrame();
  await new Promise((r) => setTimeout(r, 0));
  return readValue(element(snapshotId, index));
}

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

const countClick = (e: Event) => {
  if (e.isTrusted) pageState.optionClicks++;
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
      pageState.optionClicks = 0;
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
    clicked: pageState.optionClicks,
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
