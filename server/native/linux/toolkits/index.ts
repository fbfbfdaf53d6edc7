// The toolkit profiles: each toolkit's quirks live in its own file behind the hooks the actions call, and
// this file says which profile an element's app gets (from the toolkit its app names, atspi/model.ts).
import type { Atspi } from '../atspi/model.js';
import { IFACE } from '../atspi/model.js';
import { ROLE } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import type { ComboSetter } from './combo.js';
import { gtk4Combo } from './gtk4.js';
import { qtCombo } from './qt.js';

export type { ComboSetter } from './combo.js';

/** How set_value sets a combo box that offers no Selection, by its toolkit (Qt, GTK 4), or null: no quirk. */
export function comboSetterOf(atspi: Atspi, el: NativeRef): ComboSetter | null {
  if (el.role !== ROLE.comboBox || el.interfaces.includes(IFACE.selection)) return null;
  const toolkit = atspi.knownToolkit(el.bus);
  if (toolkit.utf16) return qtCombo;
  if (toolkit.windowRelative) return gtk4Combo;
  return null;
}
