// The shapes of AT-SPI as the native route reads it: an object's address, a cache row, the toolkit an app
// names, and the interface names (model.ts re-exports them for its importers).

/** One accessible object: the app's unique bus name and the object path. */
export interface AccRef {
  bus: string;
  path: string;
}

/** An accessible object's identity (its app's bus name and its path), which it keeps while it lives. */
export const objectKey = (r: AccRef): string => `${r.bus}${r.path}`;

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
 * What an app names as its toolkit (Application.ToolkitName and Version, asked once per app): its profile
 * (toolkits/) is chosen from it, and holds what the toolkit means by an offset, a length or an extent.
 */
export interface Toolkit {
  name: string;
  version: string;
  /** The app's own name (its root's Name: "soffice" for LibreOffice, whose ToolkitName is its VCL plugin's). */
  app: string;
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
