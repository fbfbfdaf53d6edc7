// The bounds every value from outside (a tool call's arguments, a gateway frame's params, a pairing request)
// is held to BEFORE anything walks or stringifies it: the audit trail, the action log's summaries, approvals
// and recordings all recurse (JSON.stringify among them), so a value nested 5,000 levels deep would throw
// RangeError far from any boundary. The check itself never recurses: one explicit stack, a bounded number
// of nodes, and it stops at the first breach. Pure: no imports, no I/O.

export const ARG_LIMITS = {
  /** Levels of objects and arrays below the value itself (`{a: 1}` is depth 1). */
  depth: 64,
  /** Characters of one string (or one object key). The largest a tool takes is type_text's 200,000. */
  stringChars: 1_000_000,
  /** The value's size, about as many characters as its JSON. */
  totalChars: 8_000_000,
  /** Objects, arrays and primitives in all, so that the walk itself is bounded. */
  nodes: 200_000,
};

export type ArgLimits = typeof ARG_LIMITS;

/** A value over one of the bounds: the field (a path such as `steps[0].args`) and what is wrong with it. */
export interface LimitBreach {
  field: string;
  message: string;
}

/** How many path segments a depth breach names: the field the caller wrote, not the levels inside it. */
const DEPTH_PATH_SEGMENTS = 3;
/** A path is shown with at most this many segments (and each key cut), so the message stays short. */
const PATH_SEGMENTS_SHOWN = 8;
const KEY_CHARS_SHOWN = 40;

type Segment = string | number;

/** The first bound `value` breaks, or null when it is within all of them (and is plain JSON data). */
export function checkLimits(value: unknown, limits: ArgLimits = ARG_LIMITS): LimitBreach | null {
  // Each entry: a value, its depth, and its path (kept as a parent chain so nothing is copied per node).
  const stack: Array<{ value: unknown; depth: number; path: PathNode | null }> = [{ value, depth: 0, path: null }];
  let nodes = 0;
  let chars = 0;
  while (stack.length) {
    const { value: v, depth, path } = stack.pop()!;
    if (++nodes > limits.nodes)
      return breach(path, `more than ${limits.nodes} values in all (objects, arrays and their members)`);
    switch (typeof v) {
      case 'string':
        if (v.length > limits.stringChars)
          return breach(path, `string longer than ${limits.stringChars} characters (${v.length})`);
        chars += v.length + 2;
        break;
      case 'number':
      case 'boolean':
      case 'undefined':
        chars += 8;
        break;
      case 'object': {
        chars += 2;
        if (v === null) break;
        if (depth >= limits.depth) {
          const shown = firstSegments(path, DEPTH_PATH_SEGMENTS);
          return { field: shown, message: `${shown}: nested deeper than ${limits.depth} levels` };
        }
        if (Array.isArray(v)) {
          for (let i = v.length - 1; i >= 0; i--)
            stack.push({ value: v[i], depth: depth + 1, path: { up: path, key: i } });
          chars += v.length;
        } else {
          const proto = Object.getPrototypeOf(v);
          if (proto !== Object.prototype && proto !== null) return breach(path, 'not plain JSON data');
          const keys = Object.keys(v);
          for (let i = keys.length - 1; i >= 0; i--) {
            const key = keys[i];
            const child = { up: path, key };
            if (key.length > limits.stringChars)
              return breach(child, `key longer than ${limits.stringChars} characters (${key.length})`);
            chars += key.length + 4;
            stack.push({ value: (v as Record<string, unknown>)[key], depth: depth + 1, path: child });
          }
        }
        break;
      }
      default:
        // bigint, symbol, function: only in-process callers can pass them, and nothing downstream can print them.
        return breach(path, `a ${typeof v} is not JSON data`);
    }
    if (chars > limits.totalChars) return breach(path, `arguments larger than ${limits.totalChars} characters in all`);
  }
  return null;
}

interface PathNode {
  up: PathNode | null;
  key: Segment;
}

function segmentsOf(path: PathNode | null): Segment[] {
  const out: Segment[] = [];
  for (let p = path; p; p = p.up) out.push(p.key);
  return out.reverse();
}

/** `steps[0].args`, `target.kind`, `["a b"]`; `arguments` for the value itself. */
export function formatPath(segments: Segment[]): string {
  let out = '';
  for (const s of segments.slice(0, PATH_SEGMENTS_SHOWN)) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(s) && s.length <= KEY_CHARS_SHOWN) out += out ? `.${s}` : s;
    else out += `[${JSON.stringify(s.length > KEY_CHARS_SHOWN ? `${s.slice(0, KEY_CHARS_SHOWN)}…` : s)}]`;
  }
  if (segments.length > PATH_SEGMENTS_SHOWN) out += '…';
  return out || 'arguments';
}

function firstSegments(path: PathNode | null, count: number): string {
  return formatPath(segmentsOf(path).slice(0, count));
}

function breach(path: PathNode | null, what: string): LimitBreach {
  const field = formatPath(segmentsOf(path));
  return { field, message: `${field}: ${what}` };
}
