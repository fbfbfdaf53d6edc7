// How a call names its target (the targeting arguments every action tool shares), and the checks on
// that naming that need no browser.
import { Refusal } from './refusal.js';

export interface TargetArgs {
  element_token?: string;
  target?:
    | { kind: 'tab'; tab_id: string }
    | { kind: 'window'; pid?: number; window_id: number }
    | { kind: 'desktop'; display_id?: 'primary' };
  pid?: number;
  window_id?: number;
  scope?: 'window' | 'desktop';
  x?: number;
  y?: number;
  delivery_mode?: 'background' | 'foreground';
}

/**
 * The checks on how a call names its target that need no browser (run_actions runs them for every step
 * before the first): one way only, and both x and y for the px form.
 */
export function checkTargetShape(args: TargetArgs): void {
  const named = [
    args.element_token !== undefined && 'element_token',
    args.target !== undefined && 'target',
    (args.pid !== undefined || args.window_id !== undefined) && 'pid/window_id',
    args.scope === 'desktop' && 'scope',
  ].filter(Boolean) as string[];
  if (named.length > 1)
    throw new Refusal('conflicting_target', `name the target one way only; got ${named.join(' and ')}`, {
      fields: named,
    });
  if ((args.x === undefined) !== (args.y === undefined))
    throw new Refusal('invalid_arguments', `${args.x === undefined ? 'x' : 'y'}: the px form needs both x and y`);
  if (args.element_token !== undefined && args.x !== undefined)
    throw new Refusal('conflicting_target', 'pass element_token or x,y, not both');
}
