// The window tools on the nutjs backend: nut-js focuses, moves, resizes, minimizes and restores a window and
// reads back its focus and region; it knows no maximized state and no way to close a window, and cannot read
// whether a window is minimized.
import {
  type ActionResult,
  type Evidence,
  type ResolvedTarget,
  type Stopwatch,
  windowToolResult,
} from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import type { NutjsContext } from '../context.js';
import type { NutWindow } from '../host.js';

export async function nutWindow(ctx: NutjsContext, target: ResolvedTarget, tool: string): Promise<NutWindow> {
  if (target.kind !== 'window')
    throw new Refusal(
      'invalid_arguments',
      `target: ${tool} acts on a window; name one as {"kind": "window", "pid", "window_id"} (list_windows)`,
    );
  return ctx.host.targetWindow(target);
}

export function nutWindowResult(
  effect: ActionResult['effect'],
  sw: Stopwatch,
  win: NutWindow,
  method: string,
  evidence: Evidence[],
  extra: Partial<ActionResult> = {},
): ActionResult {
  return windowToolResult(
    effect,
    sw,
    { route: 'pixel', target: `window ${win.id} ("${win.title}")` },
    method,
    evidence,
    extra,
  );
}
