// get_window_state for native windows: the AT-SPI tree of the window's frame (walk.ts: the app's cache,
// read live where it falls short), then extents and values of the kept elements in parallel, with frames in
// the pixels of the window's screenshot.
import type { Snapshot, SnapshotElement } from '../../../contract/driver.js';
import { IFACE, PLACED_NOWHERE, type AccRef, type Atspi, type CacheItem } from './model.js';
import type { WindowInfo } from './window.js';
import { capture } from '../transport/input.js';
import { popupSurfaces } from '../transport/x11.js';
import { ROLE, STATE, STRUCTURAL_ROLES, TOGGLE_ROLES, calcCellEditorName, has, roleName } from './roles.js';
import { managesChildren, walkWindow } from './walk.js';

/** Closed menus and popups report VISIBLE without being shown; they are listed only while open. */
const POPUP_ROLES: ReadonlySet<number> = new Set([
  ROLE.menu,
  ROLE.menuItem,
  ROLE.checkMenuItem,
  ROLE.radioMenuItem,
  41 /* popup menu */,
  64 /* tool tip */,
]);

/** What a native element token carries (server-side only). */
export interface NativeRef extends AccRef {
  role: number;
  name: string;
  interfaces: string[];
  web: boolean;
  windowId: number;
  pid: number | null;
  /** Screen extents at snapshot time. */
  box: { x: number; y: number; w: number; h: number };
  /** The window as it was at snapshot time (its id, pid, frame, and whether it is the driven browser's). */
  win: WindowInfo;
  /** The popup surface (screen pixels) it is drawn in, when that is not its window (a GTK 4 popover). */
  surface?: { x: number; y: number; w: number; h: number };
  /** The drop-down whose open list holds it (a GTK 4 drop-down's popover): what a click on it chooses there. */
  dropDown?: AccRef;
  /**
   * The label of the open popover it is drawn in when the compositor does not say where that is (Wayland):
   * its `box` is then relative to the popover, so no pointer event may aim at it.
   */
  unplacedIn?: string;
  /** Calc's cell editor (roles.ts calcCellEditorName): its panel's name, known from the snapshot's walk. */
  calcCellEditor?: string;
}

/** An element's server-side handle. Fields spelled out: spreading `ref` made building a snapshot's refs ten times slower. */
export function nativeRef(
  ref: AccRef,
  item: Pick<CacheItem, 'role' | 'name' | 'interfaces'>,
  web: boolean,
  win: WindowInfo,
  box: NativeRef['box'],
): NativeRef {
  return {
    bus: ref.bus,
    path: ref.path,
    role: item.role,
    name: item.name,
    interfaces: item.interfaces,
    web,
    windowId: win.id,
    pid: win.pid,
    box,
    win,
  };
}

export interface WindowTree {
  elements: SnapshotElement[];
  hasWebDocument: boolean;
  nodes: number;
  /** What the walk could not read or cut (see walk.ts): the elements are then not all the window shows. */
  incomplete?: string;
  /** The surfaces drawn apart from the window (GTK 4's open popovers), frames relative to `origin`. */
  surfaces?: PopupSurface[];
}

/** A surface of the window's app drawn apart from it, and the element (its popover) whose subtree it shows. */
export interface PopupSurface {
  kind: 'popover';
  /** The popover's own element, or null when it is not listed itself (an unnamed container). */
  element_index: number | null;
  label: string;
  /** Where it is drawn; null where the compositor does not say (Wayland: sway's IPC lists no popups). */
  frame: { x: number; y: number; w: number; h: number } | null;
  /** With no frame: the frames of the elements drawn in it count from its own top-left, not the screenshot's. */
  element_frames?: 'relative_to_surface';
}

