// The compact form of get_window_state: one text line per element instead of one JSON object, because
// clients hand structuredContent to the model as JSON and the contract's element objects cost ~210 B each.
// Every field of the full form survives, so decodeOutline gives back exactly the full form's elements.
//
// Line: `index role x,y,wxh [=value] [^parent] [!disabled] [*focused] [+web|-web] [~guess|~colour] label`
// - a value of "true"/"false" (a checked state) is written =1 / =0.
// - ~guess: the label is guessed from an icon (name_source icon_guess); ~colour: it is a swatch's colour.
// - role is a short code looked up in `roles`: role names repeat on every line and were the biggest cost
//   after the frame.
// - y is left empty when it is the y of the line above (`86,,48x19`): elements in a row share it.
// - Strings that need it are 'single-quoted' with JSON escapes: a double quote would be escaped again when
//   the outline itself is JSON-encoded, so each one would cost two bytes more.
// - The label is the rest of the line, so it needs no quotes unless it could be read as something else.
import type { SnapshotElement, SnapshotText } from '../contract/driver.js';

/** An element as the full form lists it, without its token (token_prefix + index gives that). */
export type OutlineElement = Omit<SnapshotElement, 'ref'>;

/** What in_web_content is unless a line says otherwise: tabs are all web content, native windows mostly not. */
export function webNormOf(targetKind: unknown): boolean {
  return targetKind === 'tab';
}

export function legendOf(webNorm: boolean): string {
  const web = webNorm ? '-web: not in web content' : '+web: in web content';
  return (
    `index role x,y,wxh [=value] [^parent_index] [!disabled] [*focused] [${webNorm ? '-' : '+'}web] [~guess|~colour] label` +
    ` | role: code in roles; x,y,wxh: frame in screenshot px, empty y = y of the line above; =1/=0: true/false; ${web}; ~guess/~colour: label guessed from an icon/is a colour; label: rest of line;` +
    ` 'quoted' strings use JSON escapes; element_token = token_prefix + index`
  );
}

/** Short role codes, the most frequent roles first, so they get the shortest codes. */
function roleCodes(elements: readonly OutlineElement[]): Map<string, string> {
  const counts = new Map<string, number>();
  for (const e of elements) counts.set(e.role, (counts.get(e.role) ?? 0) + 1);
  const byUse = [...counts.keys()].sort((a, b) => counts.get(b)! - counts.get(a)!); // stable: ties keep first appearance
  const taken = new Set<string>();
  const codes = new Map<string, string>();
  for (const role of byUse) {
    // A prefix of the role's own name keeps the code guessable (b for button).
    const stem = role.toLowerCase().replace(/[^a-z0-9]/g, '') || 'r';
    let code = '';
    for (let n = 1; n <= stem.length && !code; n++) if (!taken.has(stem.slice(0, n))) code = stem.slice(0, n);
    for (let i = 2; !code; i++) if (!taken.has(stem + i)) code = stem + i;
    taken.add(code);
    codes.set(role, code);
  }
  return codes;
}

export function encodeOutline(
  elements: readonly OutlineElement[],
  webNorm: boolean,
): { roles: Record<string, string>; outline: string } {
  const codes = roleCodes(elements);
  let lastY: number | undefined;
  const lines = elements.map((e) => {
    const f = e.frame;
    const parts = [String(e.element_index), codes.get(e.role)!, `${f.x},${f.y === lastY ? '' : f.y},${f.w}x${f.h}`];
    lastY = f.y;
    if (e.value !== undefined) parts.push(`=${valueText(e.value)}`);
    if (e.parent_index !== null) parts.push(`^${e.parent_index}`);
    if (!e.enabled) parts.push('!disabled');
    if (e.focused) parts.push('*focused');
    if (e.in_web_content !== webNorm) parts.push(e.in_web_content ? '+web' : '-web');
    if (e.name_source) parts.push(e.name_source === 'icon_guess' ? '~guess' : '~colour');
    if (e.label !== '') parts.push(BARE_LABEL.test(e.label) ? e.label : quote(e.label));
    return parts.join(' ');
  });
  return { roles: Object.fromEntries([...codes].map(([role, code]) => [code, role])), outline: lines.join('\n') };
}

/**
 * A value as written: checked states ("true"/"false", a quarter of a form's values) as bare 1/0, so a
 * value that really is "1" or "0" is quoted; other values bare when they can be.
 */
function valueText(value: string): string {
  if (value === 'true' || value === 'false') return value === 'true' ? '1' : '0';
  return BARE_VALUE.test(value) && value !== '1' && value !== '0' ? value : quote(value);
}

