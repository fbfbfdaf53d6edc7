// The fuzz load (issue #22): generated inputs for every tool (every `page` action), every gateway method
// and frame, and the /pair, /audit/export and /mcp endpoints, with fast-check and a fixed seed. Arbitraries
// are derived from the zod 4 schemas themselves (zod-fast-check does not support zod 4): a walk of each
// schema's `_zod.def` gives valid-but-odd values (bounds exactly, unicode edge cases, -0), and generic
// hostile values (deep nesting, huge strings, wrong types, lone surrogates, `__proto__`/`constructor` keys,
// NaN/Infinity) replace one field at a time, or the whole input. Every answer is checked to be well formed
// (the tool's output schema or a refusal; the protocol's response frame and the method's result schema),
// and tallied by outcome. The npm-test tier (test/security/fuzz-*.test.ts) and the soak (bench/soak.ts)
// both run it.
//
// What really acts is kept harmless: URLs are about:blank, data: or a closed loopback port, file paths are
// under a temp dir, waits are short, terminals are never opened, JavaScript stays off (the default), and
// the processes under test run without DISPLAY, so nothing reaches the real desktop.
import fc from 'fast-check';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import WebSocket from 'ws';
import type { ToolDef } from '../server/tools/context.js';
import { refusal as refusalSchema } from '../server/tools/schemas.js';
import {
  connectParams,
  helloOk,
  METHOD_SCHEMAS,
  responseFrame,
  SCOPES,
  type Method,
} from '../server/gateway/protocol.js';
import { EXTENSION_ID } from '../server/gateway/extension-id.js';

export const FUZZ_SEED = 22_2026;

// ---- arbitraries from zod 4 schemas ----

type Def = { type: string; [k: string]: any };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;
const bagOf = (schema: z.ZodType): Record<string, any> =>
  (schema as unknown as { _zod: { bag?: Record<string, any> } })._zod.bag ?? {};

/** Strings a parser, a printer or a comparison may get wrong: lone surrogates, combining marks, RTL, NUL. */
export const ODD_STRINGS = [
  '\ud800',
  '\udfff',
  'a\ud83d',
  '\u0000',
  'e\u0301',
  '\u202eevil',
  '\ufeff',
  '👩‍👩‍👧‍👦',
  '𝔘𝔫𝔦',
  '\r\n\t',
  '"\'`<>&',
  '__proto__',
  'constructor',
  'toString',
  ' ',
];

const oddString = (min: number, max: number): fc.Arbitrary<string> => {
  const fits = ODD_STRINGS.filter((s) => s.length >= min && s.length <= max);
  const cap = Math.min(max, Math.max(min, 24));
  const generated = fc.string({ minLength: min, maxLength: cap, unit: 'binary' });
  const arbs: fc.Arbitrary<string>[] = [generated, fc.string({ minLength: min, maxLength: cap })];
  if (fits.length) arbs.push(fc.constantFrom(...fits));
  // Exactly at the bounds (only where a bound is small enough to build many times).
  if (max <= 100_000) arbs.push(fc.constant('x'.repeat(max)));
  if (min > 0) arbs.push(fc.constant('y'.repeat(min)));
  return fc.oneof(...arbs);
};

const numberIn = (bag: Record<string, any>): fc.Arbitrary<number> => {
  const int = bag.format === 'safeint' || bag.format === 'int32' || bag.format === 'uint32';
  let min = bag.minimum ?? (int ? Number.MIN_SAFE_INTEGER : -1e9);
  let max = bag.maximum ?? (int ? Number.MAX_SAFE_INTEGER : 1e9);
  if (bag.exclusiveMinimum !== undefined) min = int ? bag.exclusiveMinimum + 1 : bag.exclusiveMinimum + 1e-9;
  if (bag.exclusiveMaximum !== undefined) max = int ? bag.exclusiveMaximum - 1 : bag.exclusiveMaximum - 1e-9;
  const edges = [min, max, ...(min <= 0 && max >= 0 ? [0, -0] : [])];
  return int
    ? fc.oneof(fc.integer({ min: Math.ceil(min), max: Math.floor(max) }), fc.constantFrom(...edges.map(Math.round)))
    : fc.oneof(fc.double({ min, max, noNaN: true }), fc.constantFrom(...edges));
};

