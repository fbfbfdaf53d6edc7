// click / double / right, scroll and drag on native targets. An element's own AT-SPI action comes first
// (verified by reading its state back); pixel events through XTest otherwise, reported unverifiable unless
// a read-back proves them (a toggled check box, a moved scroll bar, a dragged slider or text selection).
import type {
  ActionResult,
  ClickOptions,
  DragOptions,
  Evidence,
  ResolvedTarget,
  ScrollOptions,
} from '../../../contract/driver.js';
import { Stopwatch } from '../../../contract/driver.js';
import { Refusal } from '../../../contract/refusal.js';
import { IFACE, type Atspi } from '../atspi/model.js';
import {
  aim,
  checkEnabled,
  deliver,
  nativeResult,
  refFor,
  refuseBesideUnplacedPopover,
  requireKeyboardFocus,
  webEscalation,
  webLike,
  type Aim,
} from './aim.js';
import type { LinuxHost } from '../host.js';
import { walkWindow } from '../atspi/walk.js';
import { clickAt, dragPath, moveTo, pressKeys, wheel } from '../transport/input.js';
import { ROLE, STATE, TOGGLE_ROLES, has, roleName } from '../atspi/roles.js';
import type { NativeRef } from '../atspi/tree.js';
import { waitStates } from './typing.js';
import { dropDownValue, labelsUnder } from '../atspi/dropdown.js';
import { judgeValue } from '../../../contract/verdicts.js';
import { topWindowAt } from '../transport/x11.js';

const PRESS_ACTIONS = ['click', 'press', 'toggle', 'activate', 'jump', 'select'];
const MENU_ACTIONS = ['menu', 'showmenu', 'show menu', 'popup', 'context menu'];

const describeStates = (s: [number, number]) =>
  (Object.entries(STATE) as Array<[string, number]>)
    .filter(([, bit]) => has(s, bit))
    .map(([name]) => name)
    .filter((n) => ['checked', 'focused', 'pressed', 'expanded', 'selected', 'active'].includes(n))
    .join(',') || 'none';

/** A toggle's verdict from its checked state, read before and after; the evidence says both. */
function checkedVerdict(
  before: [number, number],
  after: [number, number],
  evidence: Evidence[],
): 'confirmed' | 'no_effect' {
  evidence.push({
    kind: 'checked_state',
    expected: `checked=${!has(before, STATE.checked)}`,
    observed: `checked=${has(after, STATE.checked)}`,
  });
  return has(after, STATE.checked) !== has(before, STATE.checked) ? 'confirmed' : 'no_effect';
}

export async function clickNative(
  host: LinuxHost,
  target: ResolvedTarget,
  options: ClickOptions,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const a = await aim(host, target);
  if (a.element) checkEnabled(a.element, a.states);
  return deliver(mode, a.win, async () => {
    if (
      a.element &&
      !a.screenPoint &&
      options.modifiers.length === 0 &&
      options.count === 1 &&
      a.element.interfaces.includes(IFACE.action)
    ) {
      const names = (await a.atspi.actions(a.element).catch(() => [])).map((n) => n.toLowerCase());
      const wanted = options.button === 'right' ? MENU_ACTIONS : options.button === 'left' ? PRESS_ACTIONS : [];
      const index = names.findIndex((n) => wanted.includes(n));
      if (index >= 0) return actionClick(a, a.element, index, names[index], sw, mode);
    }
    if (a.element?.unplacedIn && !a.screenPoint) return keyClick(a, a.element, a.element.unplacedIn, options, sw, mode);
    return pixelClick(a, options, sw, mode);
  });
}

