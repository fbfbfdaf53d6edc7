// A window's accessible tree, built from its root down. The app's cache (one Cache.GetItems call) gives
// most of it; where the cache disagrees with the live tree it is read live:
// - a node with more children than the cache lists under it (objects created lazily, or linked in the
//   cache to a parent that is not in the cache: LibreOffice's root pane) has its children read live, and
//   those children hang under it whatever parent the cache names for them;
// - a container that manages its own children (MANAGES_DESCENDANTS, or a child count of -1 in the cache:
//   LibreOffice's documents and sheets) is read by index, bounded to what it shows (a table by the rows
//   and columns in view, anything else by GetChildAtIndex up to a cap).
// An app whose cache does not answer within its bound (atspi.ts: it scales with the app's last answer) has
// its whole tree read live, which is as complete as the cache, only slower.
// Whatever could not be read, or was cut by a bound, is said in `incomplete`: no snapshot built on a walk
// that left something out claims to be complete.
import { LIMITS } from '../../../limits.js';
import { IFACE, objectKey, type AccRef, type Atspi, type CacheItem } from './model.js';
import { STATE, has } from './roles.js';

export interface WalkRow {
  item: CacheItem;
  depth: number;
  parent: CacheItem | null;
}

export interface Walk {
  /** The rows under the root (the root first), in document order: depth first, children in order. */
  rows: WalkRow[];
  /** Why the walk is not the whole shown tree (a bound hit, a read that failed), or undefined. */
  incomplete?: string;
}

/** Nodes of one window's walk. */
export const MAX_WALK_NODES = LIMITS.nativeWalkNodes;
/** Children read from one self-managing container (a sheet's cells in view, a document's paragraphs). */
export const MAX_MANAGED_CHILDREN = LIMITS.nativeManagedChildren;
const MAX_DEPTH = 200;
/** Rounds of live reads (each goes one level deeper where the cache fell short). */
const MAX_ROUNDS = 24;
const NULL_PATH = '/org/a11y/atspi/null';

/** Children of a node as the cache lists them (by parent link), each list in index order. */
export function cacheChildren(items: CacheItem[]): Map<string, CacheItem[]> {
  const children = new Map<string, CacheItem[]>();
  for (const item of items) {
    const parent = objectKey(item.parent);
    const list = children.get(parent);
    if (list) list.push(item);
    else children.set(parent, [item]);
  }
  for (const list of children.values()) if (list.length > 1) list.sort((a, b) => a.indexInParent - b.indexInParent);
  return children;
}

/** Whether a container manages its own children (the cache cannot list them; read them by index). */
export const managesChildren = (item: Pick<CacheItem, 'childCount' | 'states'>) =>
  item.childCount < 0 || has(item.states, STATE.managesDescendants);

/**
 * Rows of the tree under `root`, depth first: `live` children (read from the app) where known, else the
 * cache's. Pure: the walk's rounds call it again as live reads come in.
 */
export function orderRows(
  rootItem: CacheItem,
  cached: Map<string, CacheItem[]>,
  live: Map<string, CacheItem[]>,
  maxNodes = MAX_WALK_NODES,
): { rows: WalkRow[]; cut: boolean } {
  const rows: WalkRow[] = [];
  const seen = new Set<string>();
  let cut = false;
  const visit = (item: CacheItem, depth: number, parent: CacheItem | null) => {
    const k = objectKey(item.ref);
    if (seen.has(k) || depth > MAX_DEPTH) return;
    if (rows.length >= maxNodes) {
      cut = true;
      return;
    }
    seen.add(k);
    rows.push({ item, depth, parent });
    for (const child of live.get(k) ?? cached.get(k) ?? []) visit(child, depth + 1, item);
  };
  visit(rootItem, 0, null);
  return { rows, cut };
}

