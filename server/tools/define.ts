// How a tool is declared: defineTool over ToolDef (declared in context.ts), an action tool over the router's
// target and the route's driver, the annotations most tools share, and the check of a call's arguments
// against the declaration. What tools/list advertises of a declaration is advertised.ts; what its answer
// says, reply.ts.
import type { z } from 'zod';
import type { ActionResult, Driver, ResolvedTarget } from '../contract/driver.js';
import { Refusal } from '../contract/refusal.js';
import type { TargetArgs } from '../contract/target.js';
import type { ToolDef } from './context.js';
import { actionReply } from './reply.js';
import { withChanges } from './changes.js';
import { actionResult } from './schemas.js';

export type { CallContext, Reply, ToolContext, ToolDef } from './context.js';

export function defineTool<S extends z.ZodObject>(def: ToolDef<S>): ToolDef {
  return def as unknown as ToolDef;
}

/**
 * An action tool: the handler resolves the call's target once (the router queues the action behind the
 * target's earlier ones), `act` hands it to the route's driver, and the driver's verified result is the
 * reply, unchanged (actionReply).
 */
export function defineAction<S extends z.ZodObject>(
  def: Omit<ToolDef<S>, 'handler' | 'output'> & {
    act(driver: Driver, target: ResolvedTarget, args: z.infer<S>): Promise<ActionResult>;
  },
): ToolDef {
  const { act, ...rest } = def;
  return defineTool<S>({
    ...rest,
    output: actionResult,
    async handler(args, core, ctx) {
      // Every action's input spreads `targeting` (schemas.ts): its arguments name the target.
      const { target: resolved, driver } = await core.resolve(args as TargetArgs, ctx);
      // The observation the result's `changes` compare with, named on the target: an action may re-read it itself.
      const held = resolved.kind === 'desktop' ? null : core.snapshots.held(resolved.kind, resolved.key);
      const target = held ? { ...resolved, observed: held.snapshotId } : resolved;
      const result = await act(driver, target, args);
      return actionReply(await withChanges(result, target, driver, core.snapshots));
    },
  });
}

export const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;
export const DESTRUCTIVE = { readOnlyHint: false, destructiveHint: true, idempotentHint: false } as const;

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
