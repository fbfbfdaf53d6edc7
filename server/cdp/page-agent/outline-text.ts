// The page's own text for the default observation: headings, paragraphs, table rows, labels and status
// messages in reading order, each placed among the listed controls where it stands (as a person reads the
// page), folded so nothing is said twice: text that is a listed control's name (its content, its <label>
// beside it) is left out, and whitespace is collapsed. A read of get_text is then needed only for what the
// server's cap leaves out.
//
// One walk over the frame's DOM (shadow roots included, iframes left to their own frame's walk), run in
// the same evaluation as the snapshot, so the text costs no round trip of its own.
import { squash } from './names.js';

/** What a text block is: the kind says how a model should read it. */
export type TextKind = 'heading' | 'text' | 'row' | 'status' | 'alert';

/**
 * One block of text, as a row: kind, text, the index of the listed element it stands before (the element
 * count when it stands after the last), the index of the listed element it is inside (-1: none).
 */
export type TextRow = [TextKind, string, number, number];

/** Bounds of one frame's walk: the server shows far less (its cap); these only keep the payload bounded. */
export const FRAME_TEXT_MAX_CHARS = 200_000;
export const FRAME_TEXT_MAX_BLOCKS = 20_000;

/** Subtrees whose text is not the page's text: code, hidden templates, a field's own content (its value shows it). */
const SKIPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'iframe',
  'frame',
  'object',
  'select',
  'textarea',
  'input',
  'option',
  'datalist',
  'canvas',
  'video',
  'audio',
  'head',
  'title',
]);

function specialKind(el: Element): TextKind | null {
  const role = el.getAttribute('role');
  if (/^h[1-6]$/.test(el.localName) || role === 'heading') return 'heading';
  if (role === 'alert' || el.getAttribute('aria-live') === 'assertive') return 'alert';
  if (role === 'status' || role === 'log' || el.localName === 'output' || el.getAttribute('aria-live') === 'polite')
    return 'status';
  if (el.localName === 'tr' || role === 'row') return 'row';
  return null;
}

/** Whether `text` says nothing a control's `name` does not: equal, or (`inside`: the control holds it) part of it. */
function foldedInto(text: string, name: string | undefined, inside: boolean): boolean {
  if (!name) return false;
  const a = text.toLowerCase();
  const cut = name.endsWith('…'); // names are listed up to 80 characters
  const b = (cut ? name.slice(0, -1) : name).toLowerCase();
  return a === b || (cut && a.startsWith(b)) || (inside && b.includes(a));
}

/**
 * The text blocks of this frame, in document order. `elements` are the snapshot's listed elements (in
 * document order, the order the snapshot's walk visits them: a shadow root before its host's children)
 * and `names` their shown names.
 */
export function outlineText(
  elements: readonly Element[],
  names: readonly string[],
  shadowOf: (el: Element) => ShadowRoot | null,
) {
  const indexOf = new Map<Element, number>();
  elements.forEach((el, i) => indexOf.set(el, i));
  const rows: TextRow[] = [];
  let chars = 0;
  let truncated = false;
  let next = 0; // the index of the next listed element in document order
  let buffer = '';
  let bufferKind: TextKind = 'text';
  let bufferParent = -1;

  const flush = () => {
    const text = squash(buffer).replace(/^(\| )+|( \|)+$/g, '');
    buffer = '';
    if (!text || text === '|' || truncated) return;
    // A control's name is not repeated as text: its own content, or the label just before or after it.
    if (bufferParent >= 0 && foldedInto(text, names[bufferParent], true)) return;
    if (foldedInto(text, names[next - 1], false) || foldedInto(text, names[next], false)) return;
    if (chars + text.length > FRAME_TEXT_MAX_CHARS || rows.length >= FRAME_TEXT_MAX_BLOCKS) {
      truncated = true;
      return;
    }
    chars += text.length;
    rows.push([bufferKind, text, next, bufferParent]);
  };

  const append = (text: string, kind: TextKind, parent: number) => {
    if (!buffer.trim()) {
      bufferKind = kind;
      bufferParent = parent;
    }
    buffer += text;
  };

  /** Past a subtree whose text is skipped: the listed elements in it still come before what follows. */
  const skipPast = (el: Element, all: boolean) => {
    const listed = indexOf.get(el);
    if (listed !== undefined) next = Math.max(next, listed + 1);
    if (!all) return;
    for (const d of Array.from(el.querySelectorAll('*'))) {
      const i = indexOf.get(d);
      if (i !== undefined) next = Math.max(next, i + 1);
    }
  };

  const visit = (root: Node, kind: TextKind, parent: number, visible: boolean) => {
    for (let node = root.firstChild; node && !truncated; node = node.nextSibling) {
      if (node.nodeType === Node.TEXT_NODE) {
        if (visible) append(node.nodeValue ?? '', kind, parent);
        continue;
      }
      if (node.nodeType !== Node.ELEMENT_NODE) continue;
      const el = node as Element;
      const listed = indexOf.get(el);
      if (SKIPPED.has(el.localName) || el.getAttribute('aria-hidden') === 'true') {
        // An svg may hold listed links; a select's options and a field's content are never listed. Only a
        // listed element ends the text around it: an icon inside a sentence leaves the sentence whole.
        const at = next;
        skipPast(el, el.localName === 'svg' || el.localName === 'math' || el.localName === 'object');
        if (next !== at) {
          const after = next;
          next = at;
          flush();
          next = after;
        }
        continue;
      }
      const style = getComputedStyle(el);
      if (style.display === 'none') continue; // nothing in it is shown, nor listed
      const shown = style.visibility !== 'hidden' && style.visibility !== 'collapse';
      const display = style.display;
      const cell = display === 'table-cell';
      const inline = display.startsWith('inline') || display === 'contents' || display.startsWith('ruby');
      const own = specialKind(el);
      const breaks = listed !== undefined || (!inline && !cell) || own !== null || el.localName === 'br';
      if (breaks) flush();
      else if (cell && buffer.trim()) buffer += ' | ';
      if (listed !== undefined) next = Math.max(next, listed + 1);
      // An editing host's text is its value, shown on its own line.
      if (listed !== undefined && (el as HTMLElement).isContentEditable) {
        skipPast(el, true);
        continue;
      }
      const childKind = own ?? kind;
      const childParent = listed ?? parent;
      // The snapshot's order: a shadow root, then the host's own children.
      const shadow = shadowOf(el);
      if (shadow) visit(shadow, childKind, childParent, shown);
      visit(el, childKind, childParent, shown);
      if (breaks) flush(); // the element's own text ends here
    }
  };
  if (document.body) visit(document.body, 'text', -1, true);
  flush();
  return { rows, truncated };
}
