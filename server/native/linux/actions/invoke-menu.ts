// invoke_menu on the Linux desktop, through AT-SPI: the item at a path of names, from the window's menu bar or
// (the target an element) from that element's context menu. Each level is opened by its item's own AT-SPI
// action and its items waited for (bounded) until they show; the last item's action is run once. The verdict
// is read back: a check item's checked state flipped, or a window (a dialog) the app did not show before;
// otherwise unverifiable, saying what was seen. A missing or disabled item is refused, naming the items of
// that level; menus opened on the way are closed with Escape, and the refusal says so. Each toolkit's
// quirks (which action opens a level, how long its items take, which state says an item shows, how deep its
// items sit) are its profile's `menus` (toolkits/). Where a menu bar's items offer no action at all (GTK 4's
// GtkPopoverMenuBar), the profile may say they are opened by a click at their frame, as a user would; the
// items of the menu it opens offer theirs, which is what activates the last one.
// The waits poll the items' states (every 40 ms, bounded; a poll ends as soon as the state shows, so it costs
// at most one interval over an event). The one event listened for is a Qt context menu's showing
// (Atspi.watchShown, only while it is awaited): Qt lists its open popup nowhere in the tree.
// The items of a level, how they are found and named: menu-items.ts.
import type { ActionArgs } from '../../../contract/actions.js';
import { type ActionResult, type Evidence, type ResolvedTarget, Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { IFACE, objectKey, type AccRef } from '../atspi/model.js';
import { ROLE, STATE, TOGGLE_ROLES, has, roleName } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { walkWindow } from '../atspi/walk.js';
import type { LinuxHost } from '../host.js';
import { profileOf } from '../toolkits/index.js';
import type { MenuQuirks } from '../toolkits/profile.js';
import { clickAt, moveTo, pollUntil, pressKeys } from '../transport/input.js';
import { aim, deliver, nativeResult, refFor, type Aim } from './aim.js';
import { checkUncovered, pointerOf } from './pointing.js';
import { activeWindow } from '../transport/x11.js';
import {
  actionIndex,
  describe,
  enabled,
  find,
  holdsMenu,
  type Item,
  itemsOf,
  listed,
  POPUP_MENU,
  shownTopLevels,
  shows,
} from './menu-items.js';

const NULL_PATH = '/org/a11y/atspi/null';
const MENU_BAR = 34;
/** Top-level roles that a menu item's effect may show (a dialog, a window); menus' own windows hold a menu. */
const SHOWN_ROLES: ReadonlySet<number> = new Set([ROLE.dialog, ROLE.frame, ROLE.window, 2 /* alert */]);
/** How long a menu gets to close after its Escape. */
const CLOSE_MS = 1000;

/** The default quirks: any toolkit's menus as ATK and Qt expose them. */
export const DEFAULT_MENU_QUIRKS: MenuQuirks = {
  openActions: ['showmenu', 'show menu', 'open', 'click', 'press', 'activate'],
  pressActions: ['click', 'press', 'toggle', 'activate', 'select'],
  openMs: 3000,
  closeBy: 'escape',
  noContextMenus: null,
  contextMenuByEvent: false,
  shownBy: 'showing',
  itemDepth: 4,
  menuHolds: false,
  openByClick: null,
};

/** A menu opened on the way: what it is called, and what holds its items (to see whether it still shows). */
interface Opened {
  label: string;
  container: AccRef;
  /** The item whose action opened it (closeBy 'action'); none for a context menu. */
  opener?: { ref: AccRef; action: number };
  /** The menu (bar) the opener is an item of: its Selection cleared closes the opener's submenu (GTK 3). */
  shell?: AccRef;
  /** How it was opened when that was not an AT-SPI action (a click at its frame), for the evidence. */
  by?: string;
}

/** Ends the action early with a result (something was sent, so not a refusal): a level that never opened. */
class Stopped extends Error {
  constructor(readonly result: ActionResult) {
    super('stopped');
  }
}

export async function invokeMenu(
  host: LinuxHost,
  target: ResolvedTarget,
  args: ActionArgs['invokeMenu'],
): Promise<ActionResult> {
  const mode = target.deliveryMode;
  const sw = new Stopwatch();
  if (target.kind === 'desktop' && !target.element)
    throw new Refusal(
      'invalid_arguments',
      'target: invoke_menu acts on a window\'s menu bar or an element\'s context menu; name a window as {"kind": "window", "pid", "window_id"} (list_windows), or pass element_token',
    );
  const a = await aim(host, target);
  if (!a.win.frame || !a.win.app)
    throw new Refusal(
      'unavailable',
      `window ${a.win.id} ("${a.win.title}") has no accessibility tree, so its menus cannot be found by name; nothing was sent. Use get_window_state's screenshot and click the menu at its pixels`,
      { window_id: a.win.id },
    );
  const bus = a.win.app.bus;
  await a.atspi.toolkit(bus);
  const quirks = { ...DEFAULT_MENU_QUIRKS, ...profileOf(a.atspi, bus).menus };
  return deliver(mode, a.win, () =>
    menuPath(a, bus, args.path, quirks, sw, mode).catch((e) => {
      if (e instanceof Stopped) return e.result;
      throw e;
    }),
  );
}

async function menuPath(
  a: Aim,
  bus: string,
  path: string[],
  quirks: MenuQuirks,
  sw: Stopwatch,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  {
    const before = await shownTopLevels(a.atspi, bus);
    const opened: Opened[] = [];
    let level: { container: AccRef; items: Item[]; where: string };
    if (a.element) {
      level = await openContextMenu(a, a.element, before, quirks, sw, mode);
      opened.push({
        label: `the context menu of "${a.element.name || roleName(a.element.role)}"`,
        container: level.container,
      });
    } else {
      const rows = (await walkWindow(a.atspi, a.win.frame!)).rows.filter((r) => r.item.role === MENU_BAR);
      const bar = rows.find((r) => shows(quirks, r.item.states)) ?? rows[0];
      if (!bar)
        throw new Refusal(
          'target_not_found',
          `window ${a.win.id} ("${a.win.title}") shows no menu bar in its accessibility tree; nothing was sent. For an element's context menu, pass its element_token`,
          { window_id: a.win.id },
        );
      level = { container: bar.item.ref, items: await itemsOf(a.atspi, bar.item.ref, quirks), where: 'the menu bar' };
      // A menu bar listed with none of its items: nothing there can be found by name.
      if (!level.items.length)
        throw new Refusal(
          'not_supported',
          `window ${a.win.id} ("${a.win.title}") lists its menu bar ("${bar.item.name}") with no items in its accessibility tree, so no item can be found by name; nothing was sent. Use get_window_state's screenshot and click the menu at its pixels (or press_key F10 to open it)`,
          { window_id: a.win.id },
        );
    }
    sw.lap('resolve');
    const trail: string[] = [];
    for (let depth = 0; depth < path.length; depth++) {
      const name = path[depth]!;
      const item = find(level.items, name);
      const last = depth === path.length - 1;
      if (!item || !enabled(item.states)) {
        const closed = await closeMenus(a, opened, quirks);
        const items = listed(level.items);
        const at = `${level.where}${trail.length ? ` > ${trail.join(' > ')}` : ''}`;
        throw item
          ? new Refusal(
              'element_disabled',
              `"${item.name}" in ${at} is disabled; nothing was activated${closed}. Its items: ${items.join(', ')}`,
              { path_index: depth, items, menus_opened: opened.length, menus_left_open: / still show/.test(closed) },
            )
          : new Refusal(
              'target_not_found',
              `no item "${name}" in ${at}; nothing was activated${closed}. Its items: ${items.join(', ') || '(none)'}`,
              { path_index: depth, items, menus_opened: opened.length, menus_left_open: / still show/.test(closed) },
            );
      }
      trail.push(item.name);
      if (last) return activate(a, item, trail, before, opened, quirks, sw, mode);
      level = await openLevel(a, item, level.container, trail, opened, quirks, sw, mode);
    }
    throw new Refusal('invalid_arguments', 'path: name at least one item'); // unreachable: zod asks for one
  }
}

/**
 * Opens the submenu of `item` by its own AT-SPI action and waits, bounded, until its items show. Toolkits
 * fill some submenus only as they open (LibreOffice), so the items are read after it opened.
 */
async function openLevel(
  a: Aim,
  item: Item,
  shell: AccRef,
  trail: string[],
  opened: Opened[],
  quirks: MenuQuirks,
  sw: Stopwatch,
  mode: 'background' | 'foreground',
): Promise<{ container: AccRef; items: Item[]; where: string }> {
  const label = trail.join(' > ');
  // Already open (left so by someone): its action would close it again, so it is not run.
  const already = await itemsOf(a.atspi, item.ref, quirks);
  if (already.some((i) => shows(quirks, i.states))) {
    const [index] = await actionIndex(a.atspi, item.ref, quirks.openActions);
    opened.push({
      label: `"${label}" (already open)`,
      container: item.ref,
      shell,
      ...(index >= 0 ? { opener: { ref: item.ref, action: index } } : {}),
    });
    return { container: item.ref, items: already, where: 'the menu bar' };
  }
  const [index, names] = await actionIndex(a.atspi, item.ref, quirks.openActions);
  const onBar = opened.length === 0 && !a.element;
  if (index < 0 && !(onBar && quirks.openByClick)) throw await noAction(a, opened, quirks, label, 'opens', names);
  let ok: boolean;
  let how: string;
  if (index >= 0) {
    ok = await a.atspi.doAction(item.ref, index);
    how = `its "${names[index]}" action`;
    opened.push({ label: `"${label}"`, container: item.ref, opener: { ref: item.ref, action: index }, shell });
  } else {
    // A menu bar item with no action (quirks.openByClick says why that is the toolkit's way): a click at its
    // frame, where the window shows it, the window uncovered there.
    const { ref: at } = await refFor(a.atspi, a.win, item.ref, false);
    if (!a.win.placed || at.box.w <= 0 || at.box.h <= 0)
      throw await noAction(a, opened, quirks, label, 'opens', names, ', and it has no place on the screen to click');
    const p = { x: at.box.x + at.box.w / 2, y: at.box.y + at.box.h / 2 };
    await checkUncovered(a, p);
    await moveTo(p.x, p.y);
    await clickAt('left', 1, []);
    ok = true;
    how = `a ${pointerOf(a)} click at its centre (${Math.round(p.x)}, ${Math.round(p.y)}): ${quirks.openByClick}`;
    opened.push({ label: `"${label}"`, container: item.ref, shell, by: how });
  }
  let items: Item[] = [];
  const shown = ok
    ? await pollUntil(
        async () => (items = await itemsOf(a.atspi, item.ref, quirks)).some((i) => shows(quirks, i.states)),
        quirks.openMs,
        40,
      )
    : false;
  if (!shown) {
    const closed = await closeMenus(a, opened, quirks);
    sw.lap('deliver');
    const observed = ok
      ? `"${label}" was opened by ${how}, but its items did not show within ${quirks.openMs} ms (${items.length ? `listed but not showing: ${listed(items).join(', ')}` : 'none listed'}); nothing was activated${closed}`
      : `"${label}" refused its "${names[index]}" action; nothing was activated${closed}`;
    throw new Stopped(
      nativeResult(
        'no_effect',
        'accessibility',
        sw,
        [{ kind: 'menu_level', expected: 'its items showing', observed }],
        mode,
        {
          target: `"${label}"`,
          method: index >= 0 ? 'accessibility_action' : 'pixel_click',
        },
      ),
    );
  }
  return { container: item.ref, items, where: 'the menu bar' };
}

/**
 * Opens the context menu of `el`: its own menu action when it offers one, else a right click at its centre
 * (XTest, or the virtual pointer on Wayland), as a user would; then waits, bounded, for a menu the app did
 * not show before.
 */
async function openContextMenu(
  a: Aim,
  el: NativeRef,
  before: Item[],
  quirks: MenuQuirks,
  sw: Stopwatch,
  mode: 'background' | 'foreground',
): Promise<{ container: AccRef; items: Item[]; where: string }> {
  const label = `"${el.name || 'the element'}" (${roleName(el.role)})`;
  if (quirks.noContextMenus)
    throw new Refusal(
      'not_supported',
      `${label}'s context menu: ${quirks.noContextMenus}; nothing was sent. Use right_click on it, then get_window_state's screenshot and a click at the item's pixels`,
    );
  const [index, names] = await actionIndex(a.atspi, el, ['showmenu', 'show menu', 'menu', 'popup', 'context menu']);
  // Qt's popup is listed nowhere: its path comes with the showing event it sends, heard from before it opens.
  const watch = quirks.contextMenuByEvent ? await a.atspi.watchShown(el.bus) : null;
  try {
    return await askContextMenu(a, el, label, index, names, before, quirks, sw, mode, watch?.shown ?? []);
  } finally {
    await watch?.stop();
  }
}

/** openContextMenu's asking and waiting: `shown`, the objects the app said it showed meanwhile (a watch). */
async function askContextMenu(
  a: Aim,
  el: NativeRef,
  label: string,
  index: number,
  names: string[],
  before: Item[],
  quirks: MenuQuirks,
  sw: Stopwatch,
  mode: 'background' | 'foreground',
  shown: AccRef[],
): Promise<{ container: AccRef; items: Item[]; where: string }> {
  let how: string;
  if (index >= 0) {
    await a.atspi.doAction(el, index);
    how = `its "${names[index]}" action`;
  } else {
    if (!a.win.placed || el.box.w <= 0)
      throw new Refusal(
        'unavailable',
        `${label} offers no AT-SPI action that opens its context menu, and it has no place on the screen to right-click; nothing was sent`,
      );
    const p = { x: el.box.x + el.box.w / 2, y: el.box.y + el.box.h / 2 };
    await checkUncovered(a, p);
    sw.lap('resolve');
    await moveTo(p.x, p.y);
    await clickAt('right', 1, []);
    how = `a ${pointerOf(a)} right click at its centre`;
  }
  const seen = new Set(before.map((t) => objectKey(t.ref)));
  let found: { container: AccRef; items: Item[] } | { unreadable: number } | null = null;
  await pollUntil(
    async () => {
      found = await newMenu(a, el, seen, quirks, shown);
      return found !== null;
    },
    quirks.openMs,
    40,
  );
  const unreadable = found && 'unreadable' in found ? (found as { unreadable: number }).unreadable : 0;
  if (!found || unreadable) {
    // A menu may have opened unseen (GTK 3 lists no menu attached to its widget): Escape closes it, since an
    // open menu holds the keyboard. Only when the window has the focus: else the key would reach another app.
    const focused = a.win.surface === 'x11' ? (await activeWindow().catch(() => 0)) === a.win.id : false;
    if (focused) await pressKeys(['Escape']).catch(() => undefined);
    sw.lap('deliver');
    const seenNone = unreadable
      ? `a menu showed (the app said so), but none of its ${unreadable} entries has an accessible object, so no item can be named (Qt 5 gives a QAction's menu item only to the first menu that showed it; a widget's ActionsContextMenu builds a new menu each time)`
      : `no menu showed in the accessibility tree within ${quirks.openMs} ms (a menu the toolkit does not list, such as GTK 3's menus attached to their widget, cannot be seen)`;
    const closing = unreadable
      ? focused
        ? 'Escape was pressed to close it'
        : 'no key was pressed to close it (the window does not have the focus)'
      : focused
        ? 'Escape was pressed to close a menu that may have opened unseen'
        : 'no key was pressed (the window does not have the focus)';
    const observed = `${label}'s context menu was asked for by ${how}, but ${seenNone}; nothing was activated; ${closing}`;
    throw new Stopped(
      nativeResult(
        'no_effect',
        'accessibility',
        sw,
        [{ kind: 'menu_level', expected: 'a context menu', observed }],
        mode,
        {
          target: label,
          method: index >= 0 ? 'accessibility_action' : 'pixel_click',
          ...(unreadable
            ? {
                escalation: {
                  target: 'pixel' as const,
                  reason:
                    "the menu's items cannot be named through AT-SPI: right_click the element, then click the item at its pixels in get_window_state's screenshot",
                },
              }
            : {}),
        },
      ),
    );
  }
  const { container, items } = found as { container: AccRef; items: Item[] };
  return { container, items, where: `the context menu of ${label}` };
}

/** A menu with showing items that the app shows now and did not before: a new top-level, or under `el`. */
async function newMenu(
  a: Aim,
  el: NativeRef,
  seen: Set<string>,
  quirks: MenuQuirks,
  shown: AccRef[],
): Promise<{ container: AccRef; items: Item[] } | { unreadable: number } | null> {
  // A menu the app said it showed (contextMenuByEvent): listed nowhere else.
  for (const ref of shown) {
    const menu = await describe(a.atspi, ref);
    if (!menu || (menu.role !== POPUP_MENU && menu.role !== ROLE.menu)) continue;
    const items = await itemsOf(a.atspi, ref, quirks);
    if (items.some((i) => shows(quirks, i.states))) return { container: ref, items };
    // Its entries with no object behind them (Qt 5 keeps a QAction's menu item that of the first menu that
    // showed it, and that item is invalid once that menu is gone: ActionsContextMenu builds a new menu each
    // time): a menu showed, and none of its items can be named.
    const children = await a.atspi.children(ref).catch(() => []);
    if (children.length && children.every((c) => c.path === NULL_PATH)) return { unreadable: children.length };
  }
  const tops = await shownTopLevels(a.atspi, el.bus);
  for (const top of tops) {
    if (seen.has(objectKey(top.ref))) continue;
    const items = await itemsOf(a.atspi, top.ref, quirks);
    if (items.some((i) => shows(quirks, i.states))) return { container: top.ref, items };
  }
  // A popover menu is a child of its widget in the tree (GTK 4).
  const items = await itemsOf(a.atspi, el, quirks);
  return items.some((i) => shows(quirks, i.states)) ? { container: el, items } : null;
}

/**
 * Closes the menus opened on the way, innermost first: one Escape for each that still shows (an open menu
 * holds the keyboard), then read back until it no longer shows (bounded). A menu that never showed gets no
 * key, which would reach whatever has the focus instead. What to add to the message.
 */
async function closeMenus(a: Aim, opened: Opened[], quirks: MenuQuirks, why = 'opened to look'): Promise<string> {
  if (!opened.length) return '';
  const open = async (o: Opened) => (await itemsOf(a.atspi, o.container, quirks)).some((i) => shows(quirks, i.states));
  const how: string[] = [];
  for (const o of [...opened].reverse()) {
    if (!(await open(o))) continue;
    if (quirks.closeBy === 'action' && o.opener) {
      await a.atspi.doAction(o.opener.ref, o.opener.action).catch(() => false);
      how.push(`${o.label} by its action`);
    } else {
      await pressKeys(['Escape']).catch(() => undefined);
      how.push(`${o.label} with Escape`);
    }
    if (await pollUntil(async () => !(await open(o)), CLOSE_MS, 40)) continue;
    // Still open (a GTK 3 menu on Wayland opened without an input event takes no keyboard grab, so Escape
    // reaches the window, not the menu): its menu shell's selection cleared closes it, if it offers one.
    if (
      o.shell &&
      (await a.atspi.call(o.shell, IFACE.selection, 'ClearSelection').then(
        () => true,
        () => false,
      ))
    ) {
      how.push(`${o.label} by clearing its menu's selection`);
      await pollUntil(async () => !(await open(o)), CLOSE_MS, 40);
    }
  }
  const left: string[] = [];
  for (const o of opened) if (await open(o).catch(() => false)) left.push(o.label);
  const names = opened.map((o) => o.label).join(', ');
  if (left.length)
    return `; the menus ${why} (${names}) were not all closed: ${left.join(', ')} still show${how.length ? ` after closing ${how.join(', ')}` : ''} (press_key Escape with delivery_mode "foreground")`;
  return how.length ? `; the menus ${why} (${names}) were closed: ${how.join(', ')}` : '';
}

/**
 * The refusal for an item that offers no AT-SPI action to open or activate it (naming the actions it does
 * offer), the menus opened on the way closed first; one shape for both.
 */
async function noAction(
  a: Aim,
  opened: Opened[],
  quirks: MenuQuirks,
  label: string,
  what: 'opens' | 'activates',
  names: string[],
  besides = '',
): Promise<Refusal> {
  const closed = await closeMenus(a, opened, quirks);
  return new Refusal(
    'not_supported',
    `"${label}" offers no AT-SPI action that ${what} it (it offers: ${names.join(', ') || 'none'})${besides}; nothing was activated${closed}`,
  );
}

/**
 * Runs the last item's action once and reads its effect back (bounded): a check item's checked state
 * flipped, or a window the app did not show before; otherwise unverifiable, saying what was seen.
 */
async function activate(
  a: Aim,
  item: Item,
  trail: string[],
  before: Item[],
  opened: Opened[],
  quirks: MenuQuirks,
  sw: Stopwatch,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  const label = trail.join(' > ');
  const [index, names] = await actionIndex(a.atspi, item.ref, quirks.pressActions);
  if (index < 0) throw await noAction(a, opened, quirks, label, 'activates', names);
  const checkable = TOGGLE_ROLES.has(item.role) || has(item.states, 41 /* checkable */);
  const wasChecked = has(item.states, STATE.checked);
  const seen = new Set(before.map((t) => objectKey(t.ref)));
  sw.lap('resolve');
  const ok = await a.atspi.doAction(item.ref, index);
  sw.lap('deliver');
  const extra = { target: `"${label}" (${roleName(item.role)})`, method: 'accessibility_action' };
  const evidence: Evidence[] = [
    {
      kind: 'accessibility_action',
      expected: `"${names[index]}" performed by "${label}"`,
      observed: ok ? `DoAction("${names[index]}") accepted` : `DoAction("${names[index]}") refused`,
      detail: opened.length
        ? `opened on the way: ${opened.map((o) => (o.by ? `${o.label} (by ${o.by})` : o.label)).join(', ')}`
        : undefined,
    },
  ];
  if (!ok) {
    const closed = await closeMenus(a, opened, quirks);
    sw.lap('verify');
    return nativeResult('no_effect', 'accessibility', sw, evidence, mode, {
      ...extra,
      escalation: { target: 'verify', reason: `the toolkit refused the item's action${closed}` },
    });
  }
  let checked: boolean | null = wasChecked;
  let shown: Item | null = null;
  await pollUntil(
    async () => {
      const now = await a.atspi.states(item.ref).catch(() => null);
      checked = now ? has(now, STATE.checked) : null;
      // Any item whose checked state flipped (Qt's check items are plain menu items that say checked).
      if (checked !== null && checked !== wasChecked) return true;
      for (const top of await shownTopLevels(a.atspi, item.ref.bus))
        if (!seen.has(objectKey(top.ref)) && SHOWN_ROLES.has(top.role) && !(await holdsMenu(a.atspi, top))) {
          shown = top;
          return true;
        }
      return false;
    },
    quirks.openMs,
    40,
  );
  // A toolkit that leaves its menus open after an item's action (Qt) has them closed, and the result says so.
  const leftOpen = await closeMenus(a, opened, quirks, 'left open after the action');
  if (leftOpen) evidence.push({ kind: 'menus_closed', observed: leftOpen.replace(/^; /, '') });
  sw.lap('verify');
  const newWindow = shown as Item | null;
  if (checked !== null && checked !== wasChecked) {
    evidence.push({
      kind: 'checked_state',
      expected: `checked=${!wasChecked}`,
      observed: `checked=${checked}`,
      detail: `"${label}"'s own state, read back`,
    });
    return nativeResult('confirmed', 'accessibility', sw, evidence, mode, extra);
  }
  if (newWindow) {
    evidence.push({
      kind: 'window_shown',
      expected: 'a window or dialog the app did not show before',
      observed: `${roleName(newWindow.role)} "${newWindow.name}"`,
      detail: "the app's top-level objects, read back before and after",
    });
    return nativeResult('confirmed', 'accessibility', sw, evidence, mode, extra);
  }
  const what = checkable
    ? `its checked state ${checked === null ? 'could not be read back' : `stayed ${checked}`}`
    : 'it is not a check item';
  evidence.push({
    kind: 'read_back',
    observed: `${what}, and the app showed no new window within ${quirks.openMs} ms`,
  });
  return nativeResult('unverifiable', 'accessibility', sw, evidence, mode, {
    ...extra,
    escalation: {
      target: 'verify',
      reason: `"${label}" was activated once, but its effect shows nowhere AT-SPI can read here (${what}, no new window); call get_window_state to see what changed`,
    },
  });
}