/** Which nodes need their children read live: the cache lists fewer than they have, or cannot list them. */
export function needsLiveRead(item: CacheItem, cached: Map<string, CacheItem[]>): 'children' | 'managed' | null {
  // Only a shown one is read: closed menus manage their items too, and are not shown.
  if (managesChildren(item)) return has(item.states, STATE.showing) ? 'managed' : null;
  return item.childCount > (cached.get(objectKey(item.ref))?.length ?? 0) ? 'children' : null;
}

/** The tree of the window whose top-level accessible is `root`, from its app's cache and live reads. */
export async function walkWindow(atspi: Atspi, root: AccRef): Promise<Walk> {
  const { items, cacheLate } = await atspi.itemsFor(root.bus, root);
  const known = new Map(items.map((i) => [objectKey(i.ref), i]));
  const rootItem = known.get(objectKey(root));
  if (!rootItem) return { rows: [], incomplete: 'the window’s top-level accessible could not be read' };
  const cached = cacheChildren(items);
  const live = new Map<string, CacheItem[]>();
  const tried = new Set<string>();
  const problems: string[] = [];
  let order = orderRows(rootItem, cached, live);
  for (let round = 0; ; round++) {
    const pending = order.rows
      .map((r) => ({ item: r.item, how: needsLiveRead(r.item, cached) }))
      .filter((p) => p.how && !tried.has(objectKey(p.item.ref)));
    if (!pending.length) break;
    if (round >= MAX_ROUNDS) {
      problems.push(`the tree is deeper than ${MAX_ROUNDS} levels of live reads`);
      break;
    }
    await Promise.all(
      pending
        .map(async ({ item, how }) => {
          tried.add(objectKey(item.ref));
          const read =
            how === 'managed' ? await managedChildren(atspi, item) : { refs: await atspi.children(item.ref) };
          if (read.cut) problems.push(read.cut);
          const children = await Promise.all(
            read.refs.map(async (ref, index) => {
              const k = objectKey(ref);
              const have = known.get(k);
              // The live tree says whose child it is, whatever the cache's parent link says.
              if (have)
                return have.parent.path === item.ref.path && have.parent.bus === item.ref.bus
                  ? have
                  : { ...have, parent: item.ref };
              const described = await atspi.describe(ref, item.ref).catch(() => null);
              if (!described) return null;
              if (described.indexInParent < 0) described.indexInParent = index;
              known.set(k, described);
              return described;
            }),
          );
          live.set(
            objectKey(item.ref),
            children.filter((c): c is CacheItem => c !== null),
          );
        })
        .map((p) =>
          p.catch((e: unknown) => {
            problems.push(`children of an element could not be read (${(e as Error).message})`);
          }),
        ),
    );
    order = orderRows(rootItem, cached, live);
  }
  if (order.cut) problems.push(`the window has more than ${MAX_WALK_NODES} accessible objects`);
  // Read live because the app's cache came too late: said beside what the live reads missed, if anything.
  if (cacheLate && problems.length) problems.unshift(`the tree was read live (${cacheLate})`);
  return { rows: order.rows, ...(problems.length ? { incomplete: [...new Set(problems)].join('; ') } : {}) };
}

/**
 * The children a self-managing container shows. A table (a spreadsheet) is read by the rows and columns
 * in view: the cells at its top-left and bottom-right corners give the range. Anything else (a document's
 * paragraphs: LibreOffice lists the ones in view) is read by index up to the cap.
 */
async function managedChildren(atspi: Atspi, item: CacheItem): Promise<{ refs: AccRef[]; cut?: string }> {
  if (item.interfaces.includes(IFACE.table) && item.interfaces.includes(IFACE.component)) {
    const inView = await tableCellsInView(atspi, item.ref);
    if (inView) return inView;
  }
  const count = Number(await atspi.prop(item.ref, IFACE.accessible, 'ChildCount'));
  const n = Math.min(Math.max(count, 0), MAX_MANAGED_CHILDREN);
  const refs = await Promise.all(Array.from({ length: n }, (_, i) => atspi.childAt(item.ref, i).catch(() => null)));
  return {
    refs: refs.filter((r): r is AccRef => r !== null),
    ...(count > n ? { cut: `"${item.name}" has ${count} children; the first ${n} were read` } : {}),
  };
}

