// The one interface both delivery routes implement. Tools, batches and sessions are written against it;
// a backend knows nothing of MCP.

// The shapes a result carries are declared once, zod first, in wire.ts.
export type { ActionCaused, ActionResult, Effect, Evidence, Route } from './wire.js';
import type { ActionResult, Evidence } from './wire.js';
import type { ActionArgs, ActionName } from './actions.js';
import type { ZoomImage, ZoomRequest } from './zoom.js';

export type { ClickOptions, DragOptions, ScrollOptions, TypeOptions } from './actions.js';

/** An element a call named by its token, as the router resolved it (once per call). */
export interface TargetElement {
  snapshotId: string;
  index: number;
  /** The backend's own handle to find the element again (cdp: TabElementRef; native: NativeRef). */
  ref: unknown;
}

/**
 * The tab the router found for a call, handed on so no one looks it up by id again. Opaque here (this
 * contract sits below the backends): the CDP route's Tab, which that route checks it is.
 */
export interface TabHandle {
  readonly id: string;
}

interface TargetBase {
  /** What queues and snapshots know the target by: the tab id, `${pid}:${windowId}`, or the display. */
  key: string;
  /** The element from a snapshot, when the call named one. */
  element?: TargetElement;
  /** Screenshot pixels of the target's last snapshot (the px form). */
  point?: { x: number; y: number };
  /** The call's delivery_mode, carried here only: each route honours it (raises the tab or window) or refuses. */
  deliveryMode: 'background' | 'foreground';
  /** The session the action is for (its sessionKey): whose download quota what it causes counts against. */
  owner?: string;
  /** How the session's agent cursor moves to the action's point (absent: no cursor). */
  cursor?: CursorSettings;
  /**
   * The snapshot id of the target's held observation, which the result's `changes` compare with (absent: none
   * held). An action whose last read of the target can re-read it in the same round trip does (a tab's type_text).
   */
  observed?: string;
}

/** A browser tab, with the tab itself as the router found it. */
export interface TabTarget extends TargetBase {
  kind: 'tab';
  tab: TabHandle;
}

/**
 * The window the router's lookup found for a call (when it looked one up: a target naming only a pid or only a
 * window id), handed on like a tab so the native route does not look it up again. Opaque here: the native
 * host's own record of it, as its windows() listed it.
 */
export interface WindowHandle {
  readonly id: number;
}

/** A native window, by its process and X11/Wayland window id, with the window itself when the router found it. */
export interface WindowTarget extends TargetBase {
  kind: 'window';
  pid: number | undefined;
  windowId: number;
  window?: WindowHandle;
}

/** The whole desktop (a point on it, or the focused window's keys). */
export interface DesktopTarget extends TargetBase {
  kind: 'desktop';
}

/** Where an action lands, resolved once per call by the router and handed to the driver as it is. */
export type ResolvedTarget = TabTarget | WindowTarget | DesktopTarget;

/** Effective agent-cursor motion, as the session layer computes it (plain data). */
export interface CursorSettings {
  style: string;
  arc_size: number;
  arc_flow: number;
  start_handle: number;
  end_handle: number;
  spring: number;
  dwell_after_click_ms: number;
  idle_hide_ms: number;
  reduced_motion: boolean;
  effects: { trail: boolean; click_ripple: boolean; follow_through: boolean };
  durationFor(distance: number): number;
}

export interface SnapshotElement {
  element_index: number;
  role: string;
  label: string;
  /** Where the label came from when it is not the accessible name: guessed from an icon, or a swatch's colour. */
  name_source?: 'icon_guess' | 'colour';
  value?: string;
  enabled: boolean;
  focused: boolean;
  in_web_content: boolean;
  frame: { x: number; y: number; w: number; h: number };
  parent_index: number | null;
  /** Backend-private handle to find the element again; never leaves the server. */
  ref: unknown;
  /** Selected (a list item, a tab): native AT-SPI SELECTED (set only when true), a tab's probe (aria-selected, an option's own); only verify_state reads it. */
  selected?: boolean;
  /** Why the element's text is a secret (a password, one-time code or card field); never leaves the server. */
  secret?: string;
}

/** A block of the page's own text (a tab's), placed among the elements where it stands. */
export interface SnapshotText {
  kind: 'heading' | 'text' | 'row' | 'status' | 'alert';
  /** Whitespace collapsed; a table row's cells joined by " | ". */
  text: string;
  /** The element it stands before in reading order (the element count: after the last). */
  before_index: number;
  /** The listed element it is inside (null: none). */
  parent_index: number | null;
}

