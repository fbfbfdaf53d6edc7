// The page agent's motion part: scrolling (aim at the right scroll container, read offsets until they
// settle), dragging (which element got the press and the release), and the agent cursor overlay.
import type { DragProbe } from '../../contract/drag-verdict.js';
import { type Refused, coveringOf, describe, element, hitAt, nextFrame, textOf } from '../page-agent/core.js';

/** A scroll container's offsets (rounded CSS pixels) and what it is. */
export interface ScrollOffsets {
  x: number;
  y: number;
  target: string;
}

// ---------- scrolling ----------

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

let scrollWatched: Element | null = null;
export function scrollState(snapshotId: string | null, index: number, x: number, y: number): ScrollOffsets {
  scrollWatched = scrollerAt(snapshotId, index, x, y);
  return offsetsOf(scrollWatched);
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
      scrollWatched = container;
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
  let last = offsetsOf(scrollWatched);
  for (let i = 0, still = 0; i < 60 && still < 3; i++) {
    await nextFrame();
    const now = offsetsOf(scrollWatched);
    still = now.x === last.x && now.y === last.y ? still + 1 : 0;
    last = now;
  }
  return last;
}

// ---------- dragging ----------

interface DragRecord {
  source: Element | null;
  down: string | null;
  up: string | null;
  moves: number;
  fromX: number;
  fromY: number;
  toX: number;
  toY: number;
  probe: ProbeStart | null;
}
let drag: DragRecord | null = null;
// One set of listeners for every drag, reporting to the drag watched now (not three more per drag).
let dragListening = false;
function listenForDrags(): void {
  if (dragListening) return;
  dragListening = true;
  const on = (type: string, fn: (record: DragRecord, e: MouseEvent) => void) =>
    window.addEventListener(
      type,
      (e) => {
        if (drag && e.isTrusted) fn(drag, e as MouseEvent);
      },
      { capture: true },
    );
  on('mousedown', (record, e) => {
    record.down = describe(e.composedPath()[0] as Element);
  });
  on('mousemove', (record) => {
    record.moves++;
  });
  on('mouseup', (record, e) => {
    record.up = describe(e.composedPath()[0] as Element);
  });
}

export function watchDrag(fromX: number, fromY: number, toX: number, toY: number): string {
  const source = hitAt(document.body, fromX, fromY);
  drag = {
    source,
    down: null,
    up: null,
    moves: 0,
    fromX,
    fromY,
    toX,
    toY,
    probe: source ? probeStart(source, toX - fromX, toY - fromY, hitAt(document.body, toX, toY)) : null,
  };
  listenForDrags();
  return describe(source);
}

/** Which element got the press and the release of the drag watched last, and what it moved (the read-back). */
export async function dragSeen(): Promise<{
  down: string | null;
  up: string | null;
  moves: number;
  source: string;
  destination: string;
  probe: DragProbe | null;
}> {
  if (!drag) return { down: null, up: null, source: 'nothing', destination: 'nothing', moves: 0, probe: null };
  const d = drag;
  await nextFrame(); // a widget may commit its new order or value in the frame after the release
  return {
    down: d.down,
    up: d.up,
    moves: d.moves,
    source: describe(d.source),
    destination: describe(hitAt(document.body, d.toX, d.toY)),
    probe: d.probe ? probeEnd(d.probe) : null,
  };
}

// ---------- what a drag moved ----------

type ProbeStart =
  | { kind: 'list'; item: Element; list: Element; before: string[]; fromIndex: number; toIndex: number }
  | { kind: 'value'; element: Element; before: number; expected: number | null; tolerance: number }
  | { kind: 'box'; element: Element; x: number; y: number; wantDx: number; wantDy: number };

const LIST_TAGS = new Set(['ul', 'ol', 'tbody', 'menu']);
const LIST_ROLES = /^(list|listbox|grid|tree|treegrid|menu|tablist|rowgroup)$/;
const ITEM_ROLES = /^(listitem|option|row|treeitem|menuitem|tab)$/;

