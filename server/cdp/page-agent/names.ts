// Accessible names as Chrome computes them (accname 1.2 and HTML-AAM), from the DOM: one pass per listed
// element, no accessibility tree. What the DOM cannot tell (names by reference across roots, ElementInternals,
// EditContext, no name found) is flagged by core.ts and asked of Chrome's tree by cdp/snapshot.ts.
//
// Order, for the element being named: aria-labelledby, aria-label, the host language's label (<label>,
// alt, legend, a button's value, an iframe's title), content for roles named from content, title, then
// placeholder. Content skips hidden nodes (display:none, visibility:hidden, aria-hidden), takes an embedded
// control's value, an image's alt, a descendant's aria-label, and CSS ::before/::after text.
import { type PseudoMatcher, pageState } from './state.js';

/** Roles whose name comes from their content (accname 1.2 "name from: contents"). */
const NAME_FROM_CONTENT = new Set([
  'button',
  'link',
  'checkbox',
  'radio',
  'switch',
  'option',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'tab',
  'treeitem',
  'cell',
  'gridcell',
  'columnheader',
  'rowheader',
  'row',
  'heading',
  'tooltip',
  'generic', // not accname: Verity names a clickable div or span by its text so the model can find it
]);

/** Whether a role takes its name from its content (the test of the rule, for unit tests too). */
export function namedFromContent(role: string): boolean {
  return NAME_FROM_CONTENT.has(role);
}

/** Whitespace collapsed and trimmed, as Chrome reports names. */
export function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Names are listed up to `max` characters, a longer one cut with "…" (an outline line stays short). */
export function cutName(name: string, max = 80): string {
  return name.length > max ? name.slice(0, max - 1) + '…' : name;
}

/** The name Chrome gives a button-like <input> with no value (its default label). */
export function defaultInputButtonName(type: string): string {
  return type === 'submit' || type === 'image' ? 'Submit' : type === 'reset' ? 'Reset' : '';
}

const MAX_DEPTH = 32;

/**
 * The accessible name of `el`, whose role is `role` (explicit or implicit), or '' when none is found in
 * the DOM. `shadowOf` reaches closed shadow roots the agent registered.
 */
export function accessibleName(el: Element, role: string, shadowOf: (el: Element) => ShadowRoot | null): string {
  const labelledBy = el.getAttribute('aria-labelledby');
  if (labelledBy) {
    const root = el.getRootNode() as Document | ShadowRoot;
    const text = squash(
      labelledBy
        .split(/\s+/)
        .map((id) => root.getElementById?.(id))
        .filter((ref): ref is HTMLElement => !!ref)
        .map((ref) =>
          ref === el ? ownValue(el) : (ref.getAttribute('aria-label') ?? '').trim() || contentOf(ref, el, shadowOf, 0),
        )
        .join(' '),
    );
    if (text) return text;
  }
  const aria = squash(el.getAttribute('aria-label') ?? '');
  if (aria) return aria;
  const native = hostLanguageLabel(el, shadowOf);
  if (native) return native;
  if (NAME_FROM_CONTENT.has(role)) {
    const text = squash(contentOf(el, el, shadowOf, 0));
    if (text) return text;
  }
  const title = squash(el.getAttribute('title') ?? '');
  if (title) return title;
  const tag = el.localName;
  if (tag === 'input' || tag === 'textarea') return squash((el as HTMLInputElement).placeholder);
  return squash(el.getAttribute('aria-placeholder') ?? '');
}

/** The name HTML gives a control: its <label>s, an image's alt, a button's value, a fieldset's legend. */
function hostLanguageLabel(el: Element, shadowOf: (el: Element) => ShadowRoot | null): string {
  const labels = (el as HTMLInputElement).labels;
  if (labels?.length) {
    const text = squash(
      Array.from(labels)
        .map((l) => contentOf(l, el, shadowOf, 0))
        .join(' '),
    );
    if (text) return text;
  }
  const tag = el.localName;
  if (tag === 'input') {
    const input = el as HTMLInputElement;
    if (input.type === 'image') return squash(input.alt || input.value) || defaultInputButtonName('image');
    if (['button', 'submit', 'reset'].includes(input.type))
      return squash(input.value) || defaultInputButtonName(input.type);
  }
  if (tag === 'img' || tag === 'area') return squash(el.getAttribute('alt') ?? '');
  if (tag === 'fieldset') {
    const legend = Array.from(el.children).find((c) => c.localName === 'legend');
    if (legend) return squash(contentOf(legend, el, shadowOf, 0));
  }
  return '';
}

