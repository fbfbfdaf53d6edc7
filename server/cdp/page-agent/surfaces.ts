// Editors whose input surface is not where their text is shown (Monaco, and editors built like it): a
// caret-sized element takes the keyboard (a div with an EditContext, or a 1 px <textarea> kept at the
// caret) while the text is rendered in sibling elements. A user clicks the rendered text, not the
// surface; the text to read back is the rendered one. Imports only code-editors.ts (itself import-free):
// core.ts, fields.ts and actions/type-text.page.ts use this.
import { codeEditorOf } from './code-editors.js';

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
  if (!isCaretSizedSurface(el)) {
    // A code editor's textarea kept out of sight in a box of no height (CodeMirror 5's, 1000 px wide and
    // clipped): its editor is where it is seen and clicked.
    const code = el.localName === 'textarea' ? codeEditorOf(el) : null;
    return code?.input === el ? (code.root as HTMLElement) : null;
  }
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

/** What an editor shows: its rendered lines in order, and whether they are all of its lines. */
export interface ShownLines {
  lines: string[];
  /** false when the editor renders only the lines in view and some are out of it (a long document) */
  whole: boolean;
}

/**
 * The text an editor typed through a caret-sized surface shows, or null when it is not found. Its
 * EditContext or textarea holds only what the editor chooses to write there (Monaco: a window of lines,
 * rewritten after each edit), so the rendered text is the witness. Monaco renders its lines beside the
 * surface, as `.view-line` rows in `.view-lines`, and only those in view.
 */
export function renderedLines(host: HTMLElement): ShownLines | null {
  const area = editorAreaOf(host);
  const view = area?.querySelector('.view-lines');
  if (!area || !view) return null;
  const rows = Array.from(view.querySelectorAll<HTMLElement>(':scope > .view-line')).map((row) => ({
    row,
    box: row.getBoundingClientRect(),
  }));
  // Monaco positions its rows absolutely and may reuse them out of document order: sort by where they are.
  rows.sort((a, b) => a.box.top - b.box.top);
  if (!rows.length) return { lines: [], whole: false };
  // `.view-lines` starts where the document's first line is; rows that end at or below the area's bottom
  // may be followed by lines out of view.
  const first = rows[0].box.top - view.getBoundingClientRect().top < 1;
  const last = rows[rows.length - 1].box.bottom < area.getBoundingClientRect().bottom - 1;
  return { lines: rows.map((r) => (r.row.textContent ?? '').replace(/\u00a0/g, ' ')), whole: first && last };
}
