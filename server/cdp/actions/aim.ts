// The lower toolbox of the CDP route, shared by its actions (click.ts, press-key.ts, scroll.ts, drag.ts,
// type-text.ts, set-value.ts, hover.ts) and the thin driver.ts over them: which tab a target names, where to press (hit-tested by the
// page agent), the mouse input itself, the frame holding focus, the side-effect window around an action,
// and the ActionResult shapes. It imports neither the parts nor the driver: no import circle (a part that
// clicks first, like type-text.ts and press-key.ts, imports click.ts directly).
import type { Protocol } from 'puppeteer-core';
import type { ActionResult, ClickOptions, Evidence, ResolvedTarget } from '../../contract/driver.js';
import { withTiming, type Stopwatch } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import type { BrowserHost } from '../browser/browser.js';
import type { Refused, Watched } from '../page-agent/core.js';
import type { Settle, SideEffectWatch } from '../browser/side-effects.js';
import { frameOf, tokenInLatest, type TabElementRef } from '../snapshot.js';
import { Tab, type Frame } from '../tab/tab.js';

const MODIFIER_BITS: Record<string, number> = { alt: 1, ctrl: 2, control: 2, meta: 4, cmd: 4, command: 4, shift: 8 };

/** What every part of the route works with: the browser, and the watch on what else an action causes. */
export interface CdpRoute {
  readonly host: BrowserHost;
  readonly sideEffects: SideEffectWatch;
}

export interface PointTarget {
  tab: Tab;
  frame: Frame;
  x: number;
  y: number;
  target: string;
  href?: string;
  snapshotId: string | null;
  local: number;
}

/**
 * The tab a target names: the one the router found for this call (never looked up by id again). Refused
 * when the call is not on a tab, or when the tab closed while the action waited its turn.
 */
export function tabOf(target: ResolvedTarget): Tab {
  if (target.kind !== 'tab' || !(target.tab instanceof Tab))
    throw new Refusal('invalid_arguments', `the browser route acts on tabs; this target is a ${target.kind}`);
  if (target.tab.closed)
    throw new Refusal('target_not_found', `tab ${target.tab.id} closed before the action ran; call page list_tabs`);
  return target.tab;
}

/**
 * Runs one action and adds to its result what else it caused (a tab opened, a download, a dialog now
 * blocking the page) as `side_effects`, and what its page did (`caused`: tab/page-activity.ts); each absent when
 * there was nothing. `settleMs`: how long to keep
 * listening after the action, for input that commonly opens tabs or starts downloads (clicks, keys,
 * drops), or a function asked once the action ran (a click listens on only when it may have led out); typing, set_value and scrolling report what arrived during the action and add no wait.
 */
export async function withSideEffects(
  route: CdpRoute,
  target: ResolvedTarget,
  run: () => Promise<ActionResult>,
  settleMs: Settle | (() => Settle) = 0,
  /** Whether the page said the action's default loads another document here (its `caused` waits for it). */
  navigating: () => boolean = () => false,
): Promise<ActionResult> {
  const began = performance.now();
  const tab = target.kind === 'tab' && target.tab instanceof Tab ? target.tab : null;
  const mark = tab?.activity.mark();
  const watch = await route.sideEffects.begin(target.key, target.owner, tab ? () => tab.documents : undefined);
  let watchMs = performance.now() - began;
  let r: ActionResult | undefined;
  try {
    r = await run();
  } finally {
    const ending = performance.now();
    const effects = await watch.end(
      r ? (tab?.dialog ?? null) : null,
      typeof settleMs === 'function' ? settleMs() : settleMs,
    );
    // A reported tab is one the agent can drive at once: wait (bounded) until it is known as a tab.
    for (const e of effects) {
      if (e.kind !== 'tab_opened') continue;
      for (let i = 0; i < 20; i++) {
        const tab = await route.host.findTab(e.tab_id).catch(() => null);
        if (tab) {
          if (!e.url) e.url = tab.page.url();
          break;
        }
        await new Promise((res) => setTimeout(res, 100));
      }
    }
    if (r && effects.length) r = { ...r, side_effects: effects };
    // What the page did in the action's window (its settle included): requests, console errors, a navigation.
    const caused = r && mark ? await tab!.activity.causedSince(mark, r.masked !== undefined, navigating()) : undefined;
    if (r && caused) r = { ...r, caused };
    // A few bytes that let a later verify_state ask what the page did since this action began.
    if (r && mark) r = { ...r, mark: mark.seq };
    watchMs += performance.now() - ending;
    if (r) r = withTiming(r, 'side_effects', watchMs);
  }
  return r!; // run() returned (a throw leaves above)
}

