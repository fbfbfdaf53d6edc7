// set_value on native targets: a Value (number), a toggle (true/false), a combo box or list selection, or a
// text's contents, each read back.
import type { ActionArgs } from '../../../contract/actions.js';
import type { ActionResult, Evidence, ResolvedTarget } from '../../../contract/driver.js';
import { Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { maskSecrets } from '../../../contract/secrets.js';
import { judgeValue } from '../../../contract/verdicts.js';
import { IFACE } from '../atspi/model.js';
import { aim, checkEnabled, deliver, nativeResult, webEscalation, type Aim } from './aim.js';
import type { LinuxHost } from '../host.js';
import { ROLE, STATE, TOGGLE_ROLES, has } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { optionIndexOf, PASSWORD_TEXT, pressFirstAction, waitStates } from './element.js';
import { comboSetterOf, profileOf } from '../toolkits/index.js';

/** set_value: a Value (number), a toggle (true/false), a combo box or list selection, or a text's contents. */
export async function setValue(
  host: LinuxHost,
  target: ResolvedTarget,
  { value: asked }: ActionArgs['setValue'],
): Promise<ActionResult> {
  if (Array.isArray(asked))
    throw new Refusal(
      'invalid_arguments',
      'value: a list chooses several options of a multi-select list on a browser tab; a native window takes one value (a string)',
    );
  const value = asked;
  let mode = target.deliveryMode;
  const sw = new Stopwatch();
  if (!target.element)
    throw new Refusal('invalid_arguments', 'set_value needs an element_token (from get_window_state)');
  const a = await aim(host, target);
  const el = a.element!;
  const { atspi } = a;
  checkEnabled(el, a.states);
  // A combo box without Selection is set the way its toolkit needs (toolkits/: Qt by keys, GTK 4 through its
  // popover), by keys, which reach only the focused window: set_value takes no delivery_mode, so it is
  // delivered in the foreground (raised, set, focus given back), and says so.
  const combo = comboSetterOf(atspi, el);
  if (combo) mode = 'foreground';
  return deliver(mode, a.win, async () => {
    let evidence: Evidence[];
    let effect: ActionResult['effect'];
    /** The field's text before and after, when set_value replaced it (masked too in a password text). */
    let contents: string[] = [];
    const show = (v: unknown) => String(v);
    if (TOGGLE_ROLES.has(el.role)) {
      if (value !== 'true' && value !== 'false')
        throw new Refusal(
          'invalid_arguments',
          `value: "${el.name}" is a ${el.role === ROLE.radioButton ? 'radio button' : 'check box'}; pass "true" or "false"`,
        );
      const want = value === 'true';
      const was = has(a.states, STATE.checked);
      sw.lap('resolve');
      if (was !== want) await pressFirstAction(atspi, el);
      sw.lap('deliver');
      const now = has(await waitStates(atspi, el, (s) => has(s, STATE.checked) === want), STATE.checked);
      sw.lap('verify');
      evidence = [
        {
          kind: 'checked_state',
          expected: `checked=${want}`,
          observed: `checked=${now}`,
          detail: `before: checked=${was}`,
        },
      ];
      effect = judgeValue(want, was, now);
    } else if (
      el.interfaces.includes(IFACE.value) &&
      (!el.interfaces.includes(IFACE.editable) || (value.trim() !== '' && Number.isFinite(Number(value))))
    ) {
      // A number for a spin box goes through Value too (its text is the toolkit's formatting of it).
      const number = Number(value);
      if (!Number.isFinite(number) || value.trim() === '')
        throw new Refusal('invalid_arguments', `value: "${el.name}" takes a number`);
      const was = Number(await atspi.prop(el, IFACE.value, 'CurrentValue'));
      sw.lap('resolve');
      await atspi.setProp(el, IFACE.value, 'CurrentValue', 'd', number);
      sw.lap('deliver');
      const readValue = () => atspi.prop(el, IFACE.value, 'CurrentValue').then(Number);
      let now = await readValue();
      for (let i = 0; i < 25 && now !== number; i++) {
        await new Promise((r) => setTimeout(r, 20));
        now = await readValue();
      }
      sw.lap('verify');
      evidence = [{ kind: 'value', expected: show(number), observed: show(now), detail: `before: ${was}` }];
      effect = judgeValue(number, was, now);
    } else if (
      (el.role === ROLE.comboBox ||
        el.role === ROLE.list ||
        el.role === ROLE.listBox ||
        el.role === ROLE.pageTabList) &&
      el.interfaces.includes(IFACE.selection)
    ) {
      const index = await optionIndexOf(atspi, el, value);
      const was = await selectedName(atspi, el);
      sw.lap('resolve');
      await atspi.selectChild(el, index);
      sw.lap('deliver');
      await new Promise((r) => setTimeout(r, 20));
      const now = await selectedName(atspi, el);
      sw.lap('verify');
      evidence = [{ kind: 'selection', expected: value, observed: now, detail: `before: ${was}` }];
      effect = judgeValue(value, was, now);
    } else if (combo) {
      ({ effect, evidence } = await combo.set(a, el, value, mode, sw));
    } else if (el.interfaces.includes(IFACE.editable)) {
      if (!profileOf(atspi, el.bus).acceptsEdits(a.states))
        throw new Refusal('element_readonly', `"${el.name}" is read-only`);
      const was = await atspi.text(el);
      sw.lap('resolve');
      await atspi.setTextContents(el, value);
      sw.lap('deliver');
      const now = await atspi.text(el);
      sw.lap('verify');
      evidence = [{ kind: 'field_value', expected: value, observed: now, detail: `before: ${was}` }];
      effect = judgeValue(value, was, now);
      contents = [was, now];
    } else {
      throw new Refusal(
        'not_settable',
        `"${el.name || 'the element'}" (${el.role}) has no value AT-SPI can set (no Value, selection, toggle or EditableText)`,
      );
    }
    if (el.web && effect === 'confirmed') {
      evidence.push({
        kind: 'web_content',
        detail: 'under a "document web" ancestor: accessibility state is not proof of what the page holds',
      });
      const unproven = nativeResult('unverifiable', 'accessibility', sw, evidence, mode, {
        target: el.name,
        escalation: webEscalation(a.win, false, mode, 'set_value'),
      });
      return el.role === ROLE.passwordText ? maskSecrets(unproven, PASSWORD_TEXT, [value, ...contents]) : unproven;
    }
    const observed = evidence[0].observed;
    const set = nativeResult(effect, 'accessibility', sw, evidence, mode, {
      target: el.name,
      ...(effect === 'confirmed' ? {} : { observed }),
      // Web content that did not take the value: say which route can deliver there.
      ...(el.web ? { escalation: webEscalation(a.win, false, mode, 'set_value') } : {}),
    });
    return el.role === ROLE.passwordText ? maskSecrets(set, PASSWORD_TEXT, [value, ...contents]) : set;
  });
}

async function selectedName(atspi: Aim['atspi'], el: NativeRef): Promise<string | null> {
  const [[bus, path]] = await atspi.call(el, IFACE.selection, 'GetSelectedChild', 'i', [0]).catch(() => [['', '']]);
  if (!bus || path === '/org/a11y/atspi/null') return null;
  return String(await atspi.prop({ bus, path }, IFACE.accessible, 'Name'));
}
