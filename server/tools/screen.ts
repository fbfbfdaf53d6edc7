// screen (seed 004): arrange the Control UI this MCP session is bound to. Listed only for a session bound
// (X-Verity-Link) to a Control UI connection that advertised ui-commands; it never broadcasts.
import { z } from 'zod';
import { Refusal } from '../contract/refusal.js';
import { defineTool } from './define.js';
import { plainName, session } from './schemas.js';

const ACTIONS = [
  'split_right',
  'split_down',
  'close_pane',
  'focus',
  'navigate',
  'sidebar_show',
  'sidebar_hide',
  'terminal_show',
  'terminal_hide',
  'browser_show',
  'browser_hide',
] as const;

export function commandFor(
  action: (typeof ACTIONS)[number],
  sessionKey: string,
  dock?: 'bottom' | 'right',
): Record<string, unknown> {
  switch (action) {
    case 'split_right':
      return { kind: 'split', direction: 'right', sessionKey };
    case 'split_down':
      return { kind: 'split', direction: 'down', sessionKey };
    case 'close_pane':
      return { kind: 'close-pane', sessionKey };
    case 'focus':
      return { kind: 'focus', sessionKey };
    case 'navigate':
      return { kind: 'navigate', sessionKey };
    case 'sidebar_show':
    case 'sidebar_hide':
      return { kind: 'sidebar', visible: action === 'sidebar_show' };
    default: {
      const [panel, verb] = action.split('_') as ['terminal' | 'browser', 'show' | 'hide'];
      return { kind: 'panel', panel, open: verb === 'show', ...(verb === 'show' && dock ? { dock } : {}) };
    }
  }
}

export const screen = defineTool({
  name: 'screen',
  description:
    'Arrange the Control UI that started this agent: split_right, split_down, close_pane, focus, navigate (sessionKey defaults to the current session), sidebar_show/hide, terminal_show/hide and browser_show/hide (dock bottom or right when showing). Presentation only: it cannot read pixels or click page content. Returns {ok:true} once the command was sent to that one Control UI; UNAVAILABLE when it is no longer connected.',
  input: z.strictObject({
    action: z.enum(ACTIONS),
    sessionKey: plainName(512, 1).optional(),
    dock: z.enum(['bottom', 'right']).optional(),
    session,
  }),
  output: z.object({ ok: z.literal(true) }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  listed: (ctx) => !!ctx.uiTarget?.caps.includes('ui-commands'),
  async handler(args, core, ctx) {
    const target = ctx.uiTarget;
    // An agent must not hide what the operator has to see: a waiting approval, or an agent on the brake.
    const waits = core.operatorWaits();
    if (args.action === 'sidebar_hide' && (waits.approvals > 0 || waits.heldAgents > 0)) {
      const waiting = waits.approvals;
      throw new Refusal(
        'not_permitted',
        `the sidebar stays visible while ${waiting ? `${waiting} approval${waiting === 1 ? '' : 's'} wait${waiting === 1 ? 's' : ''}` : 'an agent is paused or stopped'}: the operator must see it; hide it once nothing waits`,
        { action: 'sidebar_hide', approvals_waiting: waiting },
      );
    }
    const sessionKey = args.sessionKey ?? (ctx.session ? core.sessions.keyOf(ctx.session) : ctx.connectionId);
    const delivered = !!target && core.sendUiCommand(target.connId, commandFor(args.action, sessionKey, args.dock));
    if (!delivered) {
      throw new Refusal(
        'unavailable',
        'UNAVAILABLE: the Control UI this agent is bound to is no longer connected; ask again from the open Control UI',
        { gateway_code: 'UNAVAILABLE' },
      );
    }
    return { structured: { ok: true }, text: 'ok' };
  },
});