/** What an embedded control contributes to a name around it (accname 2C): its value, or its choice. */
function ownValue(el: Element): string {
  const tag = el.localName;
  if (tag === 'select') {
    const sel = el as HTMLSelectElement;
    return Array.from(sel.selectedOptions)
      .map((o) => o.label || o.text)
      .join(' ');
  }
  if (tag === 'textarea') return (el as HTMLTextAreaElement).value;
  if (tag === 'input') {
    const input = el as HTMLInputElement;
    if (['checkbox', 'radio', 'file', 'hidden', 'button', 'submit', 'reset', 'image'].includes(input.type)) return '';
    return input.value;
  }
  return el.getAttribute('aria-valuetext') ?? el.getAttribute('aria-valuenow') ?? '';
}

const EMBEDDED_CONTROL = /^(textbox|searchbox|combobox|listbox|slider|spinbutton)$/;

/** Hidden from the accessibility tree: not rendered, invisible, or aria-hidden. */
function hidden(el: Element): boolean {
  if (el.getAttribute('aria-hidden') === 'true') return true;
  return (el as HTMLElement).checkVisibility?.({ visibilityProperty: true }) === false;
}

/** CSS generated text of a ::before or ::after, when it is a plain string. */
function generated(el: Element, pseudo: '::before' | '::after'): string {
  if (!mayGenerate(el, pseudo)) return '';
  const content = getComputedStyle(el, pseudo).content;
  if (!content || content === 'none' || content === 'normal') return '';
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(content);
  return m ? m[1].replace(/\\(.)/g, '$1') : '';
}

/** Forgets what the sheets said: called at the start of each snapshot (sheets may have changed). */
export function startNaming(): void {
  pageState.pseudoMatchers = new Map();
}

function mayGenerate(el: Element, pseudo: '::before' | '::after'): boolean {
  const root = el.getRootNode();
  let matcher = pageState.pseudoMatchers.get(root);
  if (!matcher) pageState.pseudoMatchers.set(root, (matcher = pseudoMatcherOf(root as Document | ShadowRoot)));
  if (matcher === 'any') return true;
  const selectors = pseudo === '::before' ? matcher.before : matcher.after;
  if (!selectors) return false;
  try {
    return el.matches(selectors);
  } catch {
    return true;
  }
}

function pseudoMatcherOf(root: Document | ShadowRoot): PseudoMatcher {
  const before: string[] = [];
  const after: string[] = [];
  const visit = (rules: CSSRuleList): boolean => {
    for (const rule of Array.from(rules)) {
      if (rule instanceof CSSImportRule) {
        if (rule.styleSheet && !visitSheet(rule.styleSheet)) return false;
      } else if (rule instanceof CSSStyleRule) {
        if (rule.cssRules?.length && /before|after/.test(rule.cssText)) return false; // nested CSS: cannot tell
        if (!/:(before|after)/.test(rule.selectorText)) continue;
        const content = rule.style.getPropertyValue('content').trim();
        if (!content || /^(none|normal|""|'')$/.test(content)) continue;
        for (const selector of splitSelectorList(rule.selectorText)) {
          const m = /^(.*?)::?(before|after)\b/.exec(selector);
          if (!m) continue;
          if (/:host|::part|::slotted/.test(selector)) return false;
          (m[2] === 'before' ? before : after).push(m[1].trim() || '*');
        }
      } else if ('cssRules' in rule && (rule as CSSGroupingRule).cssRules) {
        if (!visit((rule as CSSGroupingRule).cssRules)) return false;
      }
    }
    return true;
  };
  const visitSheet = (sheet: CSSStyleSheet): boolean => {
    try {
      return visit(sheet.cssRules);
    } catch {
      return false; // a cross-origin sheet: its rules cannot be read
    }
  };
  const sheets = [...Array.from(root.styleSheets), ...(root.adoptedStyleSheets ?? [])];
  for (const sheet of sheets) if (!visitSheet(sheet)) return 'any';
  return { before: before.join(','), after: after.join(',') };
}

/** A selector list split at its top-level commas (not those inside :is(...) or [attr=","]). */
export function splitSelectorList(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      out.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(list.slice(start).trim());
  return out.filter(Boolean);
}

const INLINE = /^(inline|contents|inline-block|inline-flex|inline-grid)$/;

/**
 * The text of `node`'s subtree as a name from content: the flat tree (shadow roots and slots), hidden
 * parts skipped, embedded controls by value (the element being named, `self`, contributes nothing),
 * images by alt, descendants with aria-label by it, blocks separated by a space.
 */
