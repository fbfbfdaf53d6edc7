// Actions on one tab or window run one at a time. MCP lets a client send calls concurrently (and two
// clients can drive one tab): interleaved, two clicks share one event watch in the page and each reports
// the other's events, and six type_texts focus six fields while the first one's text is still on its
// way. Serialized per target, each call's delivery and read-back are its own, so its verdict is about its
// own effect. Reads (get_window_state, page get_text) do not wait: they change nothing.
import { withTiming, type ActionResult, type Driver, type Evidence, type ResolvedTarget } from '../contract/driver.js';
import { Refusal } from '../contract/refusal.js';
import { isAction } from '../contract/actions.js';

export interface QueueLimits {
  /** Calls that may wait for one target at a time; one more is refused `target_busy`. */
  maxWaiting: number;
  /** How long a call waits for its turn before it is refused `target_busy` (nothing was done). */
  maxWaitMs: number;
}

export const DEFAULT_QUEUE_LIMITS: QueueLimits = { maxWaiting: 32, maxWaitMs: 120_000 };

/** Told when a call has to wait, with its place in line (1 = next); e.g. for an MCP progress notification. */
export type WaitHook = (info: { key: string; position: number; message: string }) => void;

interface Waiter {
  go(): void;
}
/** One call's time at the head of a lane: what arrived for the same target while it ran. */
export interface Turn {
  /** Operator inputs (the Control UI's browser panel) that arrived while this call ran and waited for it. */
  operatorInputsHeld: number;
  /** Whether another call on the target ran while this one waited (what was looked up before may be stale). */
  waitedBehind: boolean;
}
interface Lane {
  busy: boolean;
  waiting: Waiter[];
  /** The call running now (null while the lane is free). */
  turn: Turn | null;
}

export class TargetQueue {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly limits: QueueLimits = DEFAULT_QUEUE_LIMITS) {}

  /** Calls waiting for `key` now (not counting the one running). */
  waiting(key: string): number {
    return this.lanes.get(key)?.waiting.length ?? 0;
  }

  /**
   * The operator's own input to a target (the browser panel's "Take control"): it joins the same line as the
   * agents' actions, so an action in flight finishes (delivery and read-back) before the operator's key
   * lands, and that action's turn counts the input it held back (its verdict says so: queuedDriver).
   */
  operatorInput<T>(key: string, work: () => Promise<T>): Promise<T> {
    const running = this.lanes.get(key)?.turn;
    if (running) running.operatorInputsHeld++;
    return this.run(key, work);
  }

  /** Runs `work` once every earlier call on `key` has finished; refuses when the line is full or too slow. */
  async run<T>(key: string, work: (turn: Turn) => Promise<T>, onWait?: WaitHook, signal?: AbortSignal): Promise<T> {
    // A call whose agent the operator stopped does not start (nor join the line): nothing was done.
    if (signal?.aborted) throw signal.reason;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { busy: false, waiting: [], turn: null };
      this.lanes.set(key, lane);
    }
    const waitedBehind = lane.busy;
    if (lane.busy) {
      if (lane.waiting.length >= this.limits.maxWaiting) {
        throw new Refusal(
          'target_busy',
          `${lane.waiting.length} actions are already waiting for ${key} (at most ${this.limits.maxWaiting}); nothing was done; retry once they have finished`,
          { retryable: true, waiting: lane.waiting.length },
        );
      }
      const position = lane.waiting.length + 1;
      onWait?.({
        key,
        position,
        message: `waiting for ${position === 1 ? 'the action' : `${position} actions`} ahead on ${key}`,
      });
      await this.turn(lane, key, signal);
    }
    lane.busy = true;
    const turn: Turn = { operatorInputsHeld: 0, waitedBehind };
    lane.turn = turn;
    try {
      return await work(turn);
    } finally {
      lane.turn = null;
      const next = lane.waiting.shift();
      if (next)
        next.go(); // the lane stays busy: handed straight to the next caller
      else {
        lane.busy = false;
        this.lanes.delete(key);
      }
    }
  }

  private turn(lane: Lane, key: string, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const leave = (reason: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = lane.waiting.indexOf(waiter);
        if (at >= 0) lane.waiting.splice(at, 1);
        reject(reason);
      };
      const onAbort = () => leave(signal!.reason);
      const waiter: Waiter = {
        go: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const timer = setTimeout(
        () =>
          leave(
            new Refusal(
              'target_busy',
              `waited ${this.limits.maxWaitMs} ms for the actions ahead on ${key} to finish; nothing was done; retry`,
              { retryable: true },
            ),
          ),
        this.limits.maxWaitMs,
      );
      // The operator stopped this call's agent while it waited in line: it leaves the line, nothing done.
      signal?.addEventListener('abort', onAbort, { once: true });
      lane.waiting.push(waiter);
    });
  }
}

/** The key actions on `target` queue under: one per tab, one per native window, one for the desktop. */
export function queueKey(target: Pick<ResolvedTarget, 'kind' | 'key'>): string {
  return target.kind === 'desktop' ? 'desktop' : `${target.kind} ${target.key}`;
}

/** The evidence an action's verdict carries when operator input arrived while it ran (and waited for it). */
export function heldInputEvidence(held: number): Evidence {
  return {
    kind: 'operator_input',
    observed: held,
    detail: `the operator sent ${held === 1 ? 'an input' : `${held} inputs`} to this target from the Control UI while this action ran; ${held === 1 ? 'it' : 'they'} waited until the action and its read-back had finished`,
  };
}

/** `driver` with its actions on `target` run through `queue`; snapshot and anything else pass straight through. */
export function queuedDriver(
  queue: TargetQueue,
  driver: Driver,
  target: ResolvedTarget,
  onWait?: WaitHook,
  signal?: AbortSignal,
): Driver {
  const key = queueKey(target);
  return new Proxy(driver, {
    get(d, prop, receiver) {
      const value = Reflect.get(d, prop, receiver);
      if (typeof value !== 'function') return value;
      if (!isAction(prop)) return value.bind(d);
      // Within this process the queue orders the calls; the driver's own lock (if any) orders them against
      // other processes driving the same target.
      const act = (...args: unknown[]): Promise<ActionResult> =>
        d.exclusive ? d.exclusive(target, () => value.apply(d, args)) : value.apply(d, args);
      return async (...args: unknown[]) => {
        const asked = performance.now();
        let waited = 0;
        let turn: Turn = { operatorInputsHeld: 0, waitedBehind: false };
        const r = await queue.run(
          key,
          (mine) => {
            waited = performance.now() - asked;
            turn = mine;
            // The window the router found is carried so the route need not look it up again; an action that
            // ran on it meanwhile may have moved or closed it, so after a wait the route looks again.
            if (mine.waitedBehind && target.kind === 'window') target.window = undefined;
            return act(...args);
          },
          onWait,
          signal,
        );
        const timed = withTiming(r, 'queue', waited);
        const held = turn.operatorInputsHeld;
        return held ? { ...timed, evidence: [...timed.evidence, heldInputEvidence(held)] } : timed;
      };
    },
  });
}
