// The one interface both delivery routes implement. Tools, batches and sessions are written against it;
// a backend knows nothing of MCP.

export type Effect = 'confirmed' | 'partial' | 'mismatch' | 'no_effect' | 'unverifiable';
export type Route = 'dom' | 'accessibility' | 'synthetic_events' | 'pixel';

export interface Evidence {
  kind: string;
  expected?: unknown;
  observed?: unknown;
  detail?: string;
}

export interface ActionResult {
  effect: Effect;
  route: Route;
  delivery: { mode: 'background' | 'foreground' | 'not_applicable'; delivered_count?: number };
  evidence: Evidence[];
  escalation?: { target: 'page' | 'pixel' | 'foreground' | 'chunk' | 'verify'; reason: string };
  timings_ms: { resolve: number; deliver: number; verify: number };
  /** Which delivery method produced the effect (type_text: insert_text, key_events, ...). */
  method?: string;
  /** What the target holds now, when that says more than the evidence (e.g. after a mismatch). */
  observed?: unknown;
  target?: string;
  /**
   * Why the target's text is masked in this result (a password field, a one-time code or card number
   * field, an AT-SPI password text): its expected/observed show one • per character. The verdict was
   * reached on the full text before masking (routing/secrets.ts).
   */
  masked?: string;
  /** What else the action caused: a tab opened, a download, a dialog now blocking the page. */
  side_effects?: Array<
    | { kind: 'tab_opened'; tab_id: string; url: string }
    | { kind: 'download'; file: string; state: string; size_bytes?: number; code?: string; detail?: string }
    | { kind: 'dialog'; type: string; message: string }
  >;
}

/** Where an action lands, after the tool layer resolved tokens and targets. */
export interface ResolvedTarget {
  kind: 'tab' | 'window' | 'desktop';
  /** CDP target id for tabs; `${pid}:${windowId}` for windows; the display for the desktop. */
  key: string;
  /** The element from a snapshot, when the call named one. */
  element?: { snapshotId: string; index: number; ref: unknown };
  /** Screenshot pixels of the target's last snapshot (the px form). */
  point?: { x: number; y: number };
  /** The session the action is for (its sessionKey): whose download quota what it causes counts against. */
  owner?: string;
  /** How the session's agent cursor moves to the action's point (absent: no cursor). */
  cursor?: CursorSettings;
}

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
  /** Why the element's text is a secret (a password, one-time code or card field); never leaves the server. */
  secret?: string;
}

export interface Snapshot {
  target: Record<string, unknown>;
  elements: SnapshotElement[];
  screenshot?: { data: string; mimeType: string; width: number; height: number };
  screenshot_width: number;
  screenshot_height: number;
  /** Screenshot pixels per CSS/logical pixel, to map the px form back. */
  scale: number;
  /** Why `elements` are not all the target shows (a read failed, a bound cut it, a window could not be placed): then never `elements_complete`. */
  incomplete?: string;
}

export interface ClickOptions {
  button: 'left' | 'right' | 'middle';
  count: 1 | 2 | 3;
  modifiers: string[];
}
export interface TypeOptions {
  delayMs: number;
  deliveryMode: 'background' | 'foreground';
}
export interface ScrollOptions {
  direction: 'up' | 'down' | 'left' | 'right';
  amount: number;
  by: 'line' | 'page';
}
export interface DragOptions {
  from: { x: number; y: number };
  to: { x: number; y: number };
  durationMs: number;
  steps: number;
  button: 'left' | 'right' | 'middle';
}

export interface Driver {
  snapshot(target: ResolvedTarget, snapshotId: string, options: { includeScreenshot: boolean }): Promise<Snapshot>;
  click(target: ResolvedTarget, options: ClickOptions): Promise<ActionResult>;
  typeText(target: ResolvedTarget, text: string, options: TypeOptions): Promise<ActionResult>;
  /** A list chooses several options of a multi-select list (the whole selection becomes the list). */
  setValue(target: ResolvedTarget, value: string | string[]): Promise<ActionResult>;
  pressKey(target: ResolvedTarget, key: string, modifiers: string[]): Promise<ActionResult>;
  scroll(target: ResolvedTarget, options: ScrollOptions): Promise<ActionResult>;
  drag(target: ResolvedTarget, options: DragOptions): Promise<ActionResult>;
  /** Moves the pointer onto the target (a hover menu, a tooltip); nothing is pressed. */
  hover(target: ResolvedTarget): Promise<ActionResult>;
  /** Runs one action holding whatever orders it against other processes driving the same target (optional). */
  exclusive?<T>(target: ResolvedTarget, work: () => Promise<T>): Promise<T>;
}

/** Measures the three phases every action reports. */
export class Stopwatch {
  private last = performance.now();
  readonly timings = { resolve: 0, deliver: 0, verify: 0 };
  lap(phase: keyof Stopwatch['timings']): void {
    const now = performance.now();
    this.timings[phase] += Math.round((now - this.last) * 100) / 100;
    this.last = now;
  }
}
