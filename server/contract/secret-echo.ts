// Secret echoes (issue 41 item 3): what Verity typed or set into a secret field (a result that says
// `masked`) is masked there by secrets.ts, but the page may show it again elsewhere: a login form that
// submits by GET puts it in the next URL (`done?user=alice&pw=…`), and from there in tab lists, network and
// console logs, titles, page text and window targets. This registry remembers each such text while the
// session that typed it lives and masks it wherever it comes back, in every session's results and in
// everything operators are sent, however the page encoded it:
//
// - raw, and percent-encoded in any mix (encodeURIComponent, encodeURI, form encoding with spaces as `+`,
//   a URL parser's own escaping, lower- or upper-case hex, UTF-8 or Latin-1 bytes, encoded twice as in a
//   `return_to=` parameter), JSON-escaped (`\"`, `\/`, `\u00fc`) and HTML-escaped (`&amp;`, `&#39;`);
// - base64 and base64url of its UTF-8 (and, when it fits, Latin-1) bytes, with or without padding, those
//   percent-encoded too, and also where it sits inside a longer encoded text (a `user:pass` pair, a JSON
//   blob): each of the three byte alignments gives the characters fixed by the secret's bytes alone;
// - cut short: a prefix of it before the excerpt marker `…`, a suffix after one (results cut long text).
//
// An occurrence becomes one • per character of the secret, as the field-level mask shows it.
// Not masked everywhere (the field-level mask still covers the typed text itself): a text shorter than
// ECHO_MIN_CHARS characters, or made only of digits and shorter than ECHO_MIN_DIGITS (a card security code or
// a PIN would otherwise mask every year, port and count in every result). The registry is bounded (at most
// ECHO_MAX_PER_OWNER texts per session, ECHO_MAX_SECRETS in all, the oldest forgotten first; a longer text
// by its first ECHO_MAX_CHARS characters). Values of identifier keys (element_token, tab_id, sessionKey,
// any `…_id` or `…Key`) are left alone: they are Verity's own opaque names, and masking one would break it.
// Pure (no I/O, no logging; an error never carries a secret): unit-tested in test/unit/secrets.test.ts.
import { mask } from './secrets.js';

/** A text shorter than this (in characters) is masked in its own field only, not wherever it comes back. */
export const ECHO_MIN_CHARS = 4;
/** A text made only of digits is masked everywhere only from this length on (one-time codes are 6 or more). */
export const ECHO_MIN_DIGITS = 6;
/** A longer text is remembered by its first this many characters. */
export const ECHO_MAX_CHARS = 128;
/** Texts remembered per session (its oldest forgotten first). */
export const ECHO_MAX_PER_OWNER = 16;
/** Texts remembered in all (the oldest forgotten first). */
export const ECHO_MAX_SECRETS = 64;
/** Objects nested deeper than this are passed as they are (arguments are bounded to 64 levels before any call). */
const MAX_DEPTH = 64;
/** A base64 run inside a longer encoded text is looked for only when the secret alone fixes this many of its characters. */
const MIN_INNER_BASE64 = 8;

/** Whether a text is one the registry masks everywhere (long enough; see ECHO_MIN_CHARS, ECHO_MIN_DIGITS). */
export function echoWorthy(text: string): boolean {
  const chars = [...text].length;
  return chars >= ECHO_MIN_CHARS && (chars >= ECHO_MIN_DIGITS || !/^\d+$/.test(text));
}

/** Keys whose values are Verity's own identifiers: never rewritten. */
export function isIdentifierKey(key: string): boolean {
  return (
    key === 'id' ||
    key === 'element_token' ||
    key === 'link_token' ||
    key === 'resume_token' ||
    /(?:_id|_ids|Id|Ids|Key|_key)$/.test(key)
  );
}

// ---- the patterns ----

const hex2 = (b: number) => b.toString(16).padStart(2, '0');

