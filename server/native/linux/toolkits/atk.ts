// Any ATK toolkit (at-spi2-atk) without a profile of its own, and an app whose toolkit is not asked yet:
// ATK's conventions, which gtk3.ts, libreoffice.ts and firefox.ts start from.
import { STATE, has } from '../atspi/roles.js';
import type { ToolkitProfile } from './profile.js';

/** EditableText takes edits unless read only; ATK toolkits also say `editable` when it does. */
export function atkAcceptsEdits(states: [number, number]): boolean {
  return !has(states, STATE.readOnly) && has(states, STATE.editable);
}

/** A toolkit that says nothing of `editable` (Qt, GTK 4): EditableText takes edits unless read only. */
export function acceptsUnlessReadOnly(states: [number, number]): boolean {
  return !has(states, STATE.readOnly);
}

export const atk: ToolkitProfile = {
  name: 'atk',
  // Offsets and counts in code points; InsertText's length in UTF-8 bytes (GTK 3 cuts the text to that many).
  countsUtf16: false,
  insertLength: (text) => Buffer.byteLength(text, 'utf8'),
  windowRelative: false,
  wholeText: false,
  popoversApart: false,
  acceptsEdits: atkAcceptsEdits,
  combo: null,
};
