// What an action changed on its target (issue 45 item 3), pure: the target's held observation (its last
// get_window_state, as later actions' changes brought it up to date) against a re-observation taken after
// the action. The routes say which element now is which element held (the page agent by the DOM element
// itself, the native route by the AT-SPI object); this module only compares. An element the held observation
// did not have is appended to it, so its token ("<snapshot_id>:<index>") resolves like any of the
// observation's, and the observation's other tokens stay good.
import type { HeldObservation, Reobservation, SnapshotElement, SnapshotText } from './driver.js';

export type { HeldObservation, Reobservation, Reobserved } from './driver.js';
import { elementToken } from './element-token.js';

/** An element as a change names it. */
export interface ChangedElement {
  role: string;
  name: string;
  element_token: string;
}

/** A dialog that opened: an element's token when it is listed itself (a native dialog), else its role and name. */
export type OpenedDialog = { role: string; name: string; element_token?: string };

/** An element whose value or state changed: what it holds now and what it held. */
export interface StateChange extends ChangedElement {
  value?: string;
  was?: string;
  enabled?: boolean;
}

/** The `changes` of an action result; empty lists are left out (every byte is read by the model each turn). */
export interface Changes {
  navigated?: string;
  dialog?: OpenedDialog;
  appeared?: ChangedElement[];
  removed?: ChangedElement[];
  changed?: StateChange[];
  text_added?: string[];
  /** How many of each were left out by the caps (only when some were: then `changes_complete` is false). */
  more?: { appeared?: number; removed?: number; changed?: number; text_added?: number };
}

/** The caps that keep `changes` small; a cut one says so (`more`, `changes_complete: false`). */
export const CHANGE_CAPS = { appeared: 40, removed: 6, changed: 10, text_lines: 5, text_chars: 160 } as const;

/** What diffing gives: the summary, whether it is all of it, and the held observation brought up to date. */
export interface Diffed {
  /** Absent when nothing changed. */
  changes?: Changes;
  complete: boolean;
  /** The held observation's elements with what changed (values, states, names) and the new ones appended. */
  elements: SnapshotElement[];
  text?: SnapshotText[];
  gone: Set<number>;
}

const DIALOG_ROLES = new Set(['dialog', 'alertdialog', 'alert dialog', 'file chooser', 'color chooser']);

/**
 * The held observation against the target now. `acted` is the held index of the element the action named
 * (its own value change is the action's evidence, so it is not repeated under `changed`).
 */
export function diffObservations(
  held: HeldObservation,
  now: Reobservation,
  options: { acted?: number; navigated?: string } = {},
): Diffed {
  const elements = held.elements.slice();
  let next = held.elements.length; // where the next element the held observation lacks is appended
  const indexOfNow: number[] = []; // a re-observed element's index in the (extended) held observation
  const appeared: ChangedElement[] = [];
  const changed: StateChange[] = [];
  const seen = new Set<number>();
  let dialog: OpenedDialog | undefined = now.dialogs?.[0];
  now.elements.forEach((e, i) => {
    const heldIndex = e.held !== undefined && e.held < held.elements.length ? e.held : undefined;
    const index = heldIndex ?? next++;
    indexOfNow[i] = index;
    seen.add(index);
    const named = { role: e.role, name: e.label, element_token: elementToken(held.snapshotId, index) };
    if (heldIndex === undefined || held.gone.has(heldIndex)) {
      appeared.push(named);
      if (DIALOG_ROLES.has(e.role) && !dialog?.element_token) dialog = named;
    } else {
      const before = held.elements[heldIndex];
      const change: StateChange = { ...named };
      let differs = false;
      // A secret's value is never shown (nor that it changed): the action's evidence says what was typed, masked.
      if ((before.value ?? '') !== (e.value ?? '') && !e.secret && heldIndex !== options.acted) {
        change.value = e.value ?? '';
        change.was = before.value ?? '';
        differs = true;
      }
      if (before.enabled !== e.enabled) {
        change.enabled = e.enabled;
        differs = true;
      }
      if (before.label !== e.label) differs = true; // named by its new name; the token is the same element's
      if (differs) changed.push(change);
    }
  });
  // The held observation brought up to date: an element seen now takes its current reading (its parent as
  // the held observation indexes it), a new one is appended at the index its token names.
  now.elements.forEach((e, i) => {
    const { held: _held, ...element } = e;
    const parent = e.parent_index === null ? null : (indexOfNow[e.parent_index] ?? null);
    elements[indexOfNow[i]] = { ...element, element_index: indexOfNow[i], parent_index: parent };
  });
  const gone = new Set<number>();
  const removed: ChangedElement[] = [];
  held.elements.forEach((e, index) => {
    if (seen.has(index)) return;
    gone.add(index);
    if (!held.gone.has(index))
      removed.push({ role: e.role, name: e.label, element_token: elementToken(held.snapshotId, index) });
  });
  const textAdded = addedText(held.text ?? [], now.text ?? []);

  const more: NonNullable<Changes['more']> = {};
  const cap = <T>(list: T[], max: number, key: keyof typeof more): T[] => {
    if (list.length > max) more[key] = list.length - max;
    return list.slice(0, max);
  };
  const changes: Changes = {
    ...(options.navigated !== undefined ? { navigated: options.navigated } : {}),
    ...(dialog ? { dialog } : {}),
  };
  if (appeared.length) changes.appeared = cap(appeared, CHANGE_CAPS.appeared, 'appeared');
  // Removed elements are only tokens not to use again: a few are named (a dialog's buttons going away), but
  // past the cap the first few of a closed picker's 33 days say nothing the count does not, and cost the model
  // about 50 bytes each on every later turn; so then none is listed and `more.removed` counts them all.
  if (removed.length > CHANGE_CAPS.removed) more.removed = removed.length;
  else if (removed.length) changes.removed = removed;
  if (changed.length) changes.changed = cap(changed, CHANGE_CAPS.changed, 'changed');
  if (textAdded.length)
    changes.text_added = cap(textAdded, CHANGE_CAPS.text_lines, 'text_added').map((line) =>
      line.length > CHANGE_CAPS.text_chars ? `${line.slice(0, CHANGE_CAPS.text_chars - 1)}…` : line,
    );
  const cut = Object.keys(more).length > 0 || textAdded.some((line) => line.length > CHANGE_CAPS.text_chars);
  if (Object.keys(more).length) changes.more = more;
  return {
    ...(Object.keys(changes).length ? { changes } : {}),
    complete: !cut && !now.incomplete,
    elements,
    ...(now.text ? { text: now.text } : {}),
    gone,
  };
}

/** The page's text blocks now that were not there (each as many times as it is new), in reading order. */
function addedText(before: SnapshotText[], after: SnapshotText[]): string[] {
  const had = new Map<string, number>();
  for (const block of before) had.set(block.text, (had.get(block.text) ?? 0) + 1);
  const added: string[] = [];
  for (const block of after) {
    const left = had.get(block.text) ?? 0;
    if (left > 0) had.set(block.text, left - 1);
    else if (block.text.trim()) added.push(block.text);
  }
  return added;
}
