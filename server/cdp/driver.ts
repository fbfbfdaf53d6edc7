// The CDP route: actions on browser tabs, each verified by reading the page back from Verity's isolated
// world. Pointer and key input is trusted input from Input.dispatch*; proof is what the page observed.
import type { KeyInput, Protocol } from 'puppeteer-core';
import type { ActionResult, ClickOptions, Driver, DragOptions, Evidence, ResolvedTarget, ScrollOptions, Snapshot, TypeOptions } from '../routing/driver.js';
import { Stopwatch } from '../routing/driver.js';
import { Refusal } from '../routing/refusal.js';
import type { BrowserHost } from './browser.js';
import { frameOf, quickFrameOf, snapshotTab, type TabElementRef } from './snapshot.js';
import type { Frame, Tab } from './tab.js';
import { setValueOnTab, typeIntoTab } from './typing.js';
import { queueCursor } from './cursor-overlay.js';
import { judgePointer } from '../routing/verdicts.js';
import { INPUT_SETTLE_MS, SideEffectWatch } from './side-effects.js';
import type { Refused, Watched } from './page-agent/core.js';

const BUTTON_EVENT: Record<string, string> = { left: 'click', right: 'contextmenu', middle: 'auxclick' };
const MODIFIER_BITS: Record<string, number> = { alt: 1, ctrl: 2, control: 2, meta: 4, cmd: 4, command: 4, shift: 8 };

export interface PointTarget { tab: Tab; frame: Frame; x: number; y: number; target: string; href?: string; snapshotId: string | null; local: number }

export class CdpDriver implements Driver {
  private readonly sideEffects: SideEffectWatch;
  constructor(readonly host: BrowserHost) { this.sideEffects = new SideEffectWatch(host); }

  /**
   * Runs one action and adds to its result what else it caused (a tab opened, a download, a dialog now
   * blocking the page) as `side_effects`; absent when there was nothing. `settleMs`: how long to keep
   * listening after the action, for input that commonly opens tabs or starts downloads (clicks, keys,
   * drops); typing, set_value and scrolling report what arrived during the action and add no wait.
   */
  private async withSideEffects(target: ResolvedTarget, run: () => Promise<ActionResult>, settleMs = 0): Promise<ActionResult> {
    const watch = await this.sideEffects.begin(target.key);
    let r: ActionResult | undefined;
    try {
      r = await run();
    } finally {
      const dialog = target.kind === 'tab' ? (await this.host.findTab(target.key).catch(() => null))?.dialog ?? null : null;
      const effects = await watch.end(r ? dialog : null, settleMs);
      // A reported tab is one the agent can drive at once: wait (bounded) until it is known as a tab.
      for (const e of effects) {
        if (e.kind !== 'tab_opened') continue;
        for (let i = 0; i < 20; i++) {
          const tab = await this.host.findTab(e.tab_id).catch(() => null);
          if (tab) { if (!e.url) e.url = tab.page.url(); break; }
          await new Promise((res) => setTimeout(res, 100));
        }
      }
      if (r && effects.length) r = { ...r, side_effects: effects };
    }
    return r!; // run() returned (a throw leaves above)
  }

  async tab(target: ResolvedTarget): Promise<Tab> {
    return this.host.findTab(target.key);
  }

  async snapshot(target: ResolvedTarget, snapshotId: string, options: { includeScreenshot: boolean }): Promise<Snapshot> {
    return snapshotTab(await this.tab(target), snapshotId, options.includeScreenshot);
  }