/** Overrides by field name, for fields whose valid values would really act (URLs, paths, waits). */
export type Overrides = Record<string, fc.Arbitrary<unknown>>;

/** A valid-but-odd value of `schema` (as far as its checks can be read; refinements may still refuse it). */
export function validOf(schema: z.ZodType, overrides: Overrides = {}, depth = 0): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const bag = bagOf(schema);
  const inner = (s: z.ZodType) => validOf(s, overrides, depth + 1);
  switch (def.type) {
    case 'string': {
      const patterns = bag.patterns as Set<RegExp> | undefined;
      if (patterns?.size) return fc.stringMatching([...patterns][0]!);
      return oddString(bag.minimum ?? 0, bag.maximum ?? 200);
    }
    case 'number':
      return numberIn(bag);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'undefined':
    case 'void':
      return fc.constant(undefined);
    case 'literal':
      return fc.constantFrom(...(def.values as unknown[]));
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries as Record<string, unknown>));
    case 'optional':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return inner(def.innerType);
    case 'nullable':
      return fc.oneof(fc.constant(null), inner(def.innerType));
    case 'pipe':
      return inner(def.in);
    case 'lazy':
      return depth > 6 ? fc.constant(null) : inner(def.getter());
    case 'union':
      return fc.oneof(...(def.options as z.ZodType[]).map(inner));
    case 'intersection':
      return fc.tuple(inner(def.left), inner(def.right)).map(([a, b]) => ({ ...(a as object), ...(b as object) }));
    case 'array': {
      const min = bag.minimum ?? 0;
      return fc.array(inner(def.element), { minLength: min, maxLength: Math.min(bag.maximum ?? 4, min + 4) });
    }
    case 'tuple':
      return fc.tuple(...(def.items as z.ZodType[]).map(inner));
    case 'record':
      return fc.dictionary(oddString(1, 12), inner(def.valueType), { maxKeys: 3 });
    case 'object': {
      const shape = def.shape as Record<string, z.ZodType>;
      const fields: Record<string, fc.Arbitrary<unknown>> = {};
      const required: string[] = [];
      for (const [key, field] of Object.entries(shape)) {
        fields[key] = overrides[key] ?? inner(field);
        const optional = (field as unknown as { _zod: { optin?: string } })._zod.optin === 'optional';
        if (!optional) required.push(key);
      }
      return fc.record(fields, { requiredKeys: required });
    }
    default:
      // unknown, any, transform, custom: small JSON.
      return depth > 4 ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  }
}

/** `{a: {a: ... 1}}`, `levels` objects deep (built in a loop: nothing here recurses). */
export function nested(levels: number, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = i % 2 ? { a: v } : [v];
  return v;
}

/** An object with an own `key` (defineProperty: `__proto__` as a key, not the prototype). */
function withKey(base: unknown, key: string, value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = base && typeof base === 'object' && !Array.isArray(base) ? { ...base } : {};
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

/** Values no schema asks for. Huge strings and deep nesting are built once and shared (they are only read). */
const HUGE = 'h'.repeat(1_000_001);
const LONG = 'l'.repeat(200_001);
const DEEP = nested(5000);
const DEEPISH = nested(65);
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    Number.NaN,
    Infinity,
    -Infinity,
    -0,
    1e308,
    -1e-308,
    Number.MAX_SAFE_INTEGER + 2,
    null,
    true,
    '',
    [],
    {},
    HUGE,
    LONG,
    DEEP,
    DEEPISH,
    JSON.parse('{"__proto__": {"polluted": true}}'),
    { constructor: { prototype: { polluted: true } } },
    JSON.parse('{"toString": 1, "valueOf": {}, "hasOwnProperty": null}'),
    new Array(100).fill({ a: '\ud800' }),
  ),
  fc.constantFrom(...ODD_STRINGS),
  fc.integer({ min: 60, max: 3000 }).map((n) => nested(n)),
  fc.anything({ maxDepth: 3, withNullPrototype: true, withObjectString: true }),
);

