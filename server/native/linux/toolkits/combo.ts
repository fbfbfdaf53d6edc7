// The hook set_value calls for a combo box that offers no Selection: each toolkit that has one sets it its
// own way (qt.ts, gtk4.ts).
import type { ActionResult, Evidence, Stopwatch } from '../../../contract/driver.js';
import type { Aim } from '../actions/aim.js';
import type { NativeRef } from '../atspi/tree.js';

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
