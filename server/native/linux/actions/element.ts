// Acting on an element through AT-SPI, for the actions: its first action, its states as they settle, the
// checks on text for keystrokes, and the label a refusal names it by. Whether it takes edits is its
// toolkit's (toolkits/, acceptsEdits).
import type { ResolvedTarget, TypeOptions } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import type { Aim } from './aim.js';
import { ROLE } from '../atspi/roles.js';
import { IFACE, codePoints } from '../atspi/model.js';
import { untypable } from '../transport/input.js';
import { SYNTHESIS_BUDGET_MS, maxChunkChars } from '../../shared/key-pace.js';
import type { NativeRef } from '../atspi/tree.js';

/** How long typed keys get to show in the element's text before what it holds is judged. */
export const KEYS_LANDED_WAIT_MS = 1000;

/** How to type, with the target's delivery_mode (carried on the target; the driver hands it on here). */
export type NativeTyping = TypeOptions & { deliveryMode: ResolvedTarget['deliveryMode'] };

/** Why an AT-SPI password text's content is masked in results. */
export const PASSWORD_TEXT = 'a password text (AT-SPI role "password text")';

/** Refuses, before anything is sent, text that keystrokes cannot carry or that exceeds one call's budget. */
export function checkKeystrokes(what: string, text: string, options: NativeTyping): void {
  const odd = untypable(text).slice(0, 10).join(' ');
  if (odd) {
    throw new Refusal(
      'text_not_deliverable',
      `${what} has no accessible text insertion, and control characters have no keystroke (${odd}); nothing was typed. Send the text without them, or press_key for special keys`,
      { characters: odd },
    );
  }
  const chars = codePoints(text);
  const limit = maxChunkChars(options.delayMs);
  if (chars > limit) {
    throw new Refusal(
      'type_text_synthesis_budget_exceeded',
      `${what} takes text only as synthesized keystrokes, and ${chars} characters at delay_ms ${options.delayMs} exceed the ${SYNTHESIS_BUDGET_MS} ms budget of one call; nothing was typed. Send at most ${limit} characters per call (or lower delay_ms)`,
      { max_chunk_chars: limit, delay_ms: options.delayMs, chars },
    );
  }
}

/** How an element that takes text is named in a refusal: text, terminal, or its role number. */
export function roleLabel(role: number): string {
  return role === ROLE.text || role === ROLE.entry ? 'text' : role === ROLE.terminal ? 'terminal' : `role ${role}`;
}

/** Runs the element's first action (click / press / toggle / activate). */
export async function pressFirstAction(atspi: Aim['atspi'], el: NativeRef): Promise<string> {
  const names = await atspi.actions(el);
  const wanted = ['click', 'press', 'toggle', 'activate', 'jump', 'select'];
  let index = names.findIndex((n) => wanted.includes(n.toLowerCase()));
  if (index < 0) index = 0;
  if (!names.length) throw new Refusal('not_supported', `"${el.name}" offers no AT-SPI action`);
  const ok = await atspi.doAction(el, index);
  if (!ok) throw new Refusal('not_supported', `"${el.name}" refused its "${names[index]}" action`);
  return names[index];
}

/** Reads an element's states until `done` holds or ~500 ms passed (toolkits apply actions on idle). */
export async function waitStates(
  atspi: Aim['atspi'],
  el: NativeRef,
  done: (s: [number, number]) => boolean,
): Promise<[number, number]> {
  let states = await atspi.states(el);
  for (let i = 0; i < 25 && !done(states); i++) {
    await new Promise((r) => setTimeout(r, 20));
    states = await atspi.states(el);
  }
  return states;
}

/** The refusal for a value that names none of a list's options, naming the options there are. */
export function noSuchOption(listName: string, value: string, options: readonly string[]): Refusal {
  return new Refusal(
    'no_such_option',
    `value: no option of "${listName}" is named "${value}"; options: ${options.join(', ')}`,
    { options: [...options] },
  );
}

/** The index of the option of `el` named `value`, refused naming the options there are when none is. */
export async function optionIndexOf(atspi: Aim['atspi'], el: NativeRef, value: string): Promise<number> {
  const options = await optionsOf(atspi, el);
  const index = options.findIndex((o) => o.name === value);
  if (index < 0)
    throw noSuchOption(
      el.name,
      value,
      options.map((o) => o.name),
    );
  return index;
}

/** The selectable options of a combo box (its popup menu's items) or list. */
export async function optionsOf(atspi: Aim['atspi'], el: NativeRef): Promise<Array<{ name: string }>> {
  let children = await atspi.children(el);
  if (el.role === ROLE.comboBox && children.length === 1) {
    const [[role]] = [await atspi.call(children[0], IFACE.accessible, 'GetRole')];
    if (Number(role) === ROLE.menu || Number(role) === ROLE.list) children = await atspi.children(children[0]);
  }
  return Promise.all(
    children.map(async (c) => ({ name: String(await atspi.prop(c, IFACE.accessible, 'Name').catch(() => '')) })),
  );
}
