// The page agent's pointing: hit-testing (what a point lands on, through shadow roots), what covers an
// element, and aiming a pointer at an element (a point inside it that reaches it, once it stopped moving),
// with a watch armed there for what the action's events reach.
import type { Covering, Refused } from './replies.js';
import { editorAreaOf } from './surfaces.js';
import { pageState } from './state.js';
import { implicitRole, labelOf, isEnabled, shadowOf, element, describe, nextFrame } from './core.js';
import { armWatch } from './watches.js';

/**
 * What covers `el` at a point, as the model would look for it: the hit element's role and name, and the
 * listed element that holds it (itself or the nearest listed ancestor that is not also around `el`), so
 * the refusal can give that element's token (a cookie banner's "Accept" button).
 */
export function coveringOf(hit: Element | null, el: Element): Covering | undefined {
  if (!hit) return undefined;
  let listed: Element | null = null;
  for (
    let n: Element | null = hit, depth = 0;
    n && depth < 32;
    n = n.parentElement ?? (n.getRootNode() as ShadowRoot).host ?? null, depth++
  ) {
    if (isWithin(el, n)) break; // an ancestor of the target too: it does not name the cover
    if (pageState.latest.elements.includes(n)) {
      listed = n;
      break;
    }
  }
  const named = listed ?? hit;
  return {
    role: named.getAttribute('role') || implicitRole(named),
    name: labelOf(named).slice(0, 80),
    index: listed ? pageState.latest.elements.indexOf(listed) : -1,
  };
}

/** The point to press for an element, in this frame's viewport, hit-tested. */
export interface Aimed {
  refusal?: undefined;
  x: number;
  y: number;
  stable: boolean;
  target: string;
  href?: string;
}

/** The element this frame considers hit at (x, y), looked up in the target's own tree (closed roots too). */
export function hitAt(el: Element, x: number, y: number): Element | null {
  let hit = document.elementFromPoint(x, y);
  // Descend into shadow roots (open or registered closed) the hit element hosts.
  for (let depth = 0; hit && depth < 32; depth++) {
    const shadow = shadowOf(hit);
    if (!shadow) break;
    const inner = shadow.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  if (hit && hit !== el && !isWithin(hit, el)) {
    // A closed root we never registered: ask the target's own root, which we can reach through the element.
    const own = (el.getRootNode() as Document | ShadowRoot).elementFromPoint?.(x, y) ?? null;
    if (own && (own === el || isWithin(own, el)) && isComposedAncestor(hit, el)) return own;
  }
  return hit;
}

export function isWithin(node: Element, ancestor: Element): boolean {
  for (
    let n: Node | null = node;
    n;
    n = (n as Node & Partial<Slottable>).assignedSlot ?? n.parentNode ?? (n as ShadowRoot).host ?? null
  ) {
    if (n === ancestor) return true;
  }
  return false;
}

function isComposedAncestor(candidate: Element, el: Element): boolean {
  return isWithin(el, candidate);
}

function acceptsHit(el: Element, hit: Element | null): boolean {
  if (!hit) return false;
  if (hit === el || isWithin(hit, el)) return true;
  const labels = (el as HTMLInputElement).labels;
  return !!labels && Array.from(labels).some((label) => hit === label || isWithin(hit, label));
}

/**
 * Brings the element into view, waits (bounded) until its box stops moving, then hit-tests the point
 * that will be clicked. Returns the point in this frame's viewport, or why it cannot be clicked.
 */
export async function pointFor(snapshotId: string, index: number, watchTypes: string[]): Promise<Refused | Aimed> {
  const el = element(snapshotId, index);
  if (!isEnabled(el)) return { refusal: 'element_disabled', detail: describe(el) };
  // A caret-sized editor surface is clicked where a user clicks: its editor's area, which the events must reach.
  return pointAt(editorAreaOf(el) ?? el, el, watchTypes);
}

/** Aims at `box` (the element itself, or the editor area standing for it); `el` is what the action is on. */
async function pointAt(box: Element, el: Element, watchTypes: string[]): Promise<Refused | Aimed> {
  box.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' as ScrollBehavior });
  let rect = box.getBoundingClientRect();
  let stable = false;
  for (let i = 0; i < 20 && !stable; i++) {
    // up to 20 frames for animations to settle
    await nextFrame();
    const next = box.getBoundingClientRect();
    // A transition that just started can show the same box two frames running (its first frame is at
    // progress 0): a box is stable only when nothing finite still animates it or its ancestors.
    stable =
      next.x === rect.x &&
      next.y === rect.y &&
      next.width === rect.width &&
      next.height === rect.height &&
      !animated(box);
    rect = next;
  }
  const left = Math.max(rect.left, 0),
    right = Math.min(rect.right, innerWidth);
  const top = Math.max(rect.top, 0),
    bottom = Math.min(rect.bottom, innerHeight);
  if (right <= left || bottom <= top) return { refusal: 'not_visible', detail: describe(el) };
  const x = (left + right) / 2,
    y = (top + bottom) / 2;
  const hit = hitAt(box, x, y);
  if (!acceptsHit(box, hit))
    return { refusal: 'element_covered', detail: describe(hit), target: describe(el), covering: coveringOf(hit, box) };
  if (watchTypes.length) armWatch(box, watchTypes);
  const href = el.localName === 'a' ? (el as HTMLAnchorElement).href : undefined;
  return { x, y, stable, target: box === el ? describe(el) : `${describe(el)} (clicked in its editor's area)`, href };
}

/** Whether a finite animation or transition is running (or about to) on the element or an ancestor. */
function animated(el: Element): boolean {
  for (let n: Element | null = el; n; n = n.parentElement ?? (n.getRootNode() as ShadowRoot).host ?? null) {
    for (const a of n.getAnimations()) {
      if ((a.playState === 'running' || a.pending) && a.effect?.getComputedTiming().endTime !== Infinity) return true;
    }
  }
  return false;
}

/** Arms a watch on whatever is hit at (x, y) (the px form). */
export function watchPoint(x: number, y: number, types: string[]) {
  const hit = hitAt(document.body, x, y) ?? document.body;
  armWatch(hit, types);
  return { target: describe(hit) };
}