async function actionClick(
  a: Aim,
  el: NativeRef,
  index: number,
  name: string,
  sw: Stopwatch,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  const before = a.states;
  sw.lap('resolve');
  const ok = await a.atspi.doAction(el, index);
  sw.lap('deliver');
  const toggles = TOGGLE_ROLES.has(el.role);
  const after = toggles
    ? await waitStates(a.atspi, el, (s) => has(s, STATE.checked) !== has(before, STATE.checked))
    : await settle(a.atspi, el, before);
  sw.lap('verify');
  const label = `${el.name || 'element'} (${roleName(el.role)})`;
  const evidence: Evidence[] = [
    {
      kind: 'accessibility_action',
      expected: `"${name}" performed by ${label}`,
      observed: ok ? `DoAction("${name}") accepted by the element's toolkit` : `DoAction("${name}") refused`,
      detail: `states before: ${describeStates(before)}; after: ${describeStates(after)}`,
    },
  ];
  if (!ok)
    return nativeResult('no_effect', 'accessibility', sw, evidence, mode, {
      target: label,
      method: 'accessibility_action',
    });
  if (el.web)
    return nativeResult('unverifiable', 'accessibility', sw, evidence, mode, {
      target: label,
      method: 'accessibility_action',
      escalation: webEscalation(a.win, false, mode),
    });
  if (toggles)
    return nativeResult(checkedVerdict(before, after, evidence), 'accessibility', sw, evidence, mode, {
      target: label,
      method: 'accessibility_action',
    });
  // The element's own toolkit ran the action on that very element: the contract's "the target itself
  // received it". Buttons keep no state that could show more.
  return nativeResult('confirmed', 'accessibility', sw, evidence, mode, {
    target: label,
    method: 'accessibility_action',
  });
}

/** States after an action, once they stop changing (or at once when nothing changes). */
async function settle(atspi: Atspi, el: NativeRef, before: [number, number]): Promise<[number, number]> {
  await new Promise((r) => setTimeout(r, 30));
  const now = await atspi.states(el).catch(() => before);
  return now;
}

/** The screen point an action aims at: the px form, else the element's centre, else the window's centre. */
function pointOf(a: Aim): { x: number; y: number } {
  if (a.screenPoint) return a.screenPoint;
  if (a.element && a.element.box.w > 0)
    return { x: a.element.box.x + a.element.box.w / 2, y: a.element.box.y + a.element.box.h / 2 };
  return { x: a.win.bounds.x + a.win.bounds.w / 2, y: a.win.bounds.y + a.win.bounds.h / 2 };
}

/**
 * The deepest element of the window at a screen point (what a pixel event there reaches), if AT-SPI knows;
 * a check box's or radio button's own label or indicator stands for the toggle it belongs to (a click
 * there toggles it, and its state is what proves the click).
 */
async function elementAt(a: Aim, p: { x: number; y: number }): Promise<NativeRef | null> {
  if (!a.win.frame) return null;
  const deepest = await a.atspi.at(a.win.frame, p.x, p.y, a.win.bounds);
  const hit = (await refFor(a.atspi, a.win, deepest, null)).ref;
  if (TOGGLE_ROLES.has(hit.role)) return hit;
  let current: { bus: string; path: string } = deepest;
  for (let up = 0; up < TOGGLE_PART_DEPTH; up++) {
    const parent = (await a.atspi.prop(current, IFACE.accessible, 'Parent').catch(() => null)) as
      | [string, string]
      | null;
    if (!parent || parent[1] === '/org/a11y/atspi/null') break;
    current = { bus: parent[0], path: parent[1] };
    const [[role]] = [await a.atspi.call(current, IFACE.accessible, 'GetRole').catch(() => [0])];
    if (TOGGLE_ROLES.has(Number(role))) return (await refFor(a.atspi, a.win, current, hit.web)).ref;
  }
  return hit;
}
/** How far above the point's element a toggle may be for the point to be part of it (label, then indicator box). */
const TOGGLE_PART_DEPTH = 2;

/** What a window's pointer events go through, for the evidence. */
const pointerOf = (a: Aim) => (a.win.surface === 'wayland' ? 'virtual pointer' : 'XTest');

