// A call's arguments as one line an operator reads: the action log's line, the audit trail's summary and the
// approval card's main line. Each computer-use tool leads with what it does, said as an operator says it
// (`invoke_menu` "Format › Character…", `launch_app` "libreoffice-calc --calc", `set_window_frame`
// "x 10, y 20, 800×600 on window 4 (pid 7)", `verify_state` its predicates in brief); every argument the
// lead does not say follows as `key=value`, each composite value legible too (a target, a rectangle, a
// key chord, a list of words). Nothing the agent sent is left out: the line is what runs, in words.

type Args = Record<string, unknown>;

/** A tool's lead: the line it starts with, and the arguments that line says (the rest follow as key=value). */
type Lead = (args: Args) => { line: string; said: readonly string[] } | null;

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isObject = (v: unknown): v is Args => !!v && typeof v === 'object' && !Array.isArray(v);
const isWords = (v: unknown): v is string[] => Array.isArray(v) && v.every((w) => typeof w === 'string');

/**
 * `key=value` per argument (the tool's lead first when `tool` has one); each value, and the lead, cut at
 * `max` characters (the action log), or whole (approvals: max = Infinity). `session` is the entry's own.
 */
export function summarizeArgs(args: Args, max = 60, tool?: string): string {
  const cut = (shown: string) => (shown.length > max ? shown.slice(0, Math.max(0, max - 3)) + '…' : shown);
  const parts: string[] = [];
  const lead = tool !== undefined && Object.hasOwn(LEADS, tool) ? LEADS[tool](args) : null;
  if (lead?.line) parts.push(cut(lead.line));
  for (const [key, value] of Object.entries(args)) {
    if (key === 'session' || value === undefined || lead?.said.includes(key)) continue;
    parts.push(`${key}=${cut(legibleValue(key, value))}`);
  }
  return parts.join(' ');
}

/** What a call acts on: `tab t2`, `window 4 (pid 7)`, `the desktop`; null for anything else. */
export function targetPhrase(target: unknown): string | null {
  if (!isObject(target)) return null;
  if (target.kind === 'tab' && typeof target.tab_id === 'string' && Object.keys(target).length === 2)
    return `tab ${target.tab_id}`;
  if (target.kind === 'desktop') return 'the desktop';
  if (target.kind === 'window') {
    const { window_id, pid } = target;
    if (isNumber(window_id)) return `window ${window_id}${isNumber(pid) ? ` (pid ${pid})` : ''}`;
    if (isNumber(pid)) return `the window of pid ${pid}`;
  }
  return null;
}

