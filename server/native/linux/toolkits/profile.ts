// What a toolkit profile is: the hooks the AT-SPI model and the actions call, each toolkit's file (gtk3.ts,
// gtk4.ts, qt.ts, libreoffice.ts, firefox.ts; atk.ts for any other) answering them its own way. A hook is
// asked, never the toolkit's name: a quirk is the body of the hook it concerns.
import type { ActionResult, Evidence, Stopwatch } from '../../../contract/driver.js';
import type { Refusal } from '../../../contract/refusal.js';
import type { Aim } from '../actions/aim.js';
import type { NativeTyping } from '../actions/element.js';
import type { ModelHooks } from '../atspi/model.js';
import type { NativeRef } from '../atspi/tree.js';

/** set_value on a combo box that offers no Selection: each toolkit that has one sets it its own way. */
export interface ComboSetter {
  /** Sets `el` to the option named `value`; the effect and evidence of the read-back. */
  set(
    a: Aim,
    el: NativeRef,
    value: string,
    mode: 'background' | 'foreground',
    sw: Stopwatch,
  ): Promise<{ effect: ActionResult['effect']; evidence: Evidence[] }>;
}

/** type_text into an element its toolkit takes text in its own way (a Calc cell: F2, the keys, Enter). */
export type TypeRoute = (
  a: Aim,
  el: NativeRef,
  text: string,
  options: NativeTyping,
  sw: Stopwatch,
) => Promise<ActionResult>;

/** How invoke_menu works a toolkit's menus (actions/invoke-menu.ts holds the defaults, DEFAULT_MENU_QUIRKS). */
export interface MenuQuirks {
  /** The AT-SPI action names that open a submenu, the first offered wins (case-insensitive). */
  openActions: readonly string[];
  /** The action names that activate a menu item. */
  pressActions: readonly string[];
  /** How long a submenu's items get to show, and an item's effect to read back (ms). */
  openMs: number;
  /**
   * How a menu left open is closed: Escape (the open menu holds the keyboard: GTK), or its item's open
   * action again, which hides a shown submenu (Qt: its popups take no keyboard grab in an inactive window).
   */
  closeBy: 'escape' | 'action';
  /** Why an element's context menu cannot be worked by name in this toolkit (refused before anything is sent), or null. */
  noContextMenus: string | null;
  /**
   * An open context menu is listed by no accessible (Qt's popups): it is found by the event its toolkit
   * sends as it shows (object:state-changed:showing, heard only while invoke_menu waits for it).
   */
  contextMenuByEvent: boolean;
  /**
   * The state that says an item of an open menu shows: `showing` (ATK, Qt), or `visible` where the toolkit
   * sets `showing` on its windows only and lists a menu's items only while it is open (GTK 4).
   */
  shownBy: 'showing' | 'visible';
  /** How deep below a level's container its items are looked for, unnamed holders in between. */
  itemDepth: number;
  /**
   * A `menu` is the popup that holds a level's items, never an item (GTK 4's GtkPopoverMenu, named after its
   * class); false: a `menu` with a name is a submenu's item (GTK 3 lists its submenus so).
   */
  menuHolds: boolean;
  /**
   * Why an item of the menu bar that offers no AT-SPI action to open it may be opened by a pointer click at
   * its frame, as a user would (GTK 4's GtkPopoverMenuBar); null: such an item is refused.
   */
  openByClick: string | null;
}

/** A toolkit's profile: the model's hooks (atspi/model.ts ModelHooks) and the actions'. */
export interface ToolkitProfile extends ModelHooks {
  /** Which profile this is, for tests and messages. */
  name: string;
  /** Whether an element offering EditableText takes edits, given its states (read_only, editable). */
  acceptsEdits(states: [number, number]): boolean;
  /** How set_value sets a combo box that offers no Selection; null: it is not settable that way. */
  combo: ComboSetter | null;
  /** type_text's own route for `el` where the usual ones (insertion, keystrokes) do not fit it, or null. */
  typeRoute?(el: NativeRef, states: [number, number]): TypeRoute | null;
  /** Why text inserted into `el` (editable) would reach nothing, as the refusal to give, or null. */
  refusesInsert?(a: Aim, el: NativeRef): Promise<Refusal | null>;
  /** invoke_menu's quirks over the defaults (actions/invoke-menu.ts DEFAULT_MENU_QUIRKS). */
  menus?: Partial<MenuQuirks>;
}
