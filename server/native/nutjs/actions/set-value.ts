// set_value on the nutjs backend: refused, as there is no element to set.
import type { ActionArgs } from '../../../contract/actions.js';
import type { ActionResult, ResolvedTarget } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import type { NutjsContext } from '../context.js';

export async function setValue(
  _ctx: NutjsContext,
  _target: ResolvedTarget,
  _args: ActionArgs['setValue'],
): Promise<ActionResult> {
  throw new Refusal(
    'not_supported',
    'set_value needs an element, and the nutjs native backend sees none: click the field (x, y) and type_text',
  );
}
