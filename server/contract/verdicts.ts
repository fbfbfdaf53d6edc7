// The pure part of both routes' verdicts: what a text field or editor should hold after an insertion (the
// browser route's fields and editors, the native route's AT-SPI texts), what a value set reads back as, and
// what a click's observed events prove. No CDP, no D-Bus here, so the rules are unit-tested in-process
// (test/unit/verdicts.test.ts) with the same code the drivers run.
import type { ActionResult, Effect, Evidence } from './driver.js';

/** A field's text around the insertion point, and the text that should land there. */
export interface Insertion {
  head: string;
  inserted: string;
  tail: string;
}

const codePointCount = (s: string) => [...s].length;

/**
 * The rule both routes share for text inserted at a caret. The field must hold exactly head + inserted +
 * tail: the text landed once, where the caret was. Unchanged is no_effect. A prefix of the text at the
 * caret with nothing else changed is partial (maxlength, a full field). Anything else (the text twice,
 * elsewhere, rewritten by the page) is a mismatch. `landed` is the part of the text that is there;
 * `delivered` counts the code points that reached the field: on a mismatch, all of them when the field
 * holds the text rewritten in place (head and tail kept, between them the same letters and digits in
 * another case, spacing or punctuation: the page upper-cased or formatted what arrived), else none.
 */
export function judgeInsertion(
  before: string,
  observed: string,
  at: Insertion,
): { effect: Exclude<Effect, 'unverifiable'>; landed: string; delivered: number } {
  const { head, inserted, tail } = at;
  if (observed === head + inserted + tail)
    return { effect: 'confirmed', landed: inserted, delivered: codePointCount(inserted) };
  if (observed === before) return { effect: 'no_effect', landed: '', delivered: 0 };
  if (!observed.startsWith(head) || !observed.endsWith(tail) || observed.length < head.length + tail.length)
    return { effect: 'mismatch', landed: '', delivered: 0 };
  const middle = observed.slice(head.length, observed.length - tail.length);
  if (middle.length > 0 && middle.length < inserted.length && inserted.startsWith(middle))
    return { effect: 'partial', landed: middle, delivered: codePointCount(middle) };
  const rewritten = middle.length > 0 && fold(inserted) !== '' && fold(middle) === fold(inserted);
  return { effect: 'mismatch', landed: '', delivered: rewritten ? codePointCount(inserted) : 0 };
}

/** Text as a rewrite keeps it: letters and digits, case-folded (NFKC), without spaces, punctuation or symbols. */
const fold = (s: string) =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s\p{P}\p{S}]/gu, '');

/** What setting a value proves: the value asked for, the value before, the value read back. */
export function judgeValue<T>(wanted: T, before: T, now: T): Exclude<Effect, 'partial' | 'unverifiable'> {
  return now === wanted ? 'confirmed' : now === before ? 'no_effect' : 'mismatch';
}

export interface FieldState {
  /**
   * `value`: an input's or textarea's value. `editor`: a rich editor's text as its DOM shows it (line breaks
   * live in its blocks, counted in `lines`, not in `text`). `code`: a code editor's whole document, line
   * breaks included, read from its own model (or, where the page exposes none, from the lines it shows).
   */
  kind: 'value' | 'editor' | 'code';
  text: string;
  start: number;
  end: number;
  maxLength: number;
  focused: boolean;
  describe: string;
  lines: number;
  /** Set when the field's text cannot be read (an EditContext editor whose rendered text was not found): why. */
  unreadable?: string;
  /** Set when `text` is only part of the field's text (an editor that renders the lines in view): why. */
  partial?: string;
  /** Set when the field's text is a secret (a password, a one-time code, a card number): why. Masked in results. */
  secret?: string;
  /** Where the text was read, when it is not the field's own value or DOM (a code editor's model): said in evidence. */
  source?: string;
  /**
   * Set on a read-back when the editor may still change the text on its own (a format on paste that had not
   * come when the read-back's bound ran out): why. Text read as typed then proves nothing: unverifiable.
   */
  pending?: string;
}
export interface WatchedEvent {
  type: string;
  trusted: boolean;
  onTarget: boolean;
  prevented: boolean;
  hit: string;
}
export interface FieldReadBack {
  first: FieldState | null;
  settled: FieldState | null;
  events: WatchedEvent[];
}
export interface TextVerdict {
  effect: Effect;
  delivered: number;
  evidence: Evidence[];
}

const NBSP = /\u00a0/g;

