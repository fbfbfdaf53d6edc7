// verify_state's pure half (issue 45): a predicate's shape and its checks (each bad one refused naming its
// field), what one fresh read of a target says of each predicate (holds, and what was observed), and how
// consecutive reads add up to satisfied, unsatisfied or unknown. No I/O here: the tool (tools/verify.ts)
// takes the reads through the routes' own observation paths and hands them in as an Observation.
import { Refusal } from './refusal.js';

export const MAX_PREDICATES = 8;
export const MAX_TIMEOUT_MS = 10_000;
export const DEFAULT_TIMEOUT_MS = 2_000;
export const DEFAULT_STABLE_SAMPLES = 2;
export const MAX_STABLE_SAMPLES = 5;
/** Candidates an ambiguous selector lists, at most (the rest counted). */
const MAX_CANDIDATES = 5;
/** What an observation quotes of a text or value, at most. */
const QUOTE_MAX = 120;

export type UnknownReason =
  | 'ambiguous_selector'
  | 'target_missing'
  | 'observation_unavailable'
  | 'stability_unproven'
  | 'unsupported_predicate';

export interface ElementSelector {
  role?: string;
  name?: string;
  name_contains?: string;
  element_token?: string;
}
export type ElementCheck =
  | { exists: boolean }
  | { absent: boolean }
  | { value_equals: string }
  | { value_contains: string }
  | { checked: boolean }
  | { selected: boolean }
  | { enabled: boolean }
  | { focused: boolean }
  | { visible: boolean }
  | { count: number };
export type ElementPredicate = { element: ElementSelector } & ElementCheck;
export type PagePredicate =
  | { text_present: string }
  | { text_absent: string }
  | { url_equals: string }
  | { url_contains: string }
  | { url_matches: string }
  | { title_equals: string }
  | { title_contains: string }
  | { no_console_errors_since: number }
  | { request: { url_contains: string; status_min?: number; status_max?: number }; since?: number };
export interface WindowSelector {
  title?: string;
  title_contains?: string;
}
export type WindowPredicate = { window: WindowSelector } & (
  | { exists: boolean }
  | { focused: boolean }
  | { frame: { x: number; y: number; width: number; height: number; tolerance?: number } }
);
export type Predicate = ElementPredicate | PagePredicate | WindowPredicate;
export type Family = 'element' | 'page' | 'window';

const ELEMENT_CHECKS = {
  exists: 'boolean',
  absent: 'boolean',
  value_equals: 'string',
  value_contains: 'string',
  checked: 'boolean',
  selected: 'boolean',
  enabled: 'boolean',
  focused: 'boolean',
  visible: 'boolean',
  count: 'count',
} as const;
const PAGE_CHECKS = {
  text_present: 'string',
  text_absent: 'string',
  url_equals: 'string',
  url_contains: 'string',
  url_matches: 'pattern',
  title_equals: 'string',
  title_contains: 'string',
  no_console_errors_since: 'mark',
  request: 'request',
} as const;
const WINDOW_CHECKS = { exists: 'boolean', focused: 'boolean', frame: 'frame' } as const;

const bad = (field: string, why: string) => new Refusal('invalid_arguments', `${field}: ${why}`, { field });
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const isMark = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

