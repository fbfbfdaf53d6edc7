// How a tool is declared (defineTool over ToolDef, declared in context.ts) and how its answer becomes an MCP
// result: input schemas as advertised, argument checks, reply texts.
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ActionResult } from '../contract/driver.js';
import { Refusal } from '../contract/refusal.js';
import type { Reply, ToolDef } from './context.js';
import { refusal as refusalSchema } from './schemas.js';

export type { CallContext, Reply, ToolContext, ToolDef } from './context.js';

export function defineTool<S extends z.ZodObject>(def: ToolDef<S>): ToolDef {
  return def as unknown as ToolDef;
}

export const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;
export const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true, idempotentHint: false } as const;

/**
 * A tool's advertised schemas, built once per process: they never change, and building them (zod to JSON
 * schema, then leaned) costs tens of milliseconds for the whole list, on every connection's tools/list.
 */
const advertised = new WeakMap<ToolDef, Partial<Record<Surface | 'output', Record<string, unknown>>>>();
function once(def: ToolDef, which: Surface | 'output', build: () => Record<string, unknown>): Record<string, unknown> {
  let entry = advertised.get(def);
  if (!entry) advertised.set(def, (entry = {}));
  return (entry[which] ??= build());
}

/** `{type:"object", anyOf:[<success>, <refusal>]}`, so strict clients accept refusals too. */
export function outputSchemaOf(def: ToolDef): Record<string, unknown> {
  return once(def, 'output', () =>
    shareRepeats({
      type: 'object',
      anyOf: [objectSchema(tidy(jsonSchema(def.output))), tidy(jsonSchema(refusalSchema))],
    }),
  );
}

/**
 * A shape said more than once in one schema (evidence's any-JSON `expected` and `observed`, say) is said once,
 * in `$defs`, and referred to where it stood, when that is shorter. Each tool's schema is its own document (a
 * reference cannot reach another tool's), so the sharing is within one schema. Top-down, so a repeated
 * shape's own parts are not shared apart from it.
 */
export function shareRepeats(schema: Record<string, unknown>): Record<string, unknown> {
  const counts = new Map<string, number>();
  const count = (sub: Record<string, unknown>): unknown => {
    const key = JSON.stringify(sub);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return subschemas(sub, count);
  };
  subschemas(schema, count);
  const refLength = '{"$ref":"#/$defs/dN"}'.length;
  // Written once in $defs (with its name) instead of n times, each place then a reference.
  const worth = (key: string, n = counts.get(key) ?? 0) =>
    n >= 2 && n * key.length > key.length + '"dN":'.length + n * refLength;
  const defs: Record<string, unknown> = {};
  const names = new Map<string, string>();
  const share = (sub: Record<string, unknown>): unknown => {
    const key = JSON.stringify(sub);
    if (!worth(key)) return subschemas(sub, share);
    let name = names.get(key);
    if (!name) {
      name = `d${names.size}`;
      names.set(key, name);
      defs[name] = subschemas(sub, share);
    }
    return { $ref: `#/$defs/${name}` };
  };
  const shared = subschemas(schema, share);
  return names.size ? { ...shared, $defs: defs } : shared;
}

/** Where a JSON schema holds schemas (not data such as `enum`, `const` or `required`). */
const ONE_SCHEMA = new Set(['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else']);
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties']);

/** A copy of `schema` with each schema directly inside it replaced by `f` of it. */
function subschemas(
  schema: Record<string, unknown>,
  f: (sub: Record<string, unknown>) => unknown,
): Record<string, unknown> {
  const isSchema = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (ONE_SCHEMA.has(k) && isSchema(v)) out[k] = f(v);
    else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) out[k] = v.map((s) => (isSchema(s) ? f(s) : s));
    else if (SCHEMA_MAPS.has(k) && isSchema(v))
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, isSchema(s) ? f(s) : s]));
    else out[k] = v;
  }
  return out;
}

/**
 * An output schema as strict validators read it, in fewer bytes: "any more fields" is `true`, not the empty
 * schema `{}` that strict checkers flag, and a string type beside an enum or a const says nothing more.
 * Nothing is loosened: `additionalProperties: false` stays, so a result with a field it should not have
 * still fails.
 */
