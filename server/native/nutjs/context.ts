// What the nutjs backend's actions share: where a target's screenshot pixels are on the screen, the policy
// check of a point, the keyboard's owner, and the shape of a result (nut-js sees no elements, so it proves
// nothing: every action is `unverifiable` with an escalation saying how to check).
import type { ActionResult, Evidence, ResolvedTarget, Stopwatch } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import type { NutjsHost, NutWindow, Rect } from './host.js';

/** Screenshots remembered per target for mapping its pixels back (scale, size): the oldest is dropped past this. */
const MAX_SHOTS = 256;

const ESCALATE = {
  target: 'verify' as const,
  reason:
    'the nutjs backend reads no elements, so it cannot prove what this did: call get_window_state and compare its screenshot',
};
export const NO_ELEMENTS =
  'no elements: the nutjs native backend sees pixels only (no accessibility tree here); act at screenshot pixels (x, y) and check the next screenshot';

/** Where a target's screenshot pixels are on the screen: its origin now, and its last screenshot's scale. */
export interface Mapping {
  origin: { x: number; y: number };
  scale: number;
  width: number;
  height: number;
  win: NutWindow | null;
}

/**
 * Where screenshot pixel `px` is on the screen: the target's origin (logical units, as the OS places windows
 * and moves the pointer) plus the pixel over the screenshot's scale (2 on a Retina display). A pixel outside
 * the screenshot is refused naming `field`.
 */
export function screenPoint(
  m: { origin: { x: number; y: number }; scale: number; width: number; height: number },
  px: { x: number; y: number },
  field = 'x, y',
): { x: number; y: number } {
  if (px.x < 0 || px.y < 0 || px.x >= m.width || px.y >= m.height)
    throw new Refusal(
      'invalid_arguments',
      `${field}: (${px.x}, ${px.y}) is outside the target's screenshot (${m.width}x${m.height} pixels); nothing was sent`,
    );
  return { x: Math.round(m.origin.x + px.x / m.scale), y: Math.round(m.origin.y + px.y / m.scale) };
}

/** The screen mapping, policy checks and result shape the nutjs actions share, with each target's last screenshot. */
export class NutjsContext {
  /** Each target's last screenshot: its scale and size (pixels), to map the px form back. */
  readonly shots = new Map<string, { scale: number; width: number; height: number }>();

  constructor(readonly host: NutjsHost) {}

  remember(key: string, shot: { scale: number; width: number; height: number }): void {
    this.shots.delete(key);
    this.shots.set(key, shot);
    if (this.shots.size > MAX_SHOTS) this.shots.delete(this.shots.keys().next().value!);
  }

  async region(target: ResolvedTarget): Promise<{ rect: Rect; win: NutWindow | null }> {
    if (target.kind === 'desktop') {
      const s = await this.host.call<{ width: number; height: number }>('screen');
      return { rect: { x: 0, y: 0, w: s.width, h: s.height }, win: null };
    }
    if (target.kind !== 'window') throw new Refusal('not_supported', 'a browser tab is not a native target');
    const win = await this.host.targetWindow(target);
    return { rect: win.bounds, win };
  }

  /** Screenshot pixels per logical unit where `rect` is, measured on one pixel (X11's are always 1). */
  async screenScale(rect: Rect): Promise<number> {
    if (this.host.linux) return 1;
    const one = await this.host.call<{ scale: number }>('grab', { region: { x: rect.x, y: rect.y, w: 1, h: 1 } });
    return one.scale;
  }

  /** The screen point of screenshot pixel `px` of a target: its origin plus the pixel over the scale. */
  async mapping(target: ResolvedTarget): Promise<Mapping> {
    const { rect, win } = await this.region(target);
    const known = this.shots.get(target.key);
    const scale = known?.scale ?? (await this.screenScale(rect));
    return {
      origin: { x: rect.x, y: rect.y },
      scale,
      width: known?.width ?? Math.round(rect.w * scale),
      height: known?.height ?? Math.round(rect.h * scale),
      win,
    };
  }

  toScreen(m: Mapping, px: { x: number; y: number }, field = 'x, y'): { x: number; y: number } {
    return screenPoint(m, px, field);
  }

  /** The screen point an action at the target's px point lands on, checked against the policy. */
  async pointOf(target: ResolvedTarget, what: string): Promise<{ m: Mapping; at: { x: number; y: number } }> {
    if (target.element)
      throw new Refusal('not_supported', 'the nutjs native backend has no elements; use x, y from the screenshot');
    if (!target.point)
      throw new Refusal(
        'invalid_arguments',
        `x, y: the nutjs native backend ${what} at screenshot pixels; give x and y from get_window_state's screenshot`,
      );
    const m = await this.mapping(target);
    const at = this.toScreen(m, target.point);
    await this.host.checkPoint(at);
    return { m, at };
  }

  result(sw: Stopwatch, method: string, detail: string, m: Mapping | null, extra: Partial<ActionResult> = {}) {
    const evidence: Evidence[] = [{ kind: 'os_input', detail: `nut-js ${detail}` }];
    return {
      effect: 'unverifiable' as const,
      route: 'pixel' as const,
      delivery: { mode: 'foreground' as const },
      evidence,
      escalation: ESCALATE,
      timings_ms: sw.timings,
      method,
      target: m?.win ? `window ${m.win.id} ("${m.win.title}")` : 'the desktop',
      ...extra,
    } satisfies ActionResult;
  }

  where(m: Mapping, at: { x: number; y: number }): string {
    return `at screen (${at.x}, ${at.y}) = ${m.win ? `window origin (${m.origin.x}, ${m.origin.y})` : 'the screen'} + pixel / scale ${m.scale}`;
  }

  /**
   * Keys go to the focused window. A window target must have it already (background, the default) or is
   * raised first (foreground); a desktop target takes whatever has it, unless the policy keeps agents off it.
   */
  async keyboardFor(target: ResolvedTarget): Promise<Mapping | null> {
    if (target.element)
      throw new Refusal('not_supported', 'the nutjs native backend has no elements; name a window or the desktop');
    if (target.kind === 'desktop') {
      const active = await this.host.activeWindow().catch(() => 0);
      if (active && this.host.filtersApps) {
        const w = await this.host.window(undefined, active).catch(() => null);
        if (!w)
          throw new Refusal(
            'not_permitted',
            'the focused window is one agents may not drive; keys sent to the desktop would reach it, so nothing was sent',
          );
      }
      return null;
    }
    const m = await this.mapping(target);
    const win = m.win!;
    const mode = target.deliveryMode;
    if ((await this.host.activeWindow()) === win.id) return m;
    if (mode === 'foreground') {
      await this.host.focus(win.id);
      if ((await this.host.activeWindow()) === win.id) return m;
      throw new Refusal(
        'focus_failed',
        `window ${win.id} ("${win.title}") would not take the keyboard; nothing was sent`,
      );
    }
    throw new Refusal(
      'focus_failed',
      `keystrokes reach only the focused window, and window ${win.id} ("${win.title}") does not have focus; nothing was sent. Click into it first, or call again with delivery_mode "foreground" (raises it)`,
      { escalation: 'foreground' },
    );
  }
}
