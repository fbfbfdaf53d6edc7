// The page agent's per-page state: everything the agent remembers in one world of one frame between the
// server's calls, in one typed object. It is made once, when the bundle is evaluated in that world
// (index.ts installs the agent once per world), and every part reads and writes it here rather than in
// variables of its own, so what the agent holds in a page is this one type. A new document (the frame
// navigated) is a new world, and so a new state.
import type { WatchedEvent } from '../../contract/verdicts.js';
import type { FieldHandle } from './replies.js';

/** A frame asked for, and the task after it (core.ts frameThenTask): `framed` once the frame ran (a later input needs the next one). */
export interface FrameAfter {
  settled: Promise<void>;
  framed: boolean;
}

/** What one watch hears: the events that reach its element, and whether something began to lead out of the page. */
export interface Watch {
  target: Element;
  events: WatchedEvent[];
  leaving?: boolean;
  /** A click on a download link (`a[download]`) reached the page: a download follows unless it was prevented. */
  downloadClick?: Event;
  /**
   * A click on a link, or a form's submit, whose default loads another document in this tab: a navigation
   * follows unless it was prevented (read after the page's handlers ran).
   */
  navigateEvent?: Event;
  /**
   * A held field's watch (fieldWatch): settles once the first frame after the field's latest `input` event
   * has run, and a task after it, so every frame callback, timer and microtask the page scheduled in
   * answer to the input has run (see frameThenTask). Unset until an input is heard.
   */
  afterInput?: FrameAfter;
}

/** One action's field: the element, the watch of its events, and for a keyboard sink the widget's text before the keys. */
export interface HeldField {
  target: Element;
  watch: Watch;
  sink?: { area: HTMLElement; before: string };
  /**
   * A code editor that formats what is pasted (Monaco's formatOnPaste): its document right after the paste,
   * before its format (which comes later) changed it. The read-back waits for the document to leave it.
   */
  formatsAfterPaste?: string;
}

/** What a drag moved, read at its start (actions/drag.page.ts): a list's order, a slider's value, or a box. */
export type ProbeStart =
  | { kind: 'list'; item: Element; list: Element; before: string[]; fromIndex: number; toIndex: number }
  | { kind: 'value'; element: Element; before: number; expected: number | null; tolerance: number }
  | { kind: 'box'; element: Element; x: number; y: number; wantDx: number; wantDy: number };

/** The drag watched now (actions/drag.page.ts): where it pressed and released, and what it moved. */
export interface DragRecord {
  source: Element | null;
  down: string | null;
  up: string | null;
  moves: number;
  fromX: number;
  fromY: number;
  toX: number;
  toY: number;
  probe: ProbeStart | null;
}

/**
 * Per tree (document or shadow root), the elements a stylesheet may give ::before/::after text (names.ts): a
 * selector list to match, or "any" when a sheet cannot be read (cross-origin) or a rule is too complex to tell.
 * Reading a pseudo-element's computed style costs a style resolution each time; matching a selector is
 * cheap, so on a page whose sheets generate no text no pseudo-element is read at all.
 */
export type PseudoMatcher = { before: string; after: string } | 'any';

/** The agent cursor's overlay (cursor.ts): its host element, the arrow, and the pending hide. */
export interface CursorOverlay {
  host: HTMLElement;
  arrow: HTMLElement;
  root: ShadowRoot;
  hideTimer?: number;
}

export interface PageState {
  // core.ts: the latest snapshot and what it found
  /** Closed shadow roots the server handed over (registerClosedRoot), by their host. */
  closedRoots: WeakMap<Element, ShadowRoot>;
  /** The latest snapshot: its id and its elements, by index (what element tokens point at). */
  latest: { id: string; elements: Element[] };
  /** The latest probe (verify_state's read): a read that is no observation, so `latest` and its tokens stay. */
  probe: { id: string; elements: Element[] };
  /** The dialogs open at the latest snapshot (or re-observation): a dialog not among them opened since. */
  dialogsOpen: Set<Element>;
  /** Hosts already offered to the server as closed-root candidates. */
  candidatesSeen: WeakSet<Element>;
  /** Fields masked for the capture in progress (maskSecretFields), with the inline value they had (restored after it). */
  maskedForCapture: Array<{ el: HTMLElement; before: string; priority: string }>;
  // core.ts: event watches
  /** The watch armed last by watchEvents, watchPoint or pointFor: what a click's, a key's or a hover's `watched` reads. */
  watch: Watch | null;
  /** The watches of the fields type_text actions hold: each hears its own field's events. */
  fieldWatches: Set<Watch>;
  /** The event types a listener is on for, per element (one listener per element and type). */
  armedOn: WeakMap<Element, Set<string>>;
  /** The event types a window listener is on for. */
  armedOnWindow: Set<string>;
  /** Whether the listeners for leaving the page (beforeunload, a navigation) are on. */
  leavingHeard: boolean;
  // held.ts: the fields type_text actions hold, by handle
  heldFields: Map<FieldHandle, HeldField>;
  /** The last handle given out. */
  lastHandle: number;
  // actions/set-value.page.ts: trusted clicks an option received (comboboxes)
  optionClicks: number;
  // actions/hover.page.ts: what was shown before the hover
  hoverBaseline: Set<Element> | null;
  // actions/scroll.page.ts: the scroll container the last scroll aimed at
  scrollWatched: Element | null;
  // actions/drag.page.ts: the drag watched now, and whether the one set of drag listeners is on
  drag: DragRecord | null;
  dragListening: boolean;
  // cursor.ts: the agent cursor overlay, once drawn
  cursor: CursorOverlay | null;
  // names.ts: the stylesheets' generated-text matchers, forgotten at each snapshot
  pseudoMatchers: Map<Node, PseudoMatcher>;
}

function newPageState(): PageState {
  return {
    closedRoots: new WeakMap(),
    latest: { id: '', elements: [] },
    probe: { id: '', elements: [] },
    dialogsOpen: new Set(),
    candidatesSeen: new WeakSet(),
    maskedForCapture: [],
    watch: null,
    fieldWatches: new Set(),
    armedOn: new WeakMap(),
    armedOnWindow: new Set(),
    leavingHeard: false,
    heldFields: new Map(),
    lastHandle: 0,
    optionClicks: 0,
    hoverBaseline: null,
    scrollWatched: null,
    drag: null,
    dragListening: false,
    cursor: null,
    pseudoMatchers: new Map(),
  };
}

/** This world's state: made once, when the agent's bundle is evaluated in it. */
export const pageState: PageState = newPageState();
