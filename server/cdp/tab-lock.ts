// One action at a time on a tab, across processes. routing/queue.ts serializes the calls of one Verity
// process; two processes attached to one browser (two agents pointed at one Chrome with --browser-url)
// each have their own queue, and one's focus change or click can land inside the other's delivery and
// read-back (measured: a click confirmed that the page never counted, text typed into the wrong field).
// The lock lives in the page, where every process reaches it: a Web Lock (navigator.locks) of the tab's
// top document, named after the tab's CDP target id (the same in every process), requested from Verity's
// isolated world. A holder that vanishes (its process died) lets go when its hold bound runs out.
// Where the document has no Web Locks (an opaque origin such as data: or about:blank, a page served over
// plain http from another host), the action runs unlocked: the in-process queue still holds.
import { Refusal, bounded } from '../routing/refusal.js';
import type { Tab } from './tab.js';

/** How long an action waits for another process's action on the same tab before it is refused. */
export const TAB_LOCK_WAIT_MS = 60_000;
/** The longest one action may hold the tab; a holder that died releases it after this. */
export const TAB_LOCK_HOLD_MS = 120_000;

const WORLD_REGISTRY = '__verityTabLocks';

function acquireExpression(name: string): string {
  return `(async () => {
    const locks = globalThis.navigator && navigator.locks;
    if (!locks || typeof locks.request !== 'function') return { held: false, why: 'no Web Locks in this document' };
    const registry = globalThis.${WORLD_REGISTRY} || (globalThis.${WORLD_REGISTRY} = new Map());
    const id = Math.random().toString(36).slice(2);
    const abort = new AbortController();
    let acquired;
    const got = new Promise((resolve) => { acquired = resolve; });
    locks.request(${JSON.stringify(name)}, { signal: abort.signal }, () => new Promise((release) => {
      const timer = setTimeout(() => { registry.delete(id); release(); }, ${TAB_LOCK_HOLD_MS});
      registry.set(id, () => { clearTimeout(timer); registry.delete(id); release(); });
      acquired(true);
    })).catch(() => acquired(false));
    const waited = await Promise.race([got, new Promise((resolve) => setTimeout(() => resolve('timeout'), ${TAB_LOCK_WAIT_MS}))]);
    if (waited === 'timeout') { abort.abort(); return { held: false, why: 'timeout' }; }
    return waited ? { held: true, id } : { held: false, why: 'the lock request failed' };
  })()`;
}

/** Runs `work` holding the tab's cross-process action lock (see above). */
export async function withTabLock<T>(tab: Tab, work: () => Promise<T>): Promise<T> {
  if (tab.dialog) return work(); // the page is frozen: the action refuses on its own, nothing to order
  let held: { held: boolean; id?: string; why?: string } = { held: false };
  let contextId: number | null = null;
  const frame = tab.topFrame();
  try {
    contextId = await tab.world(frame);
    const reply = await bounded(
      frame.session.send('Runtime.evaluate', {
        expression: acquireExpression(`verity-action:${tab.id}`),
        contextId,
        awaitPromise: true,
        returnByValue: true,
      }),
      TAB_LOCK_WAIT_MS + 5_000,
      "another client's action on this tab to finish",
    );
    held = (reply.result?.value as typeof held | undefined) ?? { held: false };
  } catch (e) {
    if (e instanceof Refusal && e.code === 'timeout')
      throw new Refusal(
        'target_busy',
        `another client's action on this tab did not finish within ${TAB_LOCK_WAIT_MS} ms; nothing was done; retry`,
        { retryable: true },
      );
    held = { held: false }; // the world went away (navigation, a dialog): act as before, unlocked
  }
  if (!held.held && held.why === 'timeout') {
    throw new Refusal(
      'target_busy',
      `another client's action on this tab did not finish within ${TAB_LOCK_WAIT_MS} ms; nothing was done; retry`,
      { retryable: true },
    );
  }
  try {
    return await work();
  } finally {
    if (held.held && contextId !== null) {
      // A navigation during the action destroyed the world, and with it the hold: nothing to release then.
      // Not awaited: the session delivers commands in order, so the release reaches the page before this
      // process's next acquire, and the action's reply does not wait one more round trip for it.
      void frame.session
        .send('Runtime.evaluate', {
          expression: `globalThis.${WORLD_REGISTRY}?.get(${JSON.stringify(held.id)})?.()`,
          contextId,
        })
        .catch(() => undefined);
    }
  }
}
