// The argument shapes every tool shares (zod: the single source of their types and of what tools/list
// advertises): how a call names its session, its target and its element. Here, below the tools, because
// the action table (actions.ts) declares its tools' arguments with them.
import { z } from 'zod';
import { notPlain } from './names.js';

/** A name an agent chooses: at most `max` characters of plain text (no control, bidi or zero-width characters). */
export function plainName(max: number, min = 0) {
  return z
    .string()
    .min(min)
    .max(max)
    .superRefine((text, ctx) => {
      const why = notPlain(text);
      if (why) ctx.addIssue({ code: 'custom', message: why });
    });
}

export const session = plainName(128).optional().describe('Omit for the implicit session.');

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
