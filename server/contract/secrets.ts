// Secrets stay secret: text typed or set into a password field (or a field marked for one-time codes or
// card numbers, or an AT-SPI "password text") is masked in what leaves the driver, after the verdict was
// reached on the full text. The mask keeps what helps an agent (how many characters, whether it matched)
// and nothing of the text. The call pipeline masks the same arguments in the audit trail, the operators'
// action log and recordings (maskedArgs). Pure: unit-tested in test/unit/secrets.test.ts.
import type { ActionResult, Evidence } from './driver.js';

/** One • per character (code point); the excerpt marker … is kept, so a cut window still reads as one. */
export function mask(text: string): string {
  let out = '';
  for (const ch of text) out += ch === '…' ? '…' : '•';
  return out;
}

/** Evidence kinds whose strings describe events or the page, not the field's content: only known secrets are masked in them. */
const DESCRIPTIVE_KINDS = new Set(['event', 'beforeinput', 'combobox', 'web_content', 'partial_read', 'dialog']);

/**
 * The result with the field's content masked: every expected/observed string of content evidence and the
 * result's `observed` wholly, and each of `secrets` (the text sent, the field's text before and after)
 * wherever else it appears (details, descriptions). Adds `masked` (why) and one evidence line saying so.
 */
export function maskSecrets(
  result: ActionResult,
  reason: string,
  secrets: Array<string | null | undefined>,
): ActionResult {
  const known = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length > 0))].sort(
    (a, b) => b.length - a.length,
  );
  const scrub = (s: string) => known.reduce((acc, secret) => acc.split(secret).join(mask(secret)), s);
  const whole = (v: unknown) => (typeof v === 'string' ? mask(v) : v);
  const partly = (v: unknown) => (typeof v === 'string' ? scrub(v) : v);
  const evidence: Evidence[] = result.evidence.map((e) => {
    const content = !DESCRIPTIVE_KINDS.has(e.kind);
    const out: Evidence = { kind: e.kind };
    if (e.expected !== undefined) out.expected = content ? whole(e.expected) : partly(e.expected);
    if (e.observed !== undefined) out.observed = content ? whole(e.observed) : partly(e.observed);
    if (e.detail !== undefined) out.detail = scrub(e.detail);
    return out;
  });
  evidence.push({
    kind: 'masked',
    detail: `${reason}: its text is shown as one • per character; the read-back compared the full text (${result.effect === 'confirmed' ? 'it matched' : `${result.effect}: it did not match`})`,
  });
  const masked: ActionResult = { ...result, evidence, masked: reason };
  if (result.observed !== undefined) masked.observed = whole(result.observed);
  if (result.target !== undefined) masked.target = scrub(result.target);
  return masked;
}

/**
 * The arguments as the audit trail, the action log and a recording keep them: a call whose result says
 * `masked` (or whose refusal does) has its `text` / `value` masked; a run_actions call has the arguments of
 * each masked step masked.
 */
export function maskedArgs<T extends Record<string, unknown>>(args: T, structured: unknown): T {
  const result = structured as { steps?: unknown } | null | undefined;
  if (!result || typeof result !== 'object') return args;
  if (isMasked(result)) {
    const out: Record<string, unknown> = { ...args };
    for (const key of ['text', 'value']) if (typeof out[key] === 'string') out[key] = mask(out[key] as string);
    return out as T;
  }
  if (Array.isArray(result.steps) && Array.isArray(args.steps)) {
    const maskedSteps = new Map<number, unknown>();
    for (const s of result.steps as Array<{ index?: unknown; result?: unknown }>)
      if (typeof s?.index === 'number' && isMasked(s.result)) maskedSteps.set(s.index, s.result);
    if (!maskedSteps.size) return args;
    const steps = (args.steps as unknown[]).map((step, i) => {
      const stepArgs = (step as { args?: unknown })?.args;
      if (!maskedSteps.has(i) || !stepArgs || typeof stepArgs !== 'object') return step;
      return { ...(step as object), args: maskedArgs(stepArgs as Record<string, unknown>, maskedSteps.get(i)) };
    });
    return { ...args, steps };
  }
  return args;
}

/** Whether a result, or a refusal, says its target's text is a secret (`masked`: why). */
function isMasked(structured: unknown): boolean {
  const r = structured as { masked?: unknown; refusal?: { masked?: unknown } } | null | undefined;
  return typeof r?.masked === 'string' || typeof r?.refusal?.masked === 'string';
}

/**
 * The arguments as an operator approving the call sees them, before it ran (so before any result could say
 * `masked`): the `text` / `value` of a call whose element_token names a field its snapshot knew as a secret
 * (`secretOf` says why, or undefined) is masked, and so is each such step of a run_actions call.
 */
export function maskedForApproval<T extends Record<string, unknown>>(
  args: T,
  secretOf: (token: string) => string | undefined,
): T {
  if (typeof args.element_token === 'string' && secretOf(args.element_token))
    return maskedArgs(args, { masked: secretOf(args.element_token) });
  if (!Array.isArray(args.steps)) return args;
  const steps = args.steps.map((step) => {
    const stepArgs = (step as { args?: unknown })?.args;
    if (!stepArgs || typeof stepArgs !== 'object' || Array.isArray(stepArgs)) return step;
    const shown = maskedForApproval(stepArgs as Record<string, unknown>, secretOf);
    return shown === stepArgs ? step : { ...(step as object), args: shown };
  });
  return { ...args, steps };
}
