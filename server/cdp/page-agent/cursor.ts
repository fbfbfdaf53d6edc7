// The agent cursor overlay in the page: a visual aid drawn in a closed shadow root that takes no pointer
// events (see tab/cursor-overlay.ts, which drives it).
import { pageState } from './state.js';

function cursorElement() {
  if (pageState.cursor?.host.isConnected) return pageState.cursor;
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
  pageState.cursor = { host, root, arrow: root.querySelector('.a') as HTMLElement };
  return pageState.cursor;
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
  if (pageState.cursor) {
    pageState.cursor.host.remove();
    pageState.cursor = null;
  }
  return true;
}

export function cursorVisible() {
  return !!pageState.cursor && pageState.cursor.host.isConnected && pageState.cursor.arrow.style.opacity !== '0';
}