/** A code unit as a regular expression that matches it alone: letters and digits as they are, the rest by \xHH / \uHHHH. */
function literal(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (/[A-Za-z0-9]/.test(text[i])) out += text[i];
    else if (c < 0x100) out += `\\x${hex2(c)}`;
    else out += `\\u${c.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/** A hex digit pair matched in either case: `[cC]3`. */
function anyCaseHex(hex: string): string {
  return [...hex].map((d) => (/[a-f]/.test(d) ? `[${d}${d.toUpperCase()}]` : d)).join('');
}

/** Percent-encoded bytes, once or twice (%25XX), hex in either case. */
function percent(bytes: Iterable<number>): string {
  return [...bytes].map((b) => `%(?:25)?${anyCaseHex(hex2(b))}`).join('');
}

const HTML_ENTITIES: Record<string, string[]> = {
  '&': ['&amp;', '&#38;', '&#x26;'],
  '<': ['&lt;', '&#60;', '&#x3c;'],
  '>': ['&gt;', '&#62;', '&#x3e;'],
  '"': ['&quot;', '&#34;', '&#x22;'],
  "'": ['&#39;', '&#x27;', '&apos;'],
};

/** One character of a secret as the alternatives it may be written as: itself, percent-, JSON- or HTML-escaped. */
function unit(ch: string): string {
  const cp = ch.codePointAt(0)!;
  const alts = [literal(ch)];
  if (!/[A-Za-z0-9]/.test(ch)) alts.push(percent(new TextEncoder().encode(ch)));
  if (cp >= 0x80 && cp <= 0xff) alts.push(percent([cp]));
  if (ch === ' ') alts.push('\\+');
  if (ch === '"' || ch === '\\' || ch === '/') alts.push(literal(`\\${ch}`));
  if (cp >= 0x80 || "<>&'".includes(ch))
    alts.push(
      [...Array(ch.length).keys()]
        .map((i) => `\\\\u${anyCaseHex(ch.charCodeAt(i).toString(16).padStart(4, '0'))}`)
        .join(''),
    );
  for (const entity of HTML_ENTITIES[ch] ?? []) alts.push(literal(entity));
  return alts.length === 1 ? alts[0] : `(?:${alts.join('|')})`;
}

/** Any base64 or base64url character, or a percent-encoded `+` / `/`. */
const BASE64_CHAR = '(?:[A-Za-z0-9+/_-]|%(?:25)?2[bBfF])';
const BASE64_PAD = '(?:=|%(?:25)?3[dD]){0,2}';

/** A base64 character of either alphabet (`+` or `-`, `/` or `_`), also percent-encoded, or `+` read as a space. */
function base64Unit(ch: string): string {
  if (ch === '+') return `(?:\\x2b|\\x2d|\\x20|%(?:25)?2[bB])`;
  if (ch === '/') return `(?:\\x2f|\\x5f|\\x5c\\x2f|%(?:25)?2[fF])`;
  return ch;
}

/**
 * The base64 runs a secret's bytes fix: for each alignment k (the secret starting k bytes into a 3-byte
 * group), the characters computed from its bytes alone, with the partial characters at either end (they
 * carry bits of the neighbouring bytes) matched as any base64 character, and padding.
 */
function base64Patterns(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    const bits = 8 * (k + bytes.length);
    const start = Math.ceil((8 * k) / 6);
    const end = Math.floor(bits / 6);
    const core = encoded.slice(start, end);
    if (core.length < (k === 0 ? 4 : MIN_INNER_BASE64)) continue;
    const partialEnd = bits % 6 !== 0;
    out.push(
      `${k > 0 ? `${BASE64_CHAR}?` : ''}${[...core].map(base64Unit).join('')}${partialEnd ? `${BASE64_CHAR}?` : ''}${BASE64_PAD}`,
    );
  }
  return out;
}

/**
 * Every way a secret is looked for, as regular expression sources (no capturing groups): the text in its
 * escapings, a prefix of it before `…` and a suffix after one (at least ECHO_MIN_CHARS characters), and the
 * base64 runs of its UTF-8 and Latin-1 bytes.
 */
export function echoPatterns(secret: string): string[] {
  const chars = [...secret];
  const units = chars.map(unit);
  const n = units.length;
  const min = Math.min(n, /^\d+$/.test(secret) ? ECHO_MIN_DIGITS : ECHO_MIN_CHARS);
  const patterns = [units.join('')];
  if (n > min) {
    // A prefix cut short: the first `min` characters, then as many more as there are, then the marker.
    let tail = '';
    for (let i = n - 2; i >= min; i--) tail = `(?:${units[i]}${tail})?`;
    patterns.push(`${units.slice(0, min).join('')}${tail}(?=\\u2026)`);
    // A suffix after the marker: the last `min` characters, and as many before them as there are.
    let head = '';
    for (let i = 1; i < n - min; i++) head = `(?:${head}${units[i]})?`;
    patterns.push(`(?<=\\u2026)${head}${units.slice(n - min).join('')}`);
  }
  const utf8 = new TextEncoder().encode(secret);
  patterns.push(...base64Patterns(utf8));
  if (chars.every((c) => c.codePointAt(0)! <= 0xff) && utf8.length !== chars.length)
    patterns.push(...base64Patterns(Uint8Array.from(chars, (c) => c.codePointAt(0)!)));
  return patterns;
}

/** A secret's matcher: never throws with its source (a RegExp's syntax error quotes the pattern, the secret). */
function compile(secret: string): RegExp {
  try {
    return new RegExp(echoPatterns(secret).join('|'), 'g');
  } catch {
    throw new Error('secret echo: a mask pattern could not be built');
  }
}

// ---- the registry ----

interface Known {
  text: string;
  owner: string;
  matcher: RegExp;
  masked: string;
  /** When it was learned (or learned again): the oldest go first. */
  seq: number;
}

/** The texts typed into secret fields of live sessions, and the one pass that masks them wherever they reappear. */
export class SecretEcho {
  /** By owner (a session key), then by text. */
  private readonly owners = new Map<string, Map<string, Known>>();
  /** Every distinct text, longest first (a text that holds another is masked whole first). */
  private ordered: Known[] = [];
  private seq = 0;

  /** How many texts are remembered (across sessions; the same text typed by two sessions counts once). */
  get size(): number {
    return this.ordered.length;
  }

  /** Remembers texts a session typed or set into secret fields (those too short to mask everywhere are skipped). */
  learn(owner: string, texts: Iterable<string>): void {
    let changed = false;
    for (const whole of texts) {
      if (typeof whole !== 'string' || !echoWorthy(whole)) continue;
      const text = [...whole].slice(0, ECHO_MAX_CHARS).join('');
      let mine = this.owners.get(owner);
      if (!mine) this.owners.set(owner, (mine = new Map()));
      const known = mine.get(text);
      if (known) {
        known.seq = ++this.seq;
        continue;
      }
      const shared = this.find(text);
      mine.set(text, {
        text,
        owner,
        matcher: shared?.matcher ?? compile(text),
        masked: mask(text),
        seq: ++this.seq,
      });
      changed = true;
      if (mine.size > ECHO_MAX_PER_OWNER) mine.delete(oldest(mine.values()).text);
    }
    for (let all = this.count(); all > ECHO_MAX_SECRETS; all--) {
      const old = oldest([...this.owners.values()].flatMap((m) => [...m.values()]));
      this.owners.get(old.owner)?.delete(old.text);
      changed = true;
    }
    if (changed) this.reorder();
  }

  /** Forgets what a session typed (it ended: what was written meanwhile was masked when written). */
  forget(owner: string): void {
    if (this.owners.delete(owner)) this.reorder();
  }

  /** Forgets every session's texts but those of `live` sessions. */
  retainOnly(live: (owner: string) => boolean): void {
    let changed = false;
    for (const owner of [...this.owners.keys()])
      if (!live(owner)) {
        this.owners.delete(owner);
        changed = true;
      }
    if (changed) this.reorder();
  }

  /** A text with every known secret in it masked. Fails closed: a text the pass cannot read is masked whole. */
  scrubText(text: string): string {
    if (!this.ordered.length || !text) return text;
    try {
      let out = text;
      for (const known of this.ordered) {
        known.matcher.lastIndex = 0;
        out = out.replace(known.matcher, known.masked);
      }
      return out;
    } catch {
      return mask(text);
    }
  }

  /**
   * A value with every string in it scrubbed, deeply (arrays and plain objects; keys and identifier values
   * kept): the same value when nothing changed, else a copy (the input is never changed).
   */
  scrub<T>(value: T, skipKeys?: ReadonlySet<string>): T {
    if (!this.ordered.length) return value;
    return this.walk(value, 0, skipKeys) as T;
  }

  /** A tool's reply with its structured content and its text scrubbed (images are pixels: not read). */
  scrubReply<R extends { structured: Record<string, unknown>; text?: string }>(reply: R): R {
    if (!this.ordered.length) return reply;
    const structured = this.scrub(reply.structured);
    const text = reply.text === undefined ? undefined : this.scrubText(reply.text);
    if (structured === reply.structured && text === reply.text) return reply;
    return { ...reply, structured, ...(text === undefined ? {} : { text }) };
  }

  private walk(value: unknown, depth: number, skipKeys: ReadonlySet<string> | undefined): unknown {
    if (typeof value === 'string') return this.scrubText(value);
    if (!value || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      value.forEach((item, i) => {
        const shown = this.walk(item, depth + 1, skipKeys);
        if (shown !== item) (copy ??= [...value])[i] = shown;
      });
      return copy ?? value;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      if (isIdentifierKey(key) || skipKeys?.has(key)) continue;
      const shown = this.walk(item, depth + 1, skipKeys);
      if (shown !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = shown;
    }
    return copy ?? value;
  }

  private find(text: string): Known | undefined {
    for (const mine of this.owners.values()) {
      const known = mine.get(text);
      if (known) return known;
    }
    return undefined;
  }

  private count(): number {
    let n = 0;
    for (const mine of this.owners.values()) n += mine.size;
    return n;
  }

  private reorder(): void {
    for (const [owner, mine] of this.owners) if (!mine.size) this.owners.delete(owner);
    const distinct = new Map<string, Known>();
    for (const mine of this.owners.values()) for (const known of mine.values()) distinct.set(known.text, known);
    this.ordered = [...distinct.values()].sort((a, b) => b.text.length - a.text.length);
  }
}

function oldest(known: Iterable<Known>): Known {
  let found: Known | undefined;
  for (const k of known) if (!found || k.seq < found.seq) found = k;
  return found!;
}

/**
 * The strings of `args` that `shown` (the same arguments as maskedArgs or maskedForApproval shows them)
 * masks: the texts a call sent to secret fields, its run_actions steps' too.
 */
export function secretsSent(args: unknown, shown: unknown, depth = 0): string[] {
  if (args === shown || depth > 8) return [];
  if (typeof args === 'string') return typeof shown === 'string' && shown !== args ? [args] : [];
  if (!args || typeof args !== 'object' || !shown || typeof shown !== 'object') return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(args))
    out.push(...secretsSent(value, (shown as Record<string, unknown>)[key], depth + 1));
  return out;
}
