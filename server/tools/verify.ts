// verify_state (issue 45): the task's done-gate. Reads the target afresh (never a snapshot taken before the
// call) through the routes' own observation paths — a tab's page agent and page activity, a window's AT-SPI
// tree and the window manager's list — as probes that leave the agent's tokens good, until every predicate
// held in `stable_samples` reads in a row or the time runs out. What a read says of each predicate, and how
// reads add up, is contract/verify.ts (pure); this file only takes the reads.
import { z } from 'zod';
import type { Driver, ResolvedTarget, Snapshot } from '../contract/driver.js';
import { Refusal } from '../contract/refusal.js';
import {
  DEFAULT_STABLE_SAMPLES,
  DEFAULT_TIMEOUT_MS,
  MAX_PREDICATES,
  MAX_STABLE_SAMPLES,
  MAX_TIMEOUT_MS,
  Stability,
  evaluate,
  familyOf,
  parsePredicates,
  type Observation,
  type ObservedWindow,
  type Predicate,
  type Verdict,
} from '../contract/verify.js';
import type { CallContext, ToolContext } from './context.js';
import { READ_ONLY, defineTool } from './define.js';
import { session, target } from './schemas.js';

/** Time between the starts of two reads: a flicker shorter than this is seen by one read at most. */
export const SAMPLE_INTERVAL_MS = 100;
/** How long one read may take when the call's own time is shorter (a read already under way is not cut). */
const READ_MIN_MS = 1_500;

export const verifyArgs = {
  expect: z.array(z.record(z.string(), z.unknown())).min(1).max(MAX_PREDICATES),
  timeout_ms: z.number().int().min(0).max(MAX_TIMEOUT_MS).default(DEFAULT_TIMEOUT_MS),
  stable_samples: z.number().int().min(1).max(MAX_STABLE_SAMPLES).default(DEFAULT_STABLE_SAMPLES),
};

const outcome = z.object({ index: z.number().int(), holds: z.boolean().nullable(), observed: z.unknown() });
export const verifyResult = z.object({
  status: z.enum(['satisfied', 'unsatisfied', 'unknown']),
  reason: z
    .enum([
      'ambiguous_selector',
      'target_missing',
      'observation_unavailable',
      'stability_unproven',
      'unsupported_predicate',
    ])
    .optional(),
  failed: z.number().int().optional(),
  candidates: z.array(z.unknown()).optional(),
  predicates: z.array(outcome),
  samples: z.number().int(),
  elapsed_ms: z.number().int(),
});
export type VerifyResult = z.infer<typeof verifyResult>;

export const verifyState = defineTool({
  name: 'verify_state',
  description:
    "Satisfied once all expect predicates held in stable_samples (2) reads in a row (timeout_ms 2000). {element:{role,name,name_contains,element_token},exists|absent|count|value_equals|value_contains|checked|selected|enabled|focused|visible}; {text_present|text_absent|url_equals|url_contains|url_matches|title_equals|title_contains}; {no_console_errors_since:mark}; {request:{url_contains,status_min,status_max},since:mark}; {window:{title,title_contains},exists|focused|frame}. mark: an action result's.",
  // Named in the description with their defaults: the schema's bytes go to what no description can say.
  advanced: ['timeout_ms', 'stable_samples'],
  input: z.strictObject({ target: target.optional(), ...verifyArgs, session }),
  output: verifyResult,
  annotations: READ_ONLY,
  taskCheck: true,
  async handler(args, core, ctx) {
    const predicates = parsePredicates(args.expect);
    const result = await verify(core, ctx, args.target, predicates, args);
    return { structured: result, text: verdictText(result) };
  },
});

/** One line a model can act on: the status, why, and what the first failing predicate observed. */
export function verdictText(r: VerifyResult): string {
  const head = `${r.status}${r.reason ? ` (${r.reason})` : ''} after ${r.samples} read${r.samples === 1 ? '' : 's'}, ${r.elapsed_ms} ms`;
  const failed = r.failed !== undefined ? r.predicates[r.failed] : undefined;
  return [
    head,
    ...(failed ? [`predicate ${failed.index} observed ${JSON.stringify(failed.observed)}`] : []),
    ...(r.candidates ? [`candidates ${JSON.stringify(r.candidates)}`] : []),
  ].join('\n');
}

/**
 * Samples the target until every predicate held in `stable_samples` reads in a row, or `timeout_ms` ran out
 * (bounded: one read at most past it). run_actions checks a step's `expect` through here too.
 */