/** The elements of one window, frames relative to `origin` (the screenshot's top-left in screen pixels). */
export async function windowElements(
  atspi: Atspi,
  win: WindowInfo,
  origin: { x: number; y: number },
  firstIndex = 0,
): Promise<WindowTree> {
  if (!win.frame || !win.app) return { elements: [], hasWebDocument: false, nodes: 0 };
  const { rows, incomplete } = await walkWindow(atspi, win.frame);
  const kept: Array<{ item: CacheItem; parentIndex: number | null; web: boolean; cellEditor: string | null }> = [];
  const parentOf = new Map<CacheItem, CacheItem | null>();
  const indexOf = new Map<CacheItem, number>();
  const webOf = new Map<CacheItem, boolean>();
  const hidden = new Set<CacheItem>();
  const scrolledOf = new Map<CacheItem, boolean>();
  let hasWebDocument = false;
  // GTK 4 marks its widgets `visible` but never `showing`: where no element below the window says
  // `showing`, `visible` is what says it is shown.
  const showingKnown = rows.some(({ item, parent }) => parent && has(item.states, STATE.showing));
  const placed = await popoverPlacement(atspi, win, rows);
  for (const { item, parent } of rows) {
    const web = item.role === ROLE.documentWeb || (parent ? (webOf.get(parent) ?? false) : false);
    webOf.set(item, web);
    parentOf.set(item, parent);
    if (item.role === ROLE.documentWeb) hasWebDocument = true;
    // Hidden subtrees (other tabs' pages, unmapped widgets) are left out with everything under them;
    // visible ones scrolled out of view stay listed.
    // Visible content scrolled out of a viewport is still listed; anything else unshown is not.
    const scrolled = item.role === 68 /* viewport */ || (parent ? (scrolledOf.get(parent) ?? false) : false);
    scrolledOf.set(item, scrolled);
    // A popover is shown while its surface is mapped (and then its items are, though GTK 4 says only `visible`).
    // GTK 4 leaves a closed popover's content behind, unparented from its popover, under the widget.
    const leftOver = placed.apart && item.name === 'GtkPopoverContent' && !(parent && placed.shift.has(parent));
    if ((placed.popovers.has(item) && !placed.shift.has(item)) || leftOver) {
      hidden.add(item);
      continue;
    }
    if (!placed.shift.has(item) && parent && placed.shift.has(parent))
      placed.shift.set(item, placed.shift.get(parent)!);
    const inSurface = placed.shift.has(item);
    const shown =
      has(item.states, STATE.showing) ||
      (!showingKnown && has(item.states, STATE.visible) && (!POPUP_ROLES.has(item.role) || inSurface)) ||
      (scrolled && has(item.states, STATE.visible) && !POPUP_ROLES.has(item.role));
    if ((parent && hidden.has(parent)) || (parent && !shown)) {
      hidden.add(item);
      continue;
    }
    // Unnamed structural containers are skipped; their children attach to the nearest kept ancestor.
    const parentIndex = parent ? (indexOf.get(parent) ?? null) : null;
    if (parent && STRUCTURAL_ROLES.has(item.role) && !item.name) {
      if (parentIndex !== null) indexOf.set(item, parentIndex);
      continue;
    }
    const index = firstIndex + kept.length;
    indexOf.set(item, index);
    const cellEditor = calcCellEditorName(item.role, parent, parent ? parentOf.get(parent) : null);
    kept.push({ item, parentIndex, web, cellEditor });
  }
  const details = await Promise.all(kept.map(({ item }) => readDetails(atspi, item, win.bounds)));
  // What is placed off the screen (LibreOffice's closed menus' separators) is not shown, nor anything
  // under it: left out, and the indices of what stays closed up. An open popover's elements are moved to
  // where its own surface is drawn.
  const finalIndex = new Map<number, number | null>();
  const elements: SnapshotElement[] = [];
  const unplacedCount = new Map<string, number>();
  let cellsUnread = 0;
  kept.forEach(({ item, parentIndex, web, cellEditor }, i) => {
    const { value } = details[i];
    // A cell of a self-managing table (a sheet) is listed as one of the cells in view (walk.ts). One it
    // draws nowhere (zero size: a hidden row or column, or, while the sheet is laid out, one outside its
    // grid as it is now: LibreOffice clips a cell's box to its grid window) is not in view: left out. One
    // whose box could not be read is left out too, and said: the list is then not every cell in view.
    if (item.role === ROLE.tableCell && parentOf.get(item) && isManagedTable(parentOf.get(item)!)) {
      if (details[i].unread) {
        cellsUnread++;
        return;
      }
      if (details[i].box.w <= 0 || details[i].box.h <= 0) return;
    }
    // Listed under its name: the label's where the toolkit puts its value in the name (readDetails).
    const named = details[i].label === undefined ? item : { ...item, name: details[i].label };
    const shift = placed.shift.get(item);
    const read = details[i].box;
    const parentFinal = parentIndex === null ? null : finalIndex.get(parentIndex);
    if (parentFinal === undefined || read.x === PLACED_NOWHERE || read.y === PLACED_NOWHERE) return;
    // An element of a popover drawn where nobody says keeps its place inside the popover: its frame (and
    // box) count from the popover's corner, and it is marked so that no pointer event aims at it.
    const box = !shift
      ? read
      : shift.surface
        ? { ...read, x: read.x + shift.dx, y: read.y + shift.dy }
        : { ...read, x: read.x - shift.corner.x, y: read.y - shift.corner.y };
    const index = firstIndex + elements.length;
    finalIndex.set(firstIndex + i, index);
    const ref = nativeRef(item.ref, named, web, win, box);
    if (shift?.surface) ref.surface = shift.surface;
    if (shift && !shift.surface) ref.unplacedIn = shift.label;
    if (shift?.dropDown) ref.dropDown = shift.dropDown;
    if (cellEditor) ref.calcCellEditor = cellEditor;
    const relative = !!shift && !shift.surface;
    if (relative) unplacedCount.set(shift.label, (unplacedCount.get(shift.label) ?? 0) + 1);
    elements.push({
      element_index: index,
      role: roleName(item.role),
      label: named.name,
      ...(value !== undefined ? { value } : {}),
      enabled: has(item.states, STATE.sensitive) || has(item.states, STATE.enabled),
      focused: has(item.states, STATE.focused),
      ...(has(item.states, STATE.selected) ? { selected: true } : {}),
      in_web_content: web,
      frame: relative ? box : { x: box.x - origin.x, y: box.y - origin.y, w: box.w, h: box.h },
      parent_index: parentFinal,
      ref,
    });
  });
  // Each open popover is a surface of its own: listed with the frame it is drawn at and its element.
  const surfaces: PopupSurface[] = [];
  for (const item of placed.popovers) {
    const at = placed.shift.get(item);
    if (!at || hidden.has(item)) continue;
    const keptAt = indexOf.get(item);
    const own = keptAt !== undefined && kept[keptAt - firstIndex]?.item === item;
    surfaces.push({
      kind: 'popover',
      element_index: own ? (finalIndex.get(keptAt) ?? null) : null,
      label: item.name,
      ...(at.surface
        ? { frame: { x: at.surface.x - origin.x, y: at.surface.y - origin.y, w: at.surface.w, h: at.surface.h } }
        : { frame: null, element_frames: 'relative_to_surface' as const }),
    });
  }
  // Listed, but not where they are drawn: the snapshot is not the whole observation, and says what is missing.
  const unplaced = [...unplacedCount].map(
    ([label, n]) =>
      `popover "${label}" is drawn where the compositor does not say (sway's IPC lists no popups), so its ${n} element${n === 1 ? '' : 's'} are listed with frames relative to the popover's top-left, not the screenshot's; act on them by element_token (AT-SPI and keys), not by pixels`,
  );
  const unreadCells = cellsUnread
    ? `the box of ${cellsUnread} table cell${cellsUnread === 1 ? '' : 's'} in view could not be read, so ${cellsUnread === 1 ? 'it is' : 'they are'} not listed`
    : '';
  const gaps = [incomplete, ...unplaced, unreadCells].filter((g): g is string => !!g);
  return {
    elements,
    hasWebDocument,
    nodes: rows.length,
    ...(gaps.length ? { incomplete: gaps.join('; ') } : {}),
    ...(surfaces.length ? { surfaces } : {}),
  };
}

