import { handlerTargets, isLibrarySliderHandle, librarySliderValue } from './handlers.js';
import {
  accessibleName,
  colourName,
  cutName,
  iconGuess,
  isLigatureName,
  startNaming,
  withoutIconGlyphs,
} from './names.js';
import { outlineText } from './outline-text.js';
import { askCodeModel, codeEditorOf } from './code-editors.js';
import { editorAreaOf, hasEditContext, isCaretSizedSurface, isHelperField, renderedLines } from './surfaces.js';
import { type FrameAfter, pageState } from './state.js';

// The agent's reply shapes live in replies.ts (imported by the server too); re-exported for the other parts.
export type { Covering, Refused, RefusedCode, Watched } from './replies.js';

/**
 * One listed element, as a row (not an object) to keep the protocol payload small: role, label, value,
 * enabled, focused, x, y, width, height (frame viewport CSS pixels), parent row (-1: none), is a frame,
 * whether its name and role should be asked of the accessibility tree, where its name came from when it
 * is not the accessible name ('' , 'icon_guess': guessed from its icon, 'colour': its background colour).
 */
export type SnapshotRow = [
  string,
  string,
  string | null,
  boolean,
  boolean,
  number,
  number,
  number,
  number,
  number,
  boolean,
  boolean,
  NameSource,
  /** Why the field's text is a secret (secretKind), only on such a field: never its text. */
  string?,
];

export type NameSource = '' | 'icon_guess' | 'colour';

export const TEXT_INPUT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number']);

const INTERACTIVE_ROLES = new Set([
  'button',
  'link',
  'checkbox',
  'radio',
  'textbox',
  'searchbox',
  'combobox',
  'listbox',
  'option',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'tab',
  'switch',
  'slider',
  'spinbutton',
  'treeitem',
]);

export function implicitRole(el: Element): string {
  const tag = el.localName;
  if (tag === 'input') {
    const type = (el as HTMLInputElement).type;
    if (type === 'checkbox' || type === 'radio') return type;
    if (type === 'range') return 'slider';
    if (type === 'number') return 'spinbutton';
    if (type === 'search') return 'searchbox';
    if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
    if (type === 'file') return 'button';
    if (TEXT_INPUT_TYPES.has(type)) return 'textbox';
    return type; // date, time, color, ...: the type says more than a generic role would
  }
  if (tag === 'textarea') return 'textbox';
  if (tag === 'select') return (el as HTMLSelectElement).multiple ? 'listbox' : 'combobox';
  if (tag === 'button' || tag === 'summary') return 'button';
  if (tag === 'a') return 'link';
  if (tag === 'iframe' || tag === 'frame') return 'iframe';
  if ((el as HTMLElement).isContentEditable) return 'textbox';
  if (hasEditContext(el)) return 'textbox'; // an EditContext editor (Monaco): Chrome calls it generic
  return 'generic';
}

function isEditingHost(el: Element): boolean {
  const h = el as HTMLElement;
  return !!h.isContentEditable && !h.parentElement?.isContentEditable;
}

function isInteractive(el: Element): boolean {
  if (isHelperField(el)) return false;
  const tag = el.localName;
  if (tag === 'input') return (el as HTMLInputElement).type !== 'hidden';
  if (tag === 'button' || tag === 'select' || tag === 'textarea' || tag === 'summary') return true;
  if (tag === 'a') return el.hasAttribute('href');
  if (tag === 'iframe' || tag === 'frame') return true;
  if (isEditingHost(el)) return true;
  const role = el.getAttribute('role');
  if (role && INTERACTIVE_ROLES.has(role)) return true;
  const tabindex = el.getAttribute('tabindex');
  if (tabindex !== null && Number(tabindex) >= 0) return true;
  if (isLibrarySliderHandle(el)) return true;
  return (el as HTMLElement).onclick != null || el.hasAttribute('onclick');
}

/** A pointer-cursor element worth listing: not the page itself, not a label standing for its control. */
function pointerTarget(el: Element): boolean {
  if (el.localName === 'html' || el.localName === 'body') return false;
  return !(el.localName === 'label' && (el as HTMLLabelElement).control);
}