/** How many times a table's cells in view are read while its box moves under the read (see tableCellsInView). */
const TABLE_LAYOUT_READS = 4;

/**
 * The cells of a table that are in view, row by row (null: the table did not say where its cells are).
 * A sheet lays itself out as its window is mapped and sized (on a busy machine, while it is read): the
 * table's box is read again after its cells, and the cells are read again while it moved, a few times.
 * Where it never held still, the read says so: the cells may be those of a box the sheet no longer has.
 */
export async function tableCellsInView(atspi: Atspi, table: AccRef): Promise<{ refs: AccRef[]; cut?: string } | null> {
  let box = await atspi.extents(table);
  for (let read = 1; ; read++) {
    const cells = await cellsInBox(atspi, table, box);
    const again = await atspi.extents(table);
    const still = again.x === box.x && again.y === box.y && again.w === box.w && again.h === box.h;
    if (still || !cells) return cells;
    if (read >= TABLE_LAYOUT_READS) {
      const moving = `the table was being laid out: its box moved while its cells were read, ${read} times (last ${box.w}x${box.h} at ${box.x},${box.y}, then ${again.w}x${again.h} at ${again.x},${again.y})`;
      return { refs: cells.refs, cut: cells.cut ? `${cells.cut}; ${moving}` : moving };
    }
    box = again;
  }
}

/** The cells of a table in view in `box`, its box (null: the table did not say where its cells are). */
async function cellsInBox(
  atspi: Atspi,
  table: AccRef,
  box: { x: number; y: number; w: number; h: number },
): Promise<{ refs: AccRef[]; cut?: string } | null> {
  if (box.w <= 0 || box.h <= 0) return { refs: [] };
  const cellAt = (x: number, y: number) =>
    atspi
      .call(table, IFACE.component, 'GetAccessibleAtPoint', 'iiu', [Math.round(x), Math.round(y), 0])
      .then(([[bus, path]]) => (bus && path !== NULL_PATH ? { bus: String(bus), path: String(path) } : null));
  const [first, last] = await Promise.all([cellAt(box.x + 1, box.y + 1), cellAt(box.x + box.w - 2, box.y + box.h - 2)]);
  if (!first || !last) return null;
  const position = async (cell: AccRef) => {
    const [index] = await atspi.call(cell, IFACE.accessible, 'GetIndexInParent');
    const [[row], [column]] = await Promise.all([
      atspi.call(table, IFACE.table, 'GetRowAtIndex', 'i', [Number(index)]),
      atspi.call(table, IFACE.table, 'GetColumnAtIndex', 'i', [Number(index)]),
    ]);
    return { row: Number(row), column: Number(column) };
  };
  const [a, b] = await Promise.all([position(first), position(last)]);
  if (a.row < 0 || a.column < 0 || b.row < a.row || b.column < a.column) return null;
  const rows = b.row - a.row + 1,
    columns = b.column - a.column + 1;
  const keptRows = Math.max(1, Math.min(rows, Math.floor(MAX_MANAGED_CHILDREN / columns)));
  const cells = await Promise.all(
    Array.from({ length: keptRows * Math.min(columns, MAX_MANAGED_CHILDREN) }, (_, i) => {
      const row = a.row + Math.floor(i / columns),
        column = a.column + (i % columns);
      return atspi
        .call(table, IFACE.table, 'GetAccessibleAt', 'ii', [row, column])
        .then(([[bus, path]]) => (bus && path !== NULL_PATH ? { bus: String(bus), path: String(path) } : null))
        .catch(() => null);
    }),
  );
  return {
    refs: cells.filter((c): c is AccRef => c !== null),
    ...(keptRows < rows || columns > MAX_MANAGED_CHILDREN
      ? {
          cut: `the table shows ${rows * columns} cells; the first ${keptRows * Math.min(columns, MAX_MANAGED_CHILDREN)} were read`,
        }
      : {}),
  };
}
