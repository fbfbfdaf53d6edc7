// One action at a time on a tab, across processes. routing/queue.ts serializes the calls of one Verity
// process; two processes attached to one browser (two agents pointed at one Chrome with --browser-url)
// each have their own queue, and one's focus change or click can land inside the other's delivery and
// read-back (measured: a click confirmed that the page never counted, text typed into the wrong field).
// The lock lives in the page, where every process reaches it: a Web Lock (navigator.locks) of the tab's
// top document, named after the tab's CDP target id (the same in every process), requested from Verity's
// isolated world. A holder that vanishes (its process died) lets go when its hold bound runs out.
// Where the document has no Web Locks (an opaque origin such as data: or about:blank, a page served over
// plain http from another host), the action runs unlocked: the in-process queue still holds.
//
// The lock costs no round trip of its own: it is requested in the same Runtime.evaluate as the action's
// first page-agent call in the top frame (Tab.call asks `foldTabLock`), which runs only once it is held.
// Every action's first step that touches the page is such a call (prepareField, pointFor, watchPoint,
// focusElement, watchEvents, scrollState, watchDrag), so no input is ever sent before the lock is held.
// A first call into another frame takes the lock first with an evaluate of its own.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { bounded } from '../../contract/bounded.js';
import { Refusal } from '../../contract/refusal.js';
import type { CDPSession } from 'puppeteer-core';

/** The frame a page-agent call goes to, as far as the lock cares (tab.ts's Frame has more). */
interface LockFrame {
  session: CDPSession;
  frameId: string;
}

/**
 * What the lock needs of a tab (tab.ts's Tab has it). Declared here, not imported, because Tab.call asks
 * this module to fold the lock into its call: an import back would be a cycle.
 */
interface Tab {
  readonly id: string;
  dialog: unknown;
  topFrame(): LockFrame;
  world(frame: LockFrame): Promise<number>;
}

/**
 * Evaluated with the page agent when a world is made (tab.ts): a document's first lock request binds its
 * lock manager, about 1 ms more than any later one (measured), so that first request is made here, off
 * the action's path. It holds nothing; a document without Web Locks ignores it.
 */
export const WARM_TAB_LOCK = `globalThis.navigator?.locks?.query?.().catch(() => {});`;

/** How long an action waits for another process's action on the same tab before it is refused. */
export const TAB_LOCK_WAIT_MS = 60_000;
/** The longest one action may hold the tab; a holder that died releases it after this. */
export const TAB_LOCK_HOLD_MS = 120_000;

const WORLD_REGISTRY = '__verityTabLocks';

/** What the page says about a lock request. */
interface LockReply {
  held: boolean;
  why?: string;
}

/** One action's lock on one tab: requested with the action's first page call, released when it ends. */
interface ActionLock {
  tab: Tab;
  /** Chosen here, so the lock can be released (or its request withdrawn) whatever became of the reply. */
  id: string;
  /** Settles once the page answered the request (null: not requested yet). */
  requested: Promise<void> | null;
  /** The isolated world (top frame) the request went to: the release goes there too. */
  contextId: number | null;
  /** How long the lock took to be had (the page's own measure when folded), for the action's timings. */
  waitedMs: number;
}

const actionLocks = new AsyncLocalStorage<ActionLock>();

/** An async function expression (no arguments) that requests the lock and answers a LockReply. */
function requestFunction(name: string, id: string): string {
  // The registry maps the id to what lets go: the request's abort while it waits, the release once held.
  // So a release that arrives first (the action gave up waiting) withdraws the request.
  return `(async () => {
    const locks = globalThis.navigator && navigator.locks;
    if (!locks || typeof locks.request !== 'function') return { held: false, why: 'no Web Locks in this document' };
    const registry = globalThis.${WORLD_REGISTRY} || (globalThis.${WORLD_REGISTRY} = new Map());
    const id = ${JSON.stringify(id)};
    const abort = new AbortController();
    registry.set(id, () => { registry.delete(id); abort.abort(); });
    let acquired;
    const got = new Promise((resolve) => { acquired = resolve; });
    locks.request(${JSON.stringify(name)}, { signal: abort.signal }, () => new Promise((release) => {
      if (!registry.has(id)) { release(); acquired(false); return; }
      const timer = setTimeout(() => { registry.delete(id); release(); }, ${TAB_LOCK_HOLD_MS});
      registry.set(id, () => { clearTimeout(timer); registry.delete(id); release(); });
      acquired(true);
    })).catch(() => acquired(false));
    const waited = await Promise.race([got, new Promise((resolve) => setTimeout(() => resolve('timeout'), ${TAB_LOCK_WAIT_MS}))]);
    if (waited === 'timeout') { registry.get(id)?.(); return { held: false, why: 'timeout' }; }
    return waited ? { held: true } : { held: false, why: 'the lock request failed' };
  })`;
}

function busy(): Refusal {
  return new Refusal(
    'target_busy',
    `another client's action on this tab did not finish within ${TAB_LOCK_WAIT_MS} ms; nothing was done; retry`,
    { retryable: true },
  );
}

/**
 * Runs `work` holding the tab's cross-process action lock (see above): taken by its first page call,
 * released (without waiting for the reply) when it ends.
 */
