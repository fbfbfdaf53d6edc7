// Background proven (issue 44 item 7): around every native action, the desktop's focused window, stacking
// order and pointer are read before and after (by the route's DeskProbe: X11, sway, nut-js), compared here,
// and what a background delivery moved is put back where the route can (the pointer to where it was, the
// window that had focus activated again) and read back once more. The result's `delivery` says, per aspect,
// unchanged, moved (and restored) or unread, with a one-line note of why (contract/wire.ts `deskCheck`).
// The comparison and the plan of what to put back are pure (test/unit/background.test.ts); the reads and
// the restoring are the probe's. One action at a time on the whole desktop: there is one pointer and one
// keyboard focus, and an action's account must not count another's motion.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ActionName } from '../../contract/actions.js';
import type { ActionResult, ResolvedTarget } from '../../contract/driver.js';
import { Refusal } from '../../contract/refusal.js';
import type { DeskAspect, DeskCheck } from '../../contract/wire.js';

export type { DeskAspect, DeskCheck };
export const DESK_ASPECTS: readonly DeskAspect[] = ['focus', 'z_order', 'pointer'];

/** The desktop at one moment as a route read it: an aspect it could not read is absent, with its reason in `unread`. */
export interface DeskView {
  /** The window with keyboard focus, by the route's own id for it (X11 window, sway container); 0: none. */
  focus?: number;
  /** The top-level windows, bottom to top. */
  stacking?: number[];
  /** The pointer, screen pixels. */
  pointer?: { x: number; y: number };
  unread?: Partial<Record<DeskAspect, string>>;
}

/** What a route reads of the desktop, and what it can put back (a method absent: it cannot). */
export interface DeskProbe {
  read(): Promise<DeskView>;
  movePointer?(p: { x: number; y: number }): Promise<void>;
  /** Raises and focuses window `id` (an id as `read` gives it), as a user's click on it would. */
  activate?(id: number): Promise<void>;
}

export type AspectState = 'unchanged' | 'moved' | 'unread';

