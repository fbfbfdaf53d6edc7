// The action tools, derived from the action table (contract/actions.ts): each resolves its target, hands it
// to the route's Driver, and returns the Driver's verified result unchanged (defineAction); run_actions
// reuses `actionTools` so a batch step is exactly a single call.
import { ACTION_NAMES, ACTIONS, type ActionName } from '../contract/actions.js';
import type { ActionMethods } from '../contract/driver.js';
import { defineAction, type ToolDef } from './define.js';

/** The tools that ask for one action, each handing the action's arguments to the driver method of its name. */
function toolsOf<K extends ActionName>(action: K): ToolDef[] {
  return ACTIONS[action].tools.map((tool) =>
    defineAction({
      name: tool.name,
      description: tool.description,
      input: tool.input,
      annotations: tool.annotations,
      ...(tool.advanced ? { advanced: tool.advanced } : {}),
      ...(tool.cap ? { cap: tool.cap } : {}),
      act: (driver, target, args) => (driver as ActionMethods)[action](target, tool.args(args)),
    }),
  );
}

/** Every action tool, in the table's order (the order tools/list shows them in). */
export const actionTools: ToolDef[] = ACTION_NAMES.flatMap(toolsOf);