/** A table that manages its own cells (a sheet): the walk lists the cells it shows in view. */
const isManagedTable = (item: CacheItem) => managesChildren(item) && item.interfaces.includes(IFACE.table);

/** GTK 4's popovers (popover menus, popovers, drop-down lists): the roots of their subtrees in its tree. */
const isPopover = (item: Pick<CacheItem, 'role' | 'name'>) =>
  item.role === ROLE.menu || item.role === 41 /* popup menu */ || item.name === 'GtkPopover';

type Surface = { x: number; y: number; w: number; h: number };
/**
 * Where an open popover's elements are drawn: its surface and how far AT-SPI's boxes are from it, or (no
 * surface: the compositor does not say) the popover's own AT-SPI corner, which its elements' boxes count from.
 */
type Placed = { label: string; dropDown?: AccRef } & (
  | { surface: Surface; dx: number; dy: number }
  | { surface: null; corner: { x: number; y: number } }
);
/** How far (width plus height, pixels) a popover's AT-SPI size may be from its surface's. */
const SIZE_SLACK = 16;

/**
 * Where GTK 4 draws its open popovers. Under X11 each is its own override-redirect X window, but AT-SPI
 * places it at its parent widget's origin: so each popover in the tree is matched to a mapped popup
 * surface of the app of the same size, and it and everything in it are moved by the difference. A
 * popover with no such surface is closed (or not drawn), so it is not listed. Under Wayland a popover is
 * an xdg_popup that only the compositor places, and sway's IPC does not list popups: an open one (see
 * openOnWayland) is listed with its elements placed relative to it, and said to be unplaced.
 */