/** One field of a valid value replaced (or added: a prototype key, an unknown key) by a hostile value. */
function mutated(valid: fc.Arbitrary<unknown>, keys: string[]): fc.Arbitrary<unknown> {
  return fc
    .tuple(valid, fc.constantFrom(...keys, '__proto__', 'constructor', 'extra_field'), hostile)
    .map(([value, key, bad]) => withKey(value, key, bad));
}

/** Inputs for one schema: valid-but-odd, one field hostile, or the whole input hostile. */
export function inputsOf(schema: z.ZodType, overrides: Overrides = {}): fc.Arbitrary<unknown> {
  const valid = validOf(schema, overrides);
  const def = defOf(schema);
  const keys = def.type === 'object' ? Object.keys(def.shape) : ['x'];
  return fc.oneof(
    { weight: 4, arbitrary: valid },
    { weight: 4, arbitrary: mutated(valid, keys) },
    { weight: 1, arbitrary: hostile },
  );
}

// ---- the harmless values for fields that act ----

export function safeOverrides(dir = tmpdir()): Overrides {
  return {
    url: fc.constantFrom(
      'about:blank',
      'data:text/html,<p id=x>fuzz</p><input aria-label=f>',
      'data:text/html,%ED%A0%80',
      'http://127.0.0.1:9/',
      'about:blank#\ud800',
      'file:///nonexistent/verity-fuzz',
      'javascript:void(0)',
      'chrome://version',
      'not a url',
    ),
    paths: fc.array(fc.constantFrom(join(dir, 'fuzz.txt'), '/nonexistent/verity-fuzz', 'relative/x', '\ud800'), {
      minLength: 1,
      maxLength: 3,
    }),
    code: fc.constant('1 + 1'),
    timeout_ms: fc.integer({ min: 0, max: 200 }),
    delay_ms: fc.integer({ min: 0, max: 5 }),
    duration_ms: fc.integer({ min: 0, max: 50 }),
    text: oddString(0, 40),
    value: oddString(0, 40),
    recording_dir: fc.constantFrom('fuzz-rec', '../outside', '/abs', '\ud800', 'a/../../b'),
  };
}

// ---- the tally ----

export class Tally {
  inputs = 0;
  crashes = 0;
  hangs = 0;
  malformed = 0;
  readonly outcomes = new Map<string, number>();
  readonly failures: string[] = [];

  note(outcome: string): void {
    this.inputs++;
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
  }

  fail(kind: 'crash' | 'hang' | 'malformed', what: string, input: unknown): void {
    if (kind === 'crash') this.crashes++;
    else if (kind === 'hang') this.hangs++;
    else this.malformed++;
    if (this.failures.length < 10) this.failures.push(`${kind}: ${what} (input ${preview(input)})`);
  }

  /** `refused:invalid_arguments 812, ok 301, ...`, most frequent first. */
  summary(): string {
    return [...this.outcomes]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  }

  merge(other: Tally): void {
    this.inputs += other.inputs;
    this.crashes += other.crashes;
    this.hangs += other.hangs;
    this.malformed += other.malformed;
    for (const [k, n] of other.outcomes) this.outcomes.set(k, (this.outcomes.get(k) ?? 0) + n);
    for (const f of other.failures) if (this.failures.length < 10) this.failures.push(f);
  }
}

/** A value's first characters as JSON (deep and huge ones never stringified whole). */
export function preview(value: unknown): string {
  try {
    const text = JSON.stringify(value, (_k, v) =>
      typeof v === 'string' && v.length > 60 ? `${v.slice(0, 60)}…(${v.length})` : v,
    );
    return (text ?? String(value)).slice(0, 200);
  } catch (e) {
    return `<${(e as Error).message.slice(0, 60)}>`;
  }
}

