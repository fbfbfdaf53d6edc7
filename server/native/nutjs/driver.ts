// The portable native backend (--native-backend nutjs; the default on macOS and Windows): pixels and keys
// through @nut-tree-fork/nut-js, in a helper process (process.ts). It sees no elements, so it proves nothing:
// every action is `unverifiable` with an escalation saying how to check. Each action's half is in actions/,
// found by the action's name.
import { defineActionMethods, loadHalves } from '../../contract/action-halves.js';
import type { ActionMethods, ResolvedTarget, Snapshot } from '../../contract/driver.js';
import type { NativeRoute } from '../../contract/native-host.js';
import { Refusal } from '../../contract/refusal.js';
import { planZoom, type ZoomImage, type ZoomRequest } from '../../contract/zoom.js';
import { NO_ELEMENTS, NutjsContext } from './context.js';
import { NutjsHost, type NutjsOptions } from './host.js';
import { nutjsDeskProbe } from './desk.js';
import { deskAround } from '../shared/background.js';

/** Each action's half on this route, from actions/<kebab-name>.ts by the action's name. */
const HALVES = await loadHalves<NutjsContext>('the nutjs native route', (file) => import(`./actions/${file}.js`));

// The action methods (one per action of the table, ActionMethods) are made in the constructor from HALVES.
export interface NutjsDriver extends ActionMethods {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor defines every member the interface declares.
export class NutjsDriver implements NativeRoute {
  readonly backend = 'nutjs';
  readonly host: NutjsHost;
  /** What the actions share: the screen mapping of each target's last screenshot, policy checks, results. */
  private readonly context: NutjsContext;

  constructor(options: NutjsOptions) {
    this.host = new NutjsHost(options);
    this.context = new NutjsContext(this.host);
    // The desktop's focus, stacking and pointer read around every action, and said (native/shared/background.ts).
    defineActionMethods(this, HALVES, this.context, deskAround(nutjsDeskProbe(this.host)));
  }

  /**
   * zoom: a region of a window (its screenshot's pixels) or of the screen, through nut-js's grab as
   * screenshots are, windows agents may not see blacked out, resampled in the helper.
   */
  async zoom(target: ResolvedTarget, request: ZoomRequest): Promise<ZoomImage> {
    if (target.kind === 'tab' || target.element)
      throw new Refusal('invalid_arguments', 'target: zoom on the nutjs backend takes a window or the desktop');
    const { rect, win } = await this.context.region(target);
    // Screenshot pixels per logical unit (a Retina screen's 2): the region is in screenshot pixels, the grab in units.
    const density = await this.context.screenScale(rect);
    const area = { width: Math.round(rect.w * density), height: Math.round(rect.h * density) };
    const plan = planZoom(request, area, win ? `window ${win.id}'s area` : 'the screen');
    const r = plan.region;
    const units = { x: rect.x + r.x / density, y: rect.y + r.y / density, w: r.width / density, h: r.height / density };
    const hidden = await this.context.host.hiddenIn(units, win?.id);
    const shot = await this.context.host.call<{ data: string; width: number; height: number }>('grab', {
      region: units,
      hidden,
      zoom: plan.scale,
    });
    return {
      data: shot.data,
      width: shot.width,
      height: shot.height,
      region: r,
      scale: plan.scale,
      screen_region: { x: units.x, y: units.y, width: units.w, height: units.h },
      ...(hidden.length ? { blacked_out: hidden.length } : {}),
      notes: plan.notes,
    };
  }

  async snapshot(target: ResolvedTarget, _id: string, options: { includeScreenshot: boolean }): Promise<Snapshot> {
    const { rect, win } = await this.context.region(target);
    const hidden = options.includeScreenshot ? await this.context.host.hiddenIn(rect, win?.id) : [];
    const shot = options.includeScreenshot
      ? await this.context.host.call<{ data: string; width: number; height: number; scale: number }>('grab', {
          region: rect,
          hidden,
        })
      : null;
    const scale = shot?.scale ?? this.context.shots.get(target.key)?.scale ?? (await this.context.screenScale(rect));
    const width = shot?.width ?? Math.round(rect.w * scale);
    const height = shot?.height ?? Math.round(rect.h * scale);
    this.context.remember(target.key, { scale, width, height });
    const about = win
      ? { kind: 'window', window_id: win.id, pid: win.pid, title: win.title, bounds: win.bounds }
      : {
          kind: 'desktop',
          display_id: 'primary',
          windows: (await this.context.host.windows()).map((w) => ({ window_id: w.id, pid: w.pid, title: w.title })),
        };
    return {
      target: { ...about, native_backend: 'nutjs', elements: NO_ELEMENTS },
      elements: [],
      ...(shot ? { screenshot: { data: shot.data, mimeType: 'image/png', width, height } } : {}),
      screenshot_width: width,
      screenshot_height: height,
      scale,
      incomplete: NO_ELEMENTS,
    };
  }
}
