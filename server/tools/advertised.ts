// A tool's schemas as tools/list advertises them: the input schema per surface (the lean default, or
// `full`) and the output schema (success or refusal), each built once per process from the tool's zod
// declaration (define.ts), shared repeats and all.
import { z } from 'zod';
import type { ToolDef } from './context.js';
import { refusal as refusalSchema } from './schemas.js';

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
  // The target's shape is spelled out once, on get_window_state (said there: every tool takes the same);
  // elsewhere it is rarely needed: a token carries its target, and the default is the current tab.
  if (properties.target && def.name === 'get_window_state')
    properties.target = {
      ...(properties.target as object),
      description: "Default: the current tab. Every tool's target is this.",
    };
  else if (properties.target) properties.target = { type: 'object' };
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
  // A field the tool's description already names (.meta({ described: true })): its schema is not repeated.
  if (o.properties)
    o.properties = Object.fromEntries(
      Object.entries(o.properties as Record<string, any>).filter(([, v]) => v?.described !== true),
    );
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