/** Whether the windows both lists hold are in the same order in each (windows that came or went do not count). */
export function sameOrder(before: readonly number[], after: readonly number[]): boolean {
  const inAfter = new Set(after);
  const inBefore = new Set(before);
  const a = before.filter((id) => inAfter.has(id));
  const b = after.filter((id) => inBefore.has(id));
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/**
 * Each aspect, after against before. A pointer the route cannot read but sent motion to (`pointerSent`) is
 * moved: the route knows it moved it, not where to.
 */
export function compareDesk(before: DeskView, after: DeskView, pointerSent = false): Record<DeskAspect, AspectState> {
  const focus =
    before.focus === undefined || after.focus === undefined
      ? 'unread'
      : before.focus === after.focus
        ? 'unchanged'
        : 'moved';
  const z_order =
    !before.stacking || !after.stacking ? 'unread' : sameOrder(before.stacking, after.stacking) ? 'unchanged' : 'moved';
  const pointer =
    !before.pointer || !after.pointer
      ? pointerSent
        ? 'moved'
        : 'unread'
      : before.pointer.x === after.pointer.x && before.pointer.y === after.pointer.y
        ? 'unchanged'
        : 'moved';
  return { focus, z_order, pointer };
}

/** What to put back after an action, and why each moved aspect that is not put back stays. */
export interface RestorePlan {
  pointer?: { x: number; y: number };
  activate?: number;
  kept: Partial<Record<DeskAspect, string>>;
}

/**
 * What a delivery that moved things puts back. Only a background delivery puts anything back (a foreground one
 * was asked to move them), and never what the action was for (`goals`: hover's pointer). The pointer goes back
 * where it was read; the focus goes back to the window that had it when the action gave it to another window
 * that was there before (a click the window manager answered by focusing and raising its window), not when a
 * window that was not there took it (a dialog the app opened: its doing, not the route's); a stacking order the
 * action changed is put back by activating that window again when it was the top one.
 */
export function planRestore(
  before: DeskView,
  after: DeskView,
  states: Record<DeskAspect, AspectState>,
  options: { background: boolean; goals: readonly DeskAspect[]; probe: Pick<DeskProbe, 'movePointer' | 'activate'> },
): RestorePlan {
  const kept: RestorePlan['kept'] = {};
  const plan: RestorePlan = { kept };
  const moved = DESK_ASPECTS.filter((a) => states[a] === 'moved');
  if (!moved.length) return plan;
  if (!options.background) {
    // The result's mode says it: nothing more to say (an empty reason adds nothing to the note).
    for (const a of moved) kept[a] = '';
    return plan;
  }
  // What the action was for (hover's pointer) says itself.
  for (const a of moved.filter((m) => options.goals.includes(m))) kept[a] = '';
  const wants = (a: DeskAspect) => states[a] === 'moved' && !options.goals.includes(a);
  if (wants('pointer')) {
    if (!before.pointer)
      kept.pointer = `not put back: where it was is not known (${before.unread?.pointer ?? 'unread'})`;
    else if (!options.probe.movePointer) kept.pointer = 'not put back: this route cannot move it back';
    else plan.pointer = before.pointer;
  }
  const previous = before.focus;
  const stillThere = previous !== undefined && previous !== 0 && !!after.stacking?.includes(previous);
  const canActivate = !!options.probe.activate && stillThere;
  // A window the app opened keeps the focus it took: nothing below activates another over it.
  let newHasFocus = false;
  if (wants('focus')) {
    const now = after.focus!;
    if (!previous) kept.focus = 'not put back: no window had focus before';
    else if (!before.stacking || !after.stacking)
      kept.focus =
        'not put back: the stacking order is not read, so whether the window that took focus is new is not known';
    else if (now !== 0 && !before.stacking.includes(now)) {
      kept.focus = 'a window that was not there before took it (the app opened it): left to it';
      newHasFocus = true;
    } else if (!stillThere) kept.focus = 'not put back: the window that had it is gone';
    else if (!options.probe.activate) kept.focus = 'not put back: this route cannot activate a window';
    else plan.activate = previous;
  }
  if (wants('z_order') && plan.activate === undefined) {
    const top = before.stacking?.at(-1);
    if (newHasFocus)
      kept.z_order = 'not put back: activating the window that had focus would take it from the one the app opened';
    else if (top !== undefined && top === previous && canActivate) plan.activate = previous;
    else
      kept.z_order =
        'not put back: only activating the window that had focus restacks here, and it was not the top one (or is gone)';
  }
  return plan;
}

/**
 * The account of one action: each aspect's final state against `before` (after the action, or after the
 * restore when one ran), what was put back, and why anything is unread or stayed moved.
 */
export function deskReport(
  before: DeskView,
  afterAction: Record<DeskAspect, AspectState>,
  final: Record<DeskAspect, AspectState>,
  finalView: DeskView,
  kept: RestorePlan['kept'],
  failed: Partial<Record<DeskAspect, string>> = {},
): DeskCheck {
  const unchanged: DeskAspect[] = [];
  const moved: DeskAspect[] = [];
  const restored: DeskAspect[] = [];
  const unread: DeskAspect[] = [];
  const why: string[] = [];
  for (const a of DESK_ASPECTS) {
    const state = final[a];
    if (state === 'unread') {
      unread.push(a);
      why.push(`${a}: ${before.unread?.[a] ?? finalView.unread?.[a] ?? 'not read'}`);
    } else if (state === 'moved') {
      moved.push(a);
      const reason: string =
        failed[a] ??
        kept[a] ??
        (afterAction[a] === 'unchanged' ? 'moved while another aspect was put back' : 'not put back');
      const unreadToo = !before.pointer || !finalView.pointer;
      if (a === 'pointer' && unreadToo)
        why.push(
          `pointer: moved by the route's own motion; ${before.unread?.pointer ?? finalView.unread?.pointer ?? 'not read'}`,
        );
      else if (reason) why.push(`${a}: ${reason}`);
    } else if (afterAction[a] === 'moved') {
      moved.push(a);
      restored.push(a);
    } else unchanged.push(a);
  }
  return {
    ...(unchanged.length ? { unchanged } : {}),
    ...(moved.length ? { moved } : {}),
    ...(restored.length ? { restored } : {}),
    ...(unread.length ? { unread } : {}),
    ...(why.length ? { note: why.join('; ') } : {}),
  };
}

/** Whether the current action sent pointer motion (a route that cannot read the pointer still knows that). */
const ledger = new AsyncLocalStorage<{ pointerSent: boolean }>();

/** Called by the input transports as they move the pointer. */
export function notePointerMotion(): void {
  const entry = ledger.getStore();
  if (entry) entry.pointerSent = true;
}

/** What each action is for, never put back: hover and move_cursor put the pointer somewhere on purpose. */
const GOALS: Partial<Record<ActionName, readonly DeskAspect[]>> = {
  hover: ['pointer'],
  bringToFront: ['focus', 'z_order'],
  setWindowFrame: ['z_order'],
  setWindowState: ['focus', 'z_order'],
};

/** How long an action waits for another native action to be done with the desktop before it is refused. */
export const DESK_WAIT_MS = 120_000;

/** One native action at a time on the desktop: a FIFO lock whose wait is bounded. */
export class DeskLock {
  private held = false;
  private readonly waiting: Array<() => void> = [];

  async acquire(boundMs = DESK_WAIT_MS): Promise<() => void> {
    const release = () => {
      const next = this.waiting.shift();
      if (next) next();
      else this.held = false;
    };
    if (!this.held) {
      this.held = true;
      return release;
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(
          new Refusal(
            'target_busy',
            `another native action held the desktop's pointer and focus for ${Math.round(boundMs / 1000)} s; nothing was done; retry once it is done`,
            { retryable: true },
          ),
        );
      }, boundMs);
      this.waiting.push(go);
    });
    return release;
  }
}

