// Shared zod pieces: the single source of the tools' input types and of their advertised output schemas.
import { z } from 'zod';

export { deliveryMode, elementToken, plainName, session, target, targeting } from '../contract/tool-args.js';

// An action's result and its evidence are wire shapes (contract/wire.ts); tools advertise the result as
// `advertisedActionResult`.
export { evidence, advertisedActionResult as actionResult } from '../contract/wire.js';

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