/** Resolves with the promise's value, or 'hang' after `ms` (every wait here has a bound). */
export function bounded<T>(p: Promise<T>, ms: number): Promise<T | 'hang'> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<'hang'>((r) => {
      timer = setTimeout(() => r('hang'), ms);
    }),
  ]);
}

const CASE_BOUND_MS = 30_000;

// ---- tools over MCP (in-memory or HTTP: any SDK client) ----

export interface ToolFuzzOptions {
  runs: number;
  seed?: number;
  overrides?: Overrides;
  /** Called after every `every` cases: throws when the server is no longer serving. */
  alive?: () => Promise<void>;
  every?: number;
  /**
   * A client for the next tool's cases: each tool starts on a fresh connection, so that one tool's valid
   * calls (end_session, close_tab) do not leave every later case refused for the same reason.
   */
  fresh?: () => Promise<Client>;
}

/** The (tool, arguments) cases: every tool, and each `page` action on its own, `runs` cases each. */
export function toolCases(tools: ToolDef[], opts: ToolFuzzOptions): Array<{ tool: ToolDef; args: unknown }> {
  const overrides = opts.overrides ?? safeOverrides();
  const cases: Array<{ tool: ToolDef; args: unknown }> = [];
  let seed = opts.seed ?? FUZZ_SEED;
  const add = (tool: ToolDef, arb: fc.Arbitrary<unknown>, runs: number) => {
    for (const args of fc.sample(arb, { seed: seed++, numRuns: runs })) cases.push({ tool, args });
  };
  for (const tool of tools) {
    const actions = defOf(tool.input).shape?.action;
    if (tool.name === 'page' && actions) {
      const names = Object.values(defOf(actions).entries as Record<string, string>);
      for (const action of names)
        add(tool, inputsOf(tool.input, { ...overrides, action: fc.constant(action) }), Math.ceil(opts.runs / 2));
    } else add(tool, inputsOf(tool.input, overrides), opts.runs);
  }
  return cases;
}

/** Runs the cases through an SDK client; every reply must be a result of the tool's output schema or a refusal. */
export async function fuzzTools(client: Client, tools: ToolDef[], opts: ToolFuzzOptions, tally = new Tally()) {
  const cases = toolCases(tools, opts);
  let n = 0;
  let last: ToolDef | null = null;
  for (const { tool, args } of cases) {
    if (opts.fresh && tool !== last) client = await opts.fresh();
    last = tool;
    const answer = await bounded(
      client.callTool({ name: tool.name, arguments: args as Record<string, unknown> }).then(
        (r) => ({ r }),
        (e: Error & { code?: number }) => ({ e }),
      ),
      CASE_BOUND_MS,
    );
    if (answer === 'hang') tally.fail('hang', `${tool.name} gave no answer in ${CASE_BOUND_MS} ms`, args);
    // The client could not serialize it (JSON.stringify of a 5,000-deep value): it never left this process.
    else if ('e' in answer && answer.e instanceof RangeError) tally.note('unsendable');
    else if ('e' in answer) {
      // The SDK client rejects a structuredContent that does not match the advertised outputSchema.
      if (/output schema|structured content/i.test(answer.e.message))
        tally.fail('malformed', `${tool.name}: ${answer.e.message.slice(0, 200)}`, args);
      else if (typeof answer.e.code === 'number') tally.note(`jsonrpc:${answer.e.code}`);
      else tally.fail('malformed', `${tool.name}: ${answer.e.message.slice(0, 200)}`, args);
    } else {
      const problem = wellFormedResult(tool, answer.r);
      if (problem) tally.fail('malformed', `${tool.name}: ${problem}`, args);
      else tally.note(outcomeOf(answer.r.structuredContent as Record<string, any>));
    }
    if (opts.alive && ++n % (opts.every ?? 50) === 0) await opts.alive();
  }
  return tally;
}

