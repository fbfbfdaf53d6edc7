// set_value on native targets: a Value (number), a toggle (true/false), a combo box or list selection, or a
// text's contents, each read back.
import type { ActionArgs } from '../../../contract/actions.js';
import type { ActionResult, Evidence, ResolvedTarget } from '../../../contract/driver.js';
import { Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { maskSecrets } from '../../../contract/secrets.js';
import { judgeValue } from '../../../contract/verdicts.js';
import { IFACE } from '../atspi/model.js';
import { dropDownValue, labelsUnder } from '../atspi/dropdown.js';
import { aim, checkEnabled, deliver, nativeResult, requireKeyboardFocus, webEscalation, type Aim } from './aim.js';
import type { LinuxHost } from '../host.js';
import { clickAt, moveTo, pollUntil, pressKeys } from '../transport/input.js';
import { ROLE, STATE, TOGGLE_ROLES, has } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { acceptsEdits, PASSWORD_TEXT, pressFirstAction, waitStates } from './element.js';

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
  // A Qt combo box is set by keys, which reach only the focused window: set_value takes no delivery_mode,
  // so it is delivered in the foreground (raised, set, focus given back), and says so.
  const qtCombo =
    el.role === ROLE.comboBox && !el.interfaces.includes(IFACE.selection) && atspi.knownToolkit(el.bus).utf16;
  const dropDown =
    el.role === ROLE.comboBox && !el.interfaces.includes(IFACE.selection) && atspi.knownToolkit(el.bus).windowRelative;
  if (qtCombo || dropDown) mode = 'foreground';
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
      const options = await optionsOf(atspi, el);
      const index = options.findIndex((o) => o.name === value);
      if (index < 0)
        throw new Refusal(
          'no_such_option',
          `value: no option of "${el.name}" is named "${value}"; options: ${options.map((o) => o.name).join(', ')}`,
          { options: options.map((o) => o.name) },
        );
      const was = await selectedName(atspi, el);
      sw.lap('resolve');
      await atspi.selectChild(el, index);
      sw.lap('deliver');
      await new Promise((r) => setTimeout(r, 20));
      const now = await selectedName(atspi, el);
      sw.lap('verify');
      evidence = [{ kind: 'selection', expected: value, observed: now, detail: `before: ${was}` }];
      effect = judgeValue(value, was, now);
    } else if (qtCombo) {
      ({ effect, evidence } = await qtComboKeys(a, el, value, mode, sw));
    } else if (dropDown) {
      ({ effect, evidence } = await gtk4DropDown(a, el, value, sw));
    } else if (el.interfaces.includes(IFACE.editable)) {
      if (!acceptsEdits(atspi.knownToolkit(el.bus).atk, a.states))
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

/**
 * A Qt combo box offers no Selection, and its options' own actions select them in the closed popup's view
 * only. Keys do what a user does: focus it, Home, then Down to the option; its name (Qt names a combo box
 * by its current text) proves the result. Keys need the window's keyboard focus.
 */
async function qtComboKeys(
  a: Aim,
  el: NativeRef,
  value: string,
  mode: 'background' | 'foreground',
  sw: Stopwatch,
): Promise<{ effect: ActionResult['effect']; evidence: Evidence[] }> {
  const { atspi } = a;
  const options = await optionsOf(atspi, el);
  const index = options.findIndex((o) => o.name === value);
  if (index < 0)
    throw new Refusal(
      'no_such_option',
      `value: no option of "${el.name}" is named "${value}"; options: ${options.map((o) => o.name).join(', ')}`,
      { options: options.map((o) => o.name) },
    );
  await requireKeyboardFocus(a.win, mode);
  const name = () => atspi.prop(el, IFACE.accessible, 'Name').then(String);
  const was = await name();
  // Qt's GrabFocus answers false for a combo box; a click opens its popup with the keyboard in it.
  const open = !has(a.states, STATE.focused) && !(await atspi.grabFocus(el).catch(() => false));
  sw.lap('resolve');
  if (open) {
    await moveTo(el.box.x + el.box.w / 2, el.box.y + el.box.h / 2);
    await clickAt('left', 1, []);
    await new Promise((r) => setTimeout(r, 150));
  }
  await pressKeys(['Home']);
  for (let i = 0; i < index; i++) await pressKeys(['Down']);
  if (open) await pressKeys(['Enter']);
  sw.lap('deliver');
  let now = await name();
  for (let i = 0; i < 25 && now !== value; i++) {
    await new Promise((r) => setTimeout(r, 20));
    now = await name();
  }
  sw.lap('verify');
  const evidence: Evidence[] = [
    {
      kind: 'selection',
      expected: value,
      observed: now,
      detail: `${open ? 'clicked open, ' : ''}XTest Home and Down x${index}${open ? ', Enter' : ''}; before: ${was}`,
    },
  ];
  return { effect: judgeValue(value, was, now), evidence };
}

/**
 * A GTK 4 drop-down offers no Selection, no action and no focus call; its options exist only while its
 * popup is open. So as a user would: click it open, read the options of its list, Home and Down to the
 * one asked for, Enter; the label it shows afterwards proves the result.
 */
async function gtk4DropDown(
  a: Aim,
  el: NativeRef,
  value: string,
  sw: Stopwatch,
): Promise<{ effect: ActionResult['effect']; evidence: Evidence[] }> {
  const { atspi } = a;
  const was = await dropDownValue(atspi, el);
  sw.lap('resolve');
  await moveTo(el.box.x + el.box.w / 2, el.box.y + el.box.h / 2);
  await clickAt('left', 1, []);
  let options: string[] = [];
  await pollUntil(async () => (options = await dropDownOptions(atspi, el)).length > 0, 1000);
  const index = options.indexOf(value);
  if (index < 0) {
    await pressKeys(['Escape']);
    if (!options.length)
      throw new Refusal('not_settable', `"${el.name}" showed no list of options when clicked open; nothing was chosen`);
    throw new Refusal(
      'no_such_option',
      `value: no option of "${el.name}" is named "${value}"; options: ${options.join(', ')}`,
      { options },
    );
  }
  await pressKeys(['Home']);
  for (let i = 0; i < index; i++) await pressKeys(['Down']);
  await pressKeys(['Enter']);
  sw.lap('deliver');
  let now = await dropDownValue(atspi, el);
  for (let i = 0; i < 25 && now !== value; i++) {
    await new Promise((r) => setTimeout(r, 20));
    now = await dropDownValue(atspi, el);
  }
  sw.lap('verify');
  const evidence: Evidence[] = [
    {
      kind: 'selection',
      expected: value,
      observed: now ?? '(none)',
      detail: `clicked open, XTest Home, Down x${index}, Enter; the label the drop-down shows, before: ${was}`,
    },
  ];
  return { effect: judgeValue(value, was, now), evidence };
}

/** The options of an open GTK 4 drop-down: the first label of each item of its popup's list. */
async function dropDownOptions(atspi: Aim['atspi'], el: NativeRef): Promise<string[]> {
  const children = await atspi.children(el);
  for (const popup of children.slice(1)) {
    const nodes = await labelsUnder(atspi, popup);
    const list = nodes.find((n) => n.role === ROLE.list);
    if (!list) continue;
    const items = await atspi.children(list.ref);
    const names = await Promise.all(
      items.map(async (item) => (await labelsUnder(atspi, item, 10)).find((n) => n.role === ROLE.label)?.name ?? ''),
    );
    return names;
  }
  return [];
}

/** The selectable options of a combo box (its popup menu's items) or list. */
async function optionsOf(atspi: Aim['atspi'], el: NativeRef): Promise<Array<{ name: string }>> {
  let children = await atspi.children(el);
  if (el.role === ROLE.comboBox && children.length === 1) {
    const [[role]] = [await atspi.call(children[0], IFACE.accessible, 'GetRole')];
    if (Number(role) === ROLE.menu || Number(role) === ROLE.list) children = await atspi.children(children[0]);
  }
  return Promise.all(
    children.map(async (c) => ({ name: String(await atspi.prop(c, IFACE.accessible, 'Name').catch(() => '')) })),
  );
}

async function selectedName(atspi: Aim['atspi'], el: NativeRef): Promise<string | null> {
  const [[bus, path]] = await atspi.call(el, IFACE.selection, 'GetSelectedChild', 'i', [0]).catch(() => [['', '']]);
  if (!bus || path === '/org/a11y/atspi/null') return null;
  return String(await atspi.prop({ bus, path }, IFACE.accessible, 'Name'));
}