async function popoverPlacement(
  atspi: Atspi,
  win: WindowInfo,
  rows: Array<{ item: CacheItem; parent: CacheItem | null }>,
): Promise<{
  apart: boolean;
  popovers: Set<CacheItem>;
  shift: Map<CacheItem, Placed>;
}> {
  const shift = new Map<CacheItem, Placed>();
  const popovers = new Set<CacheItem>();
  const apart = !!win.app && atspi.hooks(win.app.bus).popoversApart;
  if (!apart) return { apart, popovers, shift };
  const parentOf = new Map<CacheItem, CacheItem>();
  for (const { item, parent } of rows)
    if (parent && isPopover(item)) {
      popovers.add(item);
      parentOf.set(item, parent);
    }
  if (!popovers.size) return { apart, popovers, shift };
  if (win.surface === 'wayland') {
    await Promise.all(
      [...popovers].map(async (item) => {
        const owner = parentOf.get(item)!;
        const corner = await openOnWayland(atspi, item, owner, win.bounds);
        if (corner)
          shift.set(item, {
            label: item.name,
            surface: null,
            corner,
            ...(owner.role === ROLE.comboBox ? { dropDown: owner.ref } : {}),
          });
      }),
    );
    return { apart, popovers, shift };
  }
  const free = await popupSurfaces(win.id).catch(() => []);
  for (const item of popovers) {
    if (!free.length) break;
    const box = await atspi.extents(item.ref, win.bounds).catch(() => null);
    // GTK 4 counts a popover a few pixels smaller than its surface at times (a drop-down list: 510x120
    // in a 510x126 surface); the closest in size within a tolerance is its surface.
    const off = (s: Surface) => (box ? Math.abs(s.w - box.w) + Math.abs(s.h - box.h) : Infinity);
    const at = box
      ? free.reduce((best, s, i) => (off(s) <= SIZE_SLACK && (best < 0 || off(s) < off(free[best])) ? i : best), -1)
      : -1;
    if (!box || at < 0) continue;
    const [surface] = free.splice(at, 1);
    // Where the surface is taller, the difference is above the content (measured on a drop-down list,
    // which opens below its button).
    const extra = Math.max(0, surface.h - box.h);
    const owner = parentOf.get(item);
    shift.set(item, {
      label: item.name,
      dx: surface.x - box.x,
      dy: surface.y + extra - box.y,
      surface,
      ...(owner?.role === ROLE.comboBox ? { dropDown: owner.ref } : {}),
    });
  }
  return { apart, popovers, shift };
}

/**
 * Whether a GTK 4 popover is open on Wayland, and then its AT-SPI corner. Open, it is a live child of its
 * widget and has a size; the app's cache keeps a closed popover menu (as visible, 0x0, no longer its
 * widget's child), so the cache alone cannot say.
 */
async function openOnWayland(
  atspi: Atspi,
  item: CacheItem,
  owner: CacheItem,
  origin: { x: number; y: number },
): Promise<{ x: number; y: number } | null> {
  const [box, children] = await Promise.all([
    atspi.extents(item.ref, origin).catch(() => null),
    atspi.children(owner.ref).catch(() => []),
  ]);
  if (!box || box.w <= 1 || box.h <= 1 || !children.some((c) => c.path === item.ref.path && c.bus === item.ref.bus))
    return null;
  return { x: box.x, y: box.y };
}

/**
 * The label of an open popover of a GTK 4 window on Wayland, drawn where the compositor does not say (so a
 * pointer event in the window may land on it or beside it), or null.
 */