/** Why a tools/call result is not what the contract says, or null. */
function wellFormedResult(tool: ToolDef, r: Awaited<ReturnType<Client['callTool']>>): string | null {
  const content = r.content as Array<{ type: string; text?: string }> | undefined;
  if (!Array.isArray(content) || !content.some((c) => c.type === 'text' && typeof c.text === 'string'))
    return 'no text item';
  const structured = r.structuredContent as Record<string, any> | undefined;
  if (!structured) return 'no structuredContent';
  if (structured.status === 'refused') {
    if (r.isError !== true) return 'a refusal without isError';
    const parsed = refusalSchema.safeParse(structured);
    return parsed.success ? null : `refusal of the wrong shape: ${parsed.error.issues[0]?.message}`;
  }
  const parsed = tool.output.safeParse(structured);
  return parsed.success
    ? null
    : `result of the wrong shape: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`;
}

function outcomeOf(structured: Record<string, any>): string {
  if (structured.status === 'refused') return `refused:${structured.refusal.code}`;
  if (typeof structured.effect === 'string') return `effect:${structured.effect}`;
  return 'ok';
}

// ---- gateway frames ----

/** Methods whose valid params would start something real on this machine (a shell): only ever sent invalid. */
const NEVER_VALID: ReadonlySet<string> = new Set(['terminal.open', 'terminal.input']);

export interface FrameCase {
  /** The frame as sent: text (JSON or not) or a binary buffer. */
  frame: string | Buffer;
  method?: Method;
  /** The id the answer must carry (null: the frame has none a reply can name). */
  id: string | number | null;
  /** What a successful answer's payload must be (default: the method's result schema). */
  result?: z.ZodType;
  /** Sent on a socket of its own that has not connected yet. */
  fresh?: boolean;
}

/** `connect` frames, each on a fresh socket: generated params, the real credential in some, hostile ones in others. */
export function connectCases(token: string, runs: number, seed = FUZZ_SEED): FrameCase[] {
  const tokens = fc.constantFrom(token, 'wrong-token', `${token}\u0000`, '\ud800', token.toUpperCase());
  const arb = inputsOf(connectParams, { token: tokens, scopes: fc.subarray([...SCOPES]) });
  return fc.sample(arb, { seed, numRuns: runs }).flatMap((params, i) => {
    const frame = safeStringify({ type: 'req', id: `c${i}`, method: 'connect', params });
    return frame === null ? [] : [{ frame, id: `c${i}`, result: helloOk, fresh: true }];
  });
}

/** Request frames for every method (valid-but-odd and hostile params), plus frames that are not requests. */
export function frameCases(runs: number, seed = FUZZ_SEED, overrides: Overrides = safeOverrides()): FrameCase[] {
  const cases: FrameCase[] = [];
  let id = 1000;
  let s = seed;
  for (const method of Object.keys(METHOD_SCHEMAS) as Method[]) {
    const schema = METHOD_SCHEMAS[method].params as z.ZodType;
    const arb = NEVER_VALID.has(method) ? fc.oneof(hostile, fc.constantFrom(1, 'x', [])) : inputsOf(schema, overrides);
    for (const params of fc.sample(arb, { seed: s++, numRuns: runs })) {
      const text = safeStringify({ type: 'req', id: ++id, method, params });
      if (text === null) continue;
      cases.push({ frame: text, method, id });
    }
  }
  // Frames that are not well-formed requests: no answer can name an id, except where one parses.
  const odd = fc.oneof(
    fc.string({ maxLength: 64, unit: 'binary' }),
    fc.constantFrom('', '{', 'null', '[]', '"req"', '{"type":"req"}', '{"type":"req","id":{},"method":"x"}', '\ud800'),
    hostile.map((v) => safeStringify(v) ?? 'null'),
    fc
      .record({
        type: fc.oneof(fc.constant('req'), hostile),
        id: hostile,
        method: fc.oneof(fc.string(), hostile),
        params: hostile,
      })
      .map((f) => safeStringify(f) ?? 'null'),
  );
  for (const text of fc.sample(odd, { seed: s++, numRuns: runs * 4 })) cases.push({ frame: text, id: null });
  cases.push({ frame: Buffer.from([0xff, 0, 1, 2]), id: null });
  return cases;
}

