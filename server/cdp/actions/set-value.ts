// set_value on a tab. One value: a text field's text replaced (select all, one trusted insertion), a toggle
// clicked, a <select> set by the page agent, or a select-like combobox's option chosen by a trusted click;
// read back after the page settled. A list: a <select multiple> set by the page agent, or an ARIA
// multi-select listbox whose options are Ctrl+clicked (a trusted click that toggles one option, as a user
// does). Either way the whole selection is read back and must be exactly the list.
import type { ActionArgs } from '../../contract/actions.js';
import type { ActionResult, Evidence, ResolvedTarget } from '../../contract/driver.js';
import { Stopwatch } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import { maskSecrets } from '../../contract/secrets.js';
import { judgeValue } from '../../contract/verdicts.js';
import type { ValuePlan } from './set-value.page.js';
import type { ValueReading } from '../page-agent/fields.js';
import { frameOf, quickFrameOf, type TabElementRef } from '../snapshot.js';
import type { Frame, Tab } from '../tab/tab.js';
import { dialogResult, mouseClick, result, tabOf, withSideEffects, type CdpRoute } from './aim.js';
import { click } from './click.js';
import { DialogOpened, fieldRefusal, pressDelete, pressNamedKey, send } from './field-input.js';

/** set_value, with what arrived during it (no extra listening). */
export function setValue(
  route: CdpRoute,
  target: ResolvedTarget,
  { value }: ActionArgs['setValue'],
): Promise<ActionResult> {
  if (Array.isArray(value)) return withSideEffects(route, target, () => choose(target, value));
  return withSideEffects(route, target, () => setValueOnTab(route, target, value));
}

async function choose(target: ResolvedTarget, values: string[]): Promise<ActionResult> {
  const sw = new Stopwatch();
  if (!target.element)
    throw new Refusal('invalid_arguments', 'set_value needs an element_token (from get_window_state)');
  const tab = tabOf(target);
  const ref = target.element.ref as TabElementRef;
  const { frame, frames } = await frameOf(tab, ref);
  const snapshotId = target.element.snapshotId;
  const plan = await tab.call(frame, 'planChoices', snapshotId, ref.local, values);
  if (plan.refusal === 'no_such_option')
    throw new Refusal('no_such_option', `value: ${plan.detail}; nothing was chosen`);
  if (plan.refusal === 'invalid_arguments') throw new Refusal('invalid_arguments', `value: ${plan.detail}`);
  if (plan.refusal === 'element_disabled')
    throw new Refusal('element_disabled', `${plan.detail} is disabled; nothing was chosen`);
  if (plan.refusal) throw new Refusal('target_not_found', `${plan.refusal}: ${plan.detail}`);
  sw.lap('resolve');
  if (plan.kind === 'listbox') {
    const origin = await tab.frameOrigin(frame, frames);
    for (const n of plan.toggle) {
      const at = await tab.call(frame, 'choicePoint', snapshotId, ref.local, n);
      const sent = await mouseClick(tab, origin.x + at.x, origin.y + at.y, {
        button: 'left',
        count: 1,
        modifiers: ['ctrl'],
      });
      if (sent === 'dialog') return dialogResult(sw, plan.describe, 'choosing options');
    }
  }
  sw.lap('deliver');
  const now = await tab.call(frame, 'choicesNow', snapshotId, ref.local);
  sw.lap('verify');
  // The selection is a set: compared in the list's order, which both readings share.
  const key = (labels: string[]) => JSON.stringify(labels);
  const effect = judgeValue(key(plan.expected), key(plan.before), key(now));
  const evidence = [
    {
      kind: 'selection',
      expected: plan.expected,
      observed: now,
      detail: `the whole selection, read back; before: ${plan.before.length ? plan.before.join(', ') : '(nothing)'}${plan.kind === 'listbox' ? `; ${plan.toggle.length} option(s) Ctrl+clicked` : ''}`,
    },
  ];
  return {
    ...result(effect, sw, evidence, {
      target: plan.describe,
      method: plan.kind === 'listbox' ? 'ctrl_click_options' : 'set_value',
    }),
    ...(effect === 'confirmed' ? {} : { observed: now }),
  };
}

