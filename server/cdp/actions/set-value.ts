// set_value with a list on a tab: a <select multiple> set by the page agent, or an ARIA multi-select
// listbox whose options are Ctrl+clicked (a trusted click that toggles one option, as a user does). Either
// way the whole selection is read back and must be exactly the list.
import type { ActionResult, ResolvedTarget } from '../../contract/driver.js';
import { Stopwatch } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import { judgeValue } from '../../contract/verdicts.js';
import { dialogResult, mouseClick, result, tabOf, withSideEffects, type CdpRoute } from './aim.js';
import { frameOf, type TabElementRef } from '../snapshot.js';

export function chooseSeveral(route: CdpRoute, target: ResolvedTarget, values: string[]): Promise<ActionResult> {
  return withSideEffects(route, target, () => choose(target, values));
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