export async function withTabLock<T>(tab: Tab, work: () => Promise<T>, waited?: (ms: number) => void): Promise<T> {
  if (tab.dialog) return work(); // the page is frozen: the action refuses on its own, nothing to order
  const lock: ActionLock = { tab, id: randomBytes(8).toString('hex'), requested: null, contextId: null, waitedMs: 0 };
  try {
    return await actionLocks.run(lock, work);
  } finally {
    waited?.(lock.waitedMs);
    // A navigation during the action destroyed the world, and with it the hold: nothing to release then.
    if (lock.contextId !== null) releaseSoon(tab, lock.id, lock.contextId);
  }
}

/** Per tab, the release not sent yet (see releaseSoon). */
const unsentReleases = new Map<Tab, () => void>();

/**
 * Sends the release once the action's reply is on its way (the next turn of the event loop), without
 * waiting for its answer: the reply does not wait for one more page command. The session delivers
 * commands in order, and a request on the tab sends any release still pending first (sendPendingRelease),
 * so this process's release always reaches the page before its next request.
 */
function releaseSoon(tab: Tab, id: string, contextId: number): void {
  const send = () => {
    clearImmediate(timer);
    if (unsentReleases.get(tab) === send) unsentReleases.delete(tab);
    void tab
      .topFrame()
      .session.send('Runtime.evaluate', {
        expression: `globalThis.${WORLD_REGISTRY}?.get(${JSON.stringify(id)})?.()`,
        contextId,
      })
      .catch(() => undefined);
  };
  unsentReleases.get(tab)?.(); // (one action at a time per tab: none is pending here, but never drop one)
  const timer = setImmediate(send);
  unsentReleases.set(tab, send);
}

function sendPendingRelease(tab: Tab): void {
  unsentReleases.get(tab)?.();
}

/** The running action's lock on `tab`, when it has not been requested yet. */
function unrequested(tab: Tab): ActionLock | null {
  const lock = actionLocks.getStore();
  return lock && lock.tab === tab && !lock.requested ? lock : null;
}

/** What Tab.call needs to fold the lock into its evaluate: the expression, and how to read the reply. */
export interface FoldedCall {
  expression: string;
  /** The bound on the whole evaluate: the lock's wait, then the call's own. */
  timeoutMs: number;
  /** Reads the page's reply: the call's value, or the refusal when the lock was not had in time. */
  unwrap(reply: unknown): { value: unknown } | { error: string };
  /**
   * The evaluate brought no reply. `worldGone`: the frame navigated, and the world took any hold with it:
   * the next call asks again. Otherwise (a dialog, a timeout) the request may stand: the release withdraws it.
   */
  failed(worldGone: boolean): void;
}

/**
 * Called by Tab.call before each page-agent call. Outside an action, or once the action's lock was
 * requested, returns null (waiting first, when another of the action's calls is requesting it). The
 * action's first call into the top frame gets the request folded into its own evaluate; a first call
 * into another frame requests the lock on its own first.
 */
export async function foldTabLock(
  tab: Tab,
  frame: LockFrame,
  contextId: number,
  call: string,
  callTimeoutMs: number,
): Promise<FoldedCall | null> {
  const current = actionLocks.getStore();
  if (current?.tab === tab && current.requested) {
    await current.requested.catch(() => undefined);
    return null;
  }
  const lock = unrequested(tab);
  if (!lock) return null;
  sendPendingRelease(tab);
  const top = tab.topFrame();
  const name = `verity-action:${tab.id}`;
  if (frame.session !== top.session || frame.frameId !== top.frameId) {
    await requestAlone(lock, name);
    return null;
  }
  let settle = () => {};
  lock.requested = new Promise<void>((resolve) => {
    settle = resolve;
  });
  lock.contextId = contextId;
  return {
    expression: `(async () => {
      const asked = performance.now();
      const lock = await ${requestFunction(name, lock.id)}();
      lock.ms = performance.now() - asked;
      if (lock.why === 'timeout') return { lock };
      try {
        return { lock, value: await ${call} };
      } catch (e) {
        return { lock, error: String((e && e.stack) || e) };
      }
    })()`,
    timeoutMs: TAB_LOCK_WAIT_MS + callTimeoutMs,
    unwrap(reply) {
      settle();
      const r = (reply ?? {}) as { lock?: LockReply & { ms?: number }; value?: unknown; error?: string };
      lock.waitedMs = r.lock?.ms ?? 0;
      if (r.lock?.why === 'timeout') throw busy();
      if (r.error !== undefined) return { error: r.error };
      return { value: r.value };
    },
    failed(worldGone) {
      settle();
      if (worldGone) {
        lock.requested = null;
        lock.contextId = null;
      }
    },
  };
}

/** The lock requested in an evaluate of its own (the action's first call is into another frame). */
async function requestAlone(lock: ActionLock, name: string): Promise<void> {
  const frame = lock.tab.topFrame();
  let done = () => {};
  lock.requested = new Promise<void>((resolve) => {
    done = resolve;
  });
  const asked = performance.now();
  try {
    const contextId = await lock.tab.world(frame);
    lock.contextId = contextId;
    const reply = await bounded(
      frame.session.send('Runtime.evaluate', {
        expression: `${requestFunction(name, lock.id)}()`,
        contextId,
        awaitPromise: true,
        returnByValue: true,
      }),
      TAB_LOCK_WAIT_MS + 5_000,
      "another client's action on this tab to finish",
    );
    if ((reply.result?.value as LockReply | undefined)?.why === 'timeout') throw busy();
  } catch (e) {
    if (e instanceof Refusal && (e.code === 'timeout' || e.code === 'target_busy')) throw busy();
    // The world went away (navigation, a dialog): act as before, unlocked.
  } finally {
    lock.waitedMs = performance.now() - asked; // a round trip of its own: all of it is the lock's
    done();
  }
}
