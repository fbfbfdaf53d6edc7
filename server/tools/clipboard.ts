// The clipboard and the pointer's position (capabilities `clipboard` and `cursor`, issue 44 items 3 and 4).
// The clipboard tools are plain tools, not actions of the table (contract/actions.ts): a clipboard belongs
// to no window or element, so there is no element to aim at, no point, no delivery mode and nothing for the
// target's queue to order: a tab's clipboard is its page's (navigator.clipboard, over `pages`), and every
// other call uses the desktop's (the native host's), a window target checked by the router like any other
// and then standing for the desktop it is on. move_cursor, which does aim, is an action: the second tool of
// the hover row.
import { z } from 'zod';
import type { ClipboardContent } from '../contract/native-host.js';
import { Refusal } from '../contract/refusal.js';
import type { ActionResult } from '../contract/wire.js';
import { READ_ONLY, defineTool, type CallContext, type ToolContext } from './define.js';
import { actionReply } from './reply.js';
import { actionResult, session, target } from './schemas.js';

/** At most this much of the clipboard's text comes back (the rest is said, not sent). */
const CLIPBOARD_TEXT_MAX = 100_000;

const clipboardTarget = target.optional().describe("A tab: its page's clipboard. Default: the desktop's.");

/** The clipboard a call names: a tab's page, or the desktop's (no target, a window or the desktop). */
async function clipboardOf(
  args: { target?: z.infer<typeof target>; session?: string },
  core: ToolContext,
  ctx: CallContext,
): Promise<{ route: 'dom' | 'pixel'; where: string; use(write: string | null): Promise<ClipboardContent> }> {
  if (args.target?.kind === 'tab') {
    const { target: resolved } = await core.resolve({ target: args.target }, ctx);
    if (resolved.kind !== 'tab') throw new Error('a tab target resolved to another kind');
    return {
      route: 'dom',
      where: `tab ${resolved.tab.id}'s page`,
      use: (write) => core.pages.clipboard(resolved.tab, write),
    };
  }
  // A window is resolved as any target is (the operator's app policy on it), then its desktop's clipboard serves.
  if (args.target?.kind === 'window') await core.resolve({ target: args.target }, ctx);
  const { host } = await core.nativeRoute();
  return {
    route: 'pixel',
    where: "the desktop's clipboard",
    use: (write) => (write === null ? host.readClipboard() : host.writeClipboard(write)),
  };
}

export const clipboardWrite = defineTool({
  name: 'clipboard_write',
  description: "Put text on the clipboard (a tab's page's with a tab target). confirmed: read back.",
  input: z.strictObject({ text: z.string().max(1_000_000), target: clipboardTarget, session }),
  output: actionResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  cap: 'clipboard',
  async handler(args, core, ctx) {
    const started = performance.now();
    const clipboard = await clipboardOf(args, core, ctx);
    const resolved = performance.now();
    const now = await clipboard.use(args.text);
    const done = performance.now();
    // The read-back's text is not sent back (it may be what another app put there): only whether it matches.
    const same = now.text === args.text;
    const result: ActionResult = {
      effect: same ? 'confirmed' : 'mismatch',
      route: clipboard.route,
      delivery: { mode: 'not_applicable' },
      evidence: [
        {
          kind: 'clipboard_read_back',
          expected: `${args.text.length} characters`,
          observed: same ? `the same ${now.text.length} characters` : `${now.text.length} other characters`,
          detail: `${clipboard.where}, read again after the write; types offered: ${now.types.join(', ') || 'none'}`,
        },
      ],
      ...(same
        ? {}
        : {
            escalation: {
              target: 'verify',
              reason: 'the clipboard holds other text than was written: another app took it, or the text was converted',
            },
          }),
      timings_ms: { resolve: resolved - started, deliver: done - resolved, verify: 0 },
      target: clipboard.where,
    };
    return actionReply(result);
  },
});

export const clipboardRead = defineTool({
  name: 'clipboard_read',
  description: "Read the clipboard's text and offered types (a tab's page's with a tab target).",
  input: z.strictObject({ target: clipboardTarget, session }),
  output: z.object({ text: z.string(), types: z.array(z.string()), truncated: z.boolean().optional() }),
  annotations: READ_ONLY,
  cap: 'clipboard',
  async handler(args, core, ctx) {
    if (!core.options.allowClipboardRead)
      throw new Refusal(
        'not_permitted',
        'clipboard_read is off: the operator lets agents read the clipboard with --allow-clipboard-read (env VERITY_ALLOW_CLIPBOARD_READ)',
      );
    const clipboard = await clipboardOf(args, core, ctx);
    const { text, types } = await clipboard.use(null);
    const truncated = text.length > CLIPBOARD_TEXT_MAX;
    const kept = truncated ? text.slice(0, CLIPBOARD_TEXT_MAX) : text;
    return {
      structured: { text: kept, types, ...(truncated ? { truncated } : {}) },
      text: `${clipboard.where} holds ${text.length} characters${truncated ? ` (the first ${CLIPBOARD_TEXT_MAX} sent)` : ''}; types: ${types.join(', ') || 'none'}\n${kept}`,
    };
  },
});

export const getCursorPosition = defineTool({
  name: 'get_cursor_position',
  description: "Where the desktop's pointer is, in screen pixels.",
  input: z.strictObject({ session }),
  output: z.object({ x: z.number(), y: z.number() }),
  annotations: READ_ONLY,
  cap: 'cursor',
  async handler(_args, core) {
    const { x, y } = await (await core.nativeRoute()).host.pointerPosition();
    return { structured: { x, y }, text: `pointer at screen (${x}, ${y})` };
  },
});

export const clipboardTools = [clipboardWrite, clipboardRead, getCursorPosition];