/** The list item a point grabbed: the element (it or an ancestor) that is an item of a list of two or more. */
function listItemOf(el: Element | null): Element | null {
  for (let n = el, depth = 0; n?.parentElement && depth < 8; n = n.parentElement, depth++) {
    const list = n.parentElement;
    if (n === document.body || list === document.documentElement || list === document.body) return null;
    const isList = LIST_TAGS.has(list.localName) || LIST_ROLES.test(list.getAttribute('role') ?? '');
    const isItem = n.localName === 'li' || n.localName === 'tr' || ITEM_ROLES.test(n.getAttribute('role') ?? '');
    if ((isList || isItem) && list.children.length >= 2) return n;
  }
  return null;
}

function itemText(el: Element): string {
  return textOf(el, 60) || describe(el);
}

function sliderOf(el: Element): Element | null {
  return el.closest('input[type=range], [role=slider]');
}

function sliderNumbers(el: Element): { value: number; min: number; max: number; step: number; vertical: boolean } {
  if (el.localName === 'input') {
    const input = el as HTMLInputElement;
    const min = input.min === '' ? 0 : Number(input.min),
      max = input.max === '' ? 100 : Number(input.max);
    const step = input.step === '' || input.step === 'any' ? 1 : Number(input.step);
    return {
      value: Number(input.value),
      min,
      max,
      step,
      vertical: getComputedStyle(input).writingMode.startsWith('vertical'),
    };
  }
  const num = (name: string, fallback: number) => {
    const v = Number(el.getAttribute(name));
    return el.hasAttribute(name) && Number.isFinite(v) ? v : fallback;
  };
  return {
    value: num('aria-valuenow', NaN),
    min: num('aria-valuemin', 0),
    max: num('aria-valuemax', 100),
    step: 1,
    vertical: el.getAttribute('aria-orientation') === 'vertical',
  };
}

/** The track a slider's handle runs along: a range input itself, else the nearest ancestor much wider than the handle. */
function trackWidth(el: Element): number {
  if (el.localName === 'input') return el.getBoundingClientRect().width;
  const handle = el.getBoundingClientRect().width;
  for (let n = el.parentElement, depth = 0; n && depth < 8; n = n.parentElement, depth++) {
    const w = n.getBoundingClientRect().width;
    if (w > handle * 3) return w;
  }
  return 0;
}

function probeStart(source: Element, dx: number, dy: number, dropHit: Element | null): ProbeStart | null {
  const slider = sliderOf(source);
  if (slider) {
    const n = sliderNumbers(slider);
    if (Number.isFinite(n.value)) {
      const width = trackWidth(slider);
      const span = n.max - n.min;
      // Along a horizontal track the value follows the pointer's distance; a vertical one's direction varies.
      const expected =
        n.vertical || width <= 0 ? null : Math.min(n.max, Math.max(n.min, n.value + (dx / width) * span));
      return { kind: 'value', element: slider, before: n.value, expected, tolerance: span * 0.05 + n.step };
    }
  }
  const item = listItemOf(source);
  if (item?.parentElement) {
    const list = item.parentElement;
    const items = Array.from(list.children);
    const dropItem = listItemOf(dropHit);
    return {
      kind: 'list',
      item,
      list,
      before: items.map(itemText),
      fromIndex: items.indexOf(item),
      toIndex: dropItem && dropItem.parentElement === list ? items.indexOf(dropItem) : -1,
    };
  }
  const box = source.getBoundingClientRect();
  return { kind: 'box', element: source, x: box.x, y: box.y, wantDx: dx, wantDy: dy };
}

