// Where a pointer action lands on a native window: the point it aims at, the element there, and the refusal
// when another window covers it. Shared by click, scroll, drag and hover.
import { Refusal } from '../../../contract/refusal.js';
import { IFACE } from '../atspi/model.js';
import { refFor, refuseBesideUnplacedPopover, type Aim } from './aim.js';
import { TOGGLE_ROLES } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { topWindowAt } from '../transport/x11.js';

/** The screen point an action aims at: the px form, else the element's centre, else the window's centre. */
export function pointOf(a: Aim): { x: number; y: number } {
  if (a.screenPoint) return a.screenPoint;
  if (a.element && a.element.box.w > 0)
    return { x: a.element.box.x + a.element.box.w / 2, y: a.element.box.y + a.element.box.h / 2 };
  return { x: a.win.bounds.x + a.win.bounds.w / 2, y: a.win.bounds.y + a.win.bounds.h / 2 };
}

/**
 * The deepest element of the window at a screen point (what a pixel event there reaches), if AT-SPI knows;
 * a check box's or radio button's own label or indicator stands for the toggle it belongs to (a click
 * there toggles it, and its state is what proves the click).
 */
export async function elementAt(a: Aim, p: { x: number; y: number }): Promise<NativeRef | null> {
  if (!a.win.frame) return null;
  const deepest = await a.atspi.at(a.win.frame, p.x, p.y, a.win.bounds);
  const hit = (await refFor(a.atspi, a.win, deepest, null)).ref;
  if (TOGGLE_ROLES.has(hit.role)) return hit;
  let current: { bus: string; path: string } = deepest;
  for (let up = 0; up < TOGGLE_PART_DEPTH; up++) {
    const parent = (await a.atspi.prop(current, IFACE.accessible, 'Parent').catch(() => null)) as
      | [string, string]
      | null;
    if (!parent || parent[1] === '/org/a11y/atspi/null') break;
    current = { bus: parent[0], path: parent[1] };
    const [[role]] = [await a.atspi.call(current, IFACE.accessible, 'GetRole').catch(() => [0])];
    if (TOGGLE_ROLES.has(Number(role))) return (await refFor(a.atspi, a.win, current, hit.web)).ref;
  }
  return hit;
}
/** How far above the point's element a toggle may be for the point to be part of it (label, then indicator box). */
export const TOGGLE_PART_DEPTH = 2;

/** What a window's pointer events go through, for the evidence. */
export const pointerOf = (a: Aim) => (a.win.surface === 'wayland' ? 'virtual pointer' : 'XTest');

/** Refuses a pointer event that would land on another window covering the point. */
export async function checkUncovered(a: Aim, p: { x: number; y: number }): Promise<void> {
  // A point from an element (the px form was checked in aim): not in or beside a popover nobody places.
  if (!a.screenPoint) await refuseBesideUnplacedPopover(a.atspi, a.win, a.element?.unplacedIn);
  await a.host.checkPoint(p); // a window agents may not drive is refused before it is named as a cover
  // An element of an open popover is drawn in its own surface, above the window and maybe beyond it.
  const surface = a.element?.surface;
  if (surface && p.x >= surface.x && p.y >= surface.y && p.x < surface.x + surface.w && p.y < surface.y + surface.h)
    return;
  const top = await topWindowAt(p.x, p.y);
  if (top && top.id !== a.win.id) {
    throw new Refusal(
      'element_covered',
      `the point (${Math.round(p.x)}, ${Math.round(p.y)}) of window ${a.win.id} is covered by window ${top.id} ("${top.title}"); nothing was clicked. Use delivery_mode "foreground" to raise the window first`,
      { covering_element: `window ${top.id} "${top.title}"` },
    );
  }
  if (
    p.x < a.win.bounds.x ||
    p.y < a.win.bounds.y ||
    p.x >= a.win.bounds.x + a.win.bounds.w ||
    p.y >= a.win.bounds.y + a.win.bounds.h
  ) {
    throw new Refusal(
      'invalid_arguments',
      `the point (${Math.round(p.x - a.win.bounds.x)}, ${Math.round(p.y - a.win.bounds.y)}) is outside the window's ${a.win.bounds.w}x${a.win.bounds.h} screenshot`,
    );
  }
}
