// Turning a resolved native target into what an action needs: the window (checked to exist), the element
// (fresh states), the screen point, and the foreground/background delivery around the action.
import type { ActionResult, Evidence, ResolvedTarget } from '../../../contract/driver.js';
import type { Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { IFACE, type Atspi, type CacheItem } from '../atspi/model.js';
import type { LinuxHost } from '../host.js';
import type { WindowInfo } from '../atspi/window.js';
import { ROLE, STATE, STRUCTURAL_ROLES, TOP_LEVEL_ROLES, has } from '../atspi/roles.js';
import { nativeRef, unplacedPopoverOf, type NativeRef } from '../atspi/tree.js';
import { walkWindow } from '../atspi/walk.js';
import { onSurface } from '../transport/wayland.js';
import { activate, activeWindow, topWindowAt } from '../transport/x11.js';

export interface Aim {
  atspi: Atspi;
  /** The host that found the target: where a pixel event lands is checked against the policy through it. */
  host: LinuxHost;
  win: WindowInfo;
  /** The element the call named (token), found at the px point, or null. */
  element: NativeRef | null;
  states: [number, number];
  /** The px form's point in screen pixels. */
  screenPoint: { x: number; y: number } | null;
}

/** Finds the window and element of a target (its states already being read, or read now); refuses target_not_found when either is gone. */
export async function aim(
  host: LinuxHost,
  target: ResolvedTarget,
  statesRead?: Promise<[number, number]>,
): Promise<Aim> {
  const atspi = await host.atspi();
  const element = target.element ? (target.element.ref as NativeRef) : null;
  let win: WindowInfo;
  // An element's window is the one of its snapshot: if it closed since, the element's own calls say so.
  if (element) {
    win = element.win;
    await host.recheck(win); // a browser window listed before may show the Control UI now
  } else if (target.kind === 'window') {
    win = await host.targetWindow(target);
  } else {
    // A desktop point acts on the window there (refused first when agents may not drive it); desktop
    // keys go to the focused window, refused when it is one agents may not drive.
    if (target.point) await host.checkPoint(target.point);
    const at = target.point ? await topWindowAt(target.point.x, target.point.y) : null;
    const active = at?.id ?? (target.point ? await activeWindow() : await host.focusedWindow());
    if (!active)
      throw new Refusal('target_not_found', 'no window has focus on the desktop; name a window target (list_windows)');
    win = await host.window(undefined, active);
  }
  let states: [number, number] = [0, 0];
  if (element) {
    states = await (statesRead ?? atspi.states(element));
    if (has(states, STATE.defunct))
      throw new Refusal(
        'target_not_found',
        `the element "${element.name}" is gone (defunct); call get_window_state again`,
      );
  }
  let screenPoint: Aim['screenPoint'] = null;
  if (target.point && target.kind !== 'desktop' && !win.placed)
    throw new Refusal(
      'unavailable',
      `window ${win.id} ("${win.title}") is a Wayland window and the compositor does not say where it is on the screen (only sway's IPC does), so a point in it cannot be placed; nothing was sent. Use an element_token`,
      { window_id: win.id },
    );
  if (target.point && target.kind !== 'desktop') await refuseBesideUnplacedPopover(atspi, win);
  if (target.point) {
    // Desktop screenshots are the whole screen; window screenshots start at the window's client origin.
    screenPoint =
      target.kind === 'desktop'
        ? { ...target.point }
        : { x: win.bounds.x + target.point.x, y: win.bounds.y + target.point.y };
    if (target.kind !== 'desktop') await host.checkPoint(screenPoint); // a desktop point was checked above
  }
  return { atspi, host, win, element, states, screenPoint };
}

/**
 * Refuses a pointer event in a window with an open popover drawn where the compositor does not say (GTK 4
 * on Wayland; sway's IPC lists no popups): it could land on the popover or beside it. `popover` names it
 * when the caller knows it already (the element aimed at is in it).
 */
export async function refuseBesideUnplacedPopover(atspi: Atspi, win: WindowInfo, popover?: string): Promise<void> {
  const open = popover ?? (await unplacedPopoverOf(atspi, win));
  if (!open) return;
  throw new Refusal(
    'unavailable',
    `window ${win.id} ("${win.title}") has an open popover ("${open}") that the compositor draws where it does not say (sway's IPC lists no popups), so a pointer event there could land on it or beside it; nothing was sent. Use an element_token from get_window_state (the popover's elements are listed, and a click on one goes by AT-SPI or keys), or press_key Escape to close the popover first`,
    { window_id: win.id },
  );
}

/** The element that has keyboard focus inside a window (AT-SPI FOCUSED state), if any. */
export async function focusedIn(atspi: Atspi, win: WindowInfo): Promise<{ item: CacheItem; web: boolean } | null> {
  if (!win.frame || !win.app) return null;
  let found: { item: CacheItem; web: boolean } | null = null;
  const webOf = new Map<CacheItem, boolean>();
  // The spreadsheet document each row is in, and the focused cell of each (the sheet's cursor).
  const sheetOf = new Map<CacheItem, CacheItem | null>();
  const cursorOf = new Map<CacheItem, CacheItem>();
  for (const { item, parent } of (await walkWindow(atspi, win.frame)).rows) {
    const web = item.role === ROLE.documentWeb || (parent ? (webOf.get(parent) ?? false) : false);
    webOf.set(item, web);
    const sheet = item.role === ROLE.documentSpreadsheet ? item : parent ? (sheetOf.get(parent) ?? null) : null;
    sheetOf.set(item, sheet);
    if (!has(item.states, STATE.focused)) continue;
    found = { item, web };
    if (sheet && item.role === ROLE.tableCell) cursorOf.set(sheet, item);
  }
  if (!found) return null;
  // Calc lists its cell editor (an editable paragraph in a "Cell B3" panel beside the sheet) as focused
  // along with the sheet's cursor cell, also when no edit is open: text inserted into it then never
  // reaches the sheet (measured: InsertText there read back, and Enter after it left the cell empty). The
  // keys reach the cell, which the cell route types into and reads back once committed.
  const sheet = sheetOf.get(found.item);
  const cursor = sheet ? cursorOf.get(sheet) : undefined;
  if (cursor && found.item.role !== ROLE.tableCell) found = { item: cursor, web: found.web };
  // The cache's states can lag a moment behind; read the found element's live states.
  found.item.states = await atspi.states(found.item.ref).catch(() => found!.item.states);
  return found;
}

/** How long a window's focused element is waited for: one just raised reports it a moment later. */
export const FOCUS_SETTLE_MS = 800;

/**
 * focusedIn, asked again for at most FOCUS_SETTLE_MS while nothing reports focus: a toolkit sets `focused`
 * on its focus widget only once the window's activation reached it (measured under load: GTK after the
 * window manager had already made the window active).
 */
export async function focusedSettled(atspi: Atspi, win: WindowInfo): ReturnType<typeof focusedIn> {
  const until = Date.now() + FOCUS_SETTLE_MS;
  for (;;) {
    const found = await focusedIn(atspi, win);
    // No tree to report focus (no frame or app): nothing will change by waiting.
    if (found || !win.frame || !win.app || Date.now() >= until) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A NativeRef for an element found at run time (focused, or under the px point). */
export async function refFor(
  atspi: Atspi,
  win: WindowInfo,
  ref: { bus: string; path: string },
  web: boolean | null,
): Promise<{ ref: NativeRef; states: [number, number] }> {
  const item = await atspi.describe(ref, ref);
  const box = item.interfaces.includes(IFACE.component)
    ? await atspi.extents(ref, win.bounds).catch(() => ({ x: 0, y: 0, w: 0, h: 0 }))
    : { x: 0, y: 0, w: 0, h: 0 };
  const isWeb = web ?? (await underWebDocument(atspi, ref));
  return { ref: nativeRef(ref, item, isWeb, win, box), states: item.states };
}

/**
 * The element a point in a text field lands on may be an inner part of it (a Qt text edit's viewport):
 * the nearest of `ref` and its ancestors (up to the window) that has Text, or `ref` itself when none has.
 */
export async function textAncestor(
  atspi: Atspi,
  ref: { bus: string; path: string },
): Promise<{ bus: string; path: string }> {
  let current = ref;
  for (let i = 0; i < 8; i++) {
    const [interfaces] = await atspi.call(current, IFACE.accessible, 'GetInterfaces').catch(() => [[]]);
    if ((interfaces as string[]).includes(IFACE.text)) return current;
    const [[role]] = [await atspi.call(current, IFACE.accessible, 'GetRole').catch(() => [0])];
    if (TOP_LEVEL_ROLES.has(Number(role)) || Number(role) === ROLE.application) return ref;
    const parent = (await atspi.prop(current, IFACE.accessible, 'Parent').catch(() => null)) as [string, string] | null;
    if (!parent || parent[1] === '/org/a11y/atspi/null' || parent[1] === '/org/a11y/atspi/accessible/root') return ref;
    current = { bus: parent[0], path: parent[1] };
  }
  return ref;
}

/** Walks up the parents looking for a `document web` ancestor. */
async function underWebDocument(atspi: Atspi, ref: { bus: string; path: string }): Promise<boolean> {
  let current = ref;
  for (let i = 0; i < 64; i++) {
    const [[role]] = [await atspi.call(current, IFACE.accessible, 'GetRole')];
    if (Number(role) === ROLE.documentWeb) return true;
    const parent = (await atspi.prop(current, IFACE.accessible, 'Parent').catch(() => null)) as [string, string] | null;
    if (!parent || parent[1] === '/org/a11y/atspi/null' || parent[1] === '/org/a11y/atspi/accessible/root')
      return false;
    current = { bus: parent[0], path: parent[1] };
  }
  return false;
}

/**
 * Runs `work` with the delivery the call asked for: in the background as is, or in the foreground with the
 * window raised and focused first and the previously focused window given focus back afterwards.
 */
export async function deliver<T>(
  mode: 'background' | 'foreground',
  win: WindowInfo,
  work: () => Promise<T>,
): Promise<T> {
  // Its input goes the way its surface is reached: XTest for X11, the compositor's protocols for Wayland.
  if (mode === 'background') return onSurface(win, work);
  const previous = await activeWindow();
  if (previous !== win.id) await activate(win.id);
  try {
    return await onSurface(win, work);
  } finally {
    if (previous && previous !== win.id) await activate(previous).catch(() => undefined);
  }
}

/**
 * Whether an element may stand for web content: it is under a `document web` ancestor, or it is what a
 * browser window shows where its page is drawn without a renderer tree (the frame itself, an unnamed
 * container, or nothing AT-SPI knows), so a point there lands in the page whatever the tree says.
 */
export function webLike(win: WindowInfo, el: { web: boolean; role: number } | null | undefined): boolean {
  if (el?.web) return true;
  if (!win.browserLike) return false;
  return !el || TOP_LEVEL_ROLES.has(el.role) || STRUCTURAL_ROLES.has(el.role) || el.role === ROLE.documentFrame;
}

/** What to do instead when web content was reached through the native route. */
export function webEscalation(
  win: WindowInfo,
  pixelAlready: boolean,
  mode: 'background' | 'foreground',
  tool: 'set_value' | 'other' = 'other',
): NonNullable<ActionResult['escalation']> {
  if (win.driven) {
    return {
      target: 'page',
      reason:
        'this is web content of the browser Verity drives over CDP; act on it through its tab (the window target routes there, or use a tab target / the page tool) for verified DOM effects',
    };
  }
  if (pixelAlready && mode === 'foreground') {
    return {
      target: 'verify',
      reason:
        'web content cannot be proven through accessibility, and this was already delivered in the foreground; check the screenshot from get_window_state',
    };
  }
  return pixelAlready
    ? {
        target: 'foreground',
        reason:
          'web content cannot be proven through accessibility; retry with delivery_mode "foreground" and check the screenshot',
      }
    : tool === 'set_value'
      ? {
          // set_value has no px form: name the two calls that have one, not a form this tool lacks.
          target: 'pixel',
          reason:
            'web content cannot be proven through accessibility, and set_value has no px form; click the field with the px form (x, y from the screenshot), then type_text with the same x, y: it sends XTest keystrokes, as a user would; then check the screenshot',
        }
      : {
          target: 'pixel',
          reason:
            'web content cannot be proven through accessibility; use the px form (x, y from the screenshot): it sends XTest pointer events and, for type_text, XTest keystrokes, as a user would; then check the screenshot',
        };
}

/** The contract's result for the native route. */
export function nativeResult(
  effect: ActionResult['effect'],
  route: ActionResult['route'],
  sw: Stopwatch,
  evidence: Evidence[],
  mode: 'background' | 'foreground',
  extra: Partial<ActionResult> = {},
): ActionResult {
  return { effect, route, delivery: { mode }, evidence, timings_ms: sw.timings, ...extra };
}

/** Refuses an element that is disabled. */
export function checkEnabled(element: NativeRef, states: [number, number]): void {
  if (!has(states, STATE.sensitive) && !has(states, STATE.enabled))
    throw new Refusal('element_disabled', `"${element.name || 'the element'}" is disabled`);
}

/** Keystrokes land in the focused window only: in the background the target window must already have focus. */
export async function requireKeyboardFocus(win: WindowInfo, mode: 'background' | 'foreground'): Promise<void> {
  if (mode === 'foreground') return;
  const active = await activeWindow();
  if (active !== win.id) {
    throw new Refusal(
      'focus_failed',
      `keystrokes reach only the focused window, and window ${win.id} ("${win.title}") does not have focus; nothing was sent. Call again with delivery_mode "foreground" (raises it, acts, gives focus back)`,
      { escalation: 'foreground', focused_window_id: active || null },
    );
  }
}
