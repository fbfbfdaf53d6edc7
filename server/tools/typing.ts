// type_text (seed 003): insert at the caret, exactly once, and say what landed.
import { z } from 'zod';
import { DESTRUCTIVE, defineAction } from './define.js';
import { deliveryMode, targeting } from './schemas.js';

export const typeText = defineAction({
  name: 'type_text',
  description:
    "Insert text at the caret of the focused element or of element_token's (caret at end); never clears. Read back.",
  input: z.strictObject({
    ...targeting,
    text: z.string().min(1).max(200_000),
    delivery_mode: deliveryMode,
    delay_ms: z
      .number()
      .int()
      .min(0)
      .max(200)
      .default(30)
      .describe('ms between synthesized keystrokes (native fallback).'),
  }),
  annotations: DESTRUCTIVE,
  advanced: ['delay_ms'],
  act: (driver, target, args) => driver.typeText(target, args.text, { delayMs: args.delay_ms }),
});
