// What the page's scripts made clickable and what a widget library's markup says, for the snapshot: the
// elements the main-world hook recorded (cdp/tab/handler-hook.ts), and what the page's own world knows of a
// jQuery UI slider (its range), asked for over the one channel both worlds share, DOM events.

/** The elements given a click-like listener, as the hook answers now (empty when no hook is installed). */
export function handlerTargets(): { targets: Set<Element>; sliders: Map<Element, SliderRange> } {
  const targets = new Set<Element>();
  const sliders = new Map<Element, SliderRange>();
  const onTarget = (e: Event) => {
    const el = e.composedPath()[0];
    if (el instanceof Element) targets.add(el);
  };
  const onSlider = (e: Event) => {
    const el = e.composedPath()[0];
    const detail = (e as CustomEvent).detail;
    if (!(el instanceof Element) || typeof detail !== 'string') return;
    const [min, max, value] = detail.split(' ').map(Number);
    if ([min, max, value].every(Number.isFinite) && max > min) sliders.set(el, { min, max, value });
  };
  window.addEventListener('verity-handler-target', onTarget, true);
  window.addEventListener('verity-slider-range', onSlider, true);
  try {
    document.dispatchEvent(new Event('verity-list-handlers'));
  } finally {
    window.removeEventListener('verity-handler-target', onTarget, true);
    window.removeEventListener('verity-slider-range', onSlider, true);
  }
  return { targets, sliders };
}

export interface SliderRange {
  min: number;
  max: number;
  value: number;
}

/** A widget library's slider handle that carries no ARIA role: jQuery UI's `.ui-slider-handle`. */
export function isLibrarySliderHandle(el: Element): boolean {
  return !el.hasAttribute('role') && el.classList.contains('ui-slider-handle');
}

/**
 * A library slider handle's value: the library's own with its range, "30 (10–50)", from the page's world
 * when it answered (jQuery UI sets no aria-valuenow: measured with 1.14), else where
 * the handle sits along its track (its style's left, or bottom for a vertical one), as a percentage.
 */
export function librarySliderValue(el: Element, range: SliderRange | undefined): string | undefined {
  if (el.hasAttribute('aria-valuenow')) return el.getAttribute('aria-valuenow')!;
  if (range) return `${range.value} (${range.min}–${range.max})`;
  const style = (el as HTMLElement).style;
  const at = /^(-?[\d.]+)%$/.exec(style.left || style.bottom || '');
  return at ? `${Number(at[1])}%` : undefined;
}