/** Refuses a pointer event that would land on another window covering the point. */
async function checkUncovered(a: Aim, p: { x: number; y: number }): Promise<void> {
  // A point from an element (the px form was checked in aim): not in or beside a popover nobody places.
  if (!a.screenPoint) await refuseBesideUnplacedPopover(a.atspi, a.win, a.element?.unplacedIn);
  await a.host.checkPoint(p); // a window agents may not drive is refused before it is named as a cover
  // An element of an open popover is drawn in its own surface, above the window and maybe beyond it.
  const surface = a.element?.surface;
  if (surface && p.x >= surface.x && p.y >= surface.y && p.x < surface.x + surface.w && p.y < surface.y + surface.h)
    return;
  const top = await topWindowAt(p.x, p.y);
  if (top && top.id !== a.win.id) {
    throw new Refusal(
      'element_covered',
      `the point (${Math.round(p.x)}, ${Math.round(p.y)}) of window ${a.win.id} is covered by window ${top.id} ("${top.title}"); nothing was clicked. Use delivery_mode "foreground" to raise the window first`,
      { covering_element: `window ${top.id} "${top.title}"` },
    );
  }
  if (
    p.x < a.win.bounds.x ||
    p.y < a.win.bounds.y ||
    p.x >= a.win.bounds.x + a.win.bounds.w ||
    p.y >= a.win.bounds.y + a.win.bounds.h
  ) {
    throw new Refusal(
      'invalid_arguments',
      `the point (${Math.round(p.x - a.win.bounds.x)}, ${Math.round(p.y - a.win.bounds.y)}) is outside the window's ${a.win.bounds.w}x${a.win.bounds.h} screenshot`,
    );
  }
}

async function pixelClick(
  a: Aim,
  options: ClickOptions,
  sw: Stopwatch,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  const p = pointOf(a);
  await checkUncovered(a, p);
  const hit = a.element ?? (await elementAt(a, p));
  const before = hit ? await a.atspi.states(hit).catch(() => [0, 0] as [number, number]) : null;
  const wasShown = hit?.dropDown ? await dropDownValue(a.atspi, hit.dropDown).catch(() => null) : null;
  sw.lap('resolve');
  await moveTo(p.x, p.y);
  await clickAt(options.button, options.count, options.modifiers);
  sw.lap('deliver');
  await new Promise((r) => setTimeout(r, 50));
  // A toggle (GTK 4's check boxes offer no action, so their clicks come here) gets the same bounded wait
  // for its state as an action's.
  const toggle = hit && before && TOGGLE_ROLES.has(hit.role) && options.button === 'left' && options.count === 1;
  const after = hit
    ? await (toggle
        ? waitStates(a.atspi, hit, (s) => has(s, STATE.checked) !== has(before!, STATE.checked))
        : a.atspi.states(hit)
      ).catch(() => null)
    : null;
  sw.lap('verify');
  const label = hit ? `${hit.name || 'element'} (${roleName(hit.role)})` : `window ${a.win.id}`;
  const evidence: Evidence[] = [
    {
      kind: 'pixel_event',
      detail: `${pointerOf(a)} ${options.button} x${options.count} at screen (${Math.round(p.x)}, ${Math.round(p.y)}) over ${label}`,
    },
  ];
  if (hit && before && after)
    evidence.push({ kind: 'states', observed: `before: ${describeStates(before)}; after: ${describeStates(after)}` });
  const web = webLike(a.win, hit);
  if (web)
    return nativeResult('unverifiable', 'pixel', sw, evidence, mode, {
      target: label,
      method: 'pixel_click',
      escalation: webEscalation(a.win, true, mode),
    });
  if (hit?.dropDown && options.button === 'left' && options.count === 1) {
    const chosen = await dropDownChoice(a.atspi, hit, wasShown);
    evidence.push(chosen.evidence);
    return nativeResult(chosen.effect, 'pixel', sw, evidence, mode, {
      target: label,
      method: 'pixel_click',
      ...(chosen.effect === 'confirmed' ? {} : { observed: chosen.evidence.observed }),
    });
  }
  if (
    hit &&
    before &&
    after &&
    TOGGLE_ROLES.has(hit.role) &&
    options.button === 'left' &&
    options.count === 1 &&
    has(after, STATE.checked) !== has(before, STATE.checked)
  )
    return nativeResult(checkedVerdict(before, after, evidence), 'pixel', sw, evidence, mode, {
      target: label,
      method: 'pixel_click',
    });
  return nativeResult('unverifiable', 'pixel', sw, evidence, mode, {
    target: label,
    method: 'pixel_click',
    escalation: {
      target: 'verify',
      reason: 'a pixel click leaves no state AT-SPI can prove here; call get_window_state and check the screenshot',
    },
  });
}

