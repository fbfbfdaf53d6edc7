// The pure part of a drag's verdict: what the page reported moving (a list's order, a slider's value, the
// grabbed element's box) against what the drag asked for. A drag is `confirmed` only when the page shows
// the change it asked for; when the page shows nothing changed it is `no_effect`, and when it changed
// otherwise, `mismatch` with what it holds now. Unit-tested in test/unit/drag-verdict.test.ts.
import type { ActionResult, Evidence } from './driver.js';

/** What the page agent read before and after a drag, about what the drag grabbed. */
export type DragProbe =
  /** An item of a list (ul/ol/tbody, role list/listbox/grid/tree/..., or items li/tr/option/row/...). */
  | {
      kind: 'list';
      item: string;
      before: string[];
      after: string[];
      fromIndex: number;
      /** The position the drop point named (the item it was over, before the drag); -1 when it named none. */
      toIndex: number;
      /** Where the grabbed item is now; -1 when it left the list. */
      afterIndex: number;
    }
  /** A slider (input type=range, role=slider) and the value the drag's distance along it asks for. */
  | {
      kind: 'value';
      element: string;
      before: number;
      after: number;
      /** null when the geometry cannot say (a vertical slider): then only "changed" is known. */
      expected: number | null;
      tolerance: number;
    }
  /** Anything else that was grabbed: its box, before and after, and the drag's own distance (CSS px). */
  | { kind: 'box'; element: string; dx: number; dy: number; wantDx: number; wantDy: number };

export interface DragEvents {
  down: string | null;
  up: string | null;
  source: string;
  destination: string;
  moves: number;
}
export interface DragVerdict {
  effect: ActionResult['effect'];
  evidence: Evidence[];
  observed?: string;
  escalation?: ActionResult['escalation'];
}

const SHOWN_ITEMS = 12;
const BOX_SLACK_PX = 4;

function orderText(items: string[]): string {
  const shown = items
    .slice(0, SHOWN_ITEMS)
    .map((t) => `"${t}"`)
    .join(', ');
  return items.length > SHOWN_ITEMS ? `${shown}, ... (${items.length} items)` : shown;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export function judgeDrag(probe: DragProbe | null, seen: DragEvents): DragVerdict {
  const events: Evidence = {
    kind: 'event',
    expected: `trusted mousedown at ${seen.source}, mouseup at ${seen.destination}`,
    observed: `mousedown at ${seen.down ?? 'nothing'}, ${seen.moves} moves, mouseup at ${seen.up ?? 'nothing'}`,
  };
  const reached = seen.down === seen.source && seen.moves > 0 && seen.up !== null;
  if (probe?.kind === 'list') {
    const asked =
      probe.toIndex >= 0
        ? `"${probe.item}" at position ${probe.toIndex + 1} of ${probe.before.length}`
        : `"${probe.item}" moved`;
    const evidence: Evidence[] = [
      {
        kind: 'list_order',
        expected: asked,
        observed: orderText(probe.after),
        detail: `before: ${orderText(probe.before)}`,
      },
      events,
    ];
    const unchanged =
      probe.before.length === probe.after.length &&
      probe.before.every((t, i) => t === probe.after[i]) &&
      probe.afterIndex === probe.fromIndex;
    if (unchanged)
      return {
        effect: 'no_effect',
        evidence,
        observed: `the order did not change: ${orderText(probe.after)}`,
        escalation: {
          target: 'verify',
          reason: reached
            ? 'the press, moves and release reached the page, but the list did not reorder'
            : 'the drag did not reach both ends',
        },
      };
    if (probe.toIndex >= 0 && probe.afterIndex === probe.toIndex) return { effect: 'confirmed', evidence };
    if (probe.toIndex < 0)
      return {
        effect: 'unverifiable',
        evidence,
        observed: orderText(probe.after),
        escalation: {
          target: 'verify',
          reason:
            'the list changed, but the drop point was over none of its items, so where the item belongs is unknown; check the order',
        },
      };
    const now =
      probe.afterIndex >= 0
        ? `"${probe.item}" is at position ${probe.afterIndex + 1}`
        : `"${probe.item}" left the list`;
    return { effect: 'mismatch', evidence, observed: `${now}: ${orderText(probe.after)}` };
  }
  if (probe?.kind === 'value') {
    const evidence: Evidence[] = [
      {
        kind: 'slider_value',
        expected:
          probe.expected === null
            ? 'a changed value'
            : `about ${round(probe.expected)} (within ${round(probe.tolerance)})`,
        observed: `${round(probe.before)} -> ${round(probe.after)} on ${probe.element}`,
      },
      events,
    ];
    if (probe.after === probe.before)
      return {
        effect: 'no_effect',
        evidence,
        observed: `the value stayed ${round(probe.after)}`,
        escalation: {
          target: 'verify',
          reason: reached
            ? 'the press, moves and release reached the page, but the value did not change'
            : 'the drag did not reach both ends',
        },
      };
    if (probe.expected === null)
      return {
        effect: 'unverifiable',
        evidence,
        observed: `the value is ${round(probe.after)}`,
        escalation: {
          target: 'verify',
          reason: 'the value changed, but which value the drag asks for is unknown on this slider',
        },
      };
    if (Math.abs(probe.after - probe.expected) <= probe.tolerance) return { effect: 'confirmed', evidence };
    return {
      effect: 'mismatch',
      evidence,
      observed: `the value is ${round(probe.after)}, not about ${round(probe.expected)}`,
    };
  }
  if (probe?.kind === 'box') {
    const slack = (want: number) => BOX_SLACK_PX + Math.abs(want) * 0.1;
    const moved = Math.abs(probe.dx) > 0.5 || Math.abs(probe.dy) > 0.5;
    const asAsked =
      Math.abs(probe.dx - probe.wantDx) <= slack(probe.wantDx) &&
      Math.abs(probe.dy - probe.wantDy) <= slack(probe.wantDy);
    const evidence: Evidence[] = [
      events,
      {
        kind: 'box_moved',
        expected: `${probe.element} by (${round(probe.wantDx)}, ${round(probe.wantDy)}) px`,
        observed: `by (${round(probe.dx)}, ${round(probe.dy)}) px`,
      },
    ];
    if (moved && asAsked) return { effect: 'confirmed', evidence };
    if (moved)
      return {
        effect: 'mismatch',
        evidence,
        observed: `${probe.element} moved by (${round(probe.dx)}, ${round(probe.dy)}) px`,
      };
    // The grabbed element did not move; a drag may still have drawn or selected something: the events say
    // whether it was delivered, nothing here says what it did.
  }
  return reached && seen.up === seen.destination
    ? { effect: 'confirmed', evidence: [events] }
    : {
        effect: 'unverifiable',
        evidence: [events],
        escalation: {
          target: 'verify',
          reason: 'the drag did not reach both ends; call get_window_state to see the result',
        },
      };
}
