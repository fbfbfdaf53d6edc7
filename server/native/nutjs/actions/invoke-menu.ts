// invoke_menu on the nutjs backend: refused. This backend reads no accessibility tree, so it cannot find a
// menu item by its name, nor tell what a menu holds; nothing is sent (docs/contract.md: its actions are never
// confirmed, and a path of names is nothing it can aim at).
import type { ActionArgs } from '../../../contract/actions.js';
import type { ActionResult, ResolvedTarget } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import type { NutjsContext } from '../context.js';

export async function invokeMenu(
  _ctx: NutjsContext,
  _target: ResolvedTarget,
  args: ActionArgs['invokeMenu'],
): Promise<ActionResult> {
  throw new Refusal(
    'not_supported',
    `invoke_menu finds menu items by name in the accessibility tree, which the nutjs backend (--native-backend nutjs) does not read: nothing was sent. Take a screenshot (get_window_state) and click "${args.path[0]}" and then each item at its pixels (x, y), checking the screenshot after each`,
    { escalation: 'pixel' },
  );
}
