// The page agent's part of drag: which element got the press and the release, and what the drag moved (a
// list's order, a slider's value) read before and after.
import type { DragProbe } from '../../contract/drag-verdict.js';
import { describe, nextFrame, textOf } from '../page-agent/core.js';
import { hitAt } from '../page-agent/pointing.js';
import { type DragRecord, type ProbeStart, pageState } from '../page-agent/state.js';
function listenForDrags(): void {
  if (pageState.dragListening) return;
  pageState.dragListening = true;
  const on = (type: string, fn: (record: DragRecord, e: MouseEvent) => void) =>
    window.addEventListener(
      type,
      (e) => {
        if (pageState.drag && e.isTrusted) fn(pageState.drag, e as MouseEvent);
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
  pageState.drag = {
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
  if (!pageState.drag)
    return { down: null, up: null, source: 'nothing', destination: 'nothing', moves: 0, probe: null };
  const d = pageState.drag;
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
