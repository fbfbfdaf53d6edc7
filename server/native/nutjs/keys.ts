// Keys as nut-js names them, and which characters it can type: printable ASCII everywhere, and on X11 only
// those the keyboard map has a key for (the Linux desktop's map, shared/desktop.ts).
import { Refusal } from '../../contract/refusal.js';
import type { LinuxDesktop } from '../shared/desktop.js';

/** The characters nut-js types as keys on every system: printable ASCII, newline and tab. */
export function nutUntypable(text: string): string[] {
  const odd = new Set(Array.from(text).filter((c) => !/^[\x20-\x7e\n\t]$/.test(c)));
  return [...odd].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
}

/**
 * On X11, which characters of `text` need Shift, and which the keyboard map has no key for. nut-js's Linux
 * typing finds each character's key but adds Shift to capitals only (measured: "!~{}" came out as "1`[]"),
 * so the helper holds Shift for the others itself; a character with no key would be dropped, so it is refused.
 */
export async function x11Keys(desktop: LinuxDesktop, text: string): Promise<{ shifted: string[]; missing: string[] }> {
  const { perKeycode, keysyms } = await desktop.keyboardMapping();
  const level = new Map<number, number>();
  for (const l of [0, 1])
    for (let i = 0; i * perKeycode < keysyms.length; i++) {
      const k = keysyms[i * perKeycode + l];
      if (k && !level.has(k)) level.set(k, l);
    }
  const shifted = new Set<string>();
  const missing = new Set<string>();
  for (const c of new Set(Array.from(text))) {
    if (c === '\n' || c === '\t') continue;
    const l = level.get(c.codePointAt(0)!);
    if (l === undefined) missing.add(`"${c}"`);
    else if (l === 1 && !/[A-Z]/.test(c)) shifted.add(c);
  }
  return { shifted: [...shifted], missing: [...missing] };
}

const NUT_KEYS: Record<string, string> = {
  return: 'Enter',
  enter: 'Enter',
  esc: 'Escape',
  escape: 'Escape',
  del: 'Delete',
  delete: 'Delete',
  backspace: 'Backspace',
  tab: 'Tab',
  space: 'Space',
  ' ': 'Space',
  up: 'Up',
  down: 'Down',
  left: 'Left',
  right: 'Right',
  arrowup: 'Up',
  arrowdown: 'Down',
  arrowleft: 'Left',
  arrowright: 'Right',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pagedown: 'PageDown',
  insert: 'Insert',
  ctrl: 'LeftControl',
  control: 'LeftControl',
  shift: 'LeftShift',
  alt: 'LeftAlt',
  option: 'LeftAlt',
  meta: 'LeftSuper',
  cmd: 'LeftSuper',
  command: 'LeftSuper',
  super: 'LeftSuper',
};

/** nut-js's Key name for a key name (Enter, F5, a, 7, ctrl...), or invalid_arguments naming `field`. */
export function nutKey(name: string, field = 'key'): string {
  const lower = name.toLowerCase();
  const named = NUT_KEYS[lower];
  if (named) return named;
  if (/^f([1-9]|1[0-9]|2[0-4])$/.test(lower)) return lower.toUpperCase();
  if (/^[a-z]$/.test(lower)) return lower.toUpperCase();
  if (/^[0-9]$/.test(lower)) return `Num${lower}`;
  throw new Refusal(
    'invalid_arguments',
    `${field}: "${name}" is not a key this route can press (Enter, Tab, Escape, arrows, Backspace, Delete, Home, End, PageUp, PageDown, F1-F24, a-z, 0-9, ctrl, shift, alt, meta)`,
  );
}
