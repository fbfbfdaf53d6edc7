// run_actions (seed 001): several action tools in one call, every step validated before the first runs,
// stopping at the first failure. Each step runs through exactly the path a single call takes.
import { capabilityOffMessage, capabilityOn } from '../contract/capabilities.js';
import { z } from 'zod';
import { checkTargetShape, type TargetArgs } from '../contract/target.js';
import { Refusal } from '../contract/refusal.js';
import { actionTools } from './actions.js';
import { DESTRUCTIVE, defineTool, parseArgs, type ToolContext, type ToolDef } from './define.js';
import { textOfStructured } from './reply.js';
import { getWindowState } from './inspection.js';
import { page } from './page.js';
import { launchApp } from './apps.js';
import { clipboardWrite } from './clipboard.js';
import { session as sessionArg } from './schemas.js';
import { parsePredicates } from '../contract/verify.js';
import { type VerifyResult, verdictText, verifyArgs, verifyResult, verifyState } from './verify.js';

/**
 * The tools a step may name: every action tool (contract/actions.ts), in its order; `page` (open a tab and
 * observe it in one call with `observe`; answer a dialog and check the task's end with the step's `expect`);
 * `launch_app` (start an app and act in its window, an `expect` checked on that window) and `clipboard_write`
 * (put text there and paste it). Not `kill_app`: ending an app is done on its own, after looking.
 */
const stepTools: ToolDef[] = [...actionTools, page as ToolDef, launchApp as ToolDef, clipboardWrite as ToolDef];
export const BATCHABLE = stepTools.map((t) => t.name) as [string, ...string[]];
// A capability's tools (contract/capabilities.ts) are batchable when on, but cost the list no bytes.
const ALWAYS_ON = stepTools.filter((t) => !t.cap).map((t) => t.name);
const byName = new Map<string, ToolDef>(stepTools.map((t) => [t.name, t]));

/** How a batch runs one step: the same admission, policy and recording as a direct call. */
export type StepRunner = (
  tool: ToolDef,
  args: Record<string, unknown>,
) => Promise<{ structured: any; isError: boolean; images?: unknown[] }>;

