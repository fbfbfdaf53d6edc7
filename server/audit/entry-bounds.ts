// What one audit entry may hold, and its line as stored: every string within its bound before anything
// keeps it (the index holds the listed fields in memory), long arguments, results and evidence cut as the
// line is written (saying how long they were), and no line over LINE_MAX. Pure: the store (store.ts)
// calls these on every append.
import type { AuditActor, AuditEntry, EvidenceItem } from '../gateway/protocol.js';

/** An entry as appended: the store gives it its id, and its time when it has none. */
export type AuditInput = Omit<AuditEntry, 'id' | 'at'> & { at?: string };

/** Values a line carries whole up to this; longer strings are cut (a type_text of a book, a page's text). */
const STRING_MAX = 4000;
/** A stored result larger than this is kept as its summary fields only. */
const RESULT_MAX = 64 * 1024;
/** A stored line is never longer: past it the arguments and the result are kept as their sizes and verdict fields. */
export const LINE_MAX = 128 * 1024;
/** What the fields an entry is indexed and listed by may hold (the index keeps them in memory). */
const FIELD_MAX = { key: 320, name: 128, summary: 2000, detail: 1000, labels: 64 } as const;

/**
 * The entry's line as stored. Most entries need nothing cut: those are written as they are, in one
 * stringify (their result cannot be over RESULT_MAX when the whole line is not), without the copies and
 * the second stringify `compact` makes. The line is the same either way. A line still over LINE_MAX (many
 * long strings, each under the cut) keeps its arguments and result as their sizes and verdict fields.
 */
export function storedLine(entry: AuditEntry): string {
  if (!needsCut(entry.args) && !needsCut(entry.result) && !needsCut(entry.evidence)) {
    const line = JSON.stringify(entry);
    if (line.length <= RESULT_MAX) return line;
  }
  const line = JSON.stringify(compact(entry));
  if (Buffer.byteLength(line) <= LINE_MAX) return line;
  const sizeOf = (v: unknown) => (v === undefined ? 0 : Buffer.byteLength(JSON.stringify(v) ?? ''));
  const result = entry.result as Record<string, unknown> | undefined;
  return JSON.stringify({
    ...entry,
    ...(entry.args ? { args: { truncated: true, bytes: sizeOf(entry.args) } } : {}),
    ...(result !== undefined
      ? {
          result: {
            truncated: true,
            bytes: sizeOf(result),
            ...(result && typeof result === 'object'
              ? (cut(pick(result, ['status', 'effect', 'route', 'method']), 0, FIELD_MAX.detail) as object)
              : {}),
          },
        }
      : {}),
    ...(entry.evidence ? { evidence: cut(entry.evidence.slice(0, 8), 0, FIELD_MAX.detail) } : {}),
  });
}

/** A session key as the trail keeps it (a label is at most 128 characters; a longer key is an agent's abuse). */
export function boundedKey(sessionKey: string): string {
  return clip(sessionKey, FIELD_MAX.key);
}

/** `text` cut to `max` characters, saying how long it was. */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars in all)` : text;
}

export function boundedActor(actor: AuditActor | undefined): AuditActor | undefined {
  if (!actor) return undefined;
  return Object.fromEntries(Object.entries(actor).map(([k, v]) => [k, clip(String(v), FIELD_MAX.name)])) as AuditActor;
}

/**
 * Every field of an entry within its bound, before anything keeps it: the key, names and summary short
 * (the index holds them in memory), at most FIELD_MAX.labels labels, the refusal's message and the
 * approval's and operator's names. Arguments, result and evidence are cut as the line is written.
 */
export function boundedInput(input: AuditInput): AuditInput {
  const out: AuditInput = {
    ...input,
    sessionKey: boundedKey(input.sessionKey),
    tool: clip(input.tool, FIELD_MAX.name),
    verdict: clip(input.verdict, FIELD_MAX.name),
    summary: clip(input.summary, FIELD_MAX.summary),
  };
  if (input.by !== undefined) out.by = clip(input.by, FIELD_MAX.name);
  if (input.actor) out.actor = boundedActor(input.actor);
  if (input.refusal)
    out.refusal = {
      code: clip(input.refusal.code, FIELD_MAX.name),
      message: clip(input.refusal.message, FIELD_MAX.detail),
    };
  if (input.labels)
    out.labels = Object.fromEntries(
      Object.entries(input.labels)
        .slice(0, FIELD_MAX.labels)
        .map(([k, v]) => [clip(k, FIELD_MAX.name), clip(v, FIELD_MAX.detail)]),
    );
  if (input.approval)
    out.approval = {
      id: clip(input.approval.id, FIELD_MAX.name),
      ...(input.approval.by !== undefined ? { by: clip(input.approval.by, FIELD_MAX.name) } : {}),
    };
  if (input.evidence) out.evidence = input.evidence.slice(0, 16);
  if (input.target) out.target = cut(input.target, 0, FIELD_MAX.detail) as AuditInput['target'];
  if (input.recording) out.recording = cut(input.recording) as AuditInput['recording'];
  return out;
}

/** Whether `cut` would change `value`: a string over STRING_MAX, or an object that is not plain (cut copies it into one). */
function needsCut(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.length > STRING_MAX;
  if (!value || typeof value !== 'object' || depth > 12) return false;
  if (Array.isArray(value)) return value.some((v) => needsCut(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return true;
  for (const v of Object.values(value)) if (needsCut(v, depth + 1)) return true;
  return false;
}

/** An entry as stored: long strings cut (saying how long they were), a huge result reduced to its verdict fields. */
function compact(entry: AuditEntry): AuditEntry {
  const out = { ...entry };
  if (out.args) out.args = cut(out.args) as Record<string, unknown>;
  if (out.result !== undefined) {
    const json = JSON.stringify(out.result) ?? '';
    if (json.length > RESULT_MAX) {
      const r = out.result as Record<string, unknown>;
      out.result = {
        truncated: true,
        bytes: json.length,
        ...(r && typeof r === 'object'
          ? pick(r, ['status', 'refusal', 'effect', 'method', 'target', 'route', 'observed', 'evidence'])
          : {}),
      };
    }
    out.result = cut(out.result);
  }
  if (out.evidence) out.evidence = cut(out.evidence) as EvidenceItem[];
  return out;
}

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
}

/** `value` with every string cut to `max` characters (saying how long it was), to a depth of 12. */
export function cut(value: unknown, depth = 0, max = STRING_MAX): unknown {
  if (typeof value === 'string') return clip(value, max);
  if (!value || typeof value !== 'object' || depth > 12) return value;
  if (Array.isArray(value)) return value.map((v) => cut(v, depth + 1, max));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v, depth + 1, max)]));
}
