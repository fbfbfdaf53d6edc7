// The native route (Linux): AT-SPI2 for the tree, writes and read-back; XTest for keys, pointer
// and screen capture; X11 queries for windows. Implements the same Driver as the CDP route.
import type {
  ActionResult,
  ClickOptions,
  DragOptions,
  Evidence,
  ResolvedTarget,
  ScrollOptions,
  Snapshot,
  SnapshotElement,
} from '../../contract/driver.js';
import type { ActionArgs } from '../../contract/actions.js';
import { Stopwatch } from '../../contract/driver.js';
import type { NativeRoute } from '../../contract/native-host.js';
import { Refusal } from '../../contract/refusal.js';
import { IFACE } from './atspi/model.js';
import { aim, deliver, focusedIn, nativeResult, requireKeyboardFocus, webEscalation, webLike } from './actions/aim.js';
import { LinuxHost, type LinuxHostOptions } from './host.js';
import { capture, pressKeys, screenSize } from './transport/input.js';
import { clickNative, dragNative, hoverNative, scrollNative } from './actions/pointer.js';
import { has, STATE } from './atspi/roles.js';
import { SettleLog, settleBeforeKeys, withSettle } from './transport/settle.js';
import { snapshotWindow, windowElements } from './atspi/tree.js';
import { onSurface, routes } from './transport/wayland.js';

/** Why a Wayland window's screenshot cannot be taken here, or null when it can. */
function waylandShotMissing(win: { placed: boolean }): string | null {
  const r = routes();
  if (!r.capture) return `not taken: ${r.missing || 'this compositor offers no screen capture'}`;
  if (!win.placed) return 'not taken: the compositor does not say where this Wayland window is on the screen';
  return null;
}
import { setValueNative, typeNative } from './actions/typing.js';

const modeOf = (t: ResolvedTarget) => t.deliveryMode;

export class NativeDriver implements NativeRoute {
  readonly host: LinuxHost;

  constructor(options: LinuxHostOptions) {
    this.host = new LinuxHost(options);
  }

  async snapshot(
    target: ResolvedTarget,
    _snapshotId: string,
    options: { includeScreenshot: boolean },
  ): Promise<Snapshot> {
    const atspi = await this.host.atspi();
    if (target.kind === 'desktop') return this.desktop(options.includeScreenshot);
    if (target.kind !== 'window')
      throw new Refusal('invalid_arguments', 'the native route snapshots a window or the desktop, not a tab');
    const win = await this.host.targetWindow(target);
    // A Wayland window the compositor does not place, or one with no capture route, has no screenshot to
    // take (a region at the wrong place would show another window): its tree is still read, and it says so.
    const noShot = win.surface === 'wayland' ? waylandShotMissing(win) : null;
    const shoot = options.includeScreenshot && !noShot;
    // Windows agents may not see are blanked where they overlap this one (on top of it or not: conservative).
    const hidden = shoot ? await this.host.hiddenIn(win.bounds, win.id) : [];
    const snap = await onSurface(win, () => snapshotWindow(atspi, win, shoot, hidden));
    const { tree, ...rest } = snap;
    if (options.includeScreenshot && noShot) rest.target = { ...rest.target, screenshot: noShot };
    if (win.browserLike && !tree.hasWebDocument) {
      rest.target = {
        ...rest.target,
        web_content:
          'this browser window exposes no renderer accessibility tree: its page is not listed and actions on it are never confirmed on the native route',
      };
    }
    return rest;
  }

  /** The whole screen: every window's tree, frames in screen pixels. */
  private async desktop(includeScreenshot: boolean): Promise<Snapshot> {
    const atspi = await this.host.atspi();
    const { windows, x11Missing } = await this.host.windowsAndGaps();
    const elements: SnapshotElement[] = [];
    // What is left out or cut, each said: a failed or bounded walk, an unplaced Wayland window, a missing X server.
    const gaps: string[] = x11Missing ? [x11Missing] : [];
    for (const win of windows) {
      // A Wayland window the compositor does not place has no screen frames: its elements are left out, and said so.
      if (!win.placed) {
        gaps.push(`window ${win.id} ("${win.title}") is a Wayland window with no known place on the screen`);
        continue;
      }
      const tree = await windowElements(atspi, win, { x: 0, y: 0 }, elements.length).catch((e: Error) => {
        gaps.push(`window ${win.id} ("${win.title}"): ${e.message}`);
        return null;
      });
      if (tree) elements.push(...tree.elements);
      if (tree?.incomplete) gaps.push(`window ${win.id} ("${win.title}"): ${tree.incomplete}`);
    }
    const { width, height } = await screenSize();
    const screen = { x: 0, y: 0, w: width, h: height };
    const hidden = includeScreenshot ? await this.host.hiddenIn(screen) : [];
    const shot = includeScreenshot ? await capture(screen, hidden) : null;
    return {
      target: {
        kind: 'desktop',
        display_id: 'primary',
        windows: windows.map((w) => ({ window_id: w.id, pid: w.pid, title: w.title })),
        // Said whether or not any window is left out now, so that it tells nothing of what runs.
        ...(this.host.filtersApps
          ? {
              policy:
                "windows of apps the operator's policy keeps agents off (terminal emulators unless allowed, the Control UI, apps outside allowed_apps or in blocked_apps) are not listed here, and are blacked out in the screenshot",
            }
          : {}),
      },
      elements,
      ...(shot
        ? { screenshot: { data: shot.data, mimeType: 'image/png', width: shot.width, height: shot.height } }
        : {}),
      screenshot_width: width,
      screenshot_height: height,
      scale: 1,
      ...(gaps.length
        ? {
            incomplete: `not every element is listed: ${gaps.join('; ')}; get_window_state of a window target lists its own`,
          }
        : {}),
    };
  }