export const runActions = defineTool({
  name: 'run_actions',
  description:
    'Run up to 32 action steps {tool, args, expect?} in order, all validated first; stops at the first failure or unmet expect (verify_state predicates). observe: get_window_state args, run after.',
  input: z.strictObject({
    steps: z
      .array(
        z.strictObject({
          tool: z.enum(BATCHABLE).meta({ advertise: ALWAYS_ON }),
          args: z.record(z.string(), z.unknown()).default({}),
          // verify_state's predicates, checked after the step (contract/verify.ts checks each, naming it).
          expect: verifyArgs.expect.optional().meta({ described: true }),
        }),
      )
      .min(1)
      .max(32),
    delay_ms: z.number().int().min(0).max(2000).default(0),
    observe: z.record(z.string(), z.unknown()).optional(),
    session: sessionArg,
  }),
  output: z.object({
    steps: z.array(
      z.object({
        index: z.number().int(),
        tool: z.string(),
        status: z.enum(['ok', 'failed', 'not_run']),
        // The single call's result, refusals included (always an object).
        result: z.looseObject({}).optional(),
        // The step's expect, checked after it as verify_state checks it: not satisfied fails the step.
        expect: verifyResult.optional(),
      }),
    ),
    observation: z.looseObject({}).optional(),
  }),
  // A pause between steps is rarely needed: accepted, advertised on the complete surface only.
  advanced: ['delay_ms'],
  annotations: DESTRUCTIVE,
  async handler(args, core, ctx) {
    // 1. Validate everything first: arguments, the session they name, and element tokens.
    const parsed = args.steps.map((step, index) => {
      if (step.args.session !== undefined && step.args.session !== args.session) {
        throw new Refusal(
          'invalid_arguments',
          `steps.${index}.args.session: a batch uses one session; omit it or repeat the batch's ("${args.session ?? ''}")`,
        );
      }
      const tool = byName.get(step.tool)!;
      if (tool.cap && !capabilityOn(tool.cap, core.options.surface))
        throw new Refusal('invalid_arguments', `steps.${index}.tool: ${capabilityOffMessage(tool.name, tool.cap)}`, {
          field: `steps.${index}.tool`,
        });
      try {
        const stepArgs = parseArgs(tool, {
          ...step.args,
          ...(args.session !== undefined ? { session: args.session } : {}),
        });
        checkTargetShape(stepArgs as TargetArgs);
        if (typeof step.args.element_token === 'string') core.snapshots.resolve(step.args.element_token);
      } catch (e) {
        if (e instanceof Refusal)
          throw new Refusal(e.code, `steps.${index} (${step.tool}): ${e.message}`, { ...e.details, step: index });
        throw e;
      }
      const expect = step.expect ? parsePredicates(step.expect, `steps.${index}.expect`) : undefined;
      return {
        tool,
        args: { ...step.args, ...(args.session !== undefined ? { session: args.session } : {}) },
        expect,
      };
    });
    let observeArgs: Record<string, unknown> | undefined;
    if (args.observe) {
      try {
        observeArgs = parseArgs(getWindowState, {
          include_screenshot: false,
          max_elements: 200,
          ...args.observe,
        }) as Record<string, unknown>;
      } catch (e) {
        throw e instanceof Refusal ? new Refusal(e.code, `observe: ${e.message}`) : e;
      }
    }

    // 2. Run in order; the first failure stops the batch.
    const run = ctx.runStep!;
    const results: Array<{
      index: number;
      tool: string;
      status: 'ok' | 'failed' | 'not_run';
      result?: unknown;
      expect?: unknown;
    }> = [];
    let failed = false;
    for (const [index, step] of parsed.entries()) {
      if (failed) {
        results.push({ index, tool: step.tool.name, status: 'not_run' });
        continue;
      }
      if (index > 0 && args.delay_ms > 0) await new Promise((r) => setTimeout(r, args.delay_ms));
      ctx.progress?.(`step ${index + 1} of ${parsed.length}: ${step.tool.name}`);
      const outcome = await run(step.tool, step.args);
      failed = outcome.isError;
      // The step's expect: a verify_state on the step's target, through the same admission as a direct call
      // (so the audit trail and the operator see it); anything but satisfied stops the batch here.
      let checked: Record<string, unknown> | undefined;
      if (!failed && step.expect) {
        const check = await run(verifyState, {
          expect: step.expect,
          ...stepTarget(step.args, core, outcome.structured),
          ...(args.session !== undefined ? { session: args.session } : {}),
        });
        checked = check.structured;
        failed = check.isError || checked?.status !== 'satisfied';
      }
      results.push({
        index,
        tool: step.tool.name,
        status: failed ? 'failed' : 'ok',
        result: outcome.structured,
        ...(checked ? { expect: checked } : {}),
      });
    }
    const structured: Record<string, unknown> = { steps: results };
    let images: Array<{ data: string; mimeType: string }> = [];
    if (observeArgs) {
      const observation = await run(getWindowState, observeArgs);
      structured.observation = observation.structured;
      images = (observation.images ?? []) as typeof images;
    }
    const summary = results
      .map(
        (r) =>
          `${r.index}:${r.tool}=${r.status}${r.result && (r.result as any).effect ? `(${(r.result as any).effect})` : ''}`,
      )
      .join(' ');
    // On an error the text is all a client shows the model: the failed step's result in full.
    const failure = results.find((r) => r.status === 'failed');
    const detail = failure
      ? `\nstep ${failure.index} (${failure.tool}): ${
          failure.expect
            ? `expect not met: ${verdictText(failure.expect as VerifyResult)}`
            : textOfStructured(failure.result as Record<string, unknown>)
        }`
      : '';
    return { structured, isError: failed, images, text: summary + detail };
  },
});

/**
 * The target a step acted on, as verify_state names it: the window it opened (launch_app), the step's own
 * target, its window, or its token's (a token carries its target); none: the same default the step had (the
 * session's current tab).
 */
function stepTarget(
  args: Record<string, unknown>,
  core: ToolContext,
  result?: { window?: unknown },
): { target?: unknown } {
  const opened = result?.window as { pid: number; window_id: number } | undefined;
  if (opened) return { target: { kind: 'window', pid: opened.pid, window_id: opened.window_id } };
  if (args.target !== undefined) return { target: args.target };
  if (typeof args.tab_id === 'string') return { target: { kind: 'tab', tab_id: args.tab_id } }; // a page step's
  if (args.window_id !== undefined) return { target: { kind: 'window', pid: args.pid, window_id: args.window_id } };
  if (typeof args.element_token === 'string') {
    const t = core.snapshots.resolve(args.element_token);
    if (t.kind === 'tab') return { target: { kind: 'tab', tab_id: t.key } };
    if (t.kind === 'window') {
      // The key is `${pid}:${windowId}`, pid 0 when not known (routing/router.ts).
      const [pid, windowId] = t.key.split(':').map(Number);
      return { target: { kind: 'window', ...(pid ? { pid } : {}), window_id: windowId } };
    }
    return { target: { kind: 'desktop' } };
  }
  if (args.scope === 'desktop') return { target: { kind: 'desktop' } };
  return {};
}