// A bare value ends at the first space; a bare label runs to the end of the line but must not start like a
// field. Neither may hold a line break or another control character.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this pattern keeps out
const BARE_VALUE = /^(?!')[^\s\x00-\x1f\x7f\u0085\u2028\u2029]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this pattern keeps out
const BARE_LABEL = /^(?![\s'=^!*+~-])[^\x00-\x1f\x7f\u0085\u2028\u2029]*(?<!\s)$/;

function quote(s: string): string {
  // Every `"` in JSON.stringify's output is escaped, so each `\"` match is one escape, never half of `\\`.
  // JSON leaves U+0085/2028/2029 raw, and some readers break lines there.
  return `'${JSON.stringify(s)
    .slice(1, -1)
    .replace(/\\"/g, '"')
    .replace(/'/g, "\\'")
    .replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}'`;
}

/** Reads a quoted string at `at` (which holds the opening quote); returns it and the index after it. */
function unquote(line: string, at: number): [string, number] {
  let json = '"';
  for (let i = at + 1; i < line.length; i++) {
    const c = line[i];
    if (c === "'") return [JSON.parse(json + '"') as string, i + 1];
    if (c === '"') json += '\\"';
    else if (c === '\\') {
      const next = line[++i];
      json += next === "'" ? "'" : `\\${next ?? ''}`;
    } else json += c;
  }
  throw new Error(`unterminated quoted string in outline line: ${line}`);
}

/** The elements an outline describes; throws on a line that does not follow the grammar. */
export function decodeOutline(outline: string, roles: Record<string, string>, webNorm: boolean): OutlineElement[] {
  if (outline === '') return [];
  let lastY: number | undefined;
  return outline.split('\n').map((line) => {
    const head = /^(\d+) (\S+) ([^\s,x]+),([^\s,x]*),([^\s,x]+)x([^\s,x]+)(?= |$)/.exec(line);
    const role = head ? roles[head[2]] : undefined;
    if (!head || role === undefined)
      throw new Error(`outline line does not start with index, role code and frame: ${line}`);
    const y = head[4] === '' ? lastY : Number(head[4]);
    if (y === undefined) throw new Error(`outline line leaves y empty with no line above: ${line}`);
    lastY = y;
    const e: OutlineElement = {
      element_index: Number(head[1]),
      role,
      label: '',
      enabled: true,
      focused: false,
      in_web_content: webNorm,
      frame: { x: Number(head[3]), y, w: Number(head[5]), h: Number(head[6]) },
      parent_index: null,
    };
    let at = head[0].length;
    while (at < line.length) {
      at++; // the space before each field
      const c = line[at];
      const word = /^\S*/.exec(line.slice(at))![0];
      if (c === '=' && line[at + 1] === "'") [e.value, at] = unquote(line, at + 1);
      else if (c === '=') {
        const bare = word.slice(1);
        e.value = bare === '1' ? 'true' : bare === '0' ? 'false' : bare;
        at += word.length;
      } else if (c === '^' && /^\^\d+$/.test(word)) {
        e.parent_index = Number(word.slice(1));
        at += word.length;
      } else if (word === '!disabled') {
        e.enabled = false;
        at += word.length;
      } else if (word === '*focused') {
        e.focused = true;
        at += word.length;
      } else if (word === '+web' || word === '-web') {
        e.in_web_content = word === '+web';
        at += word.length;
      } else if (word === '~guess' || word === '~colour') {
        e.name_source = word === '~guess' ? 'icon_guess' : 'colour';
        at += word.length;
      } else if (c === "'") {
        [e.label, at] = unquote(line, at);
        if (at !== line.length) throw new Error(`text after a quoted label in outline line: ${line}`);
      } else {
        e.label = line.slice(at);
        at = line.length;
      }
    }
    return e;
  });
}

// The default form of get_window_state: an indented outline a model reads without a legend, one line per
// element, e.g. `- textbox 'Email' value='a@b.c' [focused] [t=12]`. Role words, names and states are
// spelled out; frames are left to format "full" (the px form needs the screenshot anyway). Names are
// single-quoted because structuredContent reaches the model as JSON, where every double quote costs an
// escape; a name holding a quote or a control character is written as a JSON string instead.

/** What one `[t=N]` stands for, said once per observation. */
export function tokenHint(snapshotId: string): string {
  return `[t=N] is element_token "${snapshotId}:N"`;
}

/** A field's value is shown whole up to this many characters, its length beside it once it is long. */
export const VALUE_SHOWN_MAX = 4000;
const VALUE_LONG = 200;

/** The page's text shown in one observation, at most (characters): the rest is named by `text_cut`. */
export const TEXT_SHOWN_MAX = 6000;

function quoted(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this pattern keeps out
  return /^[^'\\\x00-\x1f\x7f\u0085\u2028\u2029]*$/.test(s) ? `'${s}'` : JSON.stringify(s);
}

const CHECKABLE =
  /^(checkbox|radio|switch|menuitemcheckbox|menuitemradio|toggle ?button|check ?box|radio ?button|check menu item|radio menu item)$/i;

/** One element's line, without indentation. */
export function outlineLine(e: OutlineElement, webNorm: boolean): string {
  let line = `- ${e.role || 'generic'}`;
  if (e.label !== '') line += ` ${quoted(e.label)}`;
  if (e.name_source === 'icon_guess') line += ' (guessed)'; // a name read from the icon, not given by the page
  const states: string[] = [];
  if (e.value !== undefined && e.value !== '') {
    if (e.value === 'true' && CHECKABLE.test(e.role)) states.push('checked');
    else if (e.value === 'mixed' && CHECKABLE.test(e.role)) states.push('checked=mixed');
    else if (!(e.value === 'false' && CHECKABLE.test(e.role))) {
      // Whole, never cut with "…": a model must not mistake a cut value for the field's text.
      const n = e.value.length;
      line += ` value=${quoted(e.value.slice(0, VALUE_SHOWN_MAX))}`;
      if (n > VALUE_SHOWN_MAX) line += ` (first ${VALUE_SHOWN_MAX} of ${n} chars; format "full" gives it whole)`;
      else if (n > VALUE_LONG) line += ` (${n} chars)`;
    }
  }
  if (!e.enabled) states.push('disabled');
  if (e.focused) states.push('focused');
  if (e.in_web_content !== webNorm) states.push(e.in_web_content ? 'web content' : 'not web content');
  for (const s of states) line += ` [${s}]`;
  return `${line} [t=${e.element_index}]`;
}

/**
 * The page's text an observation shows: the blocks holding `needle` (all without one), in order, up to
 * TEXT_SHOWN_MAX characters; the block that crosses the cap is cut at a word, and `cut` says what was left
 * out and how to read it.
 */
export function shownText(
  text: readonly SnapshotText[],
  needle: string | undefined,
  incomplete?: string,
): { blocks: SnapshotText[]; cut?: string } {
  const matching = needle ? text.filter((t) => t.text.toLowerCase().includes(needle)) : text;
  const blocks: SnapshotText[] = [];
  let used = 0;
  let left = 0;
  let leftBlocks = 0;
  for (const t of matching) {
    const room = TEXT_SHOWN_MAX - used;
    if (t.text.length <= room) {
      blocks.push(t);
      used += t.text.length;
      continue;
    }
    const words = room > 40 ? t.text.slice(0, room).replace(/\s+\S*$/, '') : '';
    if (words) {
      blocks.push({ ...t, text: words });
      used += words.length;
    }
    left += t.text.length - words.length;
    leftBlocks++;
  }
  const parts: string[] = [];
  if (left)
    parts.push(
      `the page's text is shown up to ${TEXT_SHOWN_MAX} characters: ${left} more in ${leftBlocks} blocks${needle ? ' matching the query' : ''} are left out; pass query (a word of the text) to read them here, or page get_text for all of it`,
    );
  if (incomplete) parts.push(incomplete);
  return { blocks, ...(parts.length ? { cut: parts.join('; ') } : {}) };
}

/** One text block's line, without indentation: `- heading: Orders` (the kind, then the words as they are). */
export function textLine(t: SnapshotText): string {
  return `- ${t.kind}: ${t.text}`;
}

/**
 * The outline of the returned elements: a child is indented under its nearest listed ancestor, so a
 * filtered list (query) still nests what it can. `parentOf` gives any element's parent index (the
 * snapshot's whole list, which a filtered list skips parts of). The page's text blocks stand among the
 * elements where they are read, indented under the element they are inside.
 */
export function renderOutline(
  elements: readonly OutlineElement[],
  parentOf: (index: number) => number | null,
  webNorm: boolean,
  text: readonly SnapshotText[] = [],
): string {
  const depthOf = new Map<number, number>();
  const depthUnder = (parent: number | null) => {
    // Parents come before their children in document order, so a listed ancestor already has its depth.
    for (let p = parent, hops = 0; p !== null && hops < 256; p = parentOf(p), hops++) {
      const d = depthOf.get(p);
      if (d !== undefined) return d + 1;
    }
    return 0;
  };
  const lines: string[] = [];
  let block = 0;
  const textBefore = (index: number) => {
    for (; block < text.length && text[block].before_index <= index; block++) {
      const t = text[block];
      lines.push('  '.repeat(Math.min(depthUnder(t.parent_index), 16)) + textLine(t));
    }
  };
  for (const e of elements) {
    textBefore(e.element_index);
    const depth = depthUnder(e.parent_index);
    depthOf.set(e.element_index, depth);
    lines.push('  '.repeat(Math.min(depth, 16)) + outlineLine(e, webNorm));
  }
  textBefore(Number.POSITIVE_INFINITY);
  return lines.join('\n');
}

/** The compact form's text: a line per block, `before_index kind words` (the element it stands before). */
export function encodeText(text: readonly SnapshotText[]): string {
  return text.map((t) => `${t.before_index} ${t.kind} ${t.text}`).join('\n');
}
