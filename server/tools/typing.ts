// type_text (seed 003): insert at the caret, exactly once, and say what landed.
import { z } from 'zod';
import { DESTRUCTIVE, actionReply, defineTool } from './define.js';
import { actionResult, deliveryMode, targeting } from './schemas.js';

export const typeText = defineTool({
  name: 'type_text',
  description: 'Insert text at the caret of the focused element, or of element_token\'s element (focused first, caret at its end). Never clears the field. On a browser tab the text goes in as trusted input (Input.insertText; rich editors get Enter for each newline) and the field or editor is read back at once and after the page settles: confirmed only when it holds exactly the text at the caret; partial (maxlength), mismatch (the page rewrote it) or no_effect (refused, cancelled beforeinput) otherwise, with what the field holds now. Special keys go through press_key / hotkey.',
  input: z.strictObject({
    ...targeting,
    text: z.string().min(1).max(200_000).describe('Text to insert at the target\'s caret (newlines, emoji, CJK and RTL are delivered exactly or reported).'),
    delivery_mode: deliveryMode,
    delay_ms: z.number().int().min(0).max(200).default(30).describe('Milliseconds between characters when keystrokes are synthesized (native fallback). Ignored by insertion routes.'),
  }),
  output: actionResult,
  annotations: DESTRUCTIVE,
  async handler(args, core, ctx) {
    const { target, driver } = await core.resolve(args, ctx);
    return actionReply(await driver.typeText(target, args.text, { delayMs: args.delay_ms, deliveryMode: args.delivery_mode }));
  },
});