export interface Snapshot {
  target: Record<string, unknown>;
  elements: SnapshotElement[];
  /** The page's text in reading order, without what the elements' names already say (tabs only). */
  text?: SnapshotText[];
  /** Why `text` is not all of the page's text (a frame's walk hit its bound). */
  text_incomplete?: string;
  screenshot?: { data: string; mimeType: string; width: number; height: number };
  screenshot_width: number;
  screenshot_height: number;
  /** Screenshot pixels per CSS/logical pixel, to map the px form back. */
  scale: number;
  /** Why `elements` are not all the target shows (a read failed, a bound cut it, a window could not be placed): then never `elements_complete`. */
  incomplete?: string;
}

// What a route reads again after an action, for its `changes` (compared in changes.ts).
/** An element of a re-observation: `held` is its index in the held observation when it is one of its elements. */
export type Reobserved = SnapshotElement & { held?: number };

/** What a route read of its target after an action, matched against the observation held. */
export interface Reobservation {
  /** The target's elements now, in their order; `parent_index` points into this list. */
  elements: Reobserved[];
  text?: SnapshotText[];
  /** Why `elements` are not all the target shows now (its walk was cut or a read failed). */
  incomplete?: string;
  /** Dialogs that opened since, when they are containers rather than listed elements (a page's role=dialog). */
  dialogs?: Array<{ role: string; name: string }>;
}

/** The observation a target's actions are compared against. */
export interface HeldObservation {
  snapshotId: string;
  elements: SnapshotElement[];
  text?: SnapshotText[];
  /** Screenshot pixels per CSS/logical pixel of the observation (its elements' frames are in them). */
  scale?: number;
  /** Indices of held elements that went away since (an earlier action's `removed`). */
  gone: ReadonlySet<number>;
}

/** Each action of the table (actions.ts) as a method: its target, then the one argument the table gives it. */
export type ActionMethods = {
  [K in ActionName]: (target: ResolvedTarget, args: ActionArgs[K]) => Promise<ActionResult>;
};

/** A delivery route: the table's actions, a snapshot, and optionally a lock against other processes. */
export interface Driver extends ActionMethods {
  /**
   * `probe`: a read that is no observation (verify_state): no token is made of it and the target's latest
   * observation's tokens stay good.
   */
  snapshot(
    target: ResolvedTarget,
    snapshotId: string,
    options: { includeScreenshot: boolean; probe?: boolean },
  ): Promise<Snapshot>;
  /** Whether an element of a probe is the one a token's element ref names (each route knows its refs). */
  sameElement?(token: unknown, read: unknown): boolean;
  /** An image of a region of the target at its full resolution times a scale (zoom), taken where its screenshots are. */
  zoom(target: ResolvedTarget, request: ZoomRequest): Promise<ZoomImage>;
  /**
   * The target's elements after an action, each matched to the held observation's element it is (an
   * action's `changes`, contract/changes.ts); null when nothing of it can be matched (a tab's new document).
   * A route without it gives its actions no `changes`.
   */
  reobserve?(target: ResolvedTarget, held: HeldObservation): Promise<Reobservation | null>;
  /** Runs one action holding whatever orders it against other processes driving the same target (optional). */
  exclusive?(target: ResolvedTarget, work: () => Promise<ActionResult>): Promise<ActionResult>;
}

/** What an action's time went to around its three phases (see ActionResult.timings_ms). */
export type AroundPhase = 'queue' | 'lock' | 'side_effects' | 'changes';

/**
 * `r` with the time one part around the action took (added to what it says already), in tenths of a ms.
 * Shown only from 1 ms: below that the part did not hold the action up, and every byte of a result is read
 * by the model on every turn.
 */
export function withTiming(r: ActionResult, phase: AroundPhase, ms: number): ActionResult {
  const sum = Math.round(((r.timings_ms[phase] ?? 0) + ms) * 10) / 10;
  if (sum < 1) return r;
  return { ...r, timings_ms: { ...r.timings_ms, [phase]: sum } };
}

/** Measures the three phases every action reports. */
export class Stopwatch {
  private last = performance.now();
  readonly timings = { resolve: 0, deliver: 0, verify: 0 };
  lap(phase: keyof Stopwatch['timings']): void {
    const now = performance.now();
    this.timings[phase] = Math.round((this.timings[phase] + now - this.last) * 10) / 10; // tenths: enough to read
    this.last = now;
  }
}

/**
 * A window tool's result (bring_to_front, set_window_frame, set_window_state), the same on every route:
 * what was asked of the window system and what it read back. Always foreground: a window moves for everyone.
 */
export function windowToolResult(
  effect: ActionResult['effect'],
  sw: Stopwatch,
  on: { route: ActionResult['route']; target: string },
  method: string,
  evidence: Evidence[],
  extra: Partial<ActionResult> = {},
): ActionResult {
  sw.lap('verify');
  return {
    effect,
    route: on.route,
    delivery: { mode: 'foreground' },
    evidence,
    timings_ms: sw.timings,
    method,
    target: on.target,
    ...extra,
  };
}
