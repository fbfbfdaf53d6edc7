// The shapes of AT-SPI as the native route reads it: an object's address, a cache row, an app's toolkit
// conventions, and the interface names (model.ts re-exports them for its importers).

/** One accessible object: the app's unique bus name and the object path. */
export interface AccRef {
  bus: string;
  path: string;
}

/** Where toolkits (LibreOffice) place what they do not draw: x or y at INT32_MIN. */
export const PLACED_NOWHERE = -2147483648;

/** One row of org.a11y.atspi.Cache.GetItems: a((so)(so)(so)iiassusau). */
export interface CacheItem {
  ref: AccRef;
  parent: AccRef;
  indexInParent: number;
  childCount: number;
  interfaces: string[];
  name: string;
  role: number;
  states: [number, number];
}

/**
 * What an app's toolkit means by an offset or a length (Application.ToolkitName and Version, asked once
 * per app). Qt counts UTF-16 units in every Text and EditableText offset, count and length (InsertText's
 * length cuts or pads the string with NULs to that many units); GTK and other ATK toolkits count code
 * points, except InsertText's length, which is in UTF-8 bytes (GTK 4 ignores it). GTK 4 on X11 answers
 * screen extents relative to its window ("Screen coordinates not supported"). GTK 3's GetText(0, -1) is
 * its whole text (its insertion takes the exact UTF-8 bytes and cannot pad): its reads need no count.
 */
export interface Toolkit {
  name: string;
  utf16: boolean;
  windowRelative: boolean;
  atk: boolean;
  wholeText: boolean;
  /** A Wayland client: its extents count from its window whatever the toolkit (set by the host, wayland.ts). */
  wayland?: boolean;
}
const SURROGATES = /[\uD800-\uDFFF]/;
/** Code points of a string (most strings have no surrogates and count by UTF-16 units without an array). */
export const codePoints = (s: string) => (SURROGATES.test(s) ? Array.from(s).length : s.length);

export const IFACE = {
  accessible: 'org.a11y.atspi.Accessible',
  component: 'org.a11y.atspi.Component',
  text: 'org.a11y.atspi.Text',
  editable: 'org.a11y.atspi.EditableText',
  action: 'org.a11y.atspi.Action',
  value: 'org.a11y.atspi.Value',
  selection: 'org.a11y.atspi.Selection',
  application: 'org.a11y.atspi.Application',
  table: 'org.a11y.atspi.Table',
} as const;
