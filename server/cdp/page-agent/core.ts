import type { Covering, Refused, Watched } from './replies.js';
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
import { type Watch, type FrameAfter, pageState } from './state.js';
/** Every watch listening now. */
function listening(): Watch[] {
  return pageState.watch ? [pageState.watch, ...pageState.fieldWatches] : [...pageState.fieldWatches];
}

// The agent's reply shapes live in replies.ts (imported by the server too); re-exported for the other parts.
export type { Covering, Refused, RefusedCode, Watched } from './replies.js';

/**
 * What covers `el` at a point, as the model would look for it: the hit element's role and name, and the
 * listed element that holds it (itself or the nearest listed ancestor that is not also around `el`), so
 * the refusal can give that element's token (a cookie banner's "Accept" button).
 */
export function coveringOf(hit: Element | null, el: Element): Covering | undefined {
  if (!hit) return undefined;
  let listed: Element | null = null;
  for (
    let n: Element | null = hit, depth = 0;
    n && depth < 32;
    n = n.parentElement ?? (n.getRootNode() as ShadowRoot).host ?? null, depth++
  ) {
    if (isWithin(el, n)) break; // an ancestor of the target too: it does not name the cover
    if (pageState.latest.elements.includes(n)) {
      listed = n;
      break;
    }
  }
  const named = listed ?? hit;
  return {
    role: named.getAttribute('role') || implicitRole(named),
    name: labelOf(named).slice(0, 80),
    index: listed ? pageState.latest.elements.indexOf(listed) : -1,
  };
}

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

/** The point to press for an element, in this frame's viewport, hit-tested. */
export interface Aimed {
  refusal?: undefined;
  x: number;
  y: number;
  stable: boolean;
  target: string;
  href?: string;
}

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