/** Line breaks before the insertion: a blank editor (one empty block, innerText "\n") has none. */
function linesBefore(state: FieldState): number {
  return state.kind === 'editor' && state.text === '' ? 0 : state.lines;
}

/** Compares what the field holds with what inserting `text` at the caret should have produced. */
export function judgeText(before: FieldState, read: FieldReadBack, text: string): TextVerdict {
  const after = read.settled ?? read.first;
  if (!after)
    return {
      effect: 'unverifiable',
      delivered: 0,
      evidence: [{ kind: 'value', detail: 'the field could not be read back' }],
    };
  const unreadable = before.unreadable ?? after.unreadable;
  if (unreadable)
    return {
      effect: 'unverifiable',
      delivered: 0,
      evidence: [{ kind: before.kind === 'value' ? 'field_value' : 'editor_text', detail: unreadable }],
    };
  const verdict = judgeWholeText(before, after, read, text);
  // The text as typed, while the editor may still rewrite it: not yet what it holds.
  if (after.pending && verdict.effect === 'confirmed') {
    verdict.evidence.push({ kind: 'pending_edit', detail: after.pending });
    return { ...verdict, effect: 'unverifiable', delivered: 0 };
  }
  // Part of the text proves neither that the text landed once nor that nothing changed: what it shows
  // stays in the evidence, the verdict is unverifiable.
  const partial = before.partial ?? after.partial;
  if (!partial) return verdict;
  verdict.evidence.push({ kind: 'partial_read', detail: partial });
  return { ...verdict, effect: 'unverifiable', delivered: 0 };
}

function judgeWholeText(before: FieldState, after: FieldState, read: FieldReadBack, text: string): TextVerdict {
  // A code editor's model is compared as it is, whole: every space and line break counts.
  const norm = (s: string) => (before.kind === 'editor' ? s.replace(NBSP, ' ') : s);
  const inserted = before.kind === 'editor' ? text.replace(/\n/g, '') : text;
  // A field without a selection API (email, number) cannot say where its caret was: the end is assumed,
  // and any single insertion of the whole text elsewhere is the caret being there (see below).
  const start = before.start >= 0 ? Math.min(before.start, before.text.length) : before.text.length;
  const end = before.end >= 0 ? Math.min(Math.max(before.end, start), before.text.length) : start;
  const head = norm(before.text.slice(0, start)),
    tail = norm(before.text.slice(end));
  const expected = head + inserted + tail;
  const observed = norm(after.text);
  // The usual read (after the page settled, from the field itself) goes without saying: a detail only for another.
  const evidenceFor = (state: FieldState, label: string): Evidence => ({
    kind: before.kind === 'value' ? 'field_value' : 'editor_text',
    ...(after.source
      ? { detail: label ? `${label}, from ${after.source}` : `from ${after.source}` }
      : label
        ? { detail: label }
        : {}),
    expected: excerpt(expected, head.length, inserted.length),
    observed: excerpt(norm(state.text), head.length, inserted.length),
  });
  const evidence = [evidenceFor(after, read.settled ? '' : 'read back at once')];
  if (read.first && read.settled && norm(read.first.text) !== observed) {
    evidence.unshift(evidenceFor(read.first, 'read back at once, before the page rewrote it'));
  }
  const newlines = (text.match(/\n+/g) ?? []).length;
  // Only asked-for breaks are checked: text without a newline cannot have lost one (a blank editor's
  // empty block going away when the first character lands is not a lost break).
  const breaksLanded = before.kind !== 'editor' || newlines === 0 || after.lines - linesBefore(before) >= newlines;
  const landed = judgeInsertion(norm(before.text), observed, { head, inserted, tail });
  if (landed.effect === 'confirmed' && breaksLanded)
    return { effect: 'confirmed', delivered: codePointCount(text), evidence };
  if (landed.effect === 'confirmed') {
    evidence.push({
      kind: 'line_breaks',
      expected: newlines,
      observed: after.lines - linesBefore(before),
      detail: 'the text landed but its line breaks did not',
    });
    return { effect: 'mismatch', delivered: codePointCount(text) - newlines, evidence };
  }
  if (landed.effect === 'no_effect') return { effect: 'no_effect', delivered: 0, evidence };
  if (before.start < 0) {
    // The caret could not be read (a field without a selection API, an editor whose caret lives in its own
    // model): the end was assumed above; the whole text landing once at any other offset is the caret
    // having been there. An editor's line breaks are still checked.
    const base = norm(before.text);
    for (let k = base.length - 1; k >= 0; k--) {
      if (observed !== base.slice(0, k) + inserted + base.slice(k)) continue;
      if (!breaksLanded) break;
      evidence.push({
        kind: 'caret',
        observed: k,
        detail: `the field's caret could not be read; the text landed whole at offset ${k}, where its caret was`,
      });
      return { effect: 'confirmed', delivered: codePointCount(text), evidence };
    }
  }
  if (before.kind === 'code') {
    // What the editor changed, named (extra indentation, a closing bracket it added), so the model can say
    // what to fix; the caret's offset is the one read from the model before the text went in.
    const difference = codeDifference(expected, observed);
    if (difference)
      evidence.push({
        kind: 'code_difference',
        detail: `the editor's document differs from the text as typed: ${difference}`,
      });
  }
  if (landed.effect === 'partial') {
    if (after.maxLength >= 0) evidence.push({ kind: 'max_length', observed: after.maxLength });
    return { effect: 'partial', delivered: landed.delivered, evidence };
  }
  // Read at once, the field held the text as asked: all of it arrived, and the page rewrote it after.
  const arrived =
    read.first && read.settled && judgeInsertion(norm(before.text), norm(read.first.text), { head, inserted, tail });
  if (arrived && arrived.effect === 'confirmed')
    return { effect: 'mismatch', delivered: codePointCount(text), evidence };
  return { effect: 'mismatch', delivered: landed.delivered, evidence };
}