export async function verify(
  core: ToolContext,
  ctx: CallContext,
  targetArg: unknown,
  predicates: Predicate[],
  opts: { timeout_ms: number; stable_samples: number },
): Promise<VerifyResult> {
  const began = performance.now();
  const deadline = began + opts.timeout_ms;
  const stability = new Stability(opts.stable_samples);
  const finish = (verdict: Verdict): VerifyResult => ({
    ...verdict,
    samples: stability.samples,
    elapsed_ms: Math.round(performance.now() - began),
  });
  let resolved: { target: ResolvedTarget; driver: Driver };
  try {
    resolved = await core.resolve({ target: targetArg as never }, ctx);
  } catch (e) {
    if (!(e instanceof Refusal) || e.code !== 'target_not_found') throw e;
    stability.miss(predicates.length, 'target_missing', e.message);
    return finish(stability.verdict());
  }
  const { target, driver } = resolved;
  // Tokens name elements of the target's latest observation; a token of another target is a mistake.
  const tokens = new Map<string, unknown>();
  predicates.forEach((p, i) => {
    const token = (p as { element?: { element_token?: string } }).element?.element_token;
    if (token === undefined) return;
    const t = core.snapshots.resolve(token);
    if (t.kind !== target.kind || t.key !== target.key)
      throw new Refusal(
        'invalid_arguments',
        `expect.${i}.element.element_token: the token names an element of another target (${t.kind} ${t.key}); verify that target or name the element by role and name`,
        { field: `expect.${i}.element.element_token` },
      );
    tokens.set(token, t.element.ref);
  });
  // What the reads must take: the elements (element predicates, and a page's text), the page, the windows.
  const families = new Set<string>(
    predicates.map((p) => {
      const { family, check } = familyOf(p);
      return check === 'text_present' || check === 'text_absent' ? 'text' : family;
    }),
  );
  for (;;) {
    const readBegan = performance.now();
    try {
      const read = readTarget(core, target, driver, families, tokens);
      const o = await boundedRead(read, Math.max(deadline - readBegan, READ_MIN_MS), target);
      stability.add(evaluate(predicates, o));
    } catch (e) {
      const gone = e instanceof Refusal && e.code === 'target_not_found';
      stability.miss(predicates.length, gone ? 'target_missing' : 'observation_unavailable', (e as Error).message);
    }
    if (stability.done || ctx.signal?.aborted || ctx.clientGone?.aborted) break;
    const next = readBegan + SAMPLE_INTERVAL_MS;
    if (Math.max(next, performance.now()) >= deadline) break;
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
  }
  return finish(stability.verdict());
}

async function boundedRead<T>(read: Promise<T>, ms: number, target: ResolvedTarget): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`a read of ${target.kind} ${target.key} took longer than ${Math.round(ms)} ms`)),
      ms,
    );
  });
  try {
    return await Promise.race([read, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** One fresh read of what the predicates ask about: the target's elements and text, its page, the windows. */
async function readTarget(
  core: ToolContext,
  target: ResolvedTarget,
  driver: Driver,
  families: Set<string>,
  tokens: Map<string, unknown>,
): Promise<Observation> {
  const o: Observation = {};
  const wantsElements = families.has('element') || (families.has('text') && target.kind === 'tab');
  const snap: Snapshot | null = wantsElements
    ? await driver.snapshot(target, core.snapshots.nextId(), { includeScreenshot: false, probe: true })
    : null;
  if (snap) {
    o.elements = snap.elements.map((e) => ({
      role: e.role,
      label: e.label,
      ...(e.value !== undefined ? { value: e.value } : {}),
      ...(e.secret ? { secret: true } : {}),
      enabled: e.enabled,
      focused: e.focused,
      // A tab's read lists what the page shows; a native element with no area is not shown.
      visible: e.frame.w > 0 && e.frame.h > 0,
      // A probe of a tab says each element's selection; AT-SPI says SELECTED only where it is set.
      ...(target.kind === 'tab'
        ? e.selected !== undefined
          ? { selected: e.selected }
          : {}
        : { selected: e.selected === true }),
      tokens: [...tokens].filter(([, ref]) => driver.sameElement?.(ref, e.ref)).map(([t]) => t),
    }));
    if (snap.incomplete) o.elementsIncomplete = snap.incomplete;
  }
  if (target.kind === 'tab') {
    const tab = target.tab;
    if (snap) {
      // The page's text: its text blocks (every frame, shadow roots included) and its controls' names.
      o.text = [...(snap.text ?? []).map((t) => t.text), ...snap.elements.map((e) => e.label)]
        .join(' ')
        .replace(/\s+/g, ' ');
      if (snap.text_incomplete) o.textIncomplete = snap.text_incomplete;
    }
    o.url = core.pages.url(tab);
    o.title = await core.pages.title(tab);
    o.activity = core.pages.activitySince(tab, -1);
  } else if (families.has('window')) {
    const host = (await core.nativeRoute()).host;
    const [windows, active] = await Promise.all([host.windows(), host.activeWindowId?.() ?? Promise.resolve(null)]);
    o.windows = windows.map(
      (w): ObservedWindow => ({
        title: w.title,
        ...(active === null ? {} : { focused: w.id === active }),
        frame: { x: w.bounds.x, y: w.bounds.y, width: w.bounds.w, height: w.bounds.h },
        ...(target.kind === 'window' && w.id === target.windowId ? { target: true } : {}),
      }),
    );
  }
  return o;
}