/** The frame and element a target names, with the point to press in top-level CSS pixels (hit-tested). */
export async function aim(tab: Tab, target: ResolvedTarget, watchTypes: string[]): Promise<PointTarget> {
  if (target.element) {
    const ref = target.element.ref as TabElementRef;
    // An element of the top frame (most are) needs no frame listing: its origin is the viewport's.
    const top = ref.sessionId === tab.session.id() && ref.frameId === tab.mainFrameId;
    const { frame, frames } = top
      ? { frame: { ...tab.topFrame(), url: tab.page.url() }, frames: [] }
      : await frameOf(tab, ref);
    const aimed = await tab.call(frame, 'pointFor', target.element.snapshotId, ref.local, watchTypes);
    if (aimed.refusal) throw aimRefusal(aimed, { tab, frame, snapshotId: target.element.snapshotId });
    const origin = top ? { x: 0, y: 0 } : await tab.frameOrigin(frame, frames);
    return {
      tab,
      frame,
      x: origin.x + aimed.x,
      y: origin.y + aimed.y,
      target: aimed.target,
      href: aimed.href,
      snapshotId: target.element.snapshotId,
      local: ref.local,
    };
  }
  if (target.point) {
    const frames = await tab.frames();
    const scale = await scaleOf(tab);
    const x = target.point.x / scale,
      y = target.point.y / scale;
    const aimed = await tab.call(frames[0], 'watchPoint', x, y, watchTypes);
    return { tab, frame: frames[0], x, y, target: aimed.target, snapshotId: null, local: -1 };
  }
  throw new Refusal('invalid_arguments', 'this action needs an element_token or x,y on a tab target');
}

/** Screenshot pixels per CSS pixel (x,y in a target are screenshot pixels). */
export async function scaleOf(tab: Tab): Promise<number> {
  const metrics = await tab.session.send('Page.getLayoutMetrics');
  return metrics.visualViewport.clientWidth / metrics.cssVisualViewport.clientWidth || 1;
}

/**
 * Where this process last put each tab's pointer (clicks, hovers, drags). A move waits for the renderer's
 * next frame (Chromium aligns moves to frames: 10-20 ms here); a click where the pointer already rests
 * needs none: the press itself updates what the pointer is over, as a user's second click does.
 */
const pointerAt = new WeakMap<Tab, { x: number; y: number }>();

/** This process moved the tab's pointer to (x, y) (hover, drag); null: where it is is not known now. */
export function notePointer(tab: Tab, at: { x: number; y: number } | null): void {
  if (at) pointerAt.set(tab, at);
  else pointerAt.delete(tab);
}

/** Moves (unless the pointer rests there), presses and releases; stops at 'dialog' when a handler opened one. */
export async function mouseClick(tab: Tab, x: number, y: number, options: ClickOptions): Promise<'sent' | 'dialog'> {
  const modifiers = options.modifiers.reduce((bits, m) => bits | (MODIFIER_BITS[m.toLowerCase()] ?? 0), 0);
  const send = (params: Protocol.Input.DispatchMouseEventRequest) =>
    tab.unlessDialog(tab.session.send('Input.dispatchMouseEvent', params));
  const at = pointerAt.get(tab);
  notePointer(tab, null); // until the move is known to have been sent
  if ((!at || at.x !== x || at.y !== y) && (await send({ type: 'mouseMoved', x, y, modifiers })) === 'dialog')
    return 'dialog';
  notePointer(tab, { x, y });
  for (let n = 1; n <= options.count; n++) {
    if ((await send({ type: 'mousePressed', x, y, button: options.button, clickCount: n, modifiers })) === 'dialog')
      return 'dialog';
    if ((await send({ type: 'mouseReleased', x, y, button: options.button, clickCount: n, modifiers })) === 'dialog')
      return 'dialog';
  }
  return 'sent';
}