const unreadAll = (why: string): DeskView => ({ unread: { focus: why, z_order: why, pointer: why } });

/** A probe's read, never failing: what it could not read is unread, saying why. */
async function readSafely(probe: DeskProbe): Promise<DeskView> {
  return probe.read().catch((e: Error) => unreadAll(`the read failed: ${e.message.split('\n')[0]}`));
}

/**
 * The native routes' step around each action (defineActionMethods' `around`): the desktop read before and
 * after, what a background delivery moved put back, and the account added to the result's `delivery`.
 */
export function deskAround(probe: DeskProbe, lock = new DeskLock()) {
  return async (target: ResolvedTarget, act: () => Promise<ActionResult>, action: ActionName) => {
    const release = await lock.acquire();
    try {
      const before = await readSafely(probe);
      const entry = { pointerSent: false };
      let result: ActionResult;
      try {
        result = await ledger.run(entry, act);
      } catch (e) {
        // Refused, mostly before anything was sent; where it was after, what moved is still put back.
        if (target.deliveryMode === 'background') await settle(probe, before, entry.pointerSent, true, action);
        throw e;
      }
      const check = await settle(probe, before, entry.pointerSent, result.delivery.mode === 'background', action);
      return { ...result, delivery: { ...result.delivery, ...check } };
    } finally {
      release();
    }
  };
}

/**
 * After pointer input the desktop is read every SETTLE_STEP_MS until it held still for SETTLE_QUIET_MS, at
 * most SETTLE_MAX_MS: a click-to-focus window manager asks the clicked app to take focus (WM_TAKE_FOCUS) and
 * says it active only once the app did, which a busy app does late. While a window the action raised is not
 * yet the focused one, stillness does not count (the focus is still to come), up to SETTLE_FOCUS_MAX_MS.
 */
const SETTLE_STEP_MS = 50;
const SETTLE_QUIET_MS = 300;
const SETTLE_MAX_MS = 2000;
const SETTLE_FOCUS_MAX_MS = 6000;

/** Whether two reads of the desktop say the same focus, stacking and pointer. */
export function sameView(a: DeskView, b: DeskView): boolean {
  return (
    a.focus === b.focus &&
    sameOrder(a.stacking ?? [], b.stacking ?? []) &&
    a.pointer?.x === b.pointer?.x &&
    a.pointer?.y === b.pointer?.y
  );
}