async function setValueOnTab(route: CdpRoute, target: ResolvedTarget, value: string): Promise<ActionResult> {
  const sw = new Stopwatch();
  if (!target.element)
    throw new Refusal('invalid_arguments', 'set_value needs an element_token (from get_window_state)');
  const tab = tabOf(target);
  const ref = target.element.ref as TabElementRef;
  const frame = quickFrameOf(tab, ref);
  const snapshotId = target.element.snapshotId;
  const plan = await tab.call(frame, 'setValue', snapshotId, ref.local, value);
  if (plan.refusal) {
    if (plan.refusal === 'invalid_arguments') throw new Refusal('invalid_arguments', `value: ${plan.detail}`);
    if (plan.refusal === 'no_such_option')
      throw new Refusal('no_such_option', `value: no option matches "${value}"; ${plan.detail}`);
    throw fieldRefusal(plan.refusal, plan.detail);
  }
  if (plan.kind === 'combobox') return chooseOption(route, tab, frame, target, sw, value, plan);
  sw.lap('resolve');
  if (plan.kind === 'toggle' && plan.needsClick) {
    await click(route, target, { button: 'left', count: 1, modifiers: [] });
  } else if (plan.kind === 'text') {
    // Replacing text is what set_value asks for: select it all, then one trusted insertion (or a delete).
    if (!(await tab.call(frame, 'selectAllIn', snapshotId, ref.local)))
      throw new Refusal('focus_failed', 'the field would not take focus');
    try {
      if (value) await send(tab, 'Input.insertText', { text: value });
      else {
        await pressDelete(tab);
      }
    } catch (e) {
      if (e instanceof DialogOpened) {
        sw.lap('deliver');
        return dialogResult(sw, 'the field', 'setting its value');
      }
      throw e;
    }
  }
  sw.lap('deliver');
  const now = await tab.call(frame, 'settledValue', snapshotId, ref.local);
  sw.lap('verify');
  const expected = plan.expected;
  const matches = expected.checked !== null ? now.checked === expected.checked : now.value === expected.value;
  const show = (v: ValueReading) =>
    v.checked !== null ? `checked=${v.checked}` : v.label ? `${v.value} (${v.label})` : v.value;
  const evidence: Evidence[] = [
    {
      kind: plan.kind === 'toggle' ? 'checked_state' : 'field_value',
      expected: show(expected),
      observed: show(now),
      detail: `before: ${show(plan.before)}`,
    },
  ];
  const unchanged = show(now) === show(plan.before);
  const effect = matches ? 'confirmed' : unchanged ? 'no_effect' : 'mismatch';
  const set: ActionResult = { ...result(effect, sw, evidence), ...(matches ? {} : { observed: show(now) }) };
  const secret = 'secret' in plan ? plan.secret : undefined;
  return secret ? maskSecrets(set, secret, [value, plan.before.value, now.value]) : set;
}

type ComboboxPlan = Extract<ValuePlan, { kind: 'combobox' }>;

/**
 * set_value on a select-like combobox (react-select, Downshift...): its search text is not its value, so
 * the option itself is chosen, as a user does: type the value to filter (or open the list), click the
 * option with a trusted click, then read back that the option got the click, the list closed and the
 * combobox shows the option. Typing alone is never reported as a selection.
 */
async function chooseOption(
  route: CdpRoute,
  tab: Tab,
  frame: Frame,
  target: ResolvedTarget,
  sw: Stopwatch,
  value: string,
  plan: ComboboxPlan,
): Promise<ActionResult> {
  const snapshotId = target.element!.snapshotId;
  const local = (target.element!.ref as TabElementRef).local;
  sw.lap('resolve');
  try {
    if (plan.typeable) {
      if (!(await tab.call(frame, 'selectAllIn', snapshotId, local)))
        throw new Refusal('focus_failed', `${plan.describe} would not take focus; nothing was chosen`);
      await send(tab, 'Input.insertText', { text: value }); // the search text filters the options
    } else {
      await click(route, target, { button: 'left', count: 1, modifiers: [] }); // opens the list
    }
    const option = await tab.call(frame, 'findOption', snapshotId, local, value);
    if (option.refusal) throw fieldRefusal(option.refusal, option.detail ?? '');
    if (!option.found) {
      // Leave the widget as it was found: the search text cleared, the list closed.
      if (plan.typeable && (await tab.call(frame, 'selectAllIn', snapshotId, local))) {
        await pressDelete(tab);
        // With the search text gone the list shows everything it offers.
        const all = await tab.call(frame, 'offeredOptions', snapshotId, local);
        if (all.length) option.offered = all;
      }
      await pressNamedKey(tab, 'Escape', 27);
      throw new Refusal(
        'no_such_option',
        `value: ${plan.describe} lists no option "${value}" (it lists: ${option.offered?.length ? option.offered.join(', ') : 'nothing'}); nothing was chosen${plan.typeable ? ' and the search text was cleared' : ''}`,
      );
    }
    if ((await mouseClick(tab, option.x, option.y, { button: 'left', count: 1, modifiers: [] })) === 'dialog')
      return dialogResult(sw, plan.describe, 'choosing an option');
    sw.lap('deliver');
    const after = await tab.call(frame, 'comboboxAfter', snapshotId, local);
    sw.lap('verify');
    const shown = after.shows.includes(option.label);
    const chosen = after.clicked > 0 && !after.expanded && shown;
    const evidence: Evidence[] = [
      {
        kind: 'event',
        expected: `trusted click on ${option.describe}`,
        observed: after.clicked > 0 ? `the option received the trusted click` : 'no click reached the option',
      },
      {
        kind: 'selection',
        expected: option.label,
        observed: after.shows,
        detail: `before: ${plan.before.value || '(nothing shown)'}; the list is ${after.expanded ? 'still open' : 'closed'}`,
      },
    ];
    const effect = chosen ? 'confirmed' : after.shows === plan.before.value ? 'no_effect' : 'mismatch';
    return {
      ...result(effect, sw, evidence, { target: plan.describe, method: 'choose_option' }),
      ...(chosen ? {} : { observed: after.shows }),
    };
  } catch (e) {
    if (e instanceof DialogOpened) {
      sw.lap('deliver');
      return dialogResult(sw, plan.describe, 'choosing an option');
    }
    throw e;
  }
}
