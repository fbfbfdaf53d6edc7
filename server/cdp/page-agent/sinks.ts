// Keyboard sinks: a hidden, transparent, clipped, zero-size or off-screen <input>/<textarea> that a widget
// (a web terminal such as xterm.js, a game, a custom line editor) focuses to collect keys, drawing what
// they mean elsewhere. Text inserted into it lands in its value, which the widget may never read: the
// driver types real keys into it, and the verdict comes from the widget's visible text around it.
import { deepActiveElement, describe, nextFrame } from './core.js';
import { heldField, holdField, releaseField } from './held.js';
import type { FieldHandle, FieldRefused, SinkReady, SinkShown, Watched } from './replies.js';
import { isCaretSizedSurface, renderedLines } from './surfaces.js';

/** Below this opacity (or colour alpha) a field's text cannot be seen. */
const INVISIBLE_ALPHA = 0.05;
/** The smallest box (CSS px) that can show a widget's text: the visible area is looked for from there. */
const AREA_MIN_PX = 16;
/** How long the widget gets to show the typed text (a terminal echoes asynchronously). */
const SHOW_WAIT_MS = 1500;
/** The visible text read around a sink is cut at this many characters (a whole page, at worst). */
const SHOWN_TEXT_CAP = 200_000;

function alphaOf(color: string): number {
  if (color === 'transparent') return 0;
  const m = color.match(/rgba?\(([^)]+)\)/);
  if (!m) return 1;
  const parts = m[1].split(/[\s,/]+/).filter(Boolean);
  return parts.length >= 4 ? Number.parseFloat(parts[3]) : 1;
}

/** clip: rect(0 0 0 0) or a clip-path that leaves nothing (the usual visually-hidden recipes). */
function clippedAway(style: CSSStyleDeclaration): boolean {
  const clip = style.clip;
  if (clip && clip !== 'auto') {
    const n = (clip.match(/-?[\d.]+/g) ?? []).map(Number);
    if (n.length === 4 && (n[2] - n[0] <= 1 || n[1] - n[3] <= 1)) return true;
  }
  return /inset\(\s*(50|100)%|circle\(\s*0/.test(style.clipPath);
}

/**
 * Why a text field is a keyboard sink (how it is hidden), or null when a user can see its text. A
 * caret-sized surface whose editor renders its lines where Verity reads them (Monaco) is an editor, not a sink.
 */
export function sinkReason(el: Element): string | null {
  if (el.localName !== 'input' && el.localName !== 'textarea') return null;
  if (isCaretSizedSurface(el) && renderedLines(el as HTMLElement)) return null;
  const r = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  if (r.width < 4 || r.height < 4) return 'zero-size';
  if (r.right + scrollX <= 0 || r.bottom + scrollY <= 0) return 'off-screen';
  if (clippedAway(style)) return 'clipped';
  for (let n: Element | null = el; n; n = n.parentElement)
    if (Number.parseFloat(getComputedStyle(n).opacity) < INVISIBLE_ALPHA) return 'transparent';
  if (alphaOf(style.color) < INVISIBLE_ALPHA && alphaOf(style.caretColor) < INVISIBLE_ALPHA) return 'transparent';
  return null;
}

/** The nearest ancestor a user can see (a real box, not transparent, not hidden): the widget showing the keys. */
function visibleAreaOf(sink: Element): HTMLElement {
  for (let n = sink.parentElement; n && n !== document.body; n = n.parentElement) {
    const r = n.getBoundingClientRect();
    if (r.width < AREA_MIN_PX || r.height < AREA_MIN_PX) continue;
    const style = getComputedStyle(n);
    if (style.visibility !== 'visible' || Number.parseFloat(style.opacity) < INVISIBLE_ALPHA) continue;
    return n as HTMLElement;
  }
  return document.body;
}

/** What the widget shows: rendered text (innerText leaves out field values, the sink's own included). */
function shownTextOf(area: HTMLElement): string {
  return area.innerText.slice(0, SHOWN_TEXT_CAP);
}

/** Focuses the sink (as the widget's own click handler would) and reads the widget's text before the keys. */
export async function prepareSink(sink: HTMLElement, hidden: string): Promise<SinkReady | FieldRefused> {
  if (!(document.hasFocus() && deepActiveElement() === sink)) {
    if (window !== window.top) window.focus();
    sink.focus({ preventScroll: true });
    await nextFrame(); // the widget's focus handler runs (xterm.js shows its cursor)
  }
  if (deepActiveElement() !== sink) return { kind: 'refused', refusal: 'focus_failed', detail: describe(sink) };
  const area = visibleAreaOf(sink);
  const handle = holdField(sink, ['keydown', 'keypress', 'beforeinput', 'input'], { area, before: shownTextOf(area) });
  return { kind: 'sink', handle, hidden, describe: describe(sink), area: describe(area) };
}

/**
 * After the keys: the widget's visible text once it shows every line of `text` (the widget echoes on its
 * own schedule: waited for, bounded by SHOW_WAIT_MS) or when the wait ends, and what the sink's watch heard;
 * `gone` if the sink left the page. The action's last call: the sink is freed.
 */
export async function sinkShown(handle: FieldHandle, text: string): Promise<SinkShown> {
  const held = heldField(handle);
  // What the sink's watch heard (a new world, after the frame navigated, holds no watch: `fresh`); read
  // last, and the sink freed with it (its watch listens through the wait below).
  const watched = (): Watched => {
    releaseField(handle);
    return held
      ? {
          target: describe(held.target),
          events: held.watch.events.slice(),
          ...(held.watch.leaving ? { leaving: true } : {}),
        }
      : { target: 'nothing', events: [], fresh: true };
  };
  if (!held?.sink || !held.target.isConnected) return { kind: 'gone', watched: watched() };
  const p = held.sink;
  const squash = (s: string) => s.replace(/\u00a0/g, ' ').replace(/\s+/g, ' ');
  const pieces = text
    .split('\n')
    .map(squash)
    .map((s) => s.trim())
    .filter(Boolean);
  const was = squash(p.before);
  const count = (hay: string, needle: string) => hay.split(needle).length - 1;
  const showsAll = (now: string) => pieces.length > 0 && pieces.every((q) => count(now, q) > count(was, q));
  const deadline = performance.now() + SHOW_WAIT_MS;
  let after = shownTextOf(p.area);
  while (!showsAll(squash(after)) && performance.now() < deadline) {
    await nextFrame();
    after = shownTextOf(p.area);
  }
  return { kind: 'shown', before: p.before, after, area: describe(p.area), watched: watched() };
}