function checkValue(field: string, kind: string, v: unknown): void {
  if (kind === 'boolean' && typeof v !== 'boolean') throw bad(field, 'expected true or false');
  if ((kind === 'string' || kind === 'pattern') && (typeof v !== 'string' || v === '' || v.length > 500))
    throw bad(field, 'expected a non-empty string of at most 500 characters');
  if (kind === 'pattern') {
    try {
      new RegExp(v as string);
    } catch (e) {
      throw bad(field, `not a regular expression (${(e as Error).message})`);
    }
  }
  if (kind === 'count' && !(Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 100_000))
    throw bad(field, 'expected a whole number from 0');
  if (kind === 'mark' && !isMark(v)) throw bad(field, 'expected a mark: the `mark` number of an earlier action result');
  if (kind === 'request') {
    if (!isObject(v)) throw bad(field, 'expected {url_contains, status_min?, status_max?}');
    only(field, v, ['url_contains', 'status_min', 'status_max']);
    checkValue(`${field}.url_contains`, 'string', v.url_contains);
    for (const k of ['status_min', 'status_max'])
      if (v[k] !== undefined && !(Number.isInteger(v[k]) && (v[k] as number) >= 0 && (v[k] as number) <= 999))
        throw bad(`${field}.${k}`, 'expected an HTTP status (0 to 999)');
  }
  if (kind === 'frame') {
    if (!isObject(v)) throw bad(field, 'expected {x, y, width, height, tolerance?}');
    only(field, v, ['x', 'y', 'width', 'height', 'tolerance']);
    for (const k of ['x', 'y', 'width', 'height'])
      if (!Number.isFinite(v[k])) throw bad(`${field}.${k}`, 'expected a number (screen pixels)');
    if (v.tolerance !== undefined && !(Number.isFinite(v.tolerance) && (v.tolerance as number) >= 0))
      throw bad(`${field}.tolerance`, 'expected a number of pixels from 0');
  }
}

function only(field: string, v: Record<string, unknown>, keys: readonly string[]): void {
  for (const k of Object.keys(v))
    if (!keys.includes(k)) throw bad(`${field}.${k}`, `unknown key; expected ${keys.join(', ')}`);
}

/** The one check a predicate names among `checks`, refused (naming the field) when there is none or more. */
function oneCheck(field: string, p: Record<string, unknown>, checks: Record<string, string>, extra: string[]): string {
  only(field, p, [...Object.keys(checks), ...extra]);
  const named = Object.keys(checks).filter((k) => p[k] !== undefined);
  if (named.length !== 1)
    throw bad(
      field,
      `name exactly one check (${Object.keys(checks).join(', ')}); got ${named.length ? named.join(' and ') : 'none'}`,
    );
  checkValue(`${field}.${named[0]}`, checks[named[0]], p[named[0]]);
  return named[0];
}

/** A predicate's family and the check it names: element ({element}), window ({window}) or page (the rest). */
export function familyOf(p: Predicate): { family: Family; check: string } {
  const o = p as Record<string, unknown>;
  const has = (k: string) => o[k] !== undefined;
  if (has('element')) return { family: 'element', check: Object.keys(ELEMENT_CHECKS).find(has)! };
  if (has('window')) return { family: 'window', check: Object.keys(WINDOW_CHECKS).find(has)! };
  return { family: 'page', check: Object.keys(PAGE_CHECKS).find(has)! };
}

/** Checks the `expect` list (1 to 8 predicates); each bad one is refused naming its field (`expect.2.element.role`). */
export function parsePredicates(value: unknown, field = 'expect'): Predicate[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_PREDICATES)
    throw bad(field, `expected a list of 1 to ${MAX_PREDICATES} predicates`);
  return value.map((p, i) => {
    const f = `${field}.${i}`;
    if (!isObject(p)) throw bad(f, 'expected a predicate object');
    if (p.element !== undefined) {
      if (!isObject(p.element)) throw bad(`${f}.element`, 'expected {role?, name?, name_contains?, element_token?}');
      only(`${f}.element`, p.element, ['role', 'name', 'name_contains', 'element_token']);
      if (Object.keys(p.element).length === 0)
        throw bad(`${f}.element`, 'name the element by role, name, name_contains or element_token');
      for (const [k, v] of Object.entries(p.element))
        if (typeof v !== 'string' || v.length > 500) throw bad(`${f}.element.${k}`, 'expected a string');
      oneCheck(f, p, ELEMENT_CHECKS, ['element']);
    } else if (p.window !== undefined) {
      if (!isObject(p.window)) throw bad(`${f}.window`, 'expected {title?, title_contains?}');
      only(`${f}.window`, p.window, ['title', 'title_contains']);
      for (const [k, v] of Object.entries(p.window))
        if (typeof v !== 'string') throw bad(`${f}.window.${k}`, 'expected a string');
      oneCheck(f, p, WINDOW_CHECKS, ['window']);
    } else {
      const check = oneCheck(f, p, PAGE_CHECKS, ['since']);
      if (p.since !== undefined) {
        if (check !== 'request') throw bad(`${f}.since`, 'only a request predicate takes since');
        if (!isMark(p.since)) throw bad(`${f}.since`, 'expected a mark: the `mark` number of an earlier action result');
      }
    }
    return p as Predicate;
  });
}

