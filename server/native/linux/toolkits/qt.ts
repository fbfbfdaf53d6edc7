// Qt's quirks, behind the profile's hooks: it counts UTF-16 units in every Text and EditableText offset,
// count and length (InsertText's length cuts or pads the string with NULs to that many units); it says
// nothing of `editable`; a combo box offers no Selection, says its current text as its name (listed under
// the label that names it instead, its text as its value), and is set by keys (set_value).
import type { ActionResult, Evidence, Stopwatch } from '../../../contract/driver.js';
import { judgeValue } from '../../../contract/verdicts.js';
import { IFACE } from '../atspi/model.js';
import { requireKeyboardFocus, type Aim } from '../actions/aim.js';
import { optionIndexOf } from '../actions/element.js';
import { clickAt, moveTo, pressKeys } from '../transport/input.js';
import { ROLE, STATE, has } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { acceptsUnlessReadOnly } from './atk.js';
import type { ComboSetter, ToolkitProfile } from './profile.js';

/**
 * A Qt combo box offers no Selection, and its options' own actions select them in the closed popup's view
 * only. Keys do what a user does: focus it, Home, then Down to the option; its name (Qt names a combo box
 * by its current text) proves the result. Keys need the window's keyboard focus.
 */
async function qtComboKeys(
  a: Aim,
  el: NativeRef,
  value: string,
  mode: 'background' | 'foreground',
  sw: Stopwatch,
): Promise<{ effect: ActionResult['effect']; evidence: Evidence[] }> {
  const { atspi } = a;
  const index = await optionIndexOf(atspi, el, value);
  await requireKeyboardFocus(a.win, mode);
  const name = () => atspi.prop(el, IFACE.accessible, 'Name').then(String);
  const was = await name();
  // Qt's GrabFocus answers false for a combo box; a click opens its popup with the keyboard in it.
  const open = !has(a.states, STATE.focused) && !(await atspi.grabFocus(el).catch(() => false));
  sw.lap('resolve');
  if (open) {
    await moveTo(el.box.x + el.box.w / 2, el.box.y + el.box.h / 2);
    await clickAt('left', 1, []);
    await new Promise((r) => setTimeout(r, 150));
  }
  await pressKeys(['Home']);
  for (let i = 0; i < index; i++) await pressKeys(['Down']);
  if (open) await pressKeys(['Enter']);
  sw.lap('deliver');
  let now = await name();
  for (let i = 0; i < 25 && now !== value; i++) {
    await new Promise((r) => setTimeout(r, 20));
    now = await name();
  }
  sw.lap('verify');
  const evidence: Evidence[] = [
    {
      kind: 'selection',
      expected: value,
      observed: now,
      detail: `${open ? 'clicked open, ' : ''}XTest Home and Down x${index}${open ? ', Enter' : ''}; before: ${was}`,
    },
  ];
  return { effect: judgeValue(value, was, now), evidence };
}

/** set_value on a Qt combo box (no Selection): by keys, as a user would. */
const qtCombo: ComboSetter = { set: qtComboKeys };

export const qt: ToolkitProfile = {
  name: 'qt',
  countsUtf16: true,
  insertLength: (text) => text.length,
  windowRelative: false,
  wholeText: false,
  popoversApart: false,
  acceptsEdits: acceptsUnlessReadOnly,
  comboValue: async (atspi, ref) => String(await atspi.prop(ref, IFACE.accessible, 'Name')),
  nameIsValue: (role) => role === ROLE.comboBox,
  combo: qtCombo,
  // A menu item's Press triggers its QAction and leaves its menus open; ShowMenu on an item whose submenu
  // shows hides it (QAccessibleMenuItem::doAction), which closes what invoke_menu opened without keys.
  // Its context menus are popups, which Qt's accessible application leaves out of its children
  // (QAccessibleApplication lists no Qt::Popup window) and no widget lists either: the popup is found by the
  // showing event Qt sends for it (once someone registered for it), and its items read from there.
  menus: {
    openActions: ['showmenu'],
    pressActions: ['press', 'toggle'],
    closeBy: 'action',
    contextMenuByEvent: true,
  },
};