/** How many Tabs a click by keys may press to bring the focus to its element in a popover. */
const MAX_TABS = 12;

/**
 * A click on an element of a popover the compositor draws where it does not say (GTK 4 on Wayland): with no
 * point to aim at, it goes as a keyboard user's would (GTK gives the open popover the keyboard). An item of
 * a drop-down's open list: Home, Down to it, Enter, proven by what the drop-down shows; anything else: Tab
 * until it has the focus, then space, proven by a toggle's state (else unverifiable).
 */
async function keyClick(
  a: Aim,
  el: NativeRef,
  popover: string,
  options: ClickOptions,
  sw: Stopwatch,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  const label = `${el.name || 'element'} (${roleName(el.role)})`;
  if (options.button !== 'left' || options.count !== 1 || options.modifiers.length)
    throw new Refusal(
      'unavailable',
      `${label} is drawn in popover "${popover}", which the compositor places where it does not say, so a ${options.button} click${options.count > 1 ? ` x${options.count}` : ''}${options.modifiers.length ? ` with ${options.modifiers.join('+')}` : ''} cannot be aimed at it; nothing was sent. A plain left click by its element_token goes by keys`,
    );
  await requireKeyboardFocus(a.win, mode);
  const where = `in popover "${popover}", drawn where the compositor does not say`;
  const why = `${where}, so no pointer event was aimed at it`;
  if (el.dropDown) {
    const item = await listItemOf(a.atspi, el);
    if (!item)
      throw new Refusal(
        'unavailable',
        `${label} is in the open list of a drop-down but in none of its items; nothing was sent`,
      );
    const was = await dropDownValue(a.atspi, el.dropDown).catch(() => null);
    sw.lap('resolve');
    await pressKeys(['Home']);
    for (let i = 0; i < item.index; i++) await pressKeys(['Down']);
    await pressKeys(['Enter']);
    sw.lap('deliver');
    const chosen = await dropDownChoice(a.atspi, el, was);
    sw.lap('verify');
    const evidence: Evidence[] = [
      {
        kind: 'key_event',
        detail: `virtual keyboard (wtype) Home, Down x${item.index}, Enter in the open list ${why}`,
      },
      chosen.evidence,
    ];
    return nativeResult(chosen.effect, 'synthetic_events', sw, evidence, mode, {
      target: label,
      method: 'key_events',
      ...(chosen.effect === 'confirmed' ? {} : { observed: chosen.evidence.observed }),
    });
  }
  // What takes the focus: the element, or the toggle its label or indicator belongs to.
  const focusable = await focusableOf(a.atspi, el);
  if (!focusable)
    throw new Refusal(
      'unavailable',
      `${label} is ${where}, and neither it nor its toggle can take the keyboard focus, so keys cannot reach it; nothing was sent`,
    );
  const before = await a.atspi.states(focusable.ref);
  sw.lap('resolve');
  let tabs = 0;
  let states = before;
  while (!has(states, STATE.focused) && tabs < MAX_TABS) {
    await pressKeys(['Tab']);
    tabs++;
    states = await waitStates(a.atspi, focusable.ref, (s) => has(s, STATE.focused));
  }
  const keys = `${tabs ? `Tab x${tabs}, ` : ''}space`;
  if (!has(states, STATE.focused)) {
    sw.lap('deliver');
    return nativeResult(
      'no_effect',
      'synthetic_events',
      sw,
      [
        {
          kind: 'key_event',
          detail: `virtual keyboard (wtype) Tab x${tabs}: the focus never reached ${label} ${why}; it was not activated`,
        },
      ],
      mode,
      { target: label, method: 'key_events' },
    );
  }
  await pressKeys(['space']);
  sw.lap('deliver');
  const toggles = TOGGLE_ROLES.has(focusable.ref.role);
  const after = toggles
    ? await waitStates(a.atspi, focusable.ref, (s) => has(s, STATE.checked) !== has(before, STATE.checked))
    : await a.atspi.states(focusable.ref).catch(() => states);
  sw.lap('verify');
  const evidence: Evidence[] = [
    { kind: 'key_event', detail: `virtual keyboard (wtype) ${keys} to ${label} ${why}` },
    { kind: 'states', observed: `before: ${describeStates(before)}; after: ${describeStates(after)}` },
  ];
  if (toggles)
    return nativeResult(checkedVerdict(before, after, evidence), 'synthetic_events', sw, evidence, mode, {
      target: label,
      method: 'key_events',
    });
  return nativeResult('unverifiable', 'synthetic_events', sw, evidence, mode, {
    target: label,
    method: 'key_events',
    escalation: {
      target: 'verify',
      reason:
        'space on the focused element leaves no state AT-SPI can prove here; call get_window_state to see what changed',
    },
  });
}