/** An element as one read saw it. */
export interface ObservedElement {
  role: string;
  label: string;
  value?: string;
  /** A password, one-time code or card field: its value is compared but never quoted. */
  secret?: boolean;
  enabled: boolean;
  focused: boolean;
  /** Absent where the route's read says nothing of selection. */
  selected?: boolean;
  /** Whether it has an area on the screen (a listed element of a tab is one the page shows). */
  visible: boolean;
  /** The element tokens (from the target's latest observation) that name this element. */
  tokens?: readonly string[];
}

/** A window as the window manager lists it (screen pixels). */
export interface ObservedWindow {
  title: string;
  /** Absent where the window system does not say which window has the focus (Wayland). */
  focused?: boolean;
  frame: { x: number; y: number; width: number; height: number };
  /** The call's target window. */
  target?: boolean;
}

/** One fresh read of a target: what each family's predicates are checked against. Absent parts: not read on this route. */
export interface Observation {
  elements?: ObservedElement[];
  /** Why `elements` may not be all the target shows: absence and counts are then unknown. */
  elementsIncomplete?: string;
  /** The page's text (iframes and shadow roots included), whitespace collapsed. */
  text?: string;
  textIncomplete?: string;
  url?: string;
  title?: string;
  /** The tab's console errors and exceptions and its requests, each with the sequence number marks count by. */
  activity?: {
    recording: boolean;
    /** The earliest sequence number still kept: a mark before it may have lost entries. */
    firstKept: number;
    errors: Array<{ seq: number; text: string }>;
    requests: Array<{ seq: number; url: string; status?: number; failed?: string; done: boolean }>;
  };
  windows?: ObservedWindow[];
}