  /** The frame and element a target names, with the point to press in top-level CSS pixels (hit-tested). */
  async aim(target: ResolvedTarget, watchTypes: string[]): Promise<PointTarget> {
    const tab = await this.tab(target);
    if (target.element) {
      const ref = target.element.ref as TabElementRef;
      const { frame, frames } = await frameOf(tab, ref);
      const aimed = await tab.call(frame, 'pointFor', target.element.snapshotId, ref.local, watchTypes);
      if (aimed.refusal) throw aimRefusal(aimed);
      const origin = await tab.frameOrigin(frame, frames);
      return { tab, frame, x: origin.x + aimed.x, y: origin.y + aimed.y, target: aimed.target, href: aimed.href, snapshotId: target.element.snapshotId, local: ref.local };
    }
    if (target.point) {
      const frames = await tab.frames();
      const scale = await this.scaleOf(tab);
      const x = target.point.x / scale, y = target.point.y / scale;
      const aimed = await tab.call(frames[0], 'watchPoint', x, y, watchTypes);
      return { tab, frame: frames[0], x, y, target: aimed.target, snapshotId: null, local: -1 };
    }
    throw new Refusal('invalid_arguments', 'this action needs an element_token or x,y on a tab target');
  }

  private async scaleOf(tab: Tab): Promise<number> {
    const metrics = await tab.session.send('Page.getLayoutMetrics');
    return metrics.visualViewport.clientWidth / metrics.cssVisualViewport.clientWidth || 1;
  }

  /** Presses and releases; stops at 'dialog' when a handler opened one (nothing more is sent then). */
  async mouseClick(tab: Tab, x: number, y: number, options: ClickOptions): Promise<'sent' | 'dialog'> {
    const modifiers = options.modifiers.reduce((bits, m) => bits | (MODIFIER_BITS[m.toLowerCase()] ?? 0), 0);
    const send = (params: Protocol.Input.DispatchMouseEventRequest) => tab.unlessDialog(tab.session.send('Input.dispatchMouseEvent', params));
    if (await send({ type: 'mouseMoved', x, y, modifiers }) === 'dialog') return 'dialog';
    for (let n = 1; n <= options.count; n++) {
      if (await send({ type: 'mousePressed', x, y, button: options.button, clickCount: n, modifiers }) === 'dialog') return 'dialog';
      if (await send({ type: 'mouseReleased', x, y, button: options.button, clickCount: n, modifiers }) === 'dialog') return 'dialog';
    }
    return 'sent';
  }

  click(target: ResolvedTarget, options: ClickOptions): Promise<ActionResult> {
    return this.withSideEffects(target, () => this.deliverClick(target, options), INPUT_SETTLE_MS);
  }

  private async deliverClick(target: ResolvedTarget, options: ClickOptions): Promise<ActionResult> {
    const sw = new Stopwatch();
    const decisive = options.count >= 2 && options.button === 'left' ? 'dblclick' : BUTTON_EVENT[options.button];
    const aimed = await this.aim(target, ['mousedown', 'mouseup', decisive]);
    if (target.cursor) queueCursor(aimed.tab, aimed.x, aimed.y, target.cursor, 'click');
    sw.lap('resolve');
    const urlBefore = aimed.frame.url;
    await this.mouseClick(aimed.tab, aimed.x, aimed.y, options);
    sw.lap('deliver');
    let seen: Watched;
    try {
      seen = await aimed.tab.call(aimed.frame, 'watched', false);
    } catch (e) {
      if (!(e instanceof Refusal) || e.code !== 'dialog_open') throw e;
      sw.lap('verify');
      return result('unverifiable', sw, [{ kind: 'dialog', observed: e.message }], { target: aimed.target, escalation: { target: 'page', reason: 'a dialog opened after the click; answer it with page handle_dialog, then read the page' } });
    }
    // A link click that navigated replaces the world that was watching; the navigation is the proof.
    if (seen.fresh) {
      const url = aimed.tab.page.url();
      sw.lap('verify');
      if (aimed.href && url === aimed.href && url !== urlBefore) {
        return result('confirmed', sw, [{ kind: 'navigation', expected: aimed.href, observed: url }], { target: aimed.target });
      }
      return result('unverifiable', sw, [{ kind: 'navigation', observed: url, detail: 'the frame navigated before its events could be read' }],
        { target: aimed.target, escalation: { target: 'verify', reason: 'call get_window_state to see the new page' } });
    }
    sw.lap('verify');
    return classifyPointerEvents(seen, decisive, sw, aimed.target);
  }