function safeStringify(value: unknown): string | null {
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    return null;
  }
}

/** Why a frame from the gateway is not a well-formed answer (to `method`, with `id`), or null. */
export function badAnswer(frame: unknown, c: FrameCase): string | null {
  const parsed = responseFrame.safeParse(frame);
  if (!parsed.success) return `not a response frame: ${parsed.error.issues[0]?.message}`;
  const f = parsed.data;
  if (c.id !== null && f.id !== c.id) return `answered id ${f.id}, sent ${c.id}`;
  const schema = c.result ?? (c.method ? (METHOD_SCHEMAS[c.method].result as z.ZodType) : undefined);
  if (f.ok && schema) {
    const result = schema.safeParse(f.payload);
    if (!result.success)
      return `${c.method} result of the wrong shape: ${result.error.issues[0]?.path.join('.')}: ${result.error.issues[0]?.message}`;
  }
  return null;
}

export interface GatewaySocket {
  ws: WebSocket;
  /** The next response frame (events skipped), or 'hang'/'closed'. */
  next(ms: number): Promise<unknown | 'hang' | 'closed'>;
}

/**
 * A gateway socket for the fuzz: with `token`, connected (all scopes) before it is handed out; without,
 * still before connect (so the frames meet the pre-connect checks).
 */
export async function openFuzzSocket(base: string, token?: string): Promise<GatewaySocket> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/gateway`);
  const queue: unknown[] = [];
  let wake: (() => void) | null = null;
  let closed = false;
  ws.on('message', (d) => {
    let f: { type?: string } | undefined;
    try {
      f = JSON.parse(String(d));
    } catch {
      f = { type: 'unparseable' };
    }
    if (f?.type === 'event') return;
    queue.push(f);
    wake?.();
  });
  ws.on('close', () => {
    closed = true;
    wake?.();
  });
  ws.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`gateway refused the upgrade: ${res.statusCode}`)));
  });
  const next = async (ms: number): Promise<unknown> => {
    const deadline = Date.now() + ms;
    while (!queue.length) {
      if (closed) return 'closed';
      const left = deadline - Date.now();
      if (left <= 0) return 'hang';
      await new Promise<void>((r) => {
        const timer = setTimeout(r, left);
        wake = () => {
          clearTimeout(timer);
          r();
        };
      });
      wake = null;
    }
    return queue.shift();
  };
  if (token) {
    ws.send(
      JSON.stringify({
        type: 'req',
        id: 'hello',
        method: 'connect',
        params: {
          client: { id: 'fuzz', version: '1', mode: 'test' },
          caps: [],
          role: 'operator',
          scopes: ['operator.read', 'operator.write', 'operator.admin', 'operator.approvals'],
          auth: { token },
        },
      }),
    );
    const hello = (await next(CASE_BOUND_MS)) as { ok?: boolean } | string;
    if (typeof hello !== 'object' || !hello.ok) throw new Error(`connect failed: ${preview(hello)}`);
  }
  return { ws, next };
}

/**
 * Sends each frame case on a connected socket (`open` makes one, after connect) and checks its answer.
 * A socket the gateway closed (a frame it may close on) is replaced; `alive` is asked after every case.
 */
export async function fuzzFrames(
  open: (connected: boolean) => Promise<GatewaySocket>,
  cases: FrameCase[],
  alive: () => boolean,
  tally = new Tally(),
): Promise<Tally> {
  let sock: GatewaySocket | null = null;
  for (const c of cases) {
    if (c.fresh || !sock || sock.ws.readyState !== sock.ws.OPEN) {
      sock?.ws.close();
      sock = await open(!c.fresh);
    }
    sock.ws.send(c.frame, { binary: Buffer.isBuffer(c.frame) });
    const answer = await sock.next(CASE_BOUND_MS);
    if (!alive()) {
      tally.fail('crash', `the gateway process died after ${c.method ?? 'a raw frame'}`, c.frame);
      return tally;
    }
    // A connect case's socket is done with: the next case gets the operator socket again.
    if (c.fresh) {
      sock.ws.close();
      sock = null;
    }
    if (answer === 'hang') tally.fail('hang', `no answer to ${c.method ?? 'a raw frame'}`, c.frame);
    else if (answer === 'closed') tally.note('closed');
    else {
      const problem = badAnswer(answer, c);
      if (problem) tally.fail('malformed', problem, c.frame);
      else {
        const f = answer as { ok: boolean; error?: { code: string } };
        tally.note(f.ok ? 'ok' : `error:${f.error!.code}`);
      }
    }
  }
  sock?.ws.close();
  return tally;
}

// ---- HTTP endpoints: /pair, /audit/export, /mcp, and odd request lines ----

export interface Endpoint {
  base: string;
  agentToken: string;
  operatorToken: string;
  /** A fresh one-time export URL (audit.export over the gateway), for the export endpoint's valid case. */
  exportUrl?: () => Promise<string | null>;
}

const EXTENSION_ORIGIN = `chrome-extension://${EXTENSION_ID}`;