  click(target: ResolvedTarget, options: ClickOptions): Promise<ActionResult> {
    return clickNative(this.host, target, options, modeOf(target));
  }

  typeText(target: ResolvedTarget, { text, ...options }: ActionArgs['typeText']): Promise<ActionResult> {
    return typeNative(this.host, target, text, { ...options, deliveryMode: target.deliveryMode });
  }

  setValue(target: ResolvedTarget, { value }: ActionArgs['setValue']): Promise<ActionResult> {
    if (Array.isArray(value))
      throw new Refusal(
        'invalid_arguments',
        'value: a list chooses several options of a multi-select list on a browser tab; a native window takes one value (a string)',
      );
    return setValueNative(this.host, target, value, modeOf(target));
  }

  async pressKey(target: ResolvedTarget, { key, modifiers }: ActionArgs['pressKey']): Promise<ActionResult> {
    const sw = new Stopwatch();
    const a = await aim(this.host, target);
    const mode = modeOf(target);
    await requireKeyboardFocus(a.win, mode);
    return deliver(mode, a.win, async () => {
      const log = new SettleLog();
      if (a.element && !has(a.states, STATE.focused)) {
        const ok =
          a.element.interfaces.includes(IFACE.component) && (await a.atspi.grabFocus(a.element).catch(() => false));
        if (!ok) throw new Refusal('focus_failed', `"${a.element.name}" would not take focus, so no key was pressed`);
      }
      const focused = a.element
        ? {
            ref: a.element,
            web: a.element.web,
            role: a.element.role,
            name: a.element.name,
            text: a.element.interfaces.includes(IFACE.text),
          }
        : await focusedIn(a.atspi, a.win).then(
            (f) =>
              f && {
                ref: f.item.ref,
                web: f.web,
                role: f.item.role,
                name: f.item.name,
                text: f.item.interfaces.includes(IFACE.text),
              },
          );
      const before = focused?.text ? await a.atspi.text(focused.ref).catch(() => null) : null;
      sw.lap('resolve');
      await settleBeforeKeys(a.win.id, false, log); // deliver's focus change (foreground) reached the app
      await pressKeys([...modifiers, key], { window: a.win.id, log });
      sw.lap('deliver');
      await new Promise((r) => setTimeout(r, 30));
      await this.host.stillThere(a.win.id).catch((e) => {
        throw e;
      });
      const after = focused?.text ? await a.atspi.text(focused.ref).catch(() => null) : null;
      sw.lap('verify');
      const evidence: Evidence[] = [
        {
          kind: 'key_event',
          detail: `${a.win.surface === 'wayland' ? 'virtual keyboard (wtype)' : 'XTest'} ${[...modifiers, key].join('+')} to window ${a.win.id} with focus on ${focused ? `"${focused.name}"` : 'an element AT-SPI does not report'}`,
        },
      ];
      if (before !== null && after !== null)
        evidence.push({
          kind: 'text',
          observed:
            before === after
              ? "the focused element's text did not change"
              : `text changed from ${JSON.stringify(before.slice(-60))} to ${JSON.stringify(after.slice(-60))}`,
        });
      const escalation = webLike(a.win, focused)
        ? webEscalation(a.win, true, mode)
        : {
            target: 'verify' as const,
            reason: 'a key press has no effect AT-SPI can prove in general; call get_window_state to see what it did',
          };
      return withSettle(
        nativeResult('unverifiable', 'synthetic_events', sw, evidence, mode, {
          target: focused?.name ?? `window ${a.win.id}`,
          escalation,
        }),
        log,
      );
    });
  }

  scroll(target: ResolvedTarget, options: ScrollOptions): Promise<ActionResult> {
    return scrollNative(this.host, target, options, modeOf(target));
  }

  drag(target: ResolvedTarget, options: DragOptions): Promise<ActionResult> {
    return dragNative(this.host, target, options, modeOf(target));
  }

  hover(target: ResolvedTarget): Promise<ActionResult> {
    return hoverNative(this.host, target, modeOf(target));
  }
}