/** The list item (and its index in its list) that an element of a drop-down's open list is part of. */
async function listItemOf(atspi: Atspi, el: NativeRef): Promise<{ index: number } | null> {
  let current: { bus: string; path: string } = el;
  for (let up = 0; up < 4; up++) {
    const [[role]] = [await atspi.call(current, IFACE.accessible, 'GetRole').catch(() => [0])];
    const parent = (await atspi.prop(current, IFACE.accessible, 'Parent').catch(() => null)) as [string, string] | null;
    if (!parent || parent[1] === '/org/a11y/atspi/null') return null;
    if (Number(role) === ROLE.listItem) {
      const siblings = await atspi.children({ bus: parent[0], path: parent[1] });
      const index = siblings.findIndex((s) => s.path === current.path);
      return index < 0 ? null : { index };
    }
    current = { bus: parent[0], path: parent[1] };
  }
  return null;
}

/** The element itself when it can take the keyboard focus, else the toggle its label or indicator is part of. */
async function focusableOf(atspi: Atspi, el: NativeRef): Promise<{ ref: NativeRef } | null> {
  if (has(await atspi.states(el), STATE.focusable)) return { ref: el };
  let current: { bus: string; path: string } = el;
  for (let up = 0; up < TOGGLE_PART_DEPTH; up++) {
    const parent = (await atspi.prop(current, IFACE.accessible, 'Parent').catch(() => null)) as [string, string] | null;
    if (!parent || parent[1] === '/org/a11y/atspi/null') return null;
    current = { bus: parent[0], path: parent[1] };
    const [[role]] = [await atspi.call(current, IFACE.accessible, 'GetRole').catch(() => [0])];
    if (TOGGLE_ROLES.has(Number(role))) return { ref: (await refFor(atspi, el.win, current, el.web)).ref };
  }
  return null;
}

/**
 * A click on an item of an open GTK 4 drop-down list, judged by what the drop-down shows afterwards (read
 * until it shows the item, bounded): the item's label there proves the choice.
 */
