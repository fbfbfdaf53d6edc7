// What the page agent answers, as both sides read it: the page agent returns these shapes and the server
// (cdp/actions/type-text.ts, actions/aim.ts, actions/click.ts) imports them as types. Types only: nothing here runs, so the
// server importing this module brings no DOM code along, and the page agent importing it brings no Node code.
//
// A reply with several forms is a union tagged by `kind`, so each side tells them apart by one field.
import type { FieldReadBack, FieldState, WatchedEvent } from '../../contract/verdicts.js';

/** Why the agent would not act: the server turns the code into its typed refusal (cdp/actions/aim.ts, actions/type-text.ts). */
export type RefusedCode =
  | 'element_disabled'
  | 'element_readonly'
  | 'element_covered'
  | 'not_visible'
  | 'not_editable'
  | 'not_settable'
  | 'focus_failed'
  | 'caret_not_placed'
  | 'target_not_found'
  | 'value_rejected'
  | 'no_such_option'
  | 'invalid_arguments';
export interface Refused {
  refusal: RefusedCode;
  detail: string /** the element aimed at, when `detail` names another (what covers it) */;
  target?: string;
  /** element_covered: what covers it, by role and name, and its index in the latest snapshot (-1: not listed) */
  covering?: Covering;
}
export interface Covering {
  role: string;
  name: string;
  index: number;
}

/** What an armed watch saw. `fresh`: no watch exists here (the frame navigated since it was armed). */
export interface Watched {
  target: string;
  events: WatchedEvent[];
  fresh?: boolean;
  /**
   * While it was armed, something happened that can open a tab, navigate or start a download a moment
   * later (a link or area activated, a form submitted, the page about to unload): its result listens on.
   */
  leaving?: boolean;
  /** A download link's click whose default ran: the browser starts a download a moment later. */
  downloading?: boolean;
  /** A link's click or a form's submit whose default ran: this tab loads another document a moment later. */
  navigating?: boolean;
}

// ---------- type_text: one action's field, held by a handle ----------

/**
 * One type_text's field in the page: `prepareField` returns it, the action's next calls (preparedFieldNow,
 * readBack, rearmField, assignPreparedValue, sinkShown) pass it back. The page keeps a bounded map of them
 * (held.ts, MAX_HELD_FIELDS) and frees one when its action's last call has read it.
 */
export type FieldHandle = number;

/** A text field or editor, focused, its caret placed: what type_text inserts into. */
export interface TextFieldReady {
  kind: 'text';
  handle: FieldHandle;
  state: FieldState;
  singleLine: boolean;
  /**
   * The key that puts the caret at the end, when the page cannot: 'End' for a field without a selection
   * API, 'Ctrl+End' for an editor whose caret lives in its own model (an EditContext, a caret-sized
   * textarea); the field is read again after it.
   */
  pressEnd: false | 'End' | 'Ctrl+End';
  /**
   * How the text goes in: `insert_text`, one Input.insertText (a value); `lines`, a line at a time with Enter
   * between (a rich editor, whose model makes a newline a paragraph break); `paste`, through a code editor's
   * own paste path (pasteText), where none of its automatic edits fire.
   */
  delivery: 'insert_text' | 'lines' | 'paste';
  /** The code editor it is (code-editors.ts), by name: Ace, CodeMirror 5... */
  editor?: string;
  inputType: string;
  combobox: boolean;
  center: { x: number; y: number };
}
/** A field holding one value and no caret (date, color, range...): type_text sets its whole value. */
export interface ValueInputReady {
  kind: 'value_input';
  handle: FieldHandle;
  inputType: string;
  form: string;
  state: FieldState;
  describe: string;
}
/** A keyboard sink (a hidden input a widget collects keys with), focused, and the widget's text before the keys. */
export interface SinkReady {
  kind: 'sink';
  handle: FieldHandle;
  /** how it is hidden: zero-size, off-screen, clipped, transparent */
  hidden: string;
  describe: string;
  area: string;
}
/** No element given and nothing focused. */
export interface NothingFocused {
  kind: 'nothing_focused';
}
/** The field cannot take text; `inline`: a role=textbox element that is no field itself (a click makes one). */
export type FieldRefused = Refused & { kind: 'refused'; inline?: boolean };

export type FieldPrepared = TextFieldReady | ValueInputReady | SinkReady | NothingFocused | FieldRefused;

/**
 * A text field read right after delivery and again once the page settled, with the events its watch saw
 * (what the verdict reads). `held`: the page still holds the handle (no input was heard, so the action may
 * try key events next, and releases it when it does not); false once the page has let it go.
 */
export interface HeldReadBack extends FieldReadBack {
  held: boolean;
}

/**
 * rearmField: the held field watched afresh for key events, or where the focus went instead (the page moved
 * it after the insertion: keys now would go there, where the text may already have landed).
 */
export type FieldRearmed = { kind: 'watching' } | { kind: 'focus_moved'; focused: string };

/** pasteText: whether the code editor took the paste (cancelled its default once it inserted it); `gone`: not held here. */
export type Pasted = { kind: 'pasted'; taken: boolean } | { kind: 'gone' };

/** assignPreparedValue: the value set and read back, or why nothing was set (`stored`: what the field would keep). */
export type ValueAssigned =
  | (Refused & { kind: 'refused'; stored?: string })
  | { kind: 'assigned'; before: string; first: string; settled: string };

/** sinkShown: the widget's text before and after the keys and the events the sink heard; `gone`: it left the page. */
export type SinkShown =
  | { kind: 'gone'; watched: Watched }
  | { kind: 'shown'; before: string; after: string; area: string; watched: Watched };