interface HttpCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Requests to every endpoint: odd methods, origins, credentials, bodies (JSON and not, deep, huge). */
export function httpCases(e: Endpoint, runs: number, seed = FUZZ_SEED): HttpCase[] {
  const host = new URL(e.base).host;
  const body = fc.oneof(
    fc.string({ maxLength: 200, unit: 'binary' }),
    hostile.map((v) => safeStringify(v) ?? ''),
    fc
      .record({ token: fc.oneof(fc.constant(e.operatorToken), hostile), replaces: hostile })
      .map((v) => safeStringify(v) ?? ''),
    fc.constant('x'.repeat(5000)),
  );
  const pair = fc.record({
    method: fc.constantFrom('POST', 'GET', 'OPTIONS', 'PUT'),
    path: fc.constantFrom('/pair', '/pair?x=%ff', '/pair/'),
    headers: fc.record({
      host: fc.constant(host),
      origin: fc.constantFrom(EXTENSION_ORIGIN, 'http://evil.example', 'null', `http://${host}`),
      'content-type': fc.constantFrom('application/json', 'text/plain'),
    }),
    body,
  });
  const exported = fc.record({
    method: fc.constantFrom('GET', 'POST', 'HEAD'),
    path: fc.oneof(
      fc.string({ maxLength: 80 }).map((t) => `/audit/export?ticket=${encodeURIComponent(t)}`),
      fc.constantFrom(
        '/audit/export',
        '/audit/export?ticket=',
        '/audit/export?ticket=%ED%A0%80',
        '/audit/export?ticket=a&ticket=b',
      ),
    ),
    headers: fc.record({ host: fc.constant(host) }),
  });
  const jsonRpc = fc.oneof(
    hostile.map((v) => safeStringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: v }) ?? ''),
    hostile.map(
      (v) =>
        safeStringify({
          jsonrpc: '2.0',
          id: v,
          method: 'tools/call',
          params: { name: 'list_sessions', arguments: v },
        }) ?? '',
    ),
    hostile.map((v) => safeStringify(v) ?? ''),
    fc.constant(`${'['.repeat(20_000)}${']'.repeat(20_000)}`),
    fc.constant(
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)},"clientInfo":{"name":"x","version":"1"}}}`,
    ),
  );
  const mcp = fc.record({
    method: fc.constantFrom('POST', 'GET', 'DELETE'),
    path: fc.constant('/mcp'),
    headers: fc.record({
      host: fc.constant(host),
      authorization: fc.constantFrom(`Bearer ${e.agentToken}`, `Bearer ${e.operatorToken}`, 'Bearer \ud800', ''),
      'content-type': fc.constant('application/json'),
      accept: fc.constant('application/json, text/event-stream'),
      'mcp-session-id': fc.constantFrom('', 'nope', '\u0000'),
    }),
    body: jsonRpc,
  });
  return fc.sample(fc.oneof(pair, exported, mcp), { seed, numRuns: runs }) as HttpCase[];
}

/** Odd request lines on a raw socket (paths Node's URL parser rejects among them). */
export const ODD_REQUEST_LINES = [
  'GET //[ HTTP/1.1',
  'GET //[::1 HTTP/1.1',
  'GET /%zz HTTP/1.1',
  'GET //x:y@[ HTTP/1.1',
  'GET * HTTP/1.1',
  'OPTIONS * HTTP/1.1',
  'GET http://[/ HTTP/1.1',
];

function send(base: string, c: HttpCase): Promise<{ status: number; body: string } | 'failed'> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const headers = Object.fromEntries(
      Object.entries(c.headers).filter(([, v]) => v !== '' && !/[^\t\x20-\x7e]/.test(v)),
    );
    // A socket of its own per case (no keep-alive agent): one case's answer never lands on another's socket.
    const req = request(
      { host: url.hostname, port: url.port, path: c.path, method: c.method, headers, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          if (body.length < 100_000) body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', () => resolve('failed'));
      },
    );
    req.on('error', () => resolve('failed'));
    req.setTimeout(CASE_BOUND_MS, () => req.destroy());
    req.end(c.method === 'GET' || c.method === 'HEAD' ? undefined : c.body);
  });
}

function rawLine(base: string, line: string): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname, () =>
      socket.write(`${line}\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    socket.setTimeout(CASE_BOUND_MS, () => socket.destroy());
    socket.on('data', (d) => {
      text += d;
    });
    socket.on('close', () => resolve(text));
    socket.on('error', () => resolve(text));
  });
}

