// Trusted input to a tab shared by the text actions (type_text, set_value): CDP Input events that stop at a
// JavaScript dialog (the page is frozen until it is answered), the named keys they press, and the refusal
// a field that will not take the input is given.
import { Refusal } from '../../contract/refusal.js';
import type { Tab } from '../tab/tab.js';

/** CDP's modifier bit for Control. */
export const CTRL = 2;

export async function pressNamedKey(tab: Tab, key: string, code: number, modifiers = 0): Promise<void> {
  await send(tab, 'Input.dispatchKeyEvent', {
    type: 'rawKeyDown',
    key,
    code: key,
    windowsVirtualKeyCode: code,
    nativeVirtualKeyCode: code,
    modifiers,
  });
  await send(tab, 'Input.dispatchKeyEvent', {
    type: 'keyUp',
    key,
    code: key,
    windowsVirtualKeyCode: code,
    nativeVirtualKeyCode: code,
    modifiers,
  });
}

export async function pressEnter(tab: Tab): Promise<void> {
  const key = { key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, nativeVirtualKeyCode: 13 };
  await send(tab, 'Input.dispatchKeyEvent', { type: 'keyDown', ...key, text: '\r', unmodifiedText: '\r' });
  await send(tab, 'Input.dispatchKeyEvent', { type: 'keyUp', ...key });
}

/** A trusted Delete key press: empties a field whose text is selected. */
export async function pressDelete(tab: Tab): Promise<void> {
  for (const type of ['keyDown', 'keyUp'] as const) {
    await send(tab, 'Input.dispatchKeyEvent', { type, key: 'Delete', code: 'Delete', windowsVirtualKeyCode: 46 });
  }
}

/** A dialog opened while input was being delivered: the page is frozen until it is answered. */
export class DialogOpened extends Error {}

export async function send(
  tab: Tab,
  method: 'Input.insertText' | 'Input.dispatchKeyEvent',
  params: Record<string, unknown>,
): Promise<void> {
  if ((await tab.unlessDialog(tab.session.send(method as 'Input.insertText', params as never))) === 'dialog')
    throw new DialogOpened();
}

export function fieldRefusal(code: string, detail: string): Refusal {
  switch (code) {
    case 'element_disabled':
      return new Refusal('element_disabled', `${detail} is disabled and cannot take text`);
    case 'element_readonly':
      return new Refusal('element_readonly', `${detail} is read-only; nothing was typed`);
    case 'not_editable':
      return new Refusal(
        'not_editable',
        `${detail} does not take text; pass the element_token of a text field or editor`,
      );
    case 'focus_failed':
      return new Refusal('focus_failed', `${detail} would not take focus, so nothing was typed`);
    case 'caret_not_placed':
      return new Refusal(
        'focus_failed',
        `${detail} kept moving its caret or selection away from the end after it was focused (typing would have landed elsewhere or replaced a selection), so nothing was typed; click where the text should go, then type_text without an element_token`,
        { retryable: true },
      );
    default:
      return new Refusal('target_not_found', `${code}: ${detail}`);
  }
}
