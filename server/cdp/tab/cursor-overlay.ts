// The agent cursor in a driven tab: a visual aid drawn in a closed shadow root with pointer-events off,
// fixed-positioned (no layout change), never interactive (never listed, never hit). Its glide runs in the
// page while the action proceeds: Verity never slows an action down for the cursor.
import type { CursorSettings } from '../../contract/driver.js';
import type { Tab } from './tab.js';

const lastPoint = new WeakMap<Tab, { x: number; y: number }>();

/** Points along the glide from `from` to `to`: a cubic arc shaped by the style's handles, size and flow. */
export function glidePath(
  from: { x: number; y: number },
  to: { x: number; y: number },
  s: CursorSettings,
  steps = 24,
): Array<[number, number]> {
  const dx = to.x - from.x,
    dy = to.y - from.y;
  const distance = Math.hypot(dx, dy) || 1;
  const arc = s.reduced_motion || s.style === 'magnetic' ? 0 : s.arc_size * (s.style === 'comet_swoop' ? 1.6 : 1);
  const nx = -dy / distance,
    ny = dx / distance; // the arc bows to the left of travel
  const bow = distance * arc;
  const flow = s.arc_flow * 0.5;
  const c1 = {
    x: from.x + dx * (s.start_handle + flow) + nx * bow,
    y: from.y + dy * (s.start_handle + flow) + ny * bow,
  };
  const c2 = { x: to.x - dx * (s.end_handle - flow) + nx * bow, y: to.y - dy * (s.end_handle - flow) + ny * bow };
  const points: Array<[number, number]> = [];
  for (let i = 0; i <= steps; i++) {
    const t = i / steps,
      u = 1 - t;
    points.push([
      u * u * u * from.x + 3 * u * u * t * c1.x + 3 * u * t * t * c2.x + t * t * t * to.x,
      u * u * u * from.y + 3 * u * u * t * c1.y + 3 * u * t * t * c2.y + t * t * t * to.y,
    ]);
  }
  return points;
}

/** Starts the glide to (x, y) in top-level CSS pixels; returns at once. */
export async function showCursor(
  tab: Tab,
  x: number,
  y: number,
  settings: CursorSettings,
  kind: 'click' | 'type' | 'key' | 'scroll' | 'drag',
): Promise<void> {
  const from = lastPoint.get(tab) ?? { x: x - 80, y: y - 60 };
  lastPoint.set(tab, { x, y });
  const distance = Math.hypot(x - from.x, y - from.y);
  const path = glidePath(from, { x, y }, settings);
  const frame = tab.topFrame();
  await tab
    .call(frame, 'cursorShow', path, Math.round(settings.durationFor(distance)), kind, {
      ripple: settings.effects.click_ripple && kind === 'click',
      trail: settings.effects.trail,
      dwell: settings.dwell_after_click_ms,
      idleHide: settings.idle_hide_ms,
      overshoot: settings.effects.follow_through && !settings.reduced_motion,
    })
    .catch(() => {
      /* a visual aid never fails an action */
    });
}

/**
 * Actions queue their glide here and the call path flushes it once the result is in: the glide then
 * never competes with delivery or read-back for the page's main thread, nor its command with the reply.
 */
const pending = new Map<
  Tab,
  { x: number; y: number; settings: CursorSettings; kind: Parameters<typeof showCursor>[4] }
>();

export function queueCursor(
  tab: Tab,
  x: number,
  y: number,
  settings: CursorSettings,
  kind: Parameters<typeof showCursor>[4],
): void {
  pending.set(tab, { x, y, settings, kind });
}

let flushScheduled = false;

/** Starts the queued glides on the next turn of the event loop, once the action's reply has been written. */
export function flushCursors(): void {
  if (!pending.size || flushScheduled) return;
  flushScheduled = true;
  setImmediate(() => {
    flushScheduled = false;
    for (const [tab, glide] of pending) void showCursor(tab, glide.x, glide.y, glide.settings, glide.kind);
    pending.clear();
  });
}

export async function hideCursor(tab: Tab): Promise<void> {
  lastPoint.delete(tab);
  const frame = tab.topFrame();
  await tab.call(frame, 'cursorHide').catch(() => {});
}