/** Every HTTP case answered with a status (and JSON where the endpoint speaks JSON), the process alive after each. */
export async function fuzzHttp(e: Endpoint, runs: number, alive: () => boolean, tally = new Tally(), seed = FUZZ_SEED) {
  const cases = httpCases(e, runs, seed);
  if (e.exportUrl)
    for (let i = 0; i < 3; i++) {
      const path = await e.exportUrl();
      if (path) cases.push({ method: 'GET', path, headers: { host: new URL(e.base).host } });
    }
  for (const c of cases) {
    const answer = await send(e.base, c);
    if (!alive()) {
      tally.fail('crash', `the gateway process died after ${c.method} ${c.path}`, c);
      return tally;
    }
    if (answer === 'failed') {
      tally.fail('malformed', `${c.method} ${c.path}: no HTTP answer`, c);
      continue;
    }
    const pathname = c.path.split('?')[0];
    const endpoint =
      pathname === '/pair' ? 'pair' : pathname === '/mcp' ? 'mcp' : pathname === '/audit/export' ? 'export' : 'other';
    // /pair answers JSON always; a 500 anywhere is a defect that reached the boundary.
    const jsonExpected = endpoint === 'pair' && answer.status !== 204;
    if (answer.status >= 500 && answer.status !== 503)
      tally.fail('malformed', `${c.method} ${c.path}: ${answer.status} ${answer.body.slice(0, 120)}`, c);
    else if (jsonExpected && safeParse(answer.body) === undefined)
      tally.fail('malformed', `${c.path}: not JSON: ${answer.body.slice(0, 120)}`, c);
    else tally.note(`http:${endpoint}:${answer.status}`);
  }
  for (const line of ODD_REQUEST_LINES) {
    const text = await rawLine(e.base, line);
    if (!alive()) {
      tally.fail('crash', `the gateway process died after "${line}"`, line);
      return tally;
    }
    const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
    if (!status) tally.fail('malformed', `"${line}": no HTTP answer`, line);
    else if (status.startsWith('5')) tally.fail('malformed', `"${line}": ${text.slice(0, 120)}`, line);
    else tally.note(`http:raw:${status}`);
  }
  return tally;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The one line the fuzz writes about itself: counts, and the outcomes by code. */
export function tallyLine(name: string, t: Tally): string {
  return `| ${name} | ${t.inputs + t.crashes + t.hangs + t.malformed} | ${t.crashes} | ${t.hangs} | ${t.malformed} | ${t.summary()} |`;
}