/** Strings without surrogates (nearly all) are cut by UTF-16 units, without splitting into an array. */
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The native route's text verdict: a field's text `before` and `after` inserting `text` at `position`
 * (code points; UTF-16 units when `utf16`, as Qt counts).
 */
export function judgeTextAt(
  before: string,
  after: string,
  position: number,
  text: string,
  utf16 = false,
): { effect: Effect; delivered: number; expected: string } {
  const at = stringIndex(before, position, utf16);
  const head = before.slice(0, at),
    tail = before.slice(at);
  const { effect, delivered } = judgeInsertion(before, after, { head, inserted: text, tail });
  return { effect, delivered, expected: head + text + tail };
}

/** The string index (UTF-16 units) of `position` in `text`, counted in code points unless `utf16`. */
export function stringIndex(text: string, position: number, utf16 = false): number {
  return utf16 || !SURROGATE.test(text) ? position : [...text].slice(0, position).join('').length;
}

/**
 * judgeTextAt on a read-back checked against the app's character count: text that reads back exactly but
 * is not all the field holds is a mismatch, and a read that cannot be whole proves no "nothing changed".
 */
export function judgeTextRead(
  before: string,
  read: { text: string; whole: boolean },
  position: number,
  text: string,
  utf16 = false,
): ReturnType<typeof judgeTextAt> {
  const verdict = judgeTextAt(before, read.text, position, text, utf16);
  if (read.whole) return verdict;
  if (verdict.effect === 'confirmed') return { ...verdict, effect: 'mismatch', delivered: 0 };
  if (verdict.effect === 'no_effect') return { ...verdict, effect: 'unverifiable' };
  return verdict;
}

/** Brackets and quotes an editor closes by itself (closeBrackets, auto-pairing). */
const CLOSERS = /^[)\]}>'"`]+$/;
/** At most this many lines on each side are aligned line by line (a longest common subsequence). */
const DIFF_LINES = 400;
/** At most this many differences are named. */
const DIFF_NOTES = 3;

