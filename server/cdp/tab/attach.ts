// Every CDP session Verity opens on a target of its own accord (a tab's session, the browser panel's
// screencast, a session on the browser) is opened here, one at a time.
//
// Why one at a time: puppeteer tells its own sessions from ours by the target id alone, held in a set for
// the time an attach takes (Connection._createSession). Two of ours opening on one target at once overlap
// there: the first answer clears the id while the second's attachedToTarget event is still to come, so
// puppeteer takes the second for one of its own. When that session is later detached (a screencast
// stopping), puppeteer believes the whole target went away: the page emits `close`, and the tab vanishes
// from every list while it is still open in the browser (seen as a tab missing from list_tabs on a busy
// machine, gateway/console-browser). Attaches are milliseconds; queued per browser connection (the set is
// the connection's), they cannot overlap, and a browser that stops answering holds up only its own.
import type { Browser, CDPSession, Page, Target } from 'puppeteer-core';

const lastAttach = new WeakMap<Browser, Promise<unknown>>();

/** A new CDP session on `on` (a page or a target), opened after any other attach of ours to its browser has finished. */
export function attachSession(on: Page | Target): Promise<CDPSession> {
  const browser = on.browser();
  const attach = () => on.createCDPSession();
  const attached = (lastAttach.get(browser) ?? Promise.resolve()).then(attach, attach);
  lastAttach.set(
    browser,
    attached.catch(() => undefined),
  );
  return attached;
}