export interface PredicateOutcome {
  index: number;
  /** null: this read could not tell (`reason` says why). */
  holds: boolean | null;
  observed: unknown;
  reason?: UnknownReason;
  candidates?: unknown[];
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();
const quote = (s: string) => (s.length > QUOTE_MAX ? `${s.slice(0, QUOTE_MAX)}… (${s.length} chars)` : s);
/** Role words compared loosely: "push button", "push_button" and "Push Button" are one role. */
const roleKey = (r: string) => r.toLowerCase().replace(/[\s_-]+/g, '');
const ROLE_ALIASES: Record<string, string> = {
  pushbutton: 'button',
  checkbox: 'checkbox',
  text: 'textbox',
  entry: 'textbox',
};
const sameRole = (a: string, b: string) => {
  const ka = roleKey(a);
  const kb = roleKey(b);
  return ka === kb || (ROLE_ALIASES[ka] ?? ka) === (ROLE_ALIASES[kb] ?? kb);
};

const shownValue = (e: ObservedElement) =>
  e.secret ? '•'.repeat(Math.min((e.value ?? '').length, QUOTE_MAX)) : quote(e.value ?? '');

function describe(e: ObservedElement): Record<string, unknown> {
  return {
    role: e.role,
    name: quote(e.label),
    ...(e.value !== undefined && e.value !== '' ? { value: shownValue(e) } : {}),
    ...(e.tokens?.length ? { element_token: e.tokens[0] } : {}),
  };
}

function matchElements(elements: readonly ObservedElement[], s: ElementSelector): ObservedElement[] {
  const needle = s.name_contains?.toLowerCase();
  return elements.filter(
    (e) =>
      (s.role === undefined || sameRole(e.role, s.role)) &&
      (s.name === undefined || collapse(e.label) === collapse(s.name)) &&
      (needle === undefined || e.label.toLowerCase().includes(needle)) &&
      (s.element_token === undefined || !!e.tokens?.includes(s.element_token)),
  );
}

const unknown = (
  index: number,
  reason: UnknownReason,
  observed: unknown,
  candidates?: unknown[],
): PredicateOutcome => ({ index, holds: null, observed, reason, ...(candidates ? { candidates } : {}) });

/** A checkable element's checked state from its value ("true", "false", "mixed"), or null when it has none. */
function checkedOf(e: ObservedElement): boolean | 'mixed' | null {
  if (e.value === 'true') return true;
  if (e.value === 'false') return false;
  if (e.value === 'mixed') return 'mixed';
  return null;
}

function evaluateElement(index: number, p: ElementPredicate, check: string, o: Observation): PredicateOutcome {
  if (!o.elements) return unknown(index, 'unsupported_predicate', 'this route reads no elements of the target');
  const matches = matchElements(o.elements, p.element);
  const v = (p as Record<string, unknown>)[check];
  const incomplete = o.elementsIncomplete;
  const shown = matches.slice(0, MAX_CANDIDATES).map(describe);
  // Absence and counts need every element: a read that could not list them all cannot say.
  if (check === 'exists' || check === 'absent' || check === 'count') {
    const present = matches.length > 0;
    const want = check === 'count' ? (v as number) : (check === 'exists') === (v as boolean) ? 'present' : 'absent';
    const holds = check === 'count' ? matches.length === want : (want === 'present') === present;
    const observed = { count: matches.length, ...(shown.length ? { matches: shown } : {}) };
    if (incomplete && (check === 'count' || want === 'absent' || !present))
      return unknown(index, 'observation_unavailable', { ...observed, incomplete });
    return { index, holds, observed };
  }
  if (check === 'visible' && v === false && matches.length === 0 && !incomplete)
    return { index, holds: true, observed: { count: 0 } };
  if (matches.length === 0)
    return incomplete
      ? unknown(index, 'observation_unavailable', { count: 0, incomplete })
      : { index, holds: false, observed: { count: 0 } };
  if (matches.length > 1) {
    const candidates = [
      ...shown,
      ...(matches.length > MAX_CANDIDATES ? [{ more: matches.length - MAX_CANDIDATES }] : []),
    ];
    return unknown(index, 'ambiguous_selector', { count: matches.length }, candidates);
  }
  const e = matches[0];
  const base = describe(e);
  switch (check) {
    case 'value_equals':
      return { index, holds: (e.value ?? '') === v, observed: { ...base, value: shownValue(e) } };
    case 'value_contains':
      return {
        index,
        holds: (e.value ?? '').includes(v as string),
        observed: { ...base, value: shownValue(e) },
      };
    case 'checked': {
      const c = checkedOf(e);
      return { index, holds: c === v, observed: { ...base, checked: c } };
    }
    case 'selected':
      if (e.selected === undefined)
        return unknown(index, 'unsupported_predicate', { ...base, selected: 'this route does not read selection' });
      return { index, holds: e.selected === v, observed: { ...base, selected: e.selected } };
    case 'enabled':
      return { index, holds: e.enabled === v, observed: { ...base, enabled: e.enabled } };
    case 'focused':
      return { index, holds: e.focused === v, observed: { ...base, focused: e.focused } };
    default:
      return { index, holds: e.visible === v, observed: { ...base, visible: e.visible } };
  }
}

/** Where `needle` stands in `text`, with a little around it. */
function around(text: string, at: number, length: number): string {
  return quote(text.slice(Math.max(0, at - 30), at + length + 30));
}

function evaluatePage(index: number, p: PagePredicate, check: string, o: Observation): PredicateOutcome {
  const v = (p as Record<string, unknown>)[check];
  switch (check) {
    case 'text_present':
    case 'text_absent': {
      if (o.text === undefined) return unknown(index, 'unsupported_predicate', "this route reads no page's text");
      const needle = collapse(v as string);
      const at = o.text.indexOf(needle);
      const found = at >= 0;
      const observed = found
        ? { found: true, at: around(o.text, at, needle.length) }
        : { found: false, chars: o.text.length };
      // Not found in a text known to be cut: the rest of the page may hold it.
      if (!found && o.textIncomplete)
        return unknown(index, 'observation_unavailable', { ...observed, incomplete: o.textIncomplete });
      return { index, holds: check === 'text_present' ? found : !found, observed };
    }
    case 'url_equals':
    case 'url_contains':
    case 'url_matches': {
      if (o.url === undefined) return unknown(index, 'unsupported_predicate', 'this route has no URL');
      const holds =
        check === 'url_equals'
          ? o.url === v
          : check === 'url_contains'
            ? o.url.includes(v as string)
            : new RegExp(v as string).test(o.url);
      return { index, holds, observed: { url: quote(o.url) } };
    }
    case 'title_equals':
    case 'title_contains': {
      if (o.title === undefined) return unknown(index, 'unsupported_predicate', 'this route has no page title');
      const holds = check === 'title_equals' ? o.title === v : o.title.includes(v as string);
      return { index, holds, observed: { title: quote(o.title) } };
    }
    case 'no_console_errors_since': {
      const a = o.activity;
      if (!a) return unknown(index, 'unsupported_predicate', 'this route keeps no console');
      const since = v as number;
      if (!a.recording || since < a.firstKept - 1)
        return unknown(index, 'observation_unavailable', {
          detail: !a.recording
            ? 'the tab is not recorded yet'
            : 'entries after that mark were dropped (bounded buffer)',
        });
      const errors = a.errors.filter((e) => e.seq > since);
      return {
        index,
        holds: errors.length === 0,
        observed: { errors: errors.length, ...(errors.length ? { first: quote(errors[0].text) } : {}) },
      };
    }
    default: {
      const a = o.activity;
      if (!a) return unknown(index, 'unsupported_predicate', 'this route keeps no requests');
      const r = (p as { request: { url_contains: string; status_min?: number; status_max?: number } }).request;
      const since = (p as { since?: number }).since ?? -1;
      if (!a.recording || (since >= 0 && since < a.firstKept - 1))
        return unknown(index, 'observation_unavailable', {
          detail: !a.recording
            ? 'the tab is not recorded yet'
            : 'entries after that mark were dropped (bounded buffer)',
        });
      // Neither bound: a success (2xx or a redirect); one bound: open on the other side.
      const min = r.status_min ?? (r.status_max !== undefined ? 0 : 200);
      const max = r.status_max ?? (r.status_min !== undefined ? 999 : 399);
      const seen = a.requests.filter((e) => e.seq > since && e.url.includes(r.url_contains));
      const hit = seen.find((e) => e.status !== undefined && e.status >= min && e.status <= max);
      const last = seen.at(-1);
      return {
        index,
        holds: !!hit,
        observed: {
          matching: seen.length,
          ...(hit || last
            ? {
                request: {
                  url: quote((hit ?? last)!.url),
                  ...((hit ?? last)!.status !== undefined ? { status: (hit ?? last)!.status } : {}),
                  ...((hit ?? last)!.failed ? { failed: (hit ?? last)!.failed } : {}),
                  ...(!(hit ?? last)!.done && (hit ?? last)!.status === undefined ? { pending: true } : {}),
                },
              }
            : {}),
        },
      };
    }
  }
}

function evaluateWindow(index: number, p: WindowPredicate, check: string, o: Observation): PredicateOutcome {
  if (!o.windows) return unknown(index, 'unsupported_predicate', 'this route lists no windows');
  const s = p.window;
  const named = s.title !== undefined || s.title_contains !== undefined;
  const matches = o.windows.filter((w) =>
    named
      ? (s.title === undefined || w.title === s.title) &&
        (s.title_contains === undefined || w.title.includes(s.title_contains))
      : !!w.target,
  );
  const shown = (w: ObservedWindow) => ({ title: quote(w.title), focused: w.focused, frame: w.frame });
  if (check === 'exists') {
    const holds = matches.length > 0 === (p as { exists: boolean }).exists;
    return {
      index,
      holds,
      observed: {
        count: matches.length,
        ...(matches.length ? { windows: matches.slice(0, MAX_CANDIDATES).map(shown) } : {}),
      },
    };
  }
  if (matches.length === 0) return { index, holds: false, observed: { count: 0 } };
  if (matches.length > 1)
    return unknown(index, 'ambiguous_selector', { count: matches.length }, matches.slice(0, MAX_CANDIDATES).map(shown));
  const w = matches[0];
  if (check === 'focused' && w.focused === undefined)
    return unknown(index, 'observation_unavailable', { ...shown(w), focused: 'the window system does not say' });
  if (check === 'focused')
    return { index, holds: w.focused === (p as { focused: boolean }).focused, observed: shown(w) };
  const f = (p as { frame: { x: number; y: number; width: number; height: number; tolerance?: number } }).frame;
  const tol = f.tolerance ?? 0;
  const holds = (['x', 'y', 'width', 'height'] as const).every((k) => Math.abs(w.frame[k] - f[k]) <= tol);
  return { index, holds, observed: shown(w) };
}

/** What one read says of each predicate. Pure. */
export function evaluate(predicates: readonly Predicate[], o: Observation): PredicateOutcome[] {
  return predicates.map((p, index) => {
    const { family, check } = familyOf(p);
    if (family === 'element') return evaluateElement(index, p as ElementPredicate, check, o);
    if (family === 'window') return evaluateWindow(index, p as WindowPredicate, check, o);
    return evaluatePage(index, p as PagePredicate, check, o);
  });
}

export interface Verdict {
  status: 'satisfied' | 'unsatisfied' | 'unknown';
  reason?: UnknownReason;
  candidates?: unknown[];
  /** The first predicate that failed (unsatisfied) or could not be told (unknown). */
  failed?: number;
  predicates: Array<{ index: number; holds: boolean | null; observed: unknown }>;
}

/**
 * Consecutive reads, counted: satisfied only once every predicate held in `need` consecutive reads. Fed one
 * read at a time (`add`); `done` says when more reads cannot change the answer (satisfied, or a predicate
 * this route cannot check). `verdict` is the answer now: at a timeout, the last read's.
 */
export class Stability {
  private streak = 0;
  private last: PredicateOutcome[] = [];
  samples = 0;
  constructor(private readonly need: number) {}

