// What an action changed on its target, added to its result (issue 45 item 3): after the action, the target
// is read again and compared with its held observation (contract/changes.ts), so that an agent can act on
// what appeared without another get_window_state. Only a tab or a window that has been observed has one to
// compare with: an action on a target never observed (or the desktop) says nothing of changes.
import { diffObservations } from '../contract/changes.js';
import { withTiming, type ActionResult, type Driver, type ResolvedTarget } from '../contract/driver.js';
import type { ToolContext } from './context.js';

/** `result` with `changes` (absent when nothing changed) and `changes_complete`, when the target has an observation held. */
export async function withChanges(
  result: ActionResult,
  target: ResolvedTarget,
  driver: Driver,
  snapshots: ToolContext['snapshots'],
): Promise<ActionResult> {
  const acted = target.element?.snapshotId;
  const started = performance.now();
  const changes = await changesOf(target, driver, snapshots, {
    navigated: result.caused?.navigated,
    acted: acted === undefined ? undefined : { snapshotId: acted, index: target.element!.index },
  });
  // Its time is the action's too (the call returns after it): said apart, as the other around-phases are.
  return withTiming({ ...result, ...changes }, 'changes', performance.now() - started);
}

/**
 * What changed on `target` since its held observation, as a result's `changes` and `changes_complete` (both
 * absent when no observation is held): for an action's result, and for the page tool's handle_dialog.
 */
export async function changesOf(
  target: ResolvedTarget,
  driver: Driver,
  snapshots: ToolContext['snapshots'],
  options: { navigated?: string; acted?: { snapshotId: string; index: number } } = {},
): Promise<{ changes?: ActionResult['changes']; changes_complete?: boolean }> {
  if (target.kind === 'desktop' || !driver.reobserve) return {};
  const held = snapshots.held(target.kind, target.key);
  if (!held) return {};
  const { navigated } = options;
  try {
    const now = await driver.reobserve(target, held);
    if (now) {
      const acted = options.acted?.snapshotId === held.snapshotId ? options.acted.index : undefined;
      const diffed = diffObservations(held, now, { acted, navigated });
      snapshots.update(held.snapshotId, diffed);
      return { ...(diffed.changes ? { changes: diffed.changes } : {}), changes_complete: diffed.complete };
    }
    // A new document the action did not navigate to (a page navigate before it): nothing to compare with.
    if (navigated === undefined) return {};
    // A new document the action navigated to: nothing held can be matched (its tokens are gone with it). It
    // is observed afresh, as get_window_state would, and everything on it is new: its tokens are the new
    // observation's.
    const snapshotId = snapshots.nextId();
    const snap = await driver.snapshot(target, snapshotId, { includeScreenshot: false });
    snapshots.record(snapshotId, target.kind, target.key, snap);
    const diffed = diffObservations(
      { snapshotId, elements: [], gone: new Set() },
      {
        elements: snap.elements,
        ...(snap.text ? { text: snap.text } : {}),
        ...(snap.incomplete ? { incomplete: snap.incomplete } : {}),
      },
      { navigated },
    );
    return { ...(diffed.changes ? { changes: diffed.changes } : {}), changes_complete: diffed.complete };
  } catch {
    // The action's own verdict stands; what it changed could not be read (the tab closed, the window went).
    return { changes_complete: false };
  }
}
