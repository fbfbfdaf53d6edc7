// What an action changed on its target, added to its result (issue 45 item 3): after the action, the target
// is read again and compared with its held observation (contract/changes.ts), so that an agent can act on
// what appeared without another get_window_state. Only a tab or a window that has been observed has one to
// compare with: an action on a target never observed (or the desktop) says nothing of changes.
import { diffObservations } from '../contract/changes.js';
import type { ActionResult, Driver, ResolvedTarget } from '../contract/driver.js';
import type { ToolContext } from './context.js';

/** `result` with `changes` (absent when nothing changed) and `changes_complete`, when the target has an observation held. */
export async function withChanges(
  result: ActionResult,
  target: ResolvedTarget,
  driver: Driver,
  snapshots: ToolContext['snapshots'],
): Promise<ActionResult> {
  if (target.kind === 'desktop' || !driver.reobserve) return result;
  const held = snapshots.held(target.kind, target.key);
  if (!held) return result;
  const navigated = result.caused?.navigated;
  try {
    const now = await driver.reobserve(target, held);
    if (now) {
      const acted = target.element?.snapshotId === held.snapshotId ? target.element.index : undefined;
      const diffed = diffObservations(held, now, { acted, navigated });
      snapshots.update(held.snapshotId, diffed);
      return { ...result, ...(diffed.changes ? { changes: diffed.changes } : {}), changes_complete: diffed.complete };
    }
    // A new document the action did not navigate to (a page navigate before it): nothing to compare with.
    if (navigated === undefined) return result;
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
    return { ...result, ...(diffed.changes ? { changes: diffed.changes } : {}), changes_complete: diffed.complete };
  } catch {
    // The action's own verdict stands; what it changed could not be read (the tab closed, the window went).
    return { ...result, changes_complete: false };
  }
}