async function dropDownChoice(
  atspi: Atspi,
  item: NativeRef,
  was: string | null,
): Promise<{ effect: ActionResult['effect']; evidence: Evidence }> {
  const option =
    item.role === ROLE.label
      ? item.name
      : ((await labelsUnder(atspi, item, 10)).find((n) => n.role === ROLE.label)?.name ?? '');
  const shown = () => dropDownValue(atspi, item.dropDown!).catch(() => null);
  let now = await shown();
  for (let i = 0; i < 25 && option && now !== option; i++) {
    await new Promise((r) => setTimeout(r, 20));
    now = await shown();
  }
  const evidence: Evidence = {
    kind: 'selection',
    expected: option || '(an item with no label)',
    observed: now ?? '(none)',
    detail: `the label the drop-down shows, before: ${was ?? '(none)'}`,
  };
  if (!option) return { effect: 'unverifiable', evidence };
  return { effect: judgeValue(option, was, now), evidence };
}

/** The window's scroll bars and their values (what a wheel event moves). */
async function scrollBars(a: Aim): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!a.win.frame || !a.win.app) return out;
  await Promise.all(
    (await walkWindow(a.atspi, a.win.frame)).rows
      .filter((r) => r.item.role === ROLE.scrollBar && r.item.interfaces.includes(IFACE.value))
      .map(async ({ item }) => {
        const v = await a.atspi.prop(item.ref, IFACE.value, 'CurrentValue').catch(() => null);
        if (v !== null) out.set(item.ref.path, Number(v));
      }),
  );
  return out;
}

export async function scrollNative(
  host: LinuxHost,
  target: ResolvedTarget,
  options: ScrollOptions,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const a = await aim(host, target);
  return deliver(mode, a.win, async () => {
    const p = pointOf(a);
    await checkUncovered(a, p);
    const before = await scrollBars(a);
    sw.lap('resolve');
    await moveTo(p.x, p.y);
    await wheel(options.direction, options.amount * (options.by === 'page' ? 10 : 1));
    sw.lap('deliver');
    await new Promise((r) => setTimeout(r, 80));
    const after = await scrollBars(a);
    sw.lap('verify');
    const sign = options.direction === 'down' || options.direction === 'right' ? 1 : -1;
    const moved = [...after].filter(([k, v]) => before.has(k) && v !== before.get(k));
    const evidence: Evidence[] = [
      {
        kind: 'scroll_bars',
        expected: `a scroll bar moves ${options.direction}`,
        observed: moved.length
          ? moved.map(([k, v]) => `${k}: ${before.get(k)} → ${v}`).join('; ')
          : `no scroll bar moved (${after.size} in the window)`,
      },
    ];
    const web = a.element?.web || a.win.browserLike;
    if (web)
      return nativeResult('unverifiable', 'pixel', sw, evidence, mode, {
        escalation: webEscalation(a.win, true, mode),
      });
    if (moved.some(([k, v]) => Math.sign(v - before.get(k)!) === sign))
      return nativeResult('confirmed', 'pixel', sw, evidence, mode);
    return nativeResult(
      after.size ? 'no_effect' : 'unverifiable',
      'pixel',
      sw,
      evidence,
      mode,
      after.size
        ? {}
        : { escalation: { target: 'verify', reason: 'nothing here reports a scroll position; check the screenshot' } },
    );
  });
}

/**
 * What a drag can change on the element it grabs, as AT-SPI reports it: a value (a slider, a scroll bar)
 * or a text selection. Null when the element offers neither.
 */
async function dragState(atspi: Atspi, el: NativeRef | null): Promise<string | null> {
  if (!el) return null;
  const parts: string[] = [];
  if (el.interfaces.includes(IFACE.value))
    parts.push(`value ${Number(await atspi.prop(el, IFACE.value, 'CurrentValue'))}`);
  if (el.interfaces.includes(IFACE.text)) {
    const [count] = await atspi.call(el, IFACE.text, 'GetNSelections');
    const range = Number(count) > 0 ? await atspi.call(el, IFACE.text, 'GetSelection', 'i', [0]) : null;
    parts.push(range ? `selection ${range[0]}-${range[1]}` : 'no selection');
  }
  return parts.length ? parts.join(', ') : null;
}