  typeText(target: ResolvedTarget, text: string, options: TypeOptions): Promise<ActionResult> {
    return this.withSideEffects(target, () => this.deliverTypeText(target, text, options));
  }

  private async deliverTypeText(target: ResolvedTarget, text: string, options: TypeOptions): Promise<ActionResult> {
    return typeIntoTab(this, target, text, options);
  }

  setValue(target: ResolvedTarget, value: string): Promise<ActionResult> {
    return this.withSideEffects(target, () => this.deliverSetValue(target, value));
  }

  private async deliverSetValue(target: ResolvedTarget, value: string): Promise<ActionResult> {
    return setValueOnTab(this, target, value);
  }

  /** The frame holding keyboard focus (where keys and inserted text land), or the top frame. */
  async focusedFrame(tab: Tab): Promise<Frame> {
    const frames = await tab.frames();
    for (const frame of frames.slice().reverse()) {
      try { if (await tab.call(frame, 'hasFocus')) return frame; } catch (e) { if (e instanceof Refusal) throw e; }
    }
    return frames[0];
  }

  pressKey(target: ResolvedTarget, key: string, modifiers: string[]): Promise<ActionResult> {
    return this.withSideEffects(target, () => this.deliverPressKey(target, key, modifiers), INPUT_SETTLE_MS);
  }

