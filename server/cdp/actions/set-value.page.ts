// Choosing several: set_value with a list, on a <select multiple> or an ARIA listbox with
// aria-multiselectable="true". The whole selection becomes the list (others are cleared) and is read back
// whole. A native list is set from here (as a single select is); a listbox is clicked as a user does,
// Ctrl held so each click toggles one option and leaves the others.
import { describe, element, isEnabled, nextFrame, type Refused } from '../page-agent/core.js';

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