export async function unplacedPopoverOf(atspi: Atspi, win: WindowInfo): Promise<string | null> {
  if (win.surface !== 'wayland' || !win.frame || !win.app) return null;
  await atspi.toolkit(win.app.bus);
  if (!atspi.hooks(win.app.bus).popoversApart) return null;
  const { rows } = await walkWindow(atspi, win.frame);
  for (const { item, parent } of rows)
    if (parent && isPopover(item) && (await openOnWayland(atspi, item, parent, win.bounds))) return item.name;
  return null;
}

async function readDetails(
  atspi: Atspi,
  item: CacheItem,
  origin: { x: number; y: number },
): Promise<{ box: NativeRef['box']; unread?: true; value?: string; label?: string }> {
  const ifaces = item.interfaces;
  // Where the toolkit says the value in the name's place, the label beside it names the element.
  const named = atspi.hooks(item.ref.bus).nameIsValue?.(item.role)
    ? atspi.labelledBy(item.ref).then(
        (l) => l ?? '',
        () => '',
      )
    : undefined;
  const [box, value, label] = await Promise.all([
    ifaces.includes(IFACE.component)
      ? atspi.extents(item.ref, origin).catch(() => null)
      : Promise.resolve({ x: 0, y: 0, w: 0, h: 0 }),
    valueOf(atspi, item).catch(() => undefined),
    named,
  ]);
  return {
    box: box ?? { x: 0, y: 0, w: 0, h: 0 },
    ...(box ? {} : { unread: true as const }),
    value,
    ...(label !== undefined ? { label } : {}),
  };
}

/** A control's value as text: its text, its number, its checked state, or a combo box's selection. */
export async function valueOf(
  atspi: Atspi,
  item: Pick<CacheItem, 'ref' | 'interfaces' | 'role' | 'states'>,
): Promise<string | undefined> {
  if (
    item.interfaces.includes(IFACE.text) &&
    (item.interfaces.includes(IFACE.editable) ||
      item.role === ROLE.text ||
      item.role === ROLE.entry ||
      item.role === ROLE.terminal ||
      item.role === ROLE.passwordText)
  ) {
    if (item.role === ROLE.passwordText) return undefined;
    return atspi.text(item.ref);
  }
  // A spreadsheet cell's Value is its number (0 for text): what it holds is its Text.
  if (item.role === ROLE.tableCell && item.interfaces.includes(IFACE.text)) return atspi.text(item.ref);
  if (TOGGLE_ROLES.has(item.role)) return String(has(item.states, STATE.checked));
  if (item.interfaces.includes(IFACE.value)) return String(await atspi.prop(item.ref, IFACE.value, 'CurrentValue'));
  if (item.role === ROLE.comboBox && item.interfaces.includes(IFACE.selection)) {
    const [[bus, path]] = await atspi.call(item.ref, IFACE.selection, 'GetSelectedChild', 'i', [0]);
    if (!bus || path === '/org/a11y/atspi/null') return undefined;
    return String(await atspi.prop({ bus, path }, 'org.a11y.atspi.Accessible', 'Name'));
  }
  // A combo box without Selection shows its value its toolkit's way (a GTK 4 drop-down, a Qt combo box).
  const comboValue = item.role === ROLE.comboBox ? atspi.hooks(item.ref.bus).comboValue : undefined;
  return comboValue?.(atspi, item.ref);
}

/** A window's snapshot: its tree and (optionally) its screenshot, frames in that screenshot's pixels. */
export async function snapshotWindow(
  atspi: Atspi,
  win: WindowInfo,
  includeScreenshot: boolean,
  hidden: Array<{ x: number; y: number; w: number; h: number }> = [],
): Promise<Snapshot & { tree: WindowTree }> {
  const origin = { x: win.bounds.x, y: win.bounds.y };
  const [tree, shot] = await Promise.all([
    windowElements(atspi, win, origin),
    includeScreenshot ? capture(win.bounds, hidden) : Promise.resolve(null),
  ]);
  return {
    target: {
      kind: 'window',
      pid: win.pid,
      window_id: win.id,
      title: win.title,
      ...(win.frame ? {} : { accessibility: 'this window exposes no AT-SPI tree' }),
      ...(tree.surfaces ? { surfaces: tree.surfaces } : {}),
    },
    elements: tree.elements,
    ...(tree.incomplete ? { incomplete: tree.incomplete } : {}),
    ...(shot ? { screenshot: { data: shot.data, mimeType: 'image/png', width: shot.width, height: shot.height } } : {}),
    screenshot_width: win.bounds.w,
    screenshot_height: win.bounds.h,
    scale: 1,
    tree,
  };
}