export async function dragNative(
  host: LinuxHost,
  target: ResolvedTarget,
  options: DragOptions,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const a = await aim(host, target);
  return deliver(mode, a.win, async () => {
    const origin = target.kind === 'desktop' ? { x: 0, y: 0 } : { x: a.win.bounds.x, y: a.win.bounds.y };
    const from = { x: origin.x + options.from.x, y: origin.y + options.from.y };
    const to = { x: origin.x + options.to.x, y: origin.y + options.to.y };
    await checkUncovered(a, from);
    await a.host.checkPoint(to); // a drop lands where it ends
    const grabbed = target.kind !== 'desktop' ? await elementAt(a, from) : null;
    const before = await dragState(a.atspi, grabbed).catch(() => null);
    sw.lap('resolve');
    await dragPath(from, to, options.steps, options.durationMs, options.button);
    sw.lap('deliver');
    await new Promise((r) => setTimeout(r, 50));
    const after = await dragState(a.atspi, grabbed).catch(() => null);
    sw.lap('verify');
    const label = grabbed ? `${grabbed.name || 'element'} (${roleName(grabbed.role)})` : `window ${a.win.id}`;
    const evidence: Evidence[] = [
      {
        kind: 'pixel_event',
        detail: `${pointerOf(a)} drag from (${from.x}, ${from.y}) to (${to.x}, ${to.y}) in ${options.steps} steps over ${label}`,
      },
    ];
    if (before !== null && after !== null)
      evidence.push({
        kind: 'drag_state',
        expected: "the grabbed element's value or selection changes",
        observed: `before: ${before}; after: ${after}`,
      });
    if (webLike(a.win, grabbed))
      return nativeResult('unverifiable', 'pixel', sw, evidence, mode, {
        target: label,
        method: 'pixel_drag',
        escalation: webEscalation(a.win, true, mode),
      });
    // The grabbed element's own value or selection moved: the drag acted on it. Anything else (a drop
    // elsewhere, a window moved) leaves nothing AT-SPI can prove.
    if (before !== null && after !== null && after !== before)
      return nativeResult('confirmed', 'pixel', sw, evidence, mode, { target: label, method: 'pixel_drag' });
    return nativeResult('unverifiable', 'pixel', sw, evidence, mode, {
      target: label,
      method: 'pixel_drag',
      escalation: {
        target: 'verify',
        reason:
          before === null
            ? 'a drag leaves nothing AT-SPI can prove here; call get_window_state and check the screenshot'
            : "the grabbed element's value and selection did not change; call get_window_state and check the screenshot for what else moved",
      },
    });
  });
}

/**
 * hover on a native window: XTest pointer motion onto the element or point. What a hover opens (a tooltip,
 * a menu) is not read back here, so the verdict is unverifiable with the way to look.
 */
export async function hoverNative(
  host: LinuxHost,
  target: ResolvedTarget,
  mode: 'background' | 'foreground',
): Promise<ActionResult> {
  const sw = new Stopwatch();
  const a = await aim(host, target);
  return deliver(mode, a.win, async () => {
    const p = pointOf(a);
    const hit = a.element ?? (await elementAt(a, p));
    sw.lap('resolve');
    await moveTo(p.x, p.y);
    sw.lap('deliver');
    sw.lap('verify');
    const label = hit ? `${hit.name || 'element'} (${roleName(hit.role)})` : `window ${a.win.id}`;
    return nativeResult(
      'unverifiable',
      'pixel',
      sw,
      [
        {
          kind: 'pixel_event',
          detail: `${pointerOf(a)} motion to screen (${Math.round(p.x)}, ${Math.round(p.y)}) over ${label}`,
        },
      ],
      mode,
      {
        target: label,
        method: 'pointer_motion',
        escalation: {
          target: 'verify',
          reason: 'the pointer moved; what the hover opened is not read back here: call get_window_state to see it',
        },
      },
    );
  });
}

export type { Aim };