function implicitRole(el: Element): string {
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
function labelOf(el: Element, role = el.getAttribute('role') || implicitRole(el)): string {
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

function shadowOf(el: Element): ShadowRoot | null {
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

export function registerClosedRoot(root: ShadowRoot): void {
  pageState.closedRoots.set(root.host, root);
}

/**
 * Lists the visible interactive elements of this frame in document order (descending into open and
 * registered closed shadow roots). Returns rows, not objects, to keep the protocol payload small.
 */
export function snapshot(snapshotId: string) {
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
  const kept = withoutWrappers(rows, elements, weak);
  pageState.latest = { id: snapshotId, elements: kept.elements };
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
    scrollX: window.scrollX,
    scrollY: window.scrollY,
    width: innerWidth,
    height: innerHeight,
  };
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
  return pageState.latest.id === snapshotId ? indices.map((i) => pageState.latest.elements[i]).filter(Boolean) : [];
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

/** The element this frame considers hit at (x, y), looked up in the target's own tree (closed roots too). */
export function hitAt(el: Element, x: number, y: number): Element | null {
  let hit = document.elementFromPoint(x, y);
  // Descend into shadow roots (open or registered closed) the hit element hosts.
  for (let depth = 0; hit && depth < 32; depth++) {
    const shadow = shadowOf(hit);
    if (!shadow) break;
    const inner = shadow.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  if (hit && hit !== el && !isWithin(hit, el)) {
    // A closed root we never registered: ask the target's own root, which we can reach through the element.
    const own = (el.getRootNode() as Document | ShadowRoot).elementFromPoint?.(x, y) ?? null;
    if (own && (own === el || isWithin(own, el)) && isComposedAncestor(hit, el)) return own;
  }
  return hit;
}

export function isWithin(node: Element, ancestor: Element): boolean {
  for (
    let n: Node | null = node;
    n;
    n = (n as Node & Partial<Slottable>).assignedSlot ?? n.parentNode ?? (n as ShadowRoot).host ?? null
  ) {
    if (n === ancestor) return true;
  }
  return false;
}

function isComposedAncestor(candidate: Element, el: Element): boolean {
  return isWithin(el, candidate);
}

function acceptsHit(el: Element, hit: Element | null): boolean {
  if (!hit) return false;
  if (hit === el || isWithin(hit, el)) return true;
  const labels = (el as HTMLInputElement).labels;
  return !!labels && Array.from(labels).some((label) => hit === label || isWithin(hit, label));
}

/**
 * Brings the element into view, waits (bounded) until its box stops moving, then hit-tests the point
 * that will be clicked. Returns the point in this frame's viewport, or why it cannot be clicked.
 */
export async function pointFor(snapshotId: string, index: number, watchTypes: string[]): Promise<Refused | Aimed> {
  const el = element(snapshotId, index);
  if (!isEnabled(el)) return { refusal: 'element_disabled', detail: describe(el) };
  // A caret-sized editor surface is clicked where a user clicks: its editor's area, which the events must reach.
  return pointAt(editorAreaOf(el) ?? el, el, watchTypes);
}

/** Aims at `box` (the element itself, or the editor area standing for it); `el` is what the action is on. */
async function pointAt(box: Element, el: Element, watchTypes: string[]): Promise<Refused | Aimed> {
  box.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' as ScrollBehavior });
  let rect = box.getBoundingClientRect();
  let stable = false;
  for (let i = 0; i < 20 && !stable; i++) {
    // up to 20 frames for animations to settle
    await nextFrame();
    const next = box.getBoundingClientRect();
    // A transition that just started can show the same box two frames running (its first frame is at
    // progress 0): a box is stable only when nothing finite still animates it or its ancestors.
    stable =
      next.x === rect.x &&
      next.y === rect.y &&
      next.width === rect.width &&
      next.height === rect.height &&
      !animated(box);
    rect = next;
  }
  const left = Math.max(rect.left, 0),
    right = Math.min(rect.right, innerWidth);
  const top = Math.max(rect.top, 0),
    bottom = Math.min(rect.bottom, innerHeight);
  if (right <= left || bottom <= top) return { refusal: 'not_visible', detail: describe(el) };
  const x = (left + right) / 2,
    y = (top + bottom) / 2;
  const hit = hitAt(box, x, y);
  if (!acceptsHit(box, hit))
    return { refusal: 'element_covered', detail: describe(hit), target: describe(el), covering: coveringOf(hit, box) };
  if (watchTypes.length) armWatch(box, watchTypes);
  const href = el.localName === 'a' ? (el as HTMLAnchorElement).href : undefined;
  return { x, y, stable, target: box === el ? describe(el) : `${describe(el)} (clicked in its editor's area)`, href };
}

/** Whether a finite animation or transition is running (or about to) on the element or an ancestor. */
function animated(el: Element): boolean {
  for (let n: Element | null = el; n; n = n.parentElement ?? (n.getRootNode() as ShadowRoot).host ?? null) {
    for (const a of n.getAnimations()) {
      if ((a.playState === 'running' || a.pending) && a.effect?.getComputedTiming().endTime !== Infinity) return true;
    }
  }
  return false;
}

/** Arms a watch on whatever is hit at (x, y) (the px form). */
export function watchPoint(x: number, y: number, types: string[]) {
  const hit = hitAt(document.body, x, y) ?? document.body;
  armWatch(hit, types);
  return { target: describe(hit) };
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

/** Records the pointer/key events that reach the element (capture phase on the element itself). */
export function watchEvents(snapshotId: string | null, index: number, types: string[]) {
  const target = snapshotId ? element(snapshotId, index) : (deepActiveElement() ?? document.body);
  return armWatch(target, types);
}
function onTargetEvent(e: Event) {
  for (const w of listening()) {
    if (e.currentTarget !== w.target) continue;
    // Each input (a multi-line insertion has several) needs a frame after it: one still to come serves.
    if (e.type === 'input' && pageState.fieldWatches.has(w) && (!w.afterInput || w.afterInput.framed))
      w.afterInput = frameThenTask();
    w.events.push({
      type: e.type,
      trusted: e.isTrusted,
      onTarget: true,
      prevented: false,
      hit: describe(e.composedPath()[0] as Element),
    });
  }
}
// Bubble listener on window: runs after the page's handlers, so it sees a cancelled event.
function onWindowEvent(e: Event) {
  for (const w of listening()) {
    const seen = w.events.find((r) => r.type === e.type && r.onTarget && !r.prevented);
    if (seen) seen.prevented = e.defaultPrevented;
    else if (!w.events.some((r) => r.type === e.type && r.onTarget)) {
      w.events.push({
        type: e.type,
        trusted: e.isTrusted,
        onTarget: false,
        prevented: e.defaultPrevented,
        hit: describe(e.composedPath()[0] as Element),
      });
    }
  }
}
function hearLeaving() {
  if (pageState.leavingHeard) return;
  pageState.leavingHeard = true;
  const note = () => {
    for (const w of listening()) w.leaving = true;
  };
  window.addEventListener(
    'click',
    (e) => {
      if (e.composedPath().some((n) => n instanceof Element && n.matches('a[href], area[href]'))) note();
    },
    { capture: true },
  );
  window.addEventListener('submit', note, { capture: true });
  window.addEventListener('beforeunload', note, { capture: true });
}

function armWatch(target: Element, types: string[]) {
  listenOn(target, types);
  pageState.watch = { target, events: [] };
  return describe(target);
}

/** A watch of its own for a field a type_text action holds (fields.ts), heard beside the armed one; dropped with dropFieldWatch. */
export function fieldWatch(target: Element, types: string[]): Watch {
  listenOn(target, types);
  const own: Watch = { target, events: [] };
  pageState.fieldWatches.add(own);
  return own;
}

export function dropFieldWatch(own: Watch): void {
  pageState.fieldWatches.delete(own);
}

/** The listeners a watch of `target` for `types` needs, added once per element and type. */
function listenOn(target: Element, types: string[]): void {
  hearLeaving();
  let onTarget = pageState.armedOn.get(target);
  if (!onTarget) pageState.armedOn.set(target, (onTarget = new Set()));
  for (const type of types) {
    if (!onTarget.has(type)) {
      target.addEventListener(type, onTargetEvent, { capture: true });
      onTarget.add(type);
    }
    if (!pageState.armedOnWindow.has(type)) {
      window.addEventListener(type, onWindowEvent);
      pageState.armedOnWindow.add(type);
    }
  }
}

/** What the armed watch saw. `fresh` means no watch exists here: the frame navigated since it was armed. */
export async function watched(waitFrame: boolean): Promise<Watched> {
  if (waitFrame) await nextFrame();
  if (!pageState.watch) return { target: 'nothing', events: [], fresh: true };
  return {
    target: describe(pageState.watch.target),
    events: pageState.watch.events.slice(),
    ...(pageState.watch.leaving ? { leaving: true } : {}),
  };
}
