// The fields type_text actions hold in this world: prepareField (actions/type-text.page.ts) holds one and returns its
// handle; the action's next calls pass the handle back and read that field, never "whatever was prepared
// last". Bounded: an action that ended before its last call (a dialog opened, a refusal) is freed by the bound.
import { dropFieldWatch, fieldWatch } from './watches.js';
import type { FieldHandle } from './replies.js';
import { type HeldField, pageState } from './state.js';

/** At most this many fields are held at once in a world (one per type_text in flight in it, in practice). */
export const MAX_HELD_FIELDS = 16;

/** Holds `target` for one action, watching `types` on it; the oldest held field goes past the bound. */
export function holdField(target: Element, types: string[], sink?: HeldField['sink']): FieldHandle {
  const handle = ++pageState.lastHandle;
  pageState.heldFields.set(handle, { target, watch: fieldWatch(target, types), ...(sink ? { sink } : {}) });
  while (pageState.heldFields.size > MAX_HELD_FIELDS) releaseField(pageState.heldFields.keys().next().value!);
  return handle;
}

/** The field a handle holds; undefined once released, or in a new world (the frame navigated since). */
export function heldField(handle: FieldHandle): HeldField | undefined {
  return pageState.heldFields.get(handle);
}

/** Watches the held field afresh for `types` (type_text's key events, after an insertion nothing heard). */
export function rewatchField(handle: FieldHandle, types: string[]): void {
  const field = pageState.heldFields.get(handle);
  if (!field) return;
  dropFieldWatch(field.watch);
  field.watch = fieldWatch(field.target, types);
}

export function releaseField(handle: FieldHandle): void {
  const field = pageState.heldFields.get(handle);
  if (!field) return;
  dropFieldWatch(field.watch);
  pageState.heldFields.delete(handle);
}

/** How many fields are held now (the server's tests check that actions free theirs). */
export function heldFieldCount(): number {
  return pageState.heldFields.size;
}
