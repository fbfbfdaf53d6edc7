// get_desktop_state's windows, as both native backends build them: the windows agents may see, placed in
// the stacking order the window manager or compositor gave (bottom to top), with focus and app.
import type { DesktopState } from '../../contract/native-host.js';

type Listed = { id: number; pid: number | null; title: string; bounds: { x: number; y: number; w: number; h: number } };

/**
 * `windows` (the policy's left out already) in `order` (window ids bottom to top; null: not known), each with
 * its rank among the listed ones as `z` (so a window left out leaves no gap to count), the focused one marked.
 * A listed window the order does not hold comes last with `z` null.
 */
export function orderDesktop<W extends Listed>(
  windows: W[],
  appOf: (w: W) => string,
  order: number[] | null,
  focused: number,
  rest: Pick<DesktopState, 'screens' | 'cursor' | 'unknown'>,
): DesktopState {
  const at = new Map((order ?? []).map((id, i) => [id, i]));
  const placed = windows.filter((w) => at.has(w.id)).sort((a, b) => at.get(a.id)! - at.get(b.id)!);
  const unplaced = windows.filter((w) => !at.has(w.id));
  const shown = new Set(windows.map((w) => w.id));
  return {
    screens: rest.screens,
    windows: [...placed, ...unplaced].map((w, i) => ({
      pid: w.pid,
      window_id: w.id,
      title: w.title,
      app: appOf(w),
      frame: { x: w.bounds.x, y: w.bounds.y, w: w.bounds.w, h: w.bounds.h },
      focused: w.id === focused,
      z: i < placed.length ? i : null,
    })),
    // A focused window agents may not see is not named: null, as when nothing has focus.
    focused_window_id: focused && shown.has(focused) ? focused : null,
    cursor: rest.cursor,
    unknown: rest.unknown,
  };
}