function contentOf(node: Element, self: Element, shadowOf: (el: Element) => ShadowRoot | null, depth: number): string {
  if (depth > MAX_DEPTH) return '';
  // The common case, a plain text run: no walk, no style reads beyond the pseudo-elements.
  if (node.childElementCount === 0 && !shadowOf(node) && node.localName !== 'slot') {
    return generated(node, '::before') + (node.textContent ?? '') + generated(node, '::after');
  }
  let out = generated(node, '::before');
  const root: ParentNode = shadowOf(node) ?? node;
  const children: Node[] =
    node.localName === 'slot' && (node as HTMLSlotElement).assignedNodes({ flatten: true }).length
      ? (node as HTMLSlotElement).assignedNodes({ flatten: true })
      : Array.from(root.childNodes);
  for (const child of children) {
    if (child.nodeType === Node.TEXT_NODE) {
      out += child.textContent ?? '';
      continue;
    }
    if (child.nodeType !== Node.ELEMENT_NODE) continue;
    const el = child as Element;
    if (el === self || /^(script|style|template|noscript)$/.test(el.localName) || hidden(el)) continue;
    const role = el.getAttribute('role') ?? '';
    const tag = el.localName;
    let part: string;
    const aria = squash(el.getAttribute('aria-label') ?? '');
    if (tag === 'select' || tag === 'textarea' || tag === 'input' || EMBEDDED_CONTROL.test(role)) part = ownValue(el);
    else if (aria) part = aria;
    else if (tag === 'img' || tag === 'area') part = el.getAttribute('alt') ?? '';
    else part = contentOf(el, self, shadowOf, depth + 1) || (el.getAttribute('title') ?? '');
    const block = !INLINE.test(getComputedStyle(el).display);
    out += block ? ` ${part} ` : part;
  }
  return out + generated(node, '::after');
}

/** Characters of Unicode's private use areas: an icon font's glyphs, which say nothing as text. */
const PRIVATE_USE = /[\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}]/gu;
export function withoutIconGlyphs(name: string): string {
  return squash(name.replace(PRIVATE_USE, ''));
}

/** An icon font's class words that style the icon rather than say what it is (Font Awesome's). */
const ICON_MODIFIERS =
  /^(solid|regular|light|thin|duotone|brands|sharp|classic|fw|lg|xs|sm|xl|2xs|2xl|\d+x|spin|pulse|beat|fade|bounce|flip|shake|border|inverse|li|ul|stack(-\dx)?|pull-(left|right|start|end)|rotate-\d+|flip-(horizontal|vertical|both)|width-(auto|fixed))$/;
const ICON_CLASS = /^(?:fa|fas|far|fab|bi|glyphicon|icon|ti|mdi|ion|ri|bx|ui-icon)-(.+)$/;
const MATERIAL = /^material-(icons|symbols)/;
/** Words an icon's name is usually read as, where its file name says something else. */
const ICON_WORDS: Record<string, string> = {
  ellipsis: 'more',
  'ellipsis vertical': 'more',
  'ellipsis h': 'more',
  'ellipsis v': 'more',
  'more vert': 'more',
  'more horiz': 'more',
  'three dots': 'more',
  'three dots vertical': 'more',
  'dots vertical': 'more',
  xmark: 'close',
  times: 'close',
  bars: 'menu',
};

/**
 * A guess at what an icon-only control does, from its icon: a Font Awesome (or alike) class `fa-reply`,
 * a Material icon's ligature `more_vert`, an SVG sprite `<use href="#icon-reply">`. '' when nothing tells.
 */
export function iconGuess(el: Element): string {
  const candidates = [el, ...Array.from(el.querySelectorAll('[class], use')).slice(0, 20)];
  for (const node of candidates) {
    if (node.localName === 'use') {
      const ref = node.getAttribute('href') ?? node.getAttribute('xlink:href') ?? '';
      const id = /#(?:icon[-_]|i[-_])?([\w-]+)$/.exec(ref)?.[1];
      if (id) return iconWords(id);
      continue;
    }
    const classes = Array.from(node.classList);
    if (classes.some((c) => MATERIAL.test(c))) {
      const ligature = squash(node.textContent ?? '');
      if (/^[a-z0-9_]+$/.test(ligature)) return iconWords(ligature);
    }
    for (const c of classes) {
      const name = ICON_CLASS.exec(c)?.[1];
      if (name && !ICON_MODIFIERS.test(name)) return iconWords(name);
    }
  }
  return '';
}

function iconWords(name: string): string {
  const words = name.replace(/[-_]+/g, ' ').trim().toLowerCase();
  return ICON_WORDS[words] ?? words;
}

/** Whether `name` is only a Material icon's ligature inside `el` (its text is the icon's name, not a label). */
export function isLigatureName(el: Element, name: string): boolean {
  const icon = Array.from(el.classList).some((c) => MATERIAL.test(c)) ? el : el.querySelector('[class*="material-"]');
  return !!icon && Array.from(icon.classList).some((c) => MATERIAL.test(c)) && squash(icon.textContent ?? '') === name;
}

/** A swatch's name: its computed background colour as #rrggbb, or '' when it has none. */
export function colourName(el: Element): string {
  const m = /^rgba?\((\d+),\s*(\d+),\s*(\d+)(?:,\s*([\d.]+))?\)$/.exec(getComputedStyle(el).backgroundColor);
  if (!m || (m[4] !== undefined && Number(m[4]) === 0)) return '';
  return '#' + [m[1], m[2], m[3]].map((n) => Number(n).toString(16).padStart(2, '0')).join('');
}
