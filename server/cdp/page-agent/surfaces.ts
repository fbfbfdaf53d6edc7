// Editors whose input surface is not where their text is shown (Monaco, and editors built like it): a
// caret-sized element takes the keyboard (a div with an EditContext, or a 1 px <textarea> kept at the
// caret) while the text is rendered in sibling elements. A user clicks the rendered text, not the
// surface; the text to read back is the rendered one. No imports: core.ts and fields.ts both use this.

/** Below this many CSS pixels in width or height a surface cannot show its text: it stands in for an editor. */
const CARET_SIZED_PX = 4;
/** How far up from the surface the editor's visible area is looked for. */
const EDITOR_AREA_DEPTH = 4;

export function hasEditContext(el: Element): boolean {
  return !!(el as Element & { editContext?: unknown }).editContext;
}

/** An EditContext host or a <textarea> too small to show its own text: an editor's keyboard surface. */
export function isCaretSizedSurface(el: Element): boolean {
  if (!hasEditContext(el) && el.localName !== 'textarea') return false;
  const r = el.getBoundingClientRect();
  return r.width < CARET_SIZED_PX || r.height < CARET_SIZED_PX;
}

/**
 * The editor area a caret-sized surface belongs to: the nearest ancestor (a few levels up) with a real
 * box, which is where a user clicks to focus the editor. Null for every other element.
 */
export function editorAreaOf(el: Element): HTMLElement | null {
  if (!isCaretSizedSurface(el)) return null;
  let n = el.parentElement;
  for (let depth = 0; n && depth < EDITOR_AREA_DEPTH; depth++, n = n.parentElement) {
    if (n === document.body || n === document.documentElement) return null;
    const r = n.getBoundingClientRect();
    if (r.width >= 4 * CARET_SIZED_PX && r.height >= 4 * CARET_SIZED_PX) return n;
  }
  return null;
}

/**
 * A form field that assistive technology does not see and the Tab key does not reach (aria-hidden and
 * tabindex -1): a page's helper, not a control (Monaco's IME textarea beside its EditContext, the hidden
 * input a select widget keeps for form validation). Chrome's accessibility tree leaves it out too.
 */
export function isHelperField(el: Element): boolean {
  return (
    (el.localName === 'textarea' || el.localName === 'input') &&
    el.getAttribute('aria-hidden') === 'true' &&
    el.getAttribute('tabindex') === '-1'
  );
}

/**
 * The text an EditContext editor shows, one entry per line in line order, or null when it is not found.
 * An EditContext holds only what the editor chooses to tell it (Monaco: a window of lines, rewritten
 * after each edit), so the rendered text is the witness. A host that renders its own text is read like a
 * contenteditable; Monaco renders its lines beside the host, as `.view-line` rows in `.view-lines`.
 */
export function renderedLines(host: HTMLElement): string[] | null {
  const area = editorAreaOf(host);
  const view = area?.querySelector('.view-lines');
  if (!view) return null;
  const rows = Array.from(view.querySelectorAll<HTMLElement>(':scope > .view-line'));
  // Monaco positions its rows absolutely and may reuse them out of document order: sort by where they are.
  rows.sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
  return rows.map((r) => (r.textContent ?? '').replace(/\u00a0/g, ' '));
}