/**
 * The window the action raised to the top that does not have the focus (yet): a click-to-focus window manager
 * raises the clicked window on the press and says it focused once its app took the focus, which a busy app
 * does late (seen in CI: openbox raised it at once, the app took the focus after the desktop had held still
 * 300 ms). Undefined when the top is as it was, or focused, or either is unread.
 */
export function raisedUnfocused(before: DeskView, after: DeskView): number | undefined {
  const top = after.stacking?.at(-1);
  if (top === undefined || !before.stacking || after.focus === undefined) return undefined;
  return top !== before.stacking.at(-1) && after.focus !== top ? top : undefined;
}

/**
 * The desktop after pointer input, once it stopped changing: a click's focus and raise are the window
 * manager's answer to the press, in its own time (and nut-js sends the press from a process of its own), so a
 * read right after the action can precede them and say `unchanged` falsely. Then the last read, whether it
 * held still or not; with `focusPending` when a window the action raised still lacked the focus at the bound,
 * so that the account does not call the focus unchanged while it may yet move.
 */
async function settledRead(probe: DeskProbe, before: DeskView): Promise<{ view: DeskView; focusPending?: number }> {
  let last = await readSafely(probe);
  let stillSince = Date.now();
  const start = stillSince;
  const settled = () => Date.now() - stillSince >= SETTLE_QUIET_MS && raisedUnfocused(before, last) === undefined;
  const bound = () => (raisedUnfocused(before, last) === undefined ? SETTLE_MAX_MS : SETTLE_FOCUS_MAX_MS);
  while (Date.now() - start < bound() && !settled()) {
    await new Promise((r) => setTimeout(r, SETTLE_STEP_MS));
    const next = await readSafely(probe);
    if (!sameView(last, next)) stillSince = Date.now();
    last = next;
  }
  const focusPending = raisedUnfocused(before, last);
  return { view: last, ...(focusPending !== undefined ? { focusPending } : {}) };
}

/** Reads the desktop after an action, puts back what the plan says, and gives the account. */
async function settle(
  probe: DeskProbe,
  before: DeskView,
  pointerSent: boolean,
  background: boolean,
  action: ActionName,
): Promise<DeskCheck> {
  const { view: after, focusPending } = pointerSent
    ? await settledRead(probe, before)
    : { view: await readSafely(probe) };
  const states = compareDesk(before, after, pointerSent);
  if (focusPending !== undefined && states.focus === 'unchanged') {
    // Read, but not settled: the window manager raised a window and may still give it the focus.
    states.focus = 'unread';
    after.unread = {
      ...after.unread,
      focus: `window ${focusPending} was raised by the action and still lacked the focus ${SETTLE_FOCUS_MAX_MS / 1000} s later; the window manager may yet give it`,
    };
  }
  const plan = planRestore(before, after, states, { background, goals: GOALS[action] ?? [], probe });
  const failed: Partial<Record<DeskAspect, string>> = {};
  let restoredAny = false;
  if (plan.activate !== undefined) {
    const id = plan.activate;
    await probe.activate!(id).then(
      () => {
        restoredAny = true;
      },
      (e: Error) => {
        const why = `activating the window that had focus again failed: ${e.message.split('\n')[0]}`;
        failed.focus = why;
        failed.z_order = why;
      },
    );
  }
  if (plan.pointer) {
    await probe.movePointer!(plan.pointer).then(
      () => {
        restoredAny = true;
      },
      (e: Error) => {
        failed.pointer = `moving it back failed: ${e.message.split('\n')[0]}`;
      },
    );
  }
  // What was put back is read back, not assumed.
  const finalView = restoredAny ? await readSafely(probe) : after;
  const final = restoredAny ? compareDesk(before, finalView, false) : states;
  // An aspect unread only after the restore keeps what the action left (it cannot be said to be back).
  for (const a of DESK_ASPECTS) if (final[a] === 'unread' && states[a] !== 'unread') final[a] = states[a];
  return deskReport(before, states, final, finalView, plan.kept, failed);
}