/** The frame holding keyboard focus (where keys and inserted text land), or the top frame. */
export async function focusedFrame(tab: Tab): Promise<Frame> {
  const frames = await tab.frames();
  for (const frame of frames.slice().reverse()) {
    try {
      if (await tab.call(frame, 'hasFocus')) return frame;
    } catch (e) {
      if (e instanceof Refusal) throw e;
    }
  }
  return frames[0];
}

export function describeEvents(seen: Pick<Watched, 'target' | 'events'>): string {
  if (seen.events.length === 0) return `no event reached ${seen.target}`;
  // Events in a row at the same element name it once: "mousedown, mouseup, click at button#b" (each event's
  // own marks stay on it), which is what an action result repeats most.
  const groups: Array<{ at: string; events: string[] }> = [];
  for (const e of seen.events) {
    const at = e.onTarget ? seen.target : e.hit;
    const said = `${e.type}${e.trusted ? '' : ' (untrusted)'}${e.prevented ? ' (cancelled)' : ''}`;
    const last = groups[groups.length - 1];
    if (last?.at === at) last.events.push(said);
    else groups.push({ at, events: [said] });
  }
  return groups.map((g) => `${g.events.join(', ')} at ${g.at}`).join('; ');
}

export function result(
  effect: ActionResult['effect'],
  sw: Stopwatch,
  evidence: Evidence[],
  extra: Partial<ActionResult> = {},
): ActionResult {
  return { effect, route: 'dom', delivery: { mode: 'background' }, evidence, timings_ms: sw.timings, ...extra };
}

/** Input was delivered but a dialog opened before anything could be read back. */
export function dialogResult(sw: Stopwatch, target: string, what: string): ActionResult {
  sw.lap('verify');
  return result('unverifiable', sw, [{ kind: 'dialog', detail: `a dialog opened during ${what}` }], {
    target,
    escalation: { target: 'page', reason: 'answer the dialog with page handle_dialog' },
  });
}

/** The refusal for an element the page agent would not aim at. */
/** `where`: the tab, frame and snapshot the agent answered from, to name a covering element by its token. */
export function aimRefusal(aimed: Refused, where?: { tab: Tab; frame: Frame; snapshotId: string | null }): Refusal {
  switch (aimed.refusal) {
    case 'element_covered': {
      // Clients show the model only the text of an error: the cover's role, name and token go into it.
      const c = aimed.covering;
      const token = c && where ? tokenInLatest(where.tab, where.frame, where.snapshotId, c.index) : null;
      const cover = c
        ? `${c.role} '${c.name}' (${token ? `element_token ${token}` : 'not listed in the latest snapshot'}; ${aimed.detail})`
        : aimed.detail;
      return new Refusal(
        'element_covered',
        `${aimed.target} is covered by ${cover}; close or scroll away what covers it${token ? ' (e.g. click that token)' : ''}`,
        {
          covering_element: aimed.detail,
          ...(c ? { covering_role: c.role, covering_name: c.name } : {}),
          ...(token ? { covering_element_token: token } : {}),
        },
      );
    }
    case 'element_disabled':
      return new Refusal('element_disabled', `${aimed.detail} is disabled`);
    case 'not_visible':
      return new Refusal('not_visible', `${aimed.detail} has no visible area to click`);
    default:
      return new Refusal('target_not_found', `${aimed.refusal}: ${aimed.detail}`);
  }
}