const indentOf = (line: string) => line.length - line.trimStart().length;
/** A line's indentation in words: "6 spaces", "1 tab", "1 tab and 2 spaces". */
function indentWords(line: string): string {
  const lead = line.slice(0, indentOf(line));
  const tabs = (lead.match(/\t/g) ?? []).length,
    others = lead.length - tabs;
  const words = (n: number, one: string) => `${n} ${n === 1 ? one : `${one}s`}`;
  if (!tabs) return words(others, 'space');
  return others ? `${words(tabs, 'tab')} and ${words(others, 'other whitespace character')}` : words(tabs, 'tab');
}
const quote = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 57)}...` : s);

/**
 * What an editor's automatic edits made of the text, named line by line: `expected` is the document as the
 * typed text should have left it, `observed` the document the editor holds. Lines are aligned on their text
 * without the indentation; an aligned line indented otherwise is "indented by N spaces where M were typed",
 * a line the editor added that holds only closing brackets or quotes is "an extra closing bracket", and the
 * same on a line (a doubled closer) is named too. Null when they are equal (or too long to align).
 */
export function codeDifference(expected: string, observed: string): string | null {
  if (expected === observed) return null;
  const want = expected.split('\n'),
    got = observed.split('\n');
  // The lines both share at the top and at the bottom are not looked at again.
  const { head: top, tail: bottom } = sharedEnds(want, got);
  const a = want.slice(top, want.length - bottom),
    b = got.slice(top, got.length - bottom);
  if (a.length > DIFF_LINES || b.length > DIFF_LINES) return `from line ${top + 1} on`;
  // Longest common subsequence of the lines' text without their indentation.
  const key = (l: string) => l.trim();
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = key(a[i]) === key(b[j]) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const notes: string[] = [];
  let i = 0,
    j = 0;
  while ((i < a.length || j < b.length) && notes.length <= DIFF_NOTES) {
    const lineNo = top + j + 1;
    if (i < a.length && j < b.length && key(a[i]) === key(b[j])) {
      // The same line: only its indentation or inner spacing can differ.
      if (a[i] !== b[j]) {
        const typed = indentOf(a[i]),
          held = indentOf(b[j]);
        notes.push(
          held !== typed
            ? `${held > typed ? 'extra' : 'less'} indentation: line ${lineNo} is indented by ${indentWords(b[j])} where ${indentWords(a[i])} ${typed === 1 ? 'was' : 'were'} typed`
            : `line ${lineNo} differs in its spacing: ${quote(b[j])} where ${quote(a[i])} was typed`,
        );
      }
      i++;
      j++;
    } else if (i < a.length && j < b.length && lcs[i + 1][j + 1] === lcs[i][j]) {
      // The editor's line stands where the typed one was: what it added or dropped on it.
      notes.push(lineChange(lineNo, a[i], b[j]));
      i++;
      j++;
    } else if (j < b.length && (i >= a.length || lcs[i][j + 1] >= lcs[i + 1][j])) {
      const added = key(b[j]);
      notes.push(
        CLOSERS.test(added)
          ? `an extra closing ${closerWord(added)}: line ${lineNo} holds ${quote(b[j])}, which was not typed`
          : added === ''
            ? `an extra empty line (line ${lineNo})`
            : `an extra line ${lineNo}: ${quote(b[j])}`,
      );
      j++;
    } else {
      notes.push(`the typed line ${quote(a[i])} is missing (before line ${lineNo})`);
      i++;
    }
  }
  if (!notes.length) return null;
  const shown = notes.slice(0, DIFF_NOTES);
  return shown.join('; ') + (notes.length > DIFF_NOTES ? '; and more' : '');
}

/** How many items `a` and `b` share at their start and then, of the rest, at their end (lines or characters). */
function sharedEnds<T>(a: ArrayLike<T>, b: ArrayLike<T>): { head: number; tail: number } {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return { head, tail };
}

function closerWord(s: string): string {
  const quotes = /^['"`]+$/.test(s);
  const plural = [...s].length > 1;
  return quotes ? (plural ? 'quotes' : 'quote') : plural ? 'brackets' : 'bracket';
}

/** One typed line against the line the editor holds in its place: what it added or dropped, named. */
function lineChange(lineNo: number, typed: string, held: string): string {
  const { head, tail } = sharedEnds(typed, held);
  const dropped = typed.slice(head, typed.length - tail),
    added = held.slice(head, held.length - tail);
  if (!dropped && CLOSERS.test(added))
    return `an extra closing ${closerWord(added)} on line ${lineNo}: ${quote(held)} where ${quote(typed)} was typed`;
  if (!dropped && !added.trim())
    return `extra spacing on line ${lineNo}: ${quote(held)} where ${quote(typed)} was typed`;
  return `line ${lineNo} is ${quote(held)} where ${quote(typed)} was typed`;
}

/** A bounded window of a long text around the insertion, so evidence stays small for 2,000 characters. */
export function excerpt(text: string, at: number, length: number, context = 40): string {
  if (text.length <= 2 * context + 120) return text;
  const from = Math.max(0, at - context),
    to = Math.min(text.length, at + length + context);
  const middle =
    to - from > 2 * context + 120
      ? text.slice(from, from + context + 60) +
        `…(${to - from - 2 * context - 120} chars)…` +
        text.slice(to - context - 60, to)
      : text.slice(from, to);
  return (from > 0 ? '…' : '') + middle + (to < text.length ? '…' : '');
}

/**
 * The characters of `text` a `<input type=number>` would drop (Chrome keeps only digits, signs, a decimal
 * separator and an exponent), or null when it takes all of them.
 */