  private async deliverPressKey(target: ResolvedTarget, key: string, modifiers: string[]): Promise<ActionResult> {
    const sw = new Stopwatch();
    const tab = await this.tab(target);
    let frame: Frame;
    if (target.element) {
      const ref = target.element.ref as TabElementRef;
      frame = quickFrameOf(tab, ref);
      await tab.call(frame, 'focusElement', target.element.snapshotId, ref.local);
    } else {
      if (target.point) await this.click(target, { button: 'left', count: 1, modifiers: [] });
      frame = await this.focusedFrame(tab);
    }
    const targetName: string = await tab.call(frame, 'watchEvents', null, 0, ['keydown', 'keyup', 'input']);
    sw.lap('resolve');
    const keys = [...modifiers.map(normalizeModifier), normalizeKey(key)] as KeyInput[];
    const held: KeyInput[] = [];
    const deliver = async () => {
      try {
        for (const k of keys.slice(0, -1)) { await tab.page.keyboard.down(k); held.push(k); }
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
    if (!seen) return result('unverifiable', sw, [{ kind: 'dialog', detail: 'a dialog opened after the key' }], { target: targetName, escalation: { target: 'page', reason: 'answer the dialog with page handle_dialog' } });
    if (seen.fresh) return result('unverifiable', sw, [{ kind: 'navigation', observed: tab.page.url() }], { target: targetName, escalation: { target: 'verify', reason: 'the page navigated; call get_window_state' } });
    const down = seen.events.find((e) => e.type === 'keydown' && e.trusted && e.onTarget);
    const evidence: Evidence[] = [{ kind: 'event', expected: `trusted keydown ${keys.join('+')} at ${seen.target}`, observed: describeEvents(seen) }];
    return result(down ? 'confirmed' : 'unverifiable', sw, evidence, {
      target: seen.target,
      ...(down ? {} : { escalation: { target: 'verify', reason: 'no key event reached the focused element' } }),
    });
  }

  scroll(target: ResolvedTarget, options: ScrollOptions): Promise<ActionResult> {
    return this.withSideEffects(target, () => this.deliverScroll(target, options));
  }

  private async deliverScroll(target: ResolvedTarget, options: ScrollOptions): Promise<ActionResult> {
    const sw = new Stopwatch();
    const tab = await this.tab(target);
    let frame: Frame, x: number, y: number;
    let before: { x: number; y: number; target: string };
    if (target.point && !target.element) {
      frame = (await tab.frames())[0];
      const scale = await this.scaleOf(tab);
      x = target.point.x / scale;
      y = target.point.y / scale;
      before = await tab.call(frame, 'scrollState', null, -1, x, y);
    } else {
      // The wheel goes where the element's scroll container (or the page) is what scrolls; the element
      // itself is not scrolled into view, which would move the container before the "before" reading.
      let frames: Frame[];
      if (target.element) ({ frame, frames } = await frameOf(tab, target.element.ref as TabElementRef));
      else { frames = await tab.frames(); frame = frames[0]; }
      const aimed = await tab.call(frame, 'scrollAim', target.element?.snapshotId ?? null, target.element ? (target.element.ref as TabElementRef).local : -1);
      if (aimed.refusal) throw aimRefusal(aimed);
      const origin = await tab.frameOrigin(frame, frames);
      x = origin.x + aimed.x;
      y = origin.y + aimed.y;
      before = aimed.offsets;
    }
    if (target.cursor) queueCursor(tab, x, y, target.cursor, 'scroll');
    sw.lap('resolve');
    const viewport = await tab.viewport();
    const unit = options.by === 'page' ? (options.direction === 'left' || options.direction === 'right' ? viewport.width : viewport.height) * 0.875 : 40;
    const delta = unit * options.amount;
    const deltaX = options.direction === 'left' ? -delta : options.direction === 'right' ? delta : 0;
    const deltaY = options.direction === 'up' ? -delta : options.direction === 'down' ? delta : 0;
    const wheeled = await tab.unlessDialog(tab.session.send('Input.dispatchMouseEvent', { type: 'mouseWheel', x, y, deltaX, deltaY }));
    sw.lap('deliver');
    if (wheeled === 'dialog') return dialogResult(sw, before.target, 'the wheel');
    const after = await tab.call(frame, 'scrollSettled');
    sw.lap('verify');
    const moved = { x: after.x - before.x, y: after.y - before.y };
    const intended = Math.sign(deltaX) * moved.x > 0 || Math.sign(deltaY) * moved.y > 0;
    const evidence: Evidence[] = [{ kind: 'scroll_offset', expected: `${options.direction} by about ${Math.round(delta)} px in ${before.target}`, observed: `from (${before.x}, ${before.y}) to (${after.x}, ${after.y}) in ${after.target}` }];
    if (intended) return result('confirmed', sw, evidence, { target: after.target, observed: { scroll_x: after.x, scroll_y: after.y } });
    if (moved.x === 0 && moved.y === 0) return result('no_effect', sw, evidence, { target: after.target, observed: { scroll_x: after.x, scroll_y: after.y }, escalation: { target: 'verify', reason: 'nothing scrolled: already at the end, or nothing scrollable under the point' } });
    return result('mismatch', sw, evidence, { target: after.target, observed: { scroll_x: after.x, scroll_y: after.y } });
  }

  drag(target: ResolvedTarget, options: DragOptions): Promise<ActionResult> {
    return this.withSideEffects(target, () => this.deliverDrag(target, options), INPUT_SETTLE_MS);
  }

  private async deliverDrag(target: ResolvedTarget, options: DragOptions): Promise<ActionResult> {
    const sw = new Stopwatch();
    const tab = await this.tab(target);
    const frames = await tab.frames();
    const scale = await this.scaleOf(tab);
    const from = { x: options.from.x / scale, y: options.from.y / scale };
    const to = { x: options.to.x / scale, y: options.to.y / scale };
    const source: string = await tab.call(frames[0], 'watchDrag', from.x, from.y, to.x, to.y);
    if (target.cursor) queueCursor(tab, from.x, from.y, target.cursor, 'drag');
    sw.lap('resolve');
    const send = (params: Protocol.Input.DispatchMouseEventRequest) => tab.unlessDialog(tab.session.send('Input.dispatchMouseEvent', params));
    const steps: Protocol.Input.DispatchMouseEventRequest[] = [
      { type: 'mouseMoved', x: from.x, y: from.y },
      { type: 'mousePressed', x: from.x, y: from.y, button: options.button, clickCount: 1 },
    ];
    for (let i = 1; i <= options.steps; i++) {
      const t = i / options.steps;
      steps.push({ type: 'mouseMoved', x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t, button: options.button, buttons: 1 });
    }
    steps.push({ type: 'mouseReleased', x: to.x, y: to.y, button: options.button, clickCount: 1 });
    for (const step of steps) {
      if (await send(step) === 'dialog') { sw.lap('deliver'); return dialogResult(sw, source, 'the drag'); }
      if (step.type === 'mouseMoved' && step.buttons && options.durationMs > 0) await new Promise((r) => setTimeout(r, options.durationMs / options.steps));
    }
    sw.lap('deliver');
    const seen = await tab.call(frames[0], 'dragSeen');
    sw.lap('verify');
    const evidence: Evidence[] = [{ kind: 'event', expected: `trusted mousedown at ${seen.source}, mouseup at ${seen.destination}`, observed: `mousedown at ${seen.down ?? 'nothing'}, ${seen.moves} moves, mouseup at ${seen.up ?? 'nothing'}` }];
    const ok = seen.down === seen.source && seen.up === seen.destination && seen.moves > 0;
    return result(ok ? 'confirmed' : 'unverifiable', sw, evidence, { target: source, ...(ok ? {} : { escalation: { target: 'verify', reason: 'the drag did not reach both ends; call get_window_state to see the result' } }) });
  }
}


export function describeEvents(seen: Pick<Watched, 'target' | 'events'>): string {
  if (seen.events.length === 0) return `no event reached ${seen.target}`;
  return seen.events.map((e) => `${e.type}${e.trusted ? '' : ' (untrusted)'}${e.onTarget ? ` at ${seen.target}` : ` at ${e.hit}`}${e.prevented ? ' (cancelled)' : ''}`).join(', ');
}

function classifyPointerEvents(seen: Watched, decisive: string, sw: Stopwatch, target: string): ActionResult {
  const evidence: Evidence[] = [{ kind: 'event', expected: `trusted ${decisive} on ${target}`, observed: describeEvents(seen) }];
  const v = judgePointer(seen.events, decisive);
  return result(v.effect, sw, evidence, { target, ...(v.observed ? { observed: v.observed } : {}), ...(v.escalation ? { escalation: v.escalation } : {}) });
}

export function result(effect: ActionResult['effect'], sw: Stopwatch, evidence: Evidence[], extra: Partial<ActionResult> = {}): ActionResult {
  return { effect, route: 'dom', delivery: { mode: 'background' }, evidence, timings_ms: sw.timings, ...extra };
}

/** Input was delivered but a dialog opened before anything could be read back. */
export function dialogResult(sw: Stopwatch, target: string, what: string): ActionResult {
  sw.lap('verify');
  return result('unverifiable', sw, [{ kind: 'dialog', detail: `a dialog opened during ${what}` }], { target, escalation: { target: 'page', reason: 'answer the dialog with page handle_dialog, then read the page' } });
}

function aimRefusal(aimed: Refused): Refusal {
  switch (aimed.refusal) {
    case 'element_covered': return new Refusal('element_covered', `${aimed.target} is covered by ${aimed.detail}; close or scroll away what covers it`, { covering_element: aimed.detail });
    case 'element_disabled': return new Refusal('element_disabled', `${aimed.detail} is disabled`);
    case 'not_visible': return new Refusal('not_visible', `${aimed.detail} has no visible area to click`);
    default: return new Refusal('target_not_found', `${aimed.refusal}: ${aimed.detail}`);
  }
}

const MODIFIER_KEYS: Record<string, string> = { ctrl: 'Control', control: 'Control', cmd: 'Meta', command: 'Meta', meta: 'Meta', super: 'Meta', alt: 'Alt', option: 'Alt', shift: 'Shift' };
const KEY_ALIASES: Record<string, string> = {
  return: 'Enter', enter: 'Enter', tab: 'Tab', escape: 'Escape', esc: 'Escape', space: ' ', backspace: 'Backspace',
  delete: 'Delete', del: 'Delete', up: 'ArrowUp', down: 'ArrowDown', left: 'ArrowLeft', right: 'ArrowRight',
  home: 'Home', end: 'End', pageup: 'PageUp', pagedown: 'PageDown', insert: 'Insert',
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