function tidy(node: unknown): any {
  if (Array.isArray(node)) return node.map(tidy);
  if (!node || typeof node !== 'object') return node;
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'additionalProperties' && v && typeof v === 'object' && !Object.keys(v).length) o[k] = true;
    else if (k === 'properties' && v && typeof v === 'object')
      o[k] = Object.fromEntries(Object.entries(v).map(([name, field]) => [name, anyJsonIfBare(tidy(field))]));
    else if (k === 'items') o[k] = anyJsonIfBare(tidy(v));
    else o[k] = k === 'enum' || k === 'const' || k === 'default' ? v : tidy(v);
  }
  if (o.type === 'string' && (o.enum || o.const !== undefined)) delete o.type;
  return o;
}

/** One branch per JSON type (a `type` list is less portable: single-type dialects reject it). */
const ANY_JSON = ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type }));
const ANNOTATIONS = new Set(['description', 'title', '$comment', 'default', 'examples', 'deprecated']);

/**
 * A field that may hold any JSON value (evidence's `expected` and `observed`: a text, a count, a list) says
 * so with one branch per JSON type: a schema with no validation keyword at all is what the MCP Inspector's --strict
 * check flags as constraining nothing. The same values pass.
 */
function anyJsonIfBare(schema: any): any {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  if (!Object.keys(schema).every((k) => ANNOTATIONS.has(k))) return schema;
  return { ...schema, anyOf: ANY_JSON };
}

/** A success that has several forms (a union of objects) is still advertised as an object. */
function objectSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const branches = schema.anyOf as Array<Record<string, unknown>> | undefined;
  if (schema.type !== undefined || !branches?.every((b) => b.type === 'object')) return schema;
  return { type: 'object', ...schema };
}

/**
 * Which tool definitions tools/list sends. Clients send every definition to the model on every turn, so
 * the default surface is lean: no deprecated tools, no legacy or rarely needed arguments (still accepted),
 * no length bounds (the server checks them and refuses naming the field). `full` advertises everything.
 */
export type Surface = 'default' | 'full';

/** Arguments of the seeds every tool accepts that the default surface does not advertise. */
const SEED_ONLY = ['pid', 'window_id', 'scope', 'session', 'delivery_mode'];
const BOUNDS = [
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
];

export function inputSchemaOf(def: ToolDef, surface: Surface = 'full'): Record<string, unknown> {
  return once(def, surface, () => buildInputSchema(def, surface));
}

function buildInputSchema(def: ToolDef, surface: Surface): Record<string, unknown> {
  const schema = lean(jsonSchema(def.input, 'input')) as Record<string, unknown>;
  // x,y's units (the screenshot's px) are said once, on get_window_state's include_screenshot.
  const all = schema.properties as Record<string, Record<string, unknown>>;
  if (all.x?.description && def.name !== 'get_window_state') all.x = { type: 'number' };
  if (surface === 'full') return schema;
  // Session tools keep `session`: it is what they are about.
  const hidden = new Set([...(def.sessionless ? [] : SEED_ONLY), ...(def.advanced ?? [])]);
  const properties = Object.fromEntries(
    Object.entries(schema.properties as Record<string, unknown>).filter(([k]) => !hidden.has(k)),
  );
  // The target's shape is spelled out once, on get_window_state; actions take the same (rarely: a token
  // carries its target, and the default is the current tab).
  if (properties.target && def.name !== 'get_window_state')
    properties.target = { type: 'object', description: 'As in get_window_state.' };
  const required = (schema.required as string[] | undefined)?.filter((k) => !hidden.has(k));
  return { ...schema, properties, ...(required?.length ? { required } : {}) };
}

/**
 * A JSON schema without what costs bytes and tells a model little: length and range bounds (zod's
 * safe-integer bound 9007199254740991 among them), `additionalProperties: false`, a string type beside an
 * enum, empty defaults, a record's "string keys, any values". The server still checks all of it and
 * refuses naming the field. A union of objects told apart by `kind` (a target) becomes one object whose
 * `kind` is an enum.
 */
