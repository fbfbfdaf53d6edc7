// GTK 4's quirks, behind the profile's hooks: on X11 it answers screen extents relative to its window
// ("Screen coordinates not supported"); its open popovers are surfaces of their own, which AT-SPI places at
// their widget (atspi/tree.ts moves them); it says nothing of `editable`; a drop-down offers no Selection,
// shows its value in a label inside its button, and is set through its popover (set_value); its menus are
// popovers too (invoke_menu, below).
import type { ActionResult, Evidence, Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { judgeValue } from '../../../contract/verdicts.js';
import { dropDownValue, labelsUnder } from '../atspi/dropdown.js';
import type { Aim } from '../actions/aim.js';
import { noSuchOption } from '../actions/element.js';
import { clickAt, moveTo, pollUntil, pressKeys } from '../transport/input.js';
import { ROLE } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { acceptsUnlessReadOnly, atk } from './atk.js';
import type { ComboSetter, ToolkitProfile } from './profile.js';

/**
 * A GTK 4 drop-down offers no Selection, no action and no focus call; its options exist only while its
 * popup is open. So as a user would: click it open, read the options of its list, Home and Down to the
 * one asked for, Enter; the label it shows afterwards proves the result.
 */
async function gtk4DropDown(
  a: Aim,
  el: NativeRef,
  value: string,
  sw: Stopwatch,
): Promise<{ effect: ActionResult['effect']; evidence: Evidence[] }> {
  const { atspi } = a;
  const was = await dropDownValue(atspi, el);
  sw.lap('resolve');
  await moveTo(el.box.x + el.box.w / 2, el.box.y + el.box.h / 2);
  await clickAt('left', 1, []);
  let options: string[] = [];
  await pollUntil(async () => (options = await dropDownOptions(atspi, el)).length > 0, 1000);
  const index = options.indexOf(value);
  if (index < 0) {
    await pressKeys(['Escape']);
    if (!options.length)
      throw new Refusal('not_settable', `"${el.name}" showed no list of options when clicked open; nothing was chosen`);
    throw noSuchOption(el.name, value, options);
  }
  await pressKeys(['Home']);
  for (let i = 0; i < index; i++) await pressKeys(['Down']);
  await pressKeys(['Enter']);
  sw.lap('deliver');
  let now = await dropDownValue(atspi, el);
  for (let i = 0; i < 25 && now !== value; i++) {
    await new Promise((r) => setTimeout(r, 20));
    now = await dropDownValue(atspi, el);
  }
  sw.lap('verify');
  const evidence: Evidence[] = [
    {
      kind: 'selection',
      expected: value,
      observed: now ?? '(none)',
      detail: `clicked open, XTest Home, Down x${index}, Enter; the label the drop-down shows, before: ${was}`,
    },
  ];
  return { effect: judgeValue(value, was, now), evidence };
}

/** The options of an open GTK 4 drop-down: the first label of each item of its popup's list. */
async function dropDownOptions(atspi: Aim['atspi'], el: NativeRef): Promise<string[]> {
  const children = await atspi.children(el);
  for (const popup of children.slice(1)) {
    const nodes = await labelsUnder(atspi, popup);
    const list = nodes.find((n) => n.role === ROLE.list);
    if (!list) continue;
    const items = await atspi.children(list.ref);
    const names = await Promise.all(
      items.map(async (item) => (await labelsUnder(atspi, item, 10)).find((n) => n.role === ROLE.label)?.name ?? ''),
    );
    return names;
  }
  return [];
}

/** set_value on a GTK 4 drop-down (no Selection): clicked open and chosen by keys. */
const gtk4Combo: ComboSetter = { set: (a, el, value, _mode, sw) => gtk4DropDown(a, el, value, sw) };

export const gtk4: ToolkitProfile = {
  ...atk,
  name: 'gtk4',
  // Code points, like ATK's; InsertText's length is ignored.
  windowRelative: true,
  popoversApart: true,
  acceptsEdits: acceptsUnlessReadOnly,
  comboValue: async (atspi, ref) => (await dropDownValue(atspi, ref)) ?? undefined,
  combo: gtk4Combo,
  // Its menus are popovers (GtkPopoverMenu) listed under the item or widget they belong to only while they
  // are open, nine holders above their items; GTK 4.8 sets `showing` on its windows only, so an item shows by
  // `visible`. The items of an open popover offer a "click" action (a submenu's opens it), but the items of
  // its menu bar (GtkPopoverMenuBar) offer none, nor does the bar a Selection: they are opened by a click.
  menus: {
    shownBy: 'visible',
    itemDepth: 10,
    menuHolds: true,
    openByClick: 'GTK 4 gives the items of its menu bar (GtkPopoverMenuBar) no AT-SPI action',
  },
};
