// The toolkit profiles: each toolkit's quirks live in its own file behind the hooks of ToolkitProfile
// (profile.ts), and this file says which profile an app gets, from what it names (Application's
// ToolkitName and Version, and its own name: atspi/model.ts toolkit()). The AT-SPI model is handed profileFor when it
// connects (it cannot import this layer above it); the actions ask profileOf.
import type { Atspi, Toolkit } from '../atspi/model.js';
import { IFACE } from '../atspi/model.js';
import { ROLE } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { atk } from './atk.js';
import { firefox } from './firefox.js';
import { gtk3 } from './gtk3.js';
import { gtk4 } from './gtk4.js';
import { libreOfficeOver } from './libreoffice.js';
import type { ComboSetter, ToolkitProfile } from './profile.js';
import { qt } from './qt.js';

export type { ComboSetter, ToolkitProfile, TypeRoute } from './profile.js';
export { hasNoTree, noTree } from './no-tree.js';

/** The profile of an app naming `app` as its toolkit; ATK's conventions for one not asked yet (null). */
export function profileFor(app: Toolkit | null): ToolkitProfile {
  if (!app) return atk;
  const toolkit = profileOfToolkit(app);
  // LibreOffice names the toolkit of its VCL plugin (GTK 3 here), or VCL: its own quirks go over that's.
  if (/^(soffice|libreoffice)/i.test(app.app) || /^vcl$/i.test(app.name)) return libreOfficeOver(toolkit);
  return toolkit;
}

/** The profile of the toolkit an app names (ToolkitName and its major Version). */
function profileOfToolkit({ name, version }: Toolkit): ToolkitProfile {
  const major = Number(/^(\d+)/.exec(version)?.[1] ?? 0);
  if (/^qt/i.test(name)) return qt;
  if (/^gtk$/i.test(name) && major >= 4) return gtk4;
  if (/^(gtk|gail)$/i.test(name) && major === 3) return gtk3;
  if (/^gecko$/i.test(name)) return firefox;
  return atk;
}

/** The profile of the app on `bus` (its toolkit as already asked, atspi.toolkit(); ATK's until then). */
export function profileOf(atspi: Atspi, bus: string): ToolkitProfile {
  return profileFor(atspi.knownToolkit(bus));
}

/** How set_value sets a combo box that offers no Selection, by its toolkit (Qt, GTK 4), or null: no quirk. */
export function comboSetterOf(atspi: Atspi, el: NativeRef): ComboSetter | null {
  if (el.role !== ROLE.comboBox || el.interfaces.includes(IFACE.selection)) return null;
  return profileOf(atspi, el.bus).combo;
}
