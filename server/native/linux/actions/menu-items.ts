// The items of a menu as AT-SPI shows them, for invoke_menu (invoke-menu.ts): each item's name, role and
// states read in one round trip, the items of one level found through the unnamed holders toolkits put
// between a menu and its items, matched by name as the menu shows it, and listed for a refusal; the app's
// shown top-levels (a menu's own window, a dialog an item opened) and the action of an item by name.
import { IFACE, type AccRef, type Atspi } from '../atspi/model.js';
import { ROLE, STATE, has } from '../atspi/roles.js';
import type { MenuQuirks } from '../toolkits/profile.js';

export const ROOT_PATH = '/org/a11y/atspi/accessible/root';
export const POPUP_MENU = 41;
export const SEPARATOR = 50;
export const TEAROFF = 59;
/** Roles an item of a menu has (a GTK submenu is a `menu` inside its parent menu). */
export const ITEM_ROLES: ReadonlySet<number> = new Set([
  ROLE.menuItem,
  ROLE.checkMenuItem,
  ROLE.radioMenuItem,
  ROLE.menu,
]);
/** Unnamed containers between a menu item and the items of its submenu (Qt's popup menu, a GTK 3 window). */
export const HOLDER_ROLES: ReadonlySet<number> = new Set([
  ROLE.menu,
  POPUP_MENU,
  ROLE.window,
  ROLE.panel,
  ROLE.filler,
  49 /* scroll pane */,
  68 /* viewport */,
  85 /* section */,
  ROLE.list,
]);
/** Items named in a refusal, at most. */
export const MAX_NAMED = 30;
/** Children read below one container while looking for items. */
export const MAX_READ = 400;

export interface Item {
  ref: AccRef;
  name: string;
  role: number;
  states: [number, number];
}

export const enabled = (s: [number, number]) => has(s, STATE.sensitive) || has(s, STATE.enabled);
export const showing = (s: [number, number]) => has(s, STATE.showing);
/** Whether an item of a menu shows, by the state its toolkit sets (quirks.shownBy). */
export const shows = (q: MenuQuirks, s: [number, number]) =>
  has(s, q.shownBy === 'visible' ? STATE.visible : STATE.showing);
/** A name as a menu shows it, for matching: no mnemonic marks, no trailing ellipsis, spaces folded. */
export const plain = (name: string) =>
  name
    .replace(/[_&](?=\S)/g, '')
    .replace(/(\.\.\.|…)\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();

export async function describe(atspi: Atspi, ref: AccRef): Promise<Item | null> {
  try {
    const [[role], [states], name] = await Promise.all([
      atspi.call(ref, IFACE.accessible, 'GetRole'),
      atspi.call(ref, IFACE.accessible, 'GetState'),
      atspi.prop(ref, IFACE.accessible, 'Name'),
    ]);
    return { ref, name: String(name), role: Number(role), states: [states[0] ?? 0, states[1] ?? 0] };
  } catch {
    return null; // gone while read (a menu closing): not an item
  }
}

/**
 * The items of one level: the menu items under `container`, through the unnamed holders between (Qt's
 * popup menu, GTK 3's window), separators and tear-offs left out. Bounded in depth and reads.
 */
export async function itemsOf(atspi: Atspi, container: AccRef, q: MenuQuirks): Promise<Item[]> {
  const items: Item[] = [];
  let read = 0;
  const visit = async (ref: AccRef, depth: number): Promise<void> => {
    const children = await atspi.children(ref).catch(() => []);
    const described = await Promise.all(children.slice(0, MAX_READ - read).map((c) => describe(atspi, c)));
    read += described.length;
    for (const child of described) {
      if (!child || child.role === SEPARATOR || child.role === TEAROFF) continue;
      if (ITEM_ROLES.has(child.role) && child.name && !(q.menuHolds && child.role === ROLE.menu)) items.push(child);
      else if (depth < q.itemDepth && read < MAX_READ && (HOLDER_ROLES.has(child.role) || !child.name))
        await visit(child.ref, depth + 1);
    }
  };
  await visit(container, 1);
  return items;
}

/** The item named `name` among `items`: its exact name first, then as a menu shows it (plain). */
export function find(items: Item[], name: string): Item | undefined {
  return items.find((i) => i.name === name) ?? items.find((i) => plain(i.name) === plain(name));
}

/** The items of a level as a refusal names them (disabled ones said so), bounded. */
export function listed(items: Item[]): string[] {
  const names = items.slice(0, MAX_NAMED).map((i) => (enabled(i.states) ? i.name : `${i.name} (disabled)`));
  if (items.length > MAX_NAMED) names.push(`... ${items.length - MAX_NAMED} more`);
  return names;
}

/** The app's top-level objects that show now (its windows, dialogs, and the windows its open menus are in). */
export async function shownTopLevels(atspi: Atspi, bus: string): Promise<Item[]> {
  const children = await atspi.children({ bus, path: ROOT_PATH }).catch(() => []);
  const tops = await Promise.all(children.map((c) => describe(atspi, c)));
  return tops.filter((t): t is Item => t !== null && showing(t.states));
}

/** Whether a top-level is a menu's own window (GTK 3 puts an open menu in a window of its own). */
export async function holdsMenu(atspi: Atspi, top: Item): Promise<boolean> {
  if (top.role === POPUP_MENU || top.role === ROLE.menu) return true;
  const first = await atspi.childAt(top.ref, 0).catch(() => null);
  const child = first ? await describe(atspi, first) : null;
  return !!child && (child.role === ROLE.menu || child.role === POPUP_MENU);
}

/** The action of `ref` whose name is first in `wanted` (case-insensitive), or -1 with the names offered. */
export async function actionIndex(atspi: Atspi, ref: AccRef, wanted: readonly string[]): Promise<[number, string[]]> {
  const names = await atspi.actions(ref).catch(() => [] as string[]);
  const lower = names.map((n) => n.toLowerCase());
  for (const w of wanted) {
    const i = lower.indexOf(w);
    if (i >= 0) return [i, names];
  }
  return [-1, names];
}