  add(outcomes: PredicateOutcome[]): void {
    this.samples++;
    this.last = outcomes;
    this.streak = outcomes.every((o) => o.holds === true) ? this.streak + 1 : 0;
  }

  /** A read that could not be taken at all (the target is gone, a read failed): the streak starts over. */
  miss(count: number, reason: 'target_missing' | 'observation_unavailable', detail: string): void {
    this.samples++;
    this.streak = 0;
    this.last = Array.from({ length: count }, (_, index) => unknown(index, reason, detail));
  }

  get done(): boolean {
    return this.streak >= this.need || this.last.some((o) => o.reason === 'unsupported_predicate');
  }

  verdict(): Verdict {
    const predicates = this.last.map(({ index, holds, observed }) => ({ index, holds, observed }));
    if (this.streak >= this.need) return { status: 'satisfied', predicates };
    // One predicate seen false decides the whole list: unsatisfied, the first such named.
    const falseOne = this.last.find((o) => o.holds === false);
    if (falseOne) return { status: 'unsatisfied', failed: falseOne.index, predicates };
    const unknownOne = this.last.find((o) => o.holds === null);
    if (unknownOne)
      return {
        status: 'unknown',
        reason: unknownOne.reason,
        failed: unknownOne.index,
        ...(unknownOne.candidates ? { candidates: unknownOne.candidates } : {}),
        predicates,
      };
    // Every predicate held in the last read, but not in enough reads in a row before the time ran out.
    return { status: 'unknown', reason: 'stability_unproven', predicates };
  }
}
