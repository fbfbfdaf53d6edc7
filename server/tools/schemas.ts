// Shared zod pieces: the single source of the tools' input types and of their advertised output schemas.
import { z } from 'zod';

export const session = z.string().max(128).optional().describe('Omit for the implicit session.');

export const elementToken = z.string().min(1).max(64);

export const target = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('tab'), tab_id: z.string().min(1) }),
    z.strictObject({
      kind: z.literal('window'),
      // Optional: window_id alone names a window (list_windows may know no pid for it).
      pid: z.number().int().positive().optional(),
      window_id: z.number().int().nonnegative(),
    }),
    z.strictObject({ kind: z.literal('desktop'), display_id: z.literal('primary').default('primary') }),
  ])
  .describe('Default: the current tab.');

/** Every way an action can name what it acts on (section 2 of the contract). */
export const targeting = {
  element_token: elementToken.optional(),
  target: target.optional(),
  pid: z.number().int().positive().optional().describe("Legacy: a window's pid."),
  window_id: z.number().int().nonnegative().optional().describe('Legacy: its X11 window id.'),
  scope: z.enum(['window', 'desktop']).optional().describe('Legacy: "desktop".'),
  x: z.number().finite().optional().describe('Screenshot px.'),
  y: z.number().finite().optional(),
  session,
};

export const deliveryMode = z
  .enum(['background', 'foreground'])
  .default('background')
  .describe('foreground: raise the window first.');

export const evidence = z.object({
  kind: z.string(),
  expected: z.unknown().optional(),
  observed: z.unknown().optional(),
  detail: z.string().optional(),
});

export const actionResult = z.object({
  effect: z.enum(['confirmed', 'partial', 'mismatch', 'no_effect', 'unverifiable']),
  route: z.enum(['dom', 'accessibility', 'synthetic_events', 'pixel']),
  delivery: z.object({
    mode: z.enum(['background', 'foreground', 'not_applicable']),
    delivered_count: z.number().int().optional(),
  }),
  evidence: z.array(evidence).optional(),
  escalation: z
    .object({ target: z.enum(['page', 'pixel', 'foreground', 'chunk', 'verify']), reason: z.string() })
    .optional(),
  timings_ms: z.object({
    resolve: z.number(),
    deliver: z.number(),
    verify: z.number(),
    // Around the phases, when they took part: the target's queue, the tab's lock (within resolve), the side-effect watch.
    queue: z.number().optional(),
    lock: z.number().optional(),
    side_effects: z.number().optional(),
  }),
  method: z.string().optional(),
  observed: z.unknown().optional(),
  target: z.string().optional(),
  masked: z.string().optional(),
  side_effects: z.array(z.looseObject({ kind: z.enum(['tab_opened', 'download', 'dialog']) })).optional(),
  caused: z
    .object({
      navigated: z.string().optional(),
      requests: z
        .array(
          z.object({
            method: z.string(),
            url: z.string(),
            status: z.number().int().optional(),
            failed: z.string().optional(),
            pending: z.literal(true).optional(),
          }),
        )
        .optional(),
      more_requests: z.number().int().optional(),
      console: z
        .array(z.object({ level: z.enum(['exception', 'error', 'warning', 'info', 'debug']), text: z.string() }))
        .optional(),
      more_console: z.number().int().optional(),
    })
    .optional(),
});

export const refusal = z.object({
  status: z.literal('refused'),
  refusal: z.looseObject({ code: z.string(), message: z.string(), retryable: z.boolean().optional() }),
});

export const elementSchema = z.object({
  element_index: z.number().int(),
  element_token: z.string(),
  role: z.string(),
  label: z.string(),
  name_source: z.enum(['icon_guess', 'colour']).optional(),
  value: z.string().optional(),
  enabled: z.boolean(),
  focused: z.boolean(),
  in_web_content: z.boolean(),
  frame: z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() }),
  parent_index: z.number().int().nullable(),
});