export function textOf(node: Element | null, max = 80): string {
  if (!node) return '';
  const t = ((node as HTMLElement).innerText ?? node.textContent ?? '').replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

/**
 * The name a listed element is shown by: its accessible name without icon-font glyphs; for an icon-only
 * control a guess from its icon (a Material ligature is an icon's name, not a label), and for a swatch
 * (no content at all) its colour. The source says which, so a guess is marked as one.
 */
function shownName(el: Element, role: string): [string, NameSource] {
  const name = withoutIconGlyphs(labelOf(el, role));
  if (name && !isLigatureName(el, name)) return [name, ''];
  const icon = iconGuess(el);
  if (icon) return [icon, 'icon_guess'];
  if (!name && role === 'generic' && el.childElementCount === 0 && !textOf(el)) {
    const colour = colourName(el);
    if (colour) return [colour, 'colour'];
  }
  return [name, ''];
}

/** The element's accessible name as Chrome computes it, as far as the DOM tells (names.ts). */
export function labelOf(el: Element, role = el.getAttribute('role') || implicitRole(el)): string {
  return cutName(accessibleName(el, role, shadowOf));
}

/** `autocomplete` tokens that mark a field's text as a secret (one-time codes, card numbers, passwords). */
const SECRET_AUTOCOMPLETE = new Set(['one-time-code', 'cc-number', 'cc-csc', 'new-password', 'current-password']);

/**
 * Why a field's text is a secret, or null: a password input, or an input/textarea whose `autocomplete`
 * names a one-time code, a card number or security code, or a password. Its text is masked in results.
 */
export function secretKind(el: Element | null): string | null {
  if (!el || (el.localName !== 'input' && el.localName !== 'textarea')) return null;
  if (el.localName === 'input' && (el as HTMLInputElement).type === 'password') return 'a password field';
  const tokens = (el.getAttribute('autocomplete') ?? '').toLowerCase().split(/\s+/);
  const token = tokens.find((t) => SECRET_AUTOCOMPLETE.has(t));
  return token ? `a field marked autocomplete="${token}"` : null;
}

/**
 * Shows the text of every secret field (secretKind) other than a password input (Chromium already draws
 * those as discs) as discs for a screenshot: on, before the capture; off, after it, putting back what the
 * page had set. Returns how many fields it masked. Fields inside shadow roots are not reached.
 */
export function maskSecretFields(on: boolean): number {
  for (const { el, before, priority } of pageState.maskedForCapture)
    el.style.setProperty('-webkit-text-security', before, priority);
  pageState.maskedForCapture = [];
  if (!on) return 0;
  for (const el of document.querySelectorAll<HTMLElement>('input[autocomplete], textarea[autocomplete]')) {
    if (!secretKind(el) || (el as HTMLInputElement).type === 'password') continue;
    const before = el.style.getPropertyValue('-webkit-text-security');
    pageState.maskedForCapture.push({ el, before, priority: el.style.getPropertyPriority('-webkit-text-security') });
    el.style.setProperty('-webkit-text-security', 'disc', 'important');
  }
  return pageState.maskedForCapture.length;
}

export function valueOf(el: Element): string | undefined {
  // A code editor's input surface holds none of its document (or a window of it): its model does.
  const code = mayBeCodeSurface(el) ? codeEditorOf(el) : null;
  const model = code?.input === el ? askCodeModel(code) : null;
  if (model) return model.text.slice(0, 200);
  // An editor's caret-sized surface holds at most a window of its text: the value is what the editor shows.
  const shown = isCaretSizedSurface(el) ? renderedLines(el as HTMLElement) : null;
  if (shown) return shown.lines.join('\n').slice(0, 200);
  const tag = el.localName;
  if (tag === 'input') {
    const input = el as HTMLInputElement;
    if (input.type === 'checkbox' || input.type === 'radio') return input.checked ? 'true' : 'false';
    if (secretKind(input)) return '•'.repeat([...input.value].length);
    if (['button', 'submit', 'reset', 'image', 'file'].includes(input.type)) return undefined;
    return input.value;
  }
  if (tag === 'textarea')
    return secretKind(el)
      ? '•'.repeat([...(el as HTMLTextAreaElement).value].length)
      : (el as HTMLTextAreaElement).value;
  if (tag === 'select') {
    const sel = el as HTMLSelectElement;
    return Array.from(sel.selectedOptions)
      .map((o) => o.label || o.value)
      .join(', ');
  }
  if (isEditingHost(el)) return textOf(el, 200);
  if (hasEditContext(el)) return textOf(el, 200);
  const checked = el.getAttribute('aria-checked');
  if (checked !== null) return checked;
  const now = el.getAttribute('aria-valuenow');
  if (now !== null) return now;
  return undefined;
}

/** What a code editor types through: a textarea, an editing host, an EditContext host (code-editors.ts). */
function mayBeCodeSurface(el: Element): boolean {
  return el.localName === 'textarea' || isEditingHost(el) || hasEditContext(el);
}

export function isEnabled(el: Element): boolean {
  if ((el as HTMLInputElement).disabled) return false;
  if (el.matches(':disabled')) return false;
  return el.getAttribute('aria-disabled') !== 'true';
}

export function deepActiveElement(): Element | null {
  let active: Element | null = document.activeElement;
  while (active) {
    const inner: Element | null = (active.shadowRoot ?? pageState.closedRoots.get(active))?.activeElement ?? null;
    if (!inner) break;
    active = inner;
  }
  return active;
}

export function shadowOf(el: Element): ShadowRoot | null {
  return el.shadowRoot ?? pageState.closedRoots.get(el) ?? null;
}

/** Custom elements whose shadow root, if any, is closed: the CDP side pierces those and registers them. */
export function closedRootCandidates(): Element[] {
  const out: Element[] = [];
  const visit = (root: Document | ShadowRoot) => {
    for (const el of Array.from(root.querySelectorAll('*'))) {
      const shadow = shadowOf(el);
      if (shadow) visit(shadow);
      else if (el.localName.includes('-') && !pageState.candidatesSeen.has(el)) out.push(el);
    }
  };
  visit(document);
  for (const el of out) pageState.candidatesSeen.add(el);
  return out;
}

/**
 * True when this document (its open and registered closed shadow roots included) holds no element that can
 * carry a frame and no custom element closedRootCandidates has not yet handed over: a re-read of this frame
 * alone then sees all the frame tree and the shadow piercing would. Marks nothing seen.
 */
function standalone(): boolean {
  const visit = (root: Document | ShadowRoot): boolean => {
    for (const el of Array.from(root.querySelectorAll('*'))) {
      const local = el.localName;
      if (local === 'iframe' || local === 'frame' || local === 'object' || local === 'embed') return false;
      const shadow = shadowOf(el);
      if (shadow) {
        if (!visit(shadow)) return false;
      } else if (local.includes('-') && !pageState.candidatesSeen.has(el)) return false;
    }
    return true;
  };
  return visit(document);
}

export function registerClosedRoot(root: ShadowRoot): void {
  pageState.closedRoots.set(root.host, root);
}

/**
 * Lists the visible interactive elements of this frame in document order (descending into open and
 * registered closed shadow roots). Returns rows, not objects, to keep the protocol payload small.
 */
export function snapshot(snapshotId: string, probe = false) {
  const kept = listed();
  // A probe (verify_state) leaves the latest observation, and so every token the agent holds, as it was; it
  // says which of its elements that observation listed, by their index there.
  let latestOf: number[] | undefined;
  let selectedOf: boolean[] | undefined;
  if (probe) {
    pageState.probe = { id: snapshotId, elements: kept.elements };
    const at = new Map(pageState.latest.elements.map((el, i) => [el, i]));
    latestOf = kept.elements.map((el) => at.get(el) ?? -1);
    // Selection (a tab, an option, a row) for verify_state's `selected`: an option's own state, else aria-selected.
    selectedOf = kept.elements.map((el) =>
      el instanceof HTMLOptionElement ? el.selected : el.getAttribute('aria-selected') === 'true',
    );
  } else {
    pageState.latest = { id: snapshotId, elements: kept.elements };
    pageState.dialogsOpen = new Set(openDialogs());
  }
  // The page's own text among the controls, in the same evaluation (no round trip of its own).
  const text = outlineText(
    kept.elements,
    kept.rows.map((row) => row[1]),
    shadowOf,
  );
  return {
    rows: kept.rows,
    text: text.rows,
    textTruncated: text.truncated,
    ...(latestOf ? { latestOf, selectedOf } : {}),
    scrollX: window.scrollX,
    scrollY: window.scrollY,
    width: innerWidth,
    height: innerHeight,
  };
}

/**
 * The frame's elements again after an action, matched to the latest snapshot's by the DOM element itself (an
 * action's `changes`): `locals[i]` is row i's index in that snapshot, an element it did not list appended to
 * it, so a token for it resolves like the snapshot's own and the snapshot's other tokens stay good. Null when
 * `snapshotId` is not this document's latest snapshot (a new document, or another snapshot since).
 */
export function reobserve(snapshotId: string, alone?: boolean) {
  if (pageState.latest.id !== snapshotId) return null;
  // `alone`: the server skipped listing frames and piercing closed shadow roots (one round trip per action);
  // that holds only when this document has no frame of its own and no custom element not yet looked into.
  if (alone && !standalone()) return 'full' as const;
  const kept = listed();
  const latest = pageState.latest.elements;
  const at = new Map<Element, number>(latest.map((el, i) => [el, i]));
  const locals = kept.elements.map((el) => {
    let local = at.get(el);
    if (local === undefined) {
      local = latest.length;
      latest.push(el);
      at.set(el, local);
    }
    return local;
  });
  const text = outlineText(
    kept.elements,
    kept.rows.map((row) => row[1]),
    shadowOf,
  );
  // Dialogs are containers, not controls (not listed): one that opened since is named apart.
  const open = openDialogs();
  const opened = open
    .filter((el) => !pageState.dialogsOpen.has(el))
    .map((el) => {
      const role = el.getAttribute('role') === 'alertdialog' ? 'alertdialog' : 'dialog';
      return [role, cutName(accessibleName(el, role, shadowOf))] as [string, string];
    });
  pageState.dialogsOpen = new Set(open);
  return { rows: kept.rows, locals, text: text.rows, textTruncated: text.truncated, opened };
}

/** The dialogs shown now (a modal <dialog>, role dialog or alertdialog), in document order. */
function openDialogs(): Element[] {
  return Array.from(document.querySelectorAll('dialog[open], [role="dialog"], [role="alertdialog"]')).filter(
    (el) => (el as HTMLElement).checkVisibility?.({ visibilityProperty: true }) !== false,
  );
}

/** The visible interactive elements of this frame in document order, with their rows (snapshot, reobserve). */
function listed(): { rows: SnapshotRow[]; elements: Element[] } {
  const elements: Element[] = [];
  const rows: SnapshotRow[] = [];
  const active = deepActiveElement();
  const indexOf = new Map<Element, number>();
  // Why each listed element is listed, when it is only a script's handler or a pointer cursor: a wrapper is dropped.
  const weak: Weak[] = [];
  startNaming();
  const { targets: handled, sliders } = handlerTargets();
  // `parentPointer`: the parent's pointer cursor is a listed ancestor's (a child merely inheriting it is not
  // listed for it); a pointer on an unlisted wrapper (display: contents, <body>) leaves its children listable.
  const visit = (root: Document | ShadowRoot | Element, parentIndex: number, parentPointer: boolean) => {
    for (let child = root.firstElementChild; child; child = child.nextElementSibling) {
      let myIndex = parentIndex;
      // Frameworks attach click handlers where the DOM cannot see them (React delegates to the root):
      // the outermost element showing a pointer cursor is listed as clickable too.
      // Elements a script gave a click listener (handlers.ts) are listed as their own controls, even inside
      // a pointer-cursor parent: sibling "Reply" and "Forward" spans are two elements, not one.
      const pointer = getComputedStyle(child).cursor === 'pointer';
      const strong = isInteractive(child);
      if (strong || ((handled.has(child) || (pointer && !parentPointer)) && pointerTarget(child))) {
        // A caret-sized editor surface (Monaco's) is shown with the box of its editor, where it is clicked.
        const rect = (editorAreaOf(child) ?? child).getBoundingClientRect();
        const visible =
          rect.width > 0 &&
          rect.height > 0 &&
          (child as HTMLElement).checkVisibility?.({ visibilityProperty: true }) !== false;
        if (visible) {
          myIndex = elements.length;
          indexOf.set(child, myIndex);
          elements.push(child);
          const slider = isLibrarySliderHandle(child);
          // role="presentation" on an element a person clicks is not honoured (Chrome's tree makes it generic too).
          const explicit = child.getAttribute('role');
          const role =
            explicit && !/^(none|presentation)$/.test(explicit) ? explicit : slider ? 'slider' : implicitRole(child);
          const [label, source] = shownName(child, role);
          const ownPointer = pointer && !parentPointer;
          weak.push(strong ? '' : !handled.has(child) ? 'pointer' : ownPointer ? 'both' : 'handler');
          const secret = secretKind(child);
          rows.push([
            role,
            label,
            (slider ? librarySliderValue(child, sliders.get(child)) : valueOf(child)) ?? null,
            isEnabled(child),
            child === active,
            rect.x,
            rect.y,
            rect.width,
            rect.height,
            parentIndex,
            child.localName === 'iframe' || child.localName === 'frame',
            source === 'icon_guess' || needsAccessibilityTree(child, role, label),
            source,
            ...((secret ? [secret] : []) as [string?]),
          ]);
        }
      }
      const covered = pointer && (myIndex !== parentIndex || parentPointer);
      const shadow = shadowOf(child);
      if (shadow) visit(shadow, myIndex, covered);
      if (child.localName !== 'iframe') visit(child, myIndex, covered);
    }
  };
  visit(document, -1, false);
  return withoutWrappers(rows, elements, weak);
}

/**
 * Why an element is listed when nothing but a script or its cursor says it is clickable: its own pointer
 * cursor only, a click listener only, or both ('': anything else, a button, a link, a tabindex).
 */
type Weak = '' | 'pointer' | 'handler' | 'both';

/**
 * Drops the generic elements listed only for a handler or pointer cursor that merely wrap other controls:
 * a pointer-cursor one (no listener of its own) holding another such control (a bar around "Reply" and
 * "Forward" spans with their own handlers would be one 'Reply Forward'), a nameless one holding any listed
 * control (a slider's track around its handle), and one with a listener but no pointer cursor holding any
 * listed control (a delegating root, React's container, a menu that handles its items' clicks). A card with
 * both its own listener and cursor stays: clicking it does something. Parents are re-pointed to the nearest kept.
 */
function withoutWrappers(rows: SnapshotRow[], elements: Element[], weak: Weak[]) {
  const drop = new Set<number>();
  rows.forEach((row, i) => {
    for (let p = row[9]; p >= 0; p = rows[p][9]) {
      if (weak[p] === '' || rows[p][0] !== 'generic') continue;
      if (rows[p][1] === '' || weak[p] === 'handler' || (weak[p] === 'pointer' && weak[i] !== '')) drop.add(p);
    }
  });
  if (drop.size === 0) return { rows, elements };
  const newIndex: number[] = [];
  const out: { rows: SnapshotRow[]; elements: Element[] } = { rows: [], elements: [] };
  rows.forEach((row, i) => {
    if (drop.has(i)) return;
    let parent = row[9];
    while (parent >= 0 && drop.has(parent)) parent = rows[parent][9];
    newIndex[i] = out.rows.length;
    const copy = row.slice() as SnapshotRow;
    copy[9] = parent >= 0 ? newIndex[parent] : -1;
    out.rows.push(copy);
    out.elements.push(elements[i]);
  });
  return out;
}

/**
 * Where the DOM alone cannot tell the name or role Chrome computes: names by reference (aria-labelledby,
 * which may point across roots), no name found, a role the DOM does not show (ElementInternals on a
 * custom element), an EditContext editor. The CDP side asks the accessibility tree.
 */
function needsAccessibilityTree(el: Element, _role: string, label: string): boolean {
  return (
    label === '' ||
    el.hasAttribute('aria-labelledby') ||
    hasEditContext(el) ||
    (el.localName.includes('-') && !el.hasAttribute('role'))
  );
}

/** Elements of the latest snapshot by index (for the accessibility tree's names); empty when stale. */
export function elementsAt(snapshotId: string, indices: number[]): Element[] {
  const read = pageState.latest.id === snapshotId ? pageState.latest : pageState.probe;
  return read.id === snapshotId ? indices.map((i) => read.elements[i]).filter(Boolean) : [];
}

export function element(snapshotId: string, index: number): Element {
  if (pageState.latest.id !== snapshotId) throw new Error('verity:stale');
  const el = pageState.latest.elements[index];
  if (!el) throw new Error('verity:out_of_range');
  if (!el.isConnected) throw new Error('verity:detached');
  return el;
}

export function indexInLatest(el: Element): number {
  return pageState.latest.elements.indexOf(el);
}

export function describe(el: Element | null): string {
  if (!el) return 'nothing';
  let s = el.localName;
  if (el.id) s += '#' + el.id;
  const cls = typeof el.className === 'string' ? el.className.trim().split(/\s+/).filter(Boolean).slice(0, 2) : [];
  if (cls.length) s += '.' + cls.join('.');
  const label = quickLabel(el);
  if (label) s += ` "${label.slice(0, 40)}"`;
  return s;
}

/**
 * A label for descriptions in evidence, from attributes and textContent only: it runs inside event
 * listeners and right after input, where innerText would force a layout on every call.
 */
function quickLabel(el: Element): string {
  const aria = el.getAttribute('aria-label');
  if (aria) return aria.trim();
  const labels = (el as HTMLInputElement).labels;
  if (labels?.length) return (labels[0].textContent ?? '').replace(/\s+/g, ' ').trim();
  const input = el as HTMLInputElement;
  if (el.localName === 'input' || el.localName === 'textarea') {
    if (['button', 'submit', 'reset'].includes(input.type) && input.value) return input.value;
    return input.placeholder || el.getAttribute('title') || input.name || '';
  }
  if ((el as HTMLElement).isContentEditable)
    return el.getAttribute('title') || el.getAttribute('placeholder') || el.getAttribute('data-placeholder') || '';
  return (
    (el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60) ||
    el.getAttribute('title') ||
    el.getAttribute('alt') ||
    ''
  );
}

export function nextFrame(): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 100); // rAF never fires in a hidden tab; do not wait forever
    requestAnimationFrame(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Settles in a task after the next frame: by then the frame's callbacks have all run, those requested
 * after this one included, and so have the timers (0 ms) requested before it. Bounded as nextFrame is.
 */
export function frameThenTask(): FrameAfter {
  const after: FrameAfter = { settled: Promise.resolve(), framed: false };
  after.settled = new Promise((resolve) => {
    const timer = setTimeout(() => {
      after.framed = true;
      resolve();
    }, 100); // rAF never fires in a hidden tab; do not wait forever
    requestAnimationFrame(() => {
      clearTimeout(timer);
      after.framed = true;
      setTimeout(resolve, 0);
    });
  });
  return after;
}

export function hasFocus(): boolean {
  const active = document.activeElement;
  return document.hasFocus() && !!active && active.localName !== 'iframe' && active.localName !== 'frame';
}

export function focusElement(snapshotId: string, index: number) {
  const el = element(snapshotId, index) as HTMLElement;
  if (deepActiveElement() !== el) el.focus();
  return describe(el);
}
