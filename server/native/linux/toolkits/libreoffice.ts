// LibreOffice's quirks, behind the profile's hooks, over the conventions of the toolkit its VCL plugin names
// (GTK 3's with the gtk3 plugin: gtk3.ts; older ones name VCL, ATK's): a Calc cell is typed into as a user does (F2, the keys, Enter), and text is not inserted into Calc's
// cell editor, which a point may find and which is named from its panel (type_text). The name rule itself,
// calcCellEditorName, is the tree's too (atspi/roles.ts).
import type { ActionResult, Evidence } from '../../../contract/driver.js';
import type { Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { excerpt, judgeTextAt } from '../../../contract/verdicts.js';
import { IFACE, codePoints, type AccRef, type Atspi } from '../atspi/model.js';
import { nativeResult, requireKeyboardFocus, type Aim } from '../actions/aim.js';
import { pollUntil, pressKeys, typeKeys, untypable } from '../transport/input.js';
import { ROLE, STATE, calcCellEditorName, has } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { SYNTHESIS_BUDGET_MS, maxChunkChars } from '../../shared/key-pace.js';
import { KEYS_LANDED_WAIT_MS, type NativeTyping } from '../actions/element.js';
import type { ToolkitProfile } from './profile.js';

/** calcCellEditorName (roles.ts) for an element found at a point: its parent and grandparent read live. */
async function cellEditorAt(atspi: Atspi, el: NativeRef): Promise<string | null> {
  if (el.role !== ROLE.paragraph) return null;
  const up = async (ref: AccRef) => {
    const [bus, path] = (await atspi.prop(ref, IFACE.accessible, 'Parent')) as [string, string];
    const [role] = await atspi.call({ bus, path }, IFACE.accessible, 'GetRole');
    return { ref: { bus, path }, role: Number(role) };
  };
  try {
    const panel = await up(el);
    if (panel.role !== ROLE.panel) return null;
    const doc = await up(panel.ref);
    const name = String(await atspi.prop(panel.ref, IFACE.accessible, 'Name'));
    return calcCellEditorName(el.role, { role: panel.role, name }, doc);
  } catch {
    return null; // not read: the element's own route goes on, and its read-back judges it as before
  }
}

/**
 * A spreadsheet cell (LibreOffice Calc): Text to read, `editable`, but no EditableText. What it holds
 * changes only when an edit is committed, so it is typed as a user does: F2 (edit at the end of its
 * content), the keys, Enter (commit; the cursor moves to the next row).
 */
function isSheetCell(el: NativeRef, states: [number, number]): boolean {
  return (
    el.role === ROLE.tableCell &&
    el.interfaces.includes(IFACE.text) &&
    !el.interfaces.includes(IFACE.editable) &&
    has(states, STATE.editable)
  );
}

async function typeIntoCell(
  a: Aim,
  el: NativeRef,
  text: string,
  options: NativeTyping,
  sw: Stopwatch,
): Promise<ActionResult> {
  const { atspi } = a;
  const mode = options.deliveryMode;
  const label = `${el.name || 'cell'} (table cell)`;
  if (/[\n\r]/.test(text))
    throw new Refusal(
      'text_not_deliverable',
      `"${label}" is a spreadsheet cell: Enter commits it, so a newline cannot be typed into it; nothing was typed. Send the text without newlines (one cell per call)`,
    );
  const odd = untypable(text).slice(0, 10).join(' ');
  if (odd)
    throw new Refusal(
      'text_not_deliverable',
      `"${label}" takes text only as keystrokes, and control characters have none (${odd}); nothing was typed`,
      { characters: odd },
    );
  const chars = codePoints(text);
  const limit = maxChunkChars(options.delayMs);
  if (chars > limit)
    throw new Refusal(
      'type_text_synthesis_budget_exceeded',
      `"${label}" takes text only as synthesized keystrokes, and ${chars} characters at delay_ms ${options.delayMs} exceed the ${SYNTHESIS_BUDGET_MS} ms budget of one call; nothing was typed. Send at most ${limit} characters per call (or lower delay_ms)`,
      { max_chunk_chars: limit, delay_ms: options.delayMs, chars },
    );
  await requireKeyboardFocus(a.win, mode);
  // The sheet's cursor goes to the cell (Calc's GrabFocus selects it), proven by its `focused` state.
  await atspi.grabFocus(el).catch(() => false);
  const onCell = await pollUntil(async () => has(await atspi.states(el), STATE.focused), KEYS_LANDED_WAIT_MS);
  if (!onCell)
    throw new Refusal(
      'focus_failed',
      `the sheet's cursor did not move to "${label}", so nothing was typed; click the cell (px form) and type again`,
    );
  const before = await atspi.text(el);
  sw.lap('resolve');
  await pressKeys(['F2']);
  await typeKeys(text, options.delayMs);
  await pressKeys(['Enter']);
  sw.lap('deliver');
  const expected = before + text;
  await pollUntil(async () => (await atspi.text(el)) === expected, KEYS_LANDED_WAIT_MS);
  const after = await atspi.text(el);
  sw.lap('verify');
  const verdict = judgeTextAt(before, after, codePoints(before), text);
  const evidence: Evidence[] = [
    {
      kind: 'text',
      expected: excerpt(verdict.expected, before.length, text.length),
      observed: excerpt(after, before.length, text.length),
      detail:
        "AT-SPI Text of the cell read back after XTest F2, the keys and Enter (committed: the sheet's cursor moved on)",
    },
  ];
  return {
    ...nativeResult(verdict.effect, 'synthetic_events', sw, evidence, mode, {
      target: label,
      method: 'key_events',
      ...(verdict.effect === 'confirmed' ? {} : { observed: excerpt(after, 0, 400) }),
    }),
    delivery: { mode, delivered_count: verdict.delivered },
  };
}

/**
 * Calc's cell editor (a paragraph), found at a point or named so by its token's snapshot: text inserted into
 * it reaches the sheet only through an open edit, and Calc lists it also when none is open.
 */
async function refusesInsert(a: Aim, el: NativeRef): Promise<Refusal | null> {
  const editorOf = a.element ? (el.calcCellEditor ?? null) : await cellEditorAt(a.atspi, el);
  if (!editorOf) return null;
  return new Refusal(
    'not_supported',
    `this paragraph is LibreOffice Calc's cell editor ("${editorOf}"): text inserted into it reaches the sheet only through an open edit, and Calc lists it also when none is open (the text then goes nowhere), so nothing was typed; type into the cell itself (its element_token from get_window_state), which is typed and read back once committed`,
  );
}

const over = new Map<ToolkitProfile, ToolkitProfile>();

/** LibreOffice's profile over `base`, the profile of the toolkit its VCL plugin names (one per base). */
export function libreOfficeOver(base: ToolkitProfile): ToolkitProfile {
  let profile = over.get(base);
  if (!profile) {
    profile = {
      ...base,
      name: 'libreoffice',
      typeRoute: (el, states) => (isSheetCell(el, states) ? typeIntoCell : null),
      refusesInsert,
      // Its menus fill as they open (each item asks its dispatcher whether it is enabled), which takes
      // LibreOffice longer than a toolkit's own menus; its dialogs too take a while to show.
      menus: { ...base.menus, openMs: 8000 },
    };
    over.set(base, profile);
  }
  return profile;
}