function probeEnd(p: ProbeStart): DragProbe {
  if (p.kind === 'value')
    return {
      kind: 'value',
      element: describe(p.element),
      before: p.before,
      after: sliderNumbers(p.element).value,
      expected: p.expected,
      tolerance: p.tolerance,
    };
  if (p.kind === 'list') {
    const items = Array.from(p.list.children);
    return {
      kind: 'list',
      item: itemText(p.item),
      before: p.before,
      after: items.map(itemText),
      fromIndex: p.fromIndex,
      toIndex: p.toIndex,
      afterIndex: items.indexOf(p.item),
    };
  }
  const box = p.element.getBoundingClientRect();
  return {
    kind: 'box',
    element: describe(p.element),
    dx: box.x - p.x,
    dy: box.y - p.y,
    wantDx: p.wantDx,
    wantDy: p.wantDy,
  };
}

// ---------- the agent cursor (a visual aid; see cdp/cursor-overlay.ts) ----------

let cursor: { host: HTMLElement; arrow: HTMLElement; root: ShadowRoot; hideTimer?: number } | null = null;
function cursorElement() {
  if (cursor?.host.isConnected) return cursor;
  const host = document.createElement('div');
  // Fixed, zero-size, no pointer events: it cannot change layout or receive a click. No paint (or size)
  // containment: on a zero-size host it would clip the arrow away entirely.
  host.style.cssText =
    'all: initial; position: fixed; left: 0; top: 0; width: 0; height: 0; pointer-events: none; z-index: 2147483647; contain: layout style;';
  const root = host.attachShadow({ mode: 'closed' });
  root.innerHTML =
    '<style>.a{position:fixed;left:0;top:0;width:22px;height:22px;pointer-events:none;transition:opacity .25s;will-change:transform}' +
    '.r{position:fixed;width:28px;height:28px;margin:-14px 0 0 -14px;border-radius:50%;border:2px solid #6d5dfc;pointer-events:none;opacity:0}</style>' +
    '<svg class="a" viewBox="0 0 22 22"><path d="M2 2 L2 18 L7 13 L10.5 20 L13 19 L9.5 12 L16 12 Z" fill="#6d5dfc" stroke="white" stroke-width="1.5"/></svg>';
  document.documentElement.appendChild(host);
  cursor = { host, root, arrow: root.querySelector('.a') as HTMLElement };
  return cursor;
}

export function cursorShow(
  path: Array<[number, number]>,
  duration: number,
  kind: string,
  fx: { ripple: boolean; trail: boolean; dwell: number; idleHide: number; overshoot: boolean },
) {
  const c = cursorElement();
  c.arrow.style.opacity = '1';
  const frames = path.map(([x, y]) => ({ transform: `translate(${x}px, ${y}px)` }));
  if (fx.overshoot && path.length > 2) {
    const [ax, ay] = path[path.length - 2],
      [bx, by] = path[path.length - 1];
    frames.splice(frames.length - 1, 0, {
      transform: `translate(${bx + (bx - ax) * 0.6}px, ${by + (by - ay) * 0.6}px)`,
    });
  }
  c.arrow.animate(frames, { duration, easing: 'ease-in-out', fill: 'forwards' });
  const [x, y] = path[path.length - 1];
  if (fx.ripple) {
    const ripple = document.createElement('div');
    ripple.className = 'r';
    ripple.style.left = `${x}px`;
    ripple.style.top = `${y}px`;
    c.root.appendChild(ripple);
    ripple
      .animate(
        [
          { opacity: 0.9, transform: 'scale(0.4)' },
          { opacity: 0, transform: 'scale(1.6)' },
        ],
        { duration: Math.max(200, fx.dwell + 200), delay: duration, fill: 'forwards' },
      )
      .finished.then(
        () => ripple.remove(),
        () => ripple.remove(),
      );
  }
  if (c.hideTimer) clearTimeout(c.hideTimer);
  if (fx.idleHide > 0)
    c.hideTimer = setTimeout(
      () => {
        c.arrow.style.opacity = '0';
      },
      duration + fx.dwell + fx.idleHide,
    ) as unknown as number;
  return { kind, visible: true };
}

export function cursorHide() {
  if (cursor) {
    cursor.host.remove();
    cursor = null;
  }
  return true;
}

export function cursorVisible() {
  return !!cursor && cursor.host.isConnected && cursor.arrow.style.opacity !== '0';
}
