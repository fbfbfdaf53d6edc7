// The native route (Linux): AT-SPI2 for the tree, writes and read-back; XTest for keys, pointer
// and screen capture; X11 queries for windows. Implements the same Driver as the CDP route: the snapshot here,
// each action's half in actions/<action>.ts, handed the host.
import type { ActionMethods, ResolvedTarget, Snapshot, SnapshotElement } from '../../contract/driver.js';
import { defineActionMethods, loadHalves } from '../../contract/action-halves.js';
import type { NativeRoute } from '../../contract/native-host.js';
import { Refusal } from '../../contract/refusal.js';
import type { HeldObservation, Reobservation } from '../../contract/changes.js';
import { objectKey, type AccRef } from './atspi/model.js';
import { LinuxHost, type LinuxHostOptions } from './host.js';
import { profileFor } from './toolkits/index.js';
import { capture, screenSize } from './transport/input.js';
import { snapshotWindow, windowElements } from './atspi/tree.js';
import { onSurface, routes } from './transport/wayland.js';
import { planZoom, type ZoomImage, type ZoomPlan, type ZoomRequest } from '../../contract/zoom.js';
import { linuxDeskProbe } from './transport/desk.js';
import { deskAround } from '../shared/background.js';

/** Why a Wayland window's screenshot cannot be taken here, or null when it can. */
function waylandShotMissing(win: { placed: boolean }): string | null {
  const r = routes();
  if (!r.capture) return `not taken: ${r.missing || 'this compositor offers no screen capture'}`;
  if (!win.placed) return 'not taken: the compositor does not say where this Wayland window is on the screen';
  return null;
}

/** Each action's half on this route, from actions/<kebab-name>.ts by the action's name. */
const HALVES = await loadHalves<LinuxHost>('the Linux native route', (file) => import(`./actions/${file}.js`));

// The action methods (one per action of the table, ActionMethods) are made in the constructor from HALVES.
export interface NativeDriver extends ActionMethods {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor defines every member the interface declares.
export class NativeDriver implements NativeRoute {
  readonly host: LinuxHost;

  constructor(options: LinuxHostOptions) {
    this.host = new LinuxHost(options, profileFor);
    // Every action: the desktop's focus, stacking and pointer read before and after, what a background
    // delivery moved put back, and the result's delivery saying so (native/shared/background.ts).
    defineActionMethods(this, HALVES, this.host, deskAround(linuxDeskProbe));
  }

  async snapshot(
    target: ResolvedTarget,
    _snapshotId: string,
    options: { includeScreenshot: boolean; probe?: boolean },
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

  /**
   * zoom: a region of a window's client area (its screenshot's pixels) or of the screen, through the same
   * capture as screenshots (transport/input.ts capture), with windows agents may not see blacked out.
   */
  async zoom(target: ResolvedTarget, request: ZoomRequest): Promise<ZoomImage> {
    if (target.kind === 'tab' || target.element)
      throw new Refusal(
        'invalid_arguments',
        'target: zoom on the native route takes a window ({"kind": "window", "pid", "window_id"}) or the desktop',
      );
    const screen = await screenSize();
    if (target.kind === 'desktop') {
      const plan = planZoom(request, screen, 'the screen');
      return this.zoomed(plan, { x: 0, y: 0 }, undefined, (rect, hidden) => capture(rect, hidden, plan.scale));
    }
    const win = await this.host.targetWindow(target);
    const noShot = win.surface === 'wayland' ? waylandShotMissing(win) : null;
    if (noShot) throw new Refusal('unavailable', `zoom on window ${win.id} ("${win.title}"): ${noShot}`);
    const plan = planZoom(request, { width: win.bounds.w, height: win.bounds.h }, `window ${win.id}'s client area`);
    // Only what is on the screen can be captured: a window partly off it is zoomed on its visible part.
    const r = plan.region;
    const left = Math.max(win.bounds.x + r.x, 0);
    const top = Math.max(win.bounds.y + r.y, 0);
    const right = Math.min(win.bounds.x + r.x + r.width, screen.width);
    const bottom = Math.min(win.bounds.y + r.y + r.height, screen.height);
    if (right <= left || bottom <= top)
      throw new Refusal(
        'invalid_arguments',
        `region: that part of window ${win.id} is off the screen (the window is at (${win.bounds.x}, ${win.bounds.y}) ${win.bounds.w}x${win.bounds.h}, the screen ${screen.width}x${screen.height}); move the window (set_window_frame) or zoom on a visible part`,
      );
    if (right - left !== r.width || bottom - top !== r.height) {
      plan.region = { x: left - win.bounds.x, y: top - win.bounds.y, width: right - left, height: bottom - top };
      plan.notes.push(
        `region clamped to the part of the window on the screen: (${plan.region.x}, ${plan.region.y}) ${plan.region.width}x${plan.region.height}`,
      );
    }
    return this.zoomed(plan, { x: win.bounds.x, y: win.bounds.y }, win.id, (rect, hidden) =>
      onSurface(win, () => capture(rect, hidden, plan.scale)),
    );
  }

  /** A planned zoom taken: its screen rectangle, the policy's hidden windows there (except `own`), the capture. */
  private async zoomed(
    plan: ZoomPlan,
    origin: { x: number; y: number },
    own: number | undefined,
    take: (
      rect: { x: number; y: number; w: number; h: number },
      hidden: Array<{ x: number; y: number; w: number; h: number }>,
    ) => Promise<{ data: string; width: number; height: number }>,
  ): Promise<ZoomImage> {
    const r = plan.region;
    const rect = { x: origin.x + r.x, y: origin.y + r.y, w: r.width, h: r.height };
    // Windows agents may not see are blacked out where they overlap the region (on top or not: conservative).
    const hidden = await this.host.hiddenIn(rect, own);
    const shot = await take(rect, hidden);
    return {
      ...shot,
      region: r,
      scale: plan.scale,
      screen_region: { x: rect.x, y: rect.y, width: rect.w, height: rect.h },
      ...(hidden.length ? { blacked_out: hidden.length } : {}),
      notes: plan.notes,
    };
  }

  /** An element of a read is a token's when it is the same accessible object (its bus and path). */
  sameElement(token: unknown, read: unknown): boolean {
    return objectKey(token as AccRef) === objectKey(read as AccRef);
  }

  /**
   * The window's elements after an action (its `changes`): a fresh walk of its tree, each element matched to
   * the held observation's by its AT-SPI object (bus name and path), which an element keeps while it lives.
   */
  async reobserve(target: ResolvedTarget, held: HeldObservation): Promise<Reobservation | null> {
    if (target.kind !== 'window') return null;
    const snap = await this.snapshot(target, held.snapshotId, { includeScreenshot: false });
    const heldOf = new Map<string, number>();
    held.elements.forEach((e, index) => heldOf.set(objectKey(e.ref as AccRef), index));
    const elements = snap.elements.map((e) => {
      const index = heldOf.get(objectKey(e.ref as AccRef));
      return index === undefined ? e : { ...e, held: index };
    });
    return { elements, ...(snap.incomplete ? { incomplete: snap.incomplete } : {}) };
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
}
