// press_key on a tab: the key (with its modifiers held) as trusted keyboard input to the focused element
// or the element named, proved by a trusted keydown reaching it.
import type { ActionArgs } from '../../contract/actions.js';
import type { KeyInput } from 'puppeteer-core';
import type { ActionResult, Evidence, ResolvedTarget } from '../../contract/driver.js';
import { Stopwatch } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import { describeEvents, focusedFrame, result, tabOf, withSideEffects, type CdpRoute } from './aim.js';
import { click } from './click.js';
import { INPUT_SETTLE_MS } from '../browser/side-effects.js';
import { quickFrameOf, type TabElementRef } from '../snapshot.js';
import type { Frame } from '../tab/tab.js';

/** A key press with the side effects it caused (Enter submits forms, which may open tabs or download). */
export function pressKey(
  route: CdpRoute,
  target: ResolvedTarget,
  { key, modifiers }: ActionArgs['pressKey'],
): Promise<ActionResult> {
  return withSideEffects(route, target, () => deliverPressKey(route, target, key, modifiers), INPUT_SETTLE_MS);
}

async function deliverPressKey(
  route: CdpRoute,
  target: ResolvedTarget,
  key: string,
  modifiers: string[],
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const tab = tabOf(target);
  let frame: Frame;
  if (target.element) {
    const ref = target.element.ref as TabElementRef;
    frame = quickFrameOf(tab, ref);
    await tab.call(frame, 'focusElement', target.element.snapshotId, ref.local);
  } else {
    if (target.point) await click(route, target, { button: 'left', count: 1, modifiers: [] });
    frame = await focusedFrame(tab);
  }
  const targetName = await tab.call(frame, 'watchEvents', null, 0, ['keydown', 'keyup', 'input']);
  sw.lap('resolve');
  const keys = [...modifiers.map(normalizeModifier), normalizeKey(key)] as KeyInput[];
  const held: KeyInput[] = [];
  const deliver = async () => {
    try {
      for (const k of keys.slice(0, -1)) {
        await tab.page.keyboard.down(k);
        held.push(k);
      }
      await tab.page.keyboard.press(keys[keys.length - 1]);
    } finally {
      for (const k of held.reverse()) await tab.page.keyboard.up(k).catch(() => {});
    }
  };
  try {
    // A key handler that opens a dialog holds the key's acknowledgement until the dialog is answered.
    await tab.unlessDialog(deliver());
  } catch (e) {
    throw new Refusal('invalid_arguments', `key: ${(e as Error).message}`);
  }
  sw.lap('deliver');
  const seen = await tab.call(frame, 'watched', false).catch((e) => {
    if (e instanceof Refusal && e.code === 'dialog_open') return null;
    throw e;
  });
  sw.lap('verify');
  if (!seen)
    return result('unverifiable', sw, [{ kind: 'dialog', detail: 'a dialog opened after the key' }], {
      target: targetName,
      escalation: { target: 'page', reason: 'answer the dialog with page handle_dialog' },
    });
  if (seen.fresh)
    return result('unverifiable', sw, [{ kind: 'navigation', observed: tab.page.url() }], {
      target: targetName,
      escalation: { target: 'verify', reason: 'the page navigated; call get_window_state' },
    });
  const down = seen.events.find((e) => e.type === 'keydown' && e.trusted && e.onTarget);
  const evidence: Evidence[] = [
    { kind: 'event', expected: `trusted keydown ${keys.join('+')} at ${seen.target}`, observed: describeEvents(seen) },
  ];
  return result(down ? 'confirmed' : 'unverifiable', sw, evidence, {
    target: seen.target,
    ...(down ? {} : { escalation: { target: 'verify', reason: 'no key event reached the focused element' } }),
  });
}

const MODIFIER_KEYS: Record<string, string> = {
  ctrl: 'Control',
  control: 'Control',
  cmd: 'Meta',
  command: 'Meta',
  meta: 'Meta',
  super: 'Meta',
  alt: 'Alt',
  option: 'Alt',
  shift: 'Shift',
};
const KEY_ALIASES: Record<string, string> = {
  return: 'Enter',
  enter: 'Enter',
  tab: 'Tab',
  escape: 'Escape',
  esc: 'Escape',
  space: ' ',
  backspace: 'Backspace',
  delete: 'Delete',
  del: 'Delete',
  up: 'ArrowUp',
  down: 'ArrowDown',
  left: 'ArrowLeft',
  right: 'ArrowRight',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pagedown: 'PageDown',
  insert: 'Insert',
};

export function normalizeModifier(name: string): string {
  return MODIFIER_KEYS[name.toLowerCase()] ?? name;
}

export function normalizeKey(name: string): string {
  const lower = name.toLowerCase();
  if (KEY_ALIASES[lower]) return KEY_ALIASES[lower];
  if (MODIFIER_KEYS[lower]) return MODIFIER_KEYS[lower];
  if (/^f([1-9]|1[0-2])$/.test(lower)) return lower.toUpperCase();
  if (lower.startsWith('arrow')) return 'Arrow' + name.slice(5, 6).toUpperCase() + name.slice(6).toLowerCase();
  return name;
}
