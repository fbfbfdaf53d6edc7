// invoke_menu on a tab: refused. A page has no menu bar or context menu that AT-SPI or CDP can open by name
// (the browser's own menus are its window's, and a page's menus are its elements), so nothing is sent.
import type { ActionArgs } from '../../contract/actions.js';
import type { ActionResult, ResolvedTarget } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import type { CdpRoute } from './aim.js';

export async function invokeMenu(
  _route: CdpRoute,
  _target: ResolvedTarget,
  args: ActionArgs['invokeMenu'],
): Promise<ActionResult> {
  throw new Refusal(
    'not_supported',
    `invoke_menu opens native menus (a window's menu bar or an element's context menu, through AT-SPI); this target is a browser tab, driven over CDP, where menus are the page's own elements: nothing was sent. Use get_window_state and click the page's menu element ("${args.path[0]}"), then its item`,
  );
}
