// An action's half on one route: the function in that route's actions/<kebab-name>.ts named after the action,
// taking the route's own context, the target and the argument the action table gives it. A route's driver
// finds its halves by the actions' names (loadHalves), so a new action is its table entry and one file per
// route; a route without one fails as it loads, naming the missing file (and test/unit/action-homes says so).
import { ACTION_NAMES, type ActionArgs, type ActionName } from './actions.js';
import type { ActionResult, ResolvedTarget } from './driver.js';

/** One action's half on a route whose context is C. */
export type ActionHalf<C, K extends ActionName> = (
  context: C,
  target: ResolvedTarget,
  args: ActionArgs[K],
) => Promise<ActionResult>;

/** Every action's half on a route whose context is C. */
export type ActionHalves<C> = { [K in ActionName]: ActionHalf<C, K> };

/** The file an action's half lives in, without its extension: its name in kebab case (typeText: type-text). */
export function actionFile(action: ActionName): string {
  return action.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/**
 * Every action's half on one route, each imported from `actions/<kebab-name>.js` by `importFile` (a dynamic
 * import written in the route's driver, so the path is the driver's own); a file without the action's
 * function fails here, naming it.
 */
export async function loadHalves<C>(
  route: string,
  importFile: (file: string) => Promise<Record<string, unknown>>,
): Promise<ActionHalves<C>> {
  const halves = await Promise.all(
    ACTION_NAMES.map(async (action) => {
      const file = actionFile(action);
      const half = (await importFile(file))[action];
      if (typeof half !== 'function')
        throw new Error(`${route}: actions/${file}.ts exports no function ${action}, the action's half there`);
      return [action, half] as const;
    }),
  );
  return Object.fromEntries(halves) as ActionHalves<C>;
}

/**
 * What a route runs around each action's half (the CDP route's delivery_mode; the native routes' check of the
 * desktop's focus, stacking and pointer before and after), told which action it is.
 */
export type AroundAction = (
  target: ResolvedTarget,
  act: () => Promise<ActionResult>,
  action: ActionName,
) => Promise<ActionResult>;

/**
 * Gives `driver` one method per action (ActionMethods), each handing its call to the action's half with the
 * route's `context`; `around` wraps each call, when the route has such a step.
 */
export function defineActionMethods<C>(
  driver: object,
  halves: ActionHalves<C>,
  context: C,
  around: AroundAction = (_, act) => act(),
): void {
  for (const action of ACTION_NAMES) {
    const half = halves[action] as ActionHalf<C, ActionName>;
    // An ordinary method-like property: the queue wraps drivers in a Proxy, which may hand back another
    // function only for a property that is configurable or writable.
    Object.defineProperty(driver, action, {
      value: (target: ResolvedTarget, args: ActionArgs[ActionName]) =>
        around(target, () => half(context, target, args), action),
      configurable: true,
      writable: true,
    });
  }
}