/** A word of a list: as itself, or quoted when a space, quote or comma in it (or its emptiness) would hide where it ends. */
function word(w: string): string {
  return w === '' || /[\s"',]/.test(w) ? JSON.stringify(w) : w;
}

/** A rectangle `{x, y, width, height}` (nothing else) as `10,20 300×200`; null for anything else. */
function rect(v: unknown): string | null {
  if (!isObject(v)) return null;
  const { x, y, width, height, ...rest } = v;
  if (![x, y, width, height].every(isNumber) || Object.keys(rest).length > 0) return null;
  return `${x},${y} ${width}×${height}`;
}

/** One value of a `key=value` pair, legible: composite ones as words, never as JSON where a reading exists. */
function legibleValue(key: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (key === 'target') {
    const phrase = targetPhrase(value);
    if (phrase) return phrase;
  }
  if (key === 'expect' && Array.isArray(value) && value.every(isObject)) return predicates(value);
  if (key === 'steps' && Array.isArray(value) && value.every(isObject)) return steps(value);
  if (isWords(value)) {
    if (key === 'path') return value.join(' › ');
    if (key === 'keys' || key === 'modifier' || key === 'modifiers') return value.join('+');
    return value.map(word).join(' ');
  }
  const rectangle = rect(value);
  if (rectangle) return rectangle;
  if (isObject(value))
    return `(${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${legibleValue(k, v)}`)
      .join(', ')})`;
  return JSON.stringify(value);
}

/** ` on tab t2` after a lead, when the call names its target; nothing when it does not (the current tab). */
function onTarget(args: Args): { text: string; said: string[] } {
  const phrase = targetPhrase(args.target);
  return phrase ? { text: ` on ${phrase}`, said: ['target'] } : { text: '', said: [] };
}

/** A check of a predicate: `exists`, `not focused`, `value equals "42"`, `count 3`. */
function check(name: string, value: unknown): string {
  const words = name.replace(/_/g, ' ');
  if (value === true) return words;
  if (value === false) return `not ${words}`;
  if (typeof value === 'string') return `${words} ${JSON.stringify(value)}`;
  return `${words} ${legibleValue(name, value)}`;
}

/** verify_state's predicates in brief: `button "Save" enabled; url contains "/done"; window "Calc" focused`. */
export function predicates(list: Args[]): string {
  return list.map(predicate).join('; ');
}

function predicate(p: Args): string {
  const rest = Object.entries(p).filter(([k, v]) => v !== undefined && k !== 'element' && k !== 'window');
  let subject = '';
  if (isObject(p.element)) {
    const { role, name, name_contains, element_token, ...other } = p.element;
    subject = [
      typeof role === 'string' ? role : 'element',
      typeof name === 'string' ? JSON.stringify(name) : '',
      typeof name_contains === 'string' ? `named *${name_contains}*` : '',
      typeof element_token === 'string' ? element_token : '',
      ...Object.entries(other).map(([k, v]) => `${k}=${legibleValue(k, v)}`),
    ]
      .filter(Boolean)
      .join(' ');
  } else if (isObject(p.window)) {
    const { title, title_contains, ...other } = p.window;
    subject = [
      'window',
      typeof title === 'string' ? JSON.stringify(title) : '',
      typeof title_contains === 'string' ? `titled *${title_contains}*` : '',
      ...Object.entries(other).map(([k, v]) => `${k}=${legibleValue(k, v)}`),
    ]
      .filter(Boolean)
      .join(' ');
  }
  const checks = rest.map(([k, v]) => {
    if (k === 'request' && isObject(v)) {
      const { url_contains, status_min, status_max, ...other } = v;
      const status =
        isNumber(status_min) && isNumber(status_max)
          ? `status ${status_min}–${status_max}`
          : isNumber(status_min)
            ? `status ≥${status_min}`
            : isNumber(status_max)
              ? `status ≤${status_max}`
              : '';
      return [
        'request',
        typeof url_contains === 'string' ? `url contains ${JSON.stringify(url_contains)}` : '',
        status,
        ...Object.entries(other).map(([ok, ov]) => `${ok}=${legibleValue(ok, ov)}`),
      ]
        .filter(Boolean)
        .join(' ');
    }
    if (k === 'frame') {
      const { tolerance, ...area } = isObject(v) ? v : {};
      const shown = rect(area);
      if (shown) return `frame ${shown}${isNumber(tolerance) ? ` ±${tolerance}` : ''}`;
    }
    if (k === 'since' || k === 'no_console_errors_since') return `${k.replace(/_/g, ' ')} mark ${legibleValue(k, v)}`;
    return check(k, v);
  });
  return [subject, ...checks].filter(Boolean).join(' ');
}

/** run_actions' steps, each as its own tool's line: `2 steps: click element_token=…; type_text text=hi`. */
function steps(list: Args[]): string {
  const lines = list.map((s) => {
    const tool = typeof s.tool === 'string' ? s.tool : '?';
    const line = [tool, isObject(s.args) ? summarizeArgs(s.args, Infinity, tool) : ''];
    for (const [k, v] of Object.entries(s))
      if (k !== 'tool' && k !== 'args' && v !== undefined)
        line.push(
          k === 'expect' && Array.isArray(v) && v.every(isObject)
            ? `expect ${predicates(v)}`
            : `${k}=${legibleValue(k, v)}`,
        );
    return line.filter(Boolean).join(' ');
  });
  return `${list.length} step${list.length === 1 ? '' : 's'}: ${lines.join('; ')}`;
}

/** Where a pointer goes: an element (its token, shown as its label in the log) or a point. */
function pointerLead(prefix: string): Lead {
  return (a) => {
    const where = onTarget(a);
    if (typeof a.element_token === 'string')
      return { line: `${prefix} ${a.element_token}${where.text}`, said: ['element_token', ...where.said] };
    if (isNumber(a.x) && isNumber(a.y))
      return { line: `${prefix} ${a.x},${a.y}${where.text}`, said: ['x', 'y', ...where.said] };
    return null;
  };
}

/**
 * The tools whose line leads with what they do. The older action tools read well as `key=value`
 * (`text=hello`, `element_token=button "Submit claim"`, `keys=ctrl+a`) and keep it: operators and the
 * audit trail's readers know those lines.
 */
const LEADS: Record<string, Lead> = {
  launch_app: (a) => {
    if (typeof a.app !== 'string') return null;
    const args = isWords(a.args) ? a.args : undefined;
    return { line: [word(a.app), ...(args ?? []).map(word)].join(' '), said: args ? ['app', 'args'] : ['app'] };
  },
  kill_app: (a) => (isNumber(a.pid) ? { line: `pid ${a.pid}`, said: ['pid'] } : null),
  bring_to_front: (a) => {
    const phrase = targetPhrase(a.target);
    return phrase ? { line: phrase, said: ['target'] } : null;
  },
  set_window_frame: (a) => {
    if (![a.x, a.y, a.width, a.height].every(isNumber)) return null;
    const where = onTarget(a);
    return {
      line: `x ${a.x}, y ${a.y}, ${a.width}×${a.height}${where.text}`,
      said: ['x', 'y', 'width', 'height', ...where.said],
    };
  },
  set_window_state: (a) => {
    if (typeof a.state !== 'string') return null;
    const where = onTarget(a);
    return { line: `${a.state}${where.text}`, said: ['state', ...where.said] };
  },
  invoke_menu: (a) => {
    if (!isWords(a.path)) return null;
    const where = onTarget(a);
    const context = typeof a.element_token === 'string' ? ` in the context menu of ${a.element_token}` : '';
    return {
      line: `${a.path.join(' › ')}${context}${where.text}`,
      said: ['path', ...(context ? ['element_token'] : []), ...where.said],
    };
  },
  zoom: (a) => {
    const region = rect(a.region);
    if (!region) return null;
    const where = onTarget(a);
    const scale = isNumber(a.scale) ? ` at scale ${a.scale}` : '';
    return { line: `${region}${scale}${where.text}`, said: ['region', ...(scale ? ['scale'] : []), ...where.said] };
  },
  verify_state: (a) => {
    if (!Array.isArray(a.expect) || !a.expect.every(isObject)) return null;
    const where = onTarget(a);
    return { line: `${predicates(a.expect)}${where.text}`, said: ['expect', ...where.said] };
  },
  clipboard_write: (a) => {
    if (typeof a.text !== 'string') return null;
    const where = onTarget(a);
    return { line: `${JSON.stringify(a.text)}${where.text}`, said: ['text', ...where.said] };
  },
  clipboard_read: (a) => {
    const where = onTarget(a);
    return where.text ? { line: where.text.trim(), said: where.said } : null;
  },
  move_cursor: pointerLead('to'),
  run_actions: (a) =>
    Array.isArray(a.steps) && a.steps.every(isObject) ? { line: steps(a.steps), said: ['steps'] } : null,
};
