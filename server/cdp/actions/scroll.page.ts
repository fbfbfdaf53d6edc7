// The page agent's part of scroll: aim at the right scroll container (the one under the point, or the
// element's), and read its offsets until they settle.
import { type Refused, describe, element, nextFrame } from '../page-agent/core.js';
import { coveringOf, hitAt } from '../page-agent/pointing.js';
import { pageState } from '../page-agent/state.js';

/** A scroll container's offsets (rounded CSS pixels) and what it is. */
export interface ScrollOffsets {
  x: number;
  y: number;
  target: string;
}

function composedParent(n: Element): Element | null {
  return n.parentElement ?? (n.getRootNode() as ShadowRoot).host ?? null;
}

function isPageScroller(el: Element | null): boolean {
  return !el || el === document.documentElement || el === document.body || el === document.scrollingElement;
}

/** The nearest element (itself included) that wheel events scroll; the page when there is none. */
function scrollContainerOf(el: Element | null): Element | null {
  for (let n: Element | null = el; n && !isPageScroller(n); n = composedParent(n)) {
    if (n.scrollHeight > n.clientHeight + 1 || n.scrollWidth > n.clientWidth + 1) {
      const style = getComputedStyle(n);
      if (/(auto|scroll)/.test(style.overflowY + style.overflowX)) return n;
    }
  }
  return document.scrollingElement;
}

function scrollerAt(snapshotId: string | null, index: number, x: number, y: number): Element | null {
  return scrollContainerOf(snapshotId ? element(snapshotId, index) : hitAt(document.body, x, y));
}

function offsetsOf(el: Element | null): ScrollOffsets {
  if (isPageScroller(el)) {
    return { x: Math.round(window.scrollX), y: Math.round(window.scrollY), target: 'the page' };
  }
  return { x: Math.round(el!.scrollLeft), y: Math.round(el!.scrollTop), target: describe(el) };
}
export function scrollState(snapshotId: string | null, index: number, x: number, y: number): ScrollOffsets {
  pageState.scrollWatched = scrollerAt(snapshotId, index, x, y);
  return offsetsOf(pageState.scrollWatched);
}

type Box = { left: number; top: number; right: number; bottom: number };
function intersect(a: Box, b: Box): Box | null {
  const box = {
    left: Math.max(a.left, b.left),
    top: Math.max(a.top, b.top),
    right: Math.min(a.right, b.right),
    bottom: Math.min(a.bottom, b.bottom),
  };
  return box.right - box.left >= 1 && box.bottom - box.top >= 1 ? box : null;
}

/**
 * Where to turn the wheel so that the element's scroll container (or, with no element, the page) is
 * what scrolls: over the element where it shows inside its container, else elsewhere in the container,
 * at a point whose nearest scroller is that container. The element itself is not scrolled into view
 * (that would be an unreported scroll of its own); an off-screen container is brought just into view.
 */
export function scrollAim(
  snapshotId: string | null,
  index: number,
): Refused | { refusal?: undefined; x: number; y: number; offsets: ScrollOffsets } {
  const el = snapshotId ? element(snapshotId, index) : null;
  const page = document.scrollingElement;
  const pageScrolls = !!page && (page.scrollHeight > page.clientHeight + 1 || page.scrollWidth > page.clientWidth + 1);
  const container = el ? scrollContainerOf(el) : page;
  const viewport = { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
  const clipOf = () => (isPageScroller(container) ? viewport : intersect(container!.getBoundingClientRect(), viewport));
  let clip = clipOf();
  if (!clip && container) {
    container.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' as ScrollBehavior });
    clip = clipOf();
  }
  if (!clip) return { refusal: 'not_visible', detail: describe(container) };
  const boxes: Box[] = [];
  const own = el && intersect(el.getBoundingClientRect(), clip);
  if (own) boxes.push(own);
  boxes.push(clip);
  const points = boxes.map((b) => ({ x: (b.left + b.right) / 2, y: (b.top + b.bottom) / 2 }));
  for (const fx of [0.25, 0.75])
    for (const fy of [0.25, 0.75])
      points.push({ x: clip.left + (clip.right - clip.left) * fx, y: clip.top + (clip.bottom - clip.top) * fy });
  let first: Element | null = null;
  // With no element and a page that does not scroll (an app whose main pane scrolls), or a page covered
  // by inner scrollers, the wheel goes to the centre and the result names whatever scrolled there.
  for (const p of el || pageScrolls ? points : []) {
    const hit = hitAt(el ?? document.body, p.x, p.y);
    const owner = scrollContainerOf(hit);
    first ??= hit;
    if (owner === container || (isPageScroller(owner) && isPageScroller(container))) {
      pageState.scrollWatched = container;
      return { x: p.x, y: p.y, offsets: offsetsOf(container) };
    }
  }
  if (el)
    return {
      refusal: 'element_covered',
      detail: describe(first),
      target: describe(el),
      covering: coveringOf(first, el),
    };
  return { x: points[0].x, y: points[0].y, offsets: scrollState(null, -1, points[0].x, points[0].y) };
}

/** Offsets once a (possibly smooth) scroll has stopped moving: bounded to 60 frames. */
export async function scrollSettled(): Promise<ScrollOffsets> {
  let last = offsetsOf(pageState.scrollWatched);
  for (let i = 0, still = 0; i < 60 && still < 3; i++) {
    await nextFrame();
    const now = offsetsOf(pageState.scrollWatched);
    still = now.x === last.x && now.y === last.y ? still + 1 : 0;
    last = now;
  }
  return last;
}
