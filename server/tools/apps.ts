// launch_app and kill_app (capability `apps`, issue 44 item 1). Plain tools, not actions of the table
// (contract/actions.ts): an app to start has no window yet to aim at or queue behind. Both go to the native
// host (its launcher, native/shared/launch.ts, the one home of starting and ending apps for every backend),
// with what the operator allows (--allow-launch), the session that asks (only it may end what it started),
// and the call's progress and brake, so that the wait for a window reports and stops like any other.
import { z } from 'zod';
import { defineTool, type CallContext, type ToolContext } from './define.js';
import { actionReply } from './reply.js';
import { actionResult, session } from './schemas.js';

/** Whose apps these are: the session the call was admitted to (the connection's implicit one by default). */
function ownerOf(core: ToolContext, ctx: CallContext): string {
  return ctx.session ? core.sessions.keyOf(ctx.session) : `connection:${ctx.connectionId}`;
}

function hooksOf(ctx: CallContext) {
  const signals = [ctx.signal, ctx.clientGone].filter((s): s is AbortSignal => !!s);
  return { progress: ctx.progress, signal: signals.length ? AbortSignal.any(signals) : undefined };
}

export const launchApp = defineTool({
  name: 'launch_app',
  description:
    'Start an app the operator allows (--allow-launch): a desktop-file id, an executable name or an absolute path. confirmed once its window is listed; returns pid and window.',
  input: z.strictObject({
    app: z.string().min(1).max(4096).describe('Desktop-file id (libreoffice-calc), executable name or absolute path.'),
    args: z.array(z.string().max(4096)).max(64).default([]),
    timeout_ms: z
      .number()
      .int()
      .min(1000)
      .max(120_000)
      .default(30_000)
      .describe('How long to wait for its first window.'),
    session,
  }),
  output: actionResult.extend({
    pid: z.number().int(),
    window: z
      .object({
        kind: z.literal('window'),
        pid: z.number().int(),
        window_id: z.number().int(),
        title: z.string(),
      })
      .optional(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  advanced: ['timeout_ms'],
  cap: 'apps',
  async handler(args, core, ctx) {
    const { host } = await core.nativeRoute();
    const result = await host.launchApp(
      {
        app: args.app,
        args: args.args,
        allowed: core.options.allowLaunch,
        owner: ownerOf(core, ctx),
        timeoutMs: args.timeout_ms,
      },
      hooksOf(ctx),
    );
    return actionReply(result);
  },
});

export const killApp = defineTool({
  name: 'kill_app',
  description:
    'End an app this session started with launch_app: its windows closed first, then SIGTERM, then SIGKILL. confirmed once it is gone.',
  input: z.strictObject({ pid: z.number().int().min(1).describe('The pid launch_app returned.'), session }),
  output: actionResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  cap: 'apps',
  async handler(args, core, ctx) {
    const { host } = await core.nativeRoute();
    return actionReply(await host.killApp(args.pid, ownerOf(core, ctx), hooksOf(ctx)));
  },
});

export const appTools = [launchApp, killApp];
