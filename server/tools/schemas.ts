// Shared zod pieces: the single source of the tools' input types and of their advertised output schemas.
import { z } from 'zod';

export const session = z.string().max(128).optional()
  .describe('Optional public session label; omit to use this connection\'s implicit session.');

export const elementToken = z.string().min(1).max(64)
  .describe('Opaque element handle from the latest get_window_state of the target (structuredContent.elements[].element_token).');

export const target = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('tab'), tab_id: z.string().min(1).describe('CDP target id of a browser tab (page list_tabs).') }),
  z.strictObject({ kind: z.literal('window'), pid: z.number().int().positive(), window_id: z.number().int().nonnegative() }),
  z.strictObject({ kind: z.literal('desktop'), display_id: z.literal('primary').default('primary') }),
]).describe('Per-call target: a browser tab, a native window, or the primary desktop.');

/** Every way an action can name what it acts on (section 2 of the contract). */
export const targeting = {
  element_token: elementToken.optional(),
  target: target.optional(),
  pid: z.number().int().positive().optional().describe('Legacy flat target: process id of a native window.'),
  window_id: z.number().int().nonnegative().optional().describe('Legacy flat target: X11 window id.'),
  scope: z.enum(['window', 'desktop']).optional().describe('Legacy: "desktop" targets the primary desktop.'),
  x: z.number().finite().optional().describe('Screenshot-pixel X in the target\'s last get_window_state image (the px form).'),
  y: z.number().finite().optional().describe('Screenshot-pixel Y (see x).'),
  session,
};

export const deliveryMode = z.enum(['background', 'foreground']).default('background')
  .describe('"background" (default) acts without stealing focus; "foreground" raises and focuses the window, acts, then restores focus.');

export const evidence = z.object({ kind: z.string(), expected: z.unknown().optional(), observed: z.unknown().optional(), detail: z.string().optional() });

export const actionResult = z.object({
  effect: z.enum(['confirmed', 'partial', 'mismatch', 'no_effect', 'unverifiable']),
  route: z.enum(['dom', 'accessibility', 'synthetic_events', 'pixel']),
  delivery: z.object({ mode: z.enum(['background', 'foreground', 'not_applicable']), delivered_count: z.number().int().optional() }),
  evidence: z.array(evidence).optional(),
  escalation: z.object({ target: z.enum(['page', 'pixel', 'foreground', 'chunk', 'verify']), reason: z.string() }).optional(),
  timings_ms: z.object({ resolve: z.number(), deliver: z.number(), verify: z.number() }),
  method: z.string().optional(),
  observed: z.unknown().optional(),
  target: z.string().optional(),
  side_effects: z.array(z.looseObject({ kind: z.enum(['tab_opened', 'download', 'dialog']) })).optional(),
});

export const refusal = z.object({
  status: z.literal('refused'),
  refusal: z.looseObject({ code: z.string(), message: z.string(), retryable: z.boolean().optional() }),
});

export const elementSchema = z.object({
  element_index: z.number().int(), element_token: z.string(), role: z.string(), label: z.string(),
  value: z.string().optional(), enabled: z.boolean(), focused: z.boolean(), in_web_content: z.boolean(),
  frame: z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() }),
  parent_index: z.number().int().nullable(),
});
