// An app's windows as AT-SPI shows them (host.ts lists and matches windows with them): its showing
// top-level accessibles, and the one that is an X11 window's frame.
import type { XWindow } from '../transport/x11.js';
import type { AccRef, Atspi } from './model.js';
import { ROLE, STATE, TOP_LEVEL_ROLES, has } from './roles.js';

/** An app's showing top-level accessibles (its windows), with name, states and extents. */
export async function topLevels(atspi: Atspi, bus: string, title?: string) {
  const tops = await atspi.children({ bus, path: '/org/a11y/atspi/accessible/root' });
  const candidates = await Promise.all(
    tops.map(async (ref) => {
      const [[role], name, states, box] = await Promise.all([
        atspi.call(ref, 'org.a11y.atspi.Accessible', 'GetRole'),
        atspi.prop(ref, 'org.a11y.atspi.Accessible', 'Name'),
        atspi.states(ref),
        atspi.extents(ref).catch(() => null),
      ]);
      return { ref, role: Number(role), name: String(name), states, box };
    }),
  );
  // A bare Qt top-level widget's accessible is a `filler`: as the app's own child it is a window. A GTK 4
  // dialog's (a file chooser's) is a `filler` that says `visible` but never `showing`: it is the window
  // `title` names when it bears that title.
  return candidates.filter(
    (c) =>
      (TOP_LEVEL_ROLES.has(c.role) || c.role === ROLE.filler) &&
      (has(c.states, STATE.showing) || (title !== undefined && has(c.states, STATE.visible) && c.name === title)),
  );
}

/** The app's top-level accessible for an X window: same title, else the one whose extents fit it best. */
export async function frameIn(atspi: Atspi, bus: string, w: XWindow): Promise<AccRef | null> {
  const tops2 = await topLevels(atspi, bus, w.title);
  const score = (c: (typeof tops2)[number]) => {
    let s = c.name === w.title ? 100 : 0;
    if (c.box)
      s -= Math.abs(c.box.x + c.box.w / 2 - (w.bounds.x + w.bounds.w / 2)) / 10 + Math.abs(c.box.w - w.bounds.w) / 10;
    if (has(c.states, STATE.active)) s += 5;
    return s;
  };
  tops2.sort((a, b) => score(b) - score(a));
  return tops2[0]?.ref ?? null;
}