function lean(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(lean);
  if (!node || typeof node !== 'object') return node;
  const o = { ...(node as Record<string, any>) };
  const branches = (o.oneOf ?? o.anyOf) as Array<Record<string, any>> | undefined;
  if (branches?.length && branches.every((b) => b.type === 'object' && b.properties?.kind?.const !== undefined)) {
    const properties: Record<string, unknown> = { kind: { enum: branches.map((b) => b.properties.kind.const) } };
    for (const b of branches) for (const [k, v] of Object.entries(b.properties)) if (k !== 'kind') properties[k] ??= v;
    delete o.oneOf;
    delete o.anyOf;
    Object.assign(o, { type: 'object', properties, required: ['kind'] });
  }
  for (const k of BOUNDS) delete o[k];
  // An enum whose aliases are accepted but not worth a model's bytes names its advertised values (.meta).
  if (Array.isArray(o.advertise)) {
    if (o.enum) o.enum = o.advertise;
    delete o.advertise;
  }
  if (
    o.additionalProperties === false ||
    (typeof o.additionalProperties === 'object' && !Object.keys(o.additionalProperties).length)
  )
    delete o.additionalProperties;
  if (o.propertyNames?.type === 'string' && Object.keys(o.propertyNames).length === 1) delete o.propertyNames;
  if (o.default && typeof o.default === 'object' && !Object.keys(o.default).length) delete o.default;
  if (o.enum && o.type === 'string') delete o.type;
  // A field with one possible value (a target's display_id) says nothing.
  if (o.properties)
    o.properties = Object.fromEntries(
      Object.entries(o.properties as Record<string, any>).filter(
        ([, v]) => v?.const === undefined || v.default === undefined,
      ),
    );
  for (const [k, v] of Object.entries(o))
    if (typeof v === 'object' && k !== 'default' && k !== 'const' && k !== 'enum') o[k] = lean(v);
  return o;
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return withoutSafeIntegerBounds(rest) as Record<string, unknown>;
}

/** zod's z.int() bounds every integer by ±9007199254740991: bytes that say nothing. */
function withoutSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutSafeIntegerBounds);
  if (!node || typeof node !== 'object') return node;
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if ((k === 'maximum' && v === Number.MAX_SAFE_INTEGER) || (k === 'minimum' && v === Number.MIN_SAFE_INTEGER))
      continue;
    o[k] = withoutSafeIntegerBounds(v);
  }
  return o;
}

/** Validates arguments; a bad one is refused with `invalid_arguments` naming the field. */
export function parseArgs<S extends z.ZodObject>(def: ToolDef<S>, args: unknown): z.infer<S> {
  const parsed = def.input.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue.path.length
    ? issue.path.join('.')
    : issue.code === 'unrecognized_keys'
      ? (issue as any).keys.join(', ')
      : 'arguments';
  // `page` takes a tab as `tab_id`; the other tools name it as a target: say so where a model mixes them up.
  const hint =
    issue.code === 'unrecognized_keys' && (issue as any).keys.includes('tab_id') && def.input.shape.target
      ? '; name a tab as target: {"kind": "tab", "tab_id": "…"}'
      : '';
  throw new Refusal('invalid_arguments', `${field}: ${issue.message}${hint}`, {
    field,
    issues: parsed.error.issues.length,
  });
}

/** An action's result: isError for partial, mismatch and no_effect (the contract). */
export function actionReply(result: ActionResult): Reply {
  const failed = result.effect === 'partial' || result.effect === 'mismatch' || result.effect === 'no_effect';
  return { structured: result as unknown as Record<string, unknown>, isError: failed, text: summarize(result) };
}

/**
 * The text of an action's result. On isError (partial, mismatch, no_effect) clients show the model this
 * text and nothing else, so it carries every field of the result but the timings: what was delivered
 * (delivered_count), each piece of evidence with expected and observed, what the target holds now, and
 * what to try next. Long strings are cut (TEXT_FIELD_MAX) and say how long they were.
 */
