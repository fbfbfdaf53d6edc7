// The action tools, derived from the action table (contract/actions.ts): each resolves its target, hands it
// to the route's Driver, and returns the Driver's verified result unchanged (defineAction); run_actions
// reuses `actionTools` so a batch step is exactly a single call.
import { ACTION_NAMES, ACTIONS, type ActionArgs, type ActionName } from '../contract/actions.js';
import type { ActionResult, Driver, ResolvedTarget } from '../contract/driver.js';
import { defineAction, type ToolDef } from './define.js';

/** Hands an action's arguments to the driver method of the same name. */
function perform<K extends ActionName>(
  driver: Driver,
  action: K,
  target: ResolvedTarget,
  args: ActionArgs[K],
): Promise<ActionResult> {
  const a = args as ActionArgs[ActionName];
  switch (action) {
    case 'click':
      return driver.click(target, a as ActionArgs['click']);
    case 'typeText': {
      const { text, ...options } = a as ActionArgs['typeText'];
      return driver.typeText(target, text, options);
    }
    case 'setValue':
      return driver.setValue(target, (a as ActionArgs['setValue']).value);
    case 'pressKey': {
      const { key, modifiers } = a as ActionArgs['pressKey'];
      return driver.pressKey(target, key, modifiers);
    }
    case 'scroll':
      return driver.scroll(target, a as ActionArgs['scroll']);
    case 'drag':
      return driver.drag(target, a as ActionArgs['drag']);
    case 'hover':
      return driver.hover(target);
  }
  throw new Error(`no driver method for the action ${action}`);
}

/** Every action tool, in the table's order (the order tools/list shows them in). */
export const actionTools: ToolDef[] = ACTION_NAMES.flatMap((action) =>
  ACTIONS[action].tools.map((tool) =>
    defineAction({
      name: tool.name,
      description: tool.description,
      input: tool.input,
      annotations: tool.annotations,
      ...(tool.advanced ? { advanced: tool.advanced } : {}),
      act: (driver, target, args) => perform(driver, action, target, tool.args(args)),
    }),
  ),
);
