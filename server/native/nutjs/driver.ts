// The portable native backend (--native-backend nutjs; the default on macOS and Windows): pixels and keys
// through @nut-tree-fork/nut-js, in a helper process (process.ts). It sees no elements, so it proves nothing:
// every action is `unverifiable` with an escalation saying how to check. Each action's half is in actions/;
// this class hands the call on.
import type { ActionArgs } from '../../contract/actions.js';
import type { ActionResult, ResolvedTarget, Snapshot } from '../../contract/driver.js';
import type { NativeRoute } from '../../contract/native-host.js';
import { click } from './actions/click.js';
import { drag } from './actions/drag.js';
import { hover } from './actions/hover.js';
import { pressKey } from './actions/press-key.js';
import { scroll } from './actions/scroll.js';
import { setValue } from './actions/set-value.js';
import { typeText } from './actions/type-text.js';
import { NO_ELEMENTS, NutjsContext } from './context.js';
import { NutjsHost, type NutjsOptions } from './host.js';

export class NutjsDriver implements NativeRoute {
  readonly backend = 'nutjs';
  readonly host: NutjsHost;
  /** What the actions share: the screen mapping of each target's last screenshot, policy checks, results. */
  private readonly context: NutjsContext;

  constructor(options: NutjsOptions) {
    this.host = new NutjsHost(options);
    this.context = new NutjsContext(this.host);
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

  click(target: ResolvedTarget, args: ActionArgs['click']): Promise<ActionResult> {
    return click(this.context, target, args);
  }

  typeText(target: ResolvedTarget, args: ActionArgs['typeText']): Promise<ActionResult> {
    return typeText(this.context, target, args);
  }

  setValue(target: ResolvedTarget, args: ActionArgs['setValue']): Promise<ActionResult> {
    return setValue(this.context, target, args);
  }

  pressKey(target: ResolvedTarget, args: ActionArgs['pressKey']): Promise<ActionResult> {
    return pressKey(this.context, target, args);
  }

  scroll(target: ResolvedTarget, args: ActionArgs['scroll']): Promise<ActionResult> {
    return scroll(this.context, target, args);
  }

  drag(target: ResolvedTarget, args: ActionArgs['drag']): Promise<ActionResult> {
    return drag(this.context, target, args);
  }

  hover(target: ResolvedTarget, args: ActionArgs['hover']): Promise<ActionResult> {
    return hover(this.context, target, args);
  }
}