export function summarize(result: ActionResult): string {
  const head = `${result.effect}${result.method ? ` (${result.method})` : ''}${result.target ? ` on ${result.target}` : ''}, route ${result.route}`;
  const lines = [head];
  const { mode, delivered_count } = result.delivery;
  lines.push(`delivery: ${mode}${delivered_count !== undefined ? `, delivered_count ${delivered_count}` : ''}`);
  for (const e of result.evidence ?? []) {
    const parts = [
      e.expected !== undefined ? `expected ${show(e.expected)}` : '',
      e.observed !== undefined ? `observed ${show(e.observed)}` : '',
      e.detail ?? '',
    ].filter(Boolean);
    lines.push(`evidence ${e.kind}: ${parts.join(', ')}`);
  }
  if (result.observed !== undefined) lines.push(`holds now: ${show(result.observed)}`);
  if (result.escalation) lines.push(`next: ${result.escalation.target}: ${result.escalation.reason}`);
  for (const e of result.side_effects ?? []) {
    lines.push(
      e.kind === 'tab_opened'
        ? `Opened tab ${e.tab_id} (${e.url || 'its URL not known yet'}); drive it with its tab_id`
        : e.kind === 'download'
          ? e.state === 'refused'
            ? `Download ${e.file} refused: ${e.code}: ${e.detail}`
            : `Downloaded ${e.file}${e.size_bytes !== undefined ? ` (${e.size_bytes} bytes)` : ''} (${e.state})`
          : `A ${e.type} dialog is open (${show(e.message)}); answer it with page handle_dialog`,
    );
  }
  lines.push(...causedLines(result.caused));
  const known = new Set([
    'effect',
    'method',
    'target',
    'route',
    'delivery',
    'evidence',
    'observed',
    'escalation',
    'side_effects',
    'caused',
    'timings_ms',
  ]);
  for (const [k, v] of Object.entries(result)) if (!known.has(k) && v !== undefined) lines.push(`${k}: ${show(v)}`);
  return lines.join('\n');
}

const TEXT_FIELD_MAX = 2000;

/** What the action caused on its page, one line each (the result's `caused`). */
function causedLines(caused: ActionResult['caused']): string[] {
  if (!caused) return [];
  const lines: string[] = [];
  if (caused.navigated !== undefined) lines.push(`Navigated to ${caused.navigated}`);
  for (const r of caused.requests ?? [])
    lines.push(
      `Request ${r.method} ${r.url}: ${r.failed !== undefined ? `failed (${r.failed})` : r.status !== undefined ? r.status : 'no answer yet'}`,
    );
  if (caused.more_requests) lines.push(`…and ${caused.more_requests} more requests (page network_requests lists them)`);
  for (const m of caused.console ?? [])
    lines.push(`${m.level === 'exception' ? 'Uncaught exception' : `Console ${m.level}`}: ${m.text}`);
  if (caused.more_console)
    lines.push(`…and ${caused.more_console} more console errors (page console_messages lists them)`);
  return lines;
}

/** A value as one line of a result's text: strings quoted (JSON), anything else as JSON, long ones cut. */
function show(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > TEXT_FIELD_MAX ? `${json.slice(0, TEXT_FIELD_MAX)}… (${json.length} chars in all)` : json;
}

/**
 * A refusal: the code and message, then every detail (current_snapshot_ids, max_chunk_chars,
 * covering_element, retryable, ...) one per line, because on an error the text is all the model sees.
 */
export function refusalText(refusal: Refusal): string {
  const lines = [`refused: ${refusal.code}: ${refusal.message}`];
  for (const [k, v] of Object.entries(refusal.details))
    if (v !== undefined) lines.push(`${k}: ${typeof v === 'string' ? v : show(v)}`);
  return lines.join('\n');
}

/** The text of a result known only by its structuredContent (a batch step's): a refusal's or an action's. */
export function textOfStructured(structured: Record<string, any>): string {
  if (structured?.status === 'refused' && structured.refusal) {
    const { code, message, ...details } = structured.refusal;
    return refusalText(new Refusal(code, message, details));
  }
  if (typeof structured?.effect === 'string' && structured.delivery) return summarize(structured as ActionResult);
  return JSON.stringify(structured);
}

export function refusalReply(refusal: Refusal): Reply {
  return {
    structured: { status: 'refused', refusal: { code: refusal.code, message: refusal.message, ...refusal.details } },
    isError: true,
    text: refusalText(refusal),
  };
}

export function toCallToolResult(reply: Reply): CallToolResult {
  const content: CallToolResult['content'] = [];
  for (const image of reply.images ?? []) content.push({ type: 'image', data: image.data, mimeType: image.mimeType });
  content.push({ type: 'text', text: reply.text ?? JSON.stringify(reply.structured) });
  return { content, structuredContent: reply.structured, ...(reply.isError ? { isError: true } : {}) };
}