export function numberFieldRejects(text: string): string | null {
  const bad = [...new Set(text.replace(/[0-9eE+\-.,]/g, ''))];
  return bad.length ? bad.join('') : null;
}

export interface PointerVerdict {
  effect: Effect;
  observed?: string;
  escalation?: ActionResult['escalation'];
}

/**
 * What a click's observed events prove. The decisive event (click, dblclick, contextmenu) on the target
 * is the proof; on another element it is a mismatch. When the press itself reached the target as a
 * trusted event and no decisive event followed anywhere, the page saw the press and did nothing with it:
 * no_effect. With no event at all there is nothing to reason from: unverifiable.
 */
export function judgePointer(events: WatchedEvent[], decisive: string): PointerVerdict {
  if (events.some((e) => e.type === decisive && e.trusted && e.onTarget)) return { effect: 'confirmed' };
  const elsewhere = events.find((e) => e.type === decisive && !e.onTarget);
  if (elsewhere) return { effect: 'mismatch', observed: `the ${decisive} landed on ${elsewhere.hit}` };
  const pressed = events.some((e) => e.type === 'mousedown' && e.trusted && e.onTarget);
  if (pressed && !events.some((e) => e.type === decisive)) {
    const released = events.some((e) => e.type === 'mouseup' && e.trusted);
    return {
      effect: 'no_effect',
      observed: released
        ? `the press and release reached the target but no ${decisive} followed (the element changed or moved under the pointer between them)`
        : `mousedown only: the press reached the target, no mouseup or ${decisive} was observed`,
    };
  }
  return {
    effect: 'unverifiable',
    escalation: { target: 'verify', reason: `no ${decisive} was observed; call get_window_state to see the page` },
  };
}

/** Whitespace as a widget shows it: no-break spaces are spaces, runs of spaces and line breaks one space. */
export function normalizeShown(s: string): string {
  return s.replace(NBSP, ' ').replace(/\s+/g, ' ').trim();
}

function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) n++;
  return n;
}

export interface ShownVerdict {
  effect: Effect;
  /** code points of the text that shows */
  delivered: number;
  evidence: Evidence[];
  escalation?: ActionResult['escalation'];
}

/**
 * What typing into a keyboard sink (a hidden input a widget collects keys with: a web terminal, a game, a
 * custom editor) proves, from the widget's visible text read before and after. The sink's own value is
 * never the witness: the widget may ignore it. Each line of the text must show once more than before
 * (whitespace as rendered); an unchanged or unreadable widget proves nothing either way (it may draw on a
 * canvas, or echo later), so that is unverifiable, never no_effect. `area` names what was read.
 */
export function judgeShownText(before: string | null, after: string | null, text: string, area: string): ShownVerdict {
  const screenshot: ActionResult['escalation'] = {
    target: 'verify',
    reason: 'the keys were sent; take a screenshot (get_window_state include_screenshot) to see what the widget shows',
  };
  if (before === null || after === null)
    return {
      effect: 'unverifiable',
      delivered: 0,
      evidence: [{ kind: 'shown_text', detail: 'no visible text around the keyboard sink to read back' }],
      escalation: screenshot,
    };
  const pieces = text.split('\n').map(normalizeShown).filter(Boolean);
  const was = normalizeShown(before),
    now = normalizeShown(after);
  const shown = pieces.filter((p) => occurrences(now, p) > occurrences(was, p));
  const around = (p: string) => {
    const at = now.lastIndexOf(p);
    return at >= 0 ? excerpt(now, at, p.length) : excerpt(now, now.length, 0);
  };
  const evidence: Evidence[] = [
    {
      kind: 'shown_text',
      expected: pieces.join(' / '),
      observed: pieces.length ? around(pieces[pieces.length - 1]) : excerpt(now, now.length, 0),
      detail: `the visible text of ${area}, read before and after the keys (the keyboard sink's own value is not proof)`,
    },
  ];
  if (pieces.length && shown.length === pieces.length)
    return { effect: 'confirmed', delivered: codePointCount(text), evidence };
  if (shown.length) {
    evidence[0].detail += `; shown: ${shown.join(' / ')}`;
    return { effect: 'partial', delivered: codePointCount(shown.join('')), evidence };
  }
  evidence[0].detail += pieces.length
    ? was === now
      ? '; it did not change'
      : '; it changed, but the typed text is not in it'
    : '; the text has nothing visible to look for';
  return { effect: 'unverifiable', delivered: 0, evidence, escalation: screenshot };
}
