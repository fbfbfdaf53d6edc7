// The browser's half of the origin policy: every tab a session drives has its requests checked by the
// browser before they leave (CDP Fetch interception on the tab's session and on each out-of-process
// iframe's session), and so has the whole browser (guardBrowser, on the browser target: workers not tied to
// a tab, a launched browser's every target). Requests to the gateway's own origin, and (when the policy
// lists origins) to any origin the policy refuses, fail with BlockedByClient: a redirect or a link cannot
// reach them either. A browser Verity launches also has the policy proxy (policy-proxy.ts), which sees
// what Fetch does not (WebSockets).
import type { CDPSession, Protocol } from 'puppeteer-core';
import type { Policy } from '../../policy.js';
import type { Tab } from './tab.js';

export async function guardRequests(tab: Tab, policy: Policy): Promise<void> {
  // From now on the tab's requests and console are recorded for results and page listings, under this policy.
  tab.activity.start(policy);
  await guardSession(tab.session, policy);
}

async function guardSession(session: CDPSession, policy: Policy): Promise<void> {
  // With no origin list only the gateway's own origins are intercepted, so ordinary requests never pause.
  const patterns: Protocol.Fetch.RequestPattern[] = policy.filtersOrigins
    ? [{ urlPattern: '*', requestStage: 'Request' }]
    : policy.gatewayPatterns().map((urlPattern) => ({ urlPattern, requestStage: 'Request' as const }));
  session.on('sessionattached', (child: CDPSession) => {
    void guardSession(child, policy).catch(() => {});
  });
  if (!patterns.length) return;
  session.on('Fetch.requestPaused', (e: Protocol.Fetch.RequestPausedEvent) => {
    const answer = policy.requestAllowed(e.request.url)
      ? session.send('Fetch.continueRequest', { requestId: e.requestId })
      : session.send('Fetch.failRequest', { requestId: e.requestId, errorReason: 'BlockedByClient' });
    answer.catch(() => {
      /* the request or the frame went away */
    });
  });
  // A source that does not offer the Fetch domain (an old relay) keeps the URL checks of every action.
  await session.send('Fetch.enable', { patterns }).catch(() => {});
}

/**
 * Which requests the browser-level guard fails. `whole-browser`: every request the policy refuses, from any
 * page, frame or worker (a browser Verity launched is Verity's alone). `workers`: only those of the shared
 * and service workers (not tied to one tab) in the browser contexts Verity drives (`covers`), in a browser
 * Verity attached to: there an operator's own tabs keep loading what they like, and the tabs a session drives
 * have their own guard (guardRequests).
 */
export type BrowserGuardScope =
  | { kind: 'whole-browser' }
  | { kind: 'workers'; covers(browserContextId: string | undefined): Promise<boolean> };

const WORKER_TYPES = new Set(['shared_worker', 'service_worker', 'worker']);
/** The browser's own and its extensions' workers (the companion extension's pairing, say) are no page's: never guarded here. */
const BROWSER_OWN = /^(chrome|chrome-extension|chrome-untrusted|devtools):/i;

/**
 * The browser-level half, on a session to the browser target: Fetch enabled there pauses every request of
 * the whole browser (every context and target, shared and service workers included) inside the browser
 * process, before the target that asks has run a line, so no worker starts ahead of its guard. (Auto-
 * attaching to each worker and enabling Fetch on its own session races puppeteer, which resumes every target
 * it attaches to at once; a dedicated worker's session has no Fetch domain at all, its requests are its
 * page's.) WebSockets are not Fetch requests: only the policy proxy (policy-proxy.ts) sees those.
 */
export async function guardBrowser(session: CDPSession, policy: Policy, scope: BrowserGuardScope): Promise<void> {
  const patterns: Protocol.Fetch.RequestPattern[] = policy.filtersOrigins
    ? [{ urlPattern: '*', requestStage: 'Request' }]
    : policy.gatewayPatterns().map((urlPattern) => ({ urlPattern, requestStage: 'Request' as const }));
  if (!patterns.length) return;
  // A request names the target that made it by its frameId: a worker's own target id (measured on Chromium
  // 156: a page's dedicated workers name the page's frame), else a frame. Workers seen, by target id.
  const workers = new Map<string, Protocol.Target.TargetInfo>();
  if (scope.kind === 'workers') {
    session.on('Target.targetCreated', ({ targetInfo: t }: Protocol.Target.TargetCreatedEvent) => {
      if (WORKER_TYPES.has(t.type)) workers.set(t.targetId, t);
    });
    session.on('Target.targetDestroyed', ({ targetId }: Protocol.Target.TargetDestroyedEvent) => {
      workers.delete(targetId);
    });
    await session.send('Target.setDiscoverTargets', {
      discover: true,
      filter: [...WORKER_TYPES].map((type) => ({ type })),
    });
  }
  const workerOf = async (id: string): Promise<Protocol.Target.TargetInfo | null> => {
    const known = workers.get(id);
    if (known) return known;
    // Not announced (yet): asked; a frame's id is no target, and a page is guarded per tab.
    const info = await session.send('Target.getTargetInfo', { targetId: id }).catch(() => null);
    return info && WORKER_TYPES.has(info.targetInfo.type) ? info.targetInfo : null;
  };
  const refuse = async (e: Protocol.Fetch.RequestPausedEvent): Promise<boolean> => {
    if (policy.requestAllowed(e.request.url)) return false;
    if (scope.kind === 'whole-browser') return true;
    const worker = e.frameId ? await workerOf(e.frameId) : null;
    return !!worker && !BROWSER_OWN.test(worker.url) && (await scope.covers(worker.browserContextId));
  };
  session.on('Fetch.requestPaused', (e: Protocol.Fetch.RequestPausedEvent) => {
    refuse(e)
      .catch(() => true) // a decision that could not be made refuses
      .then((no) =>
        no
          ? session.send('Fetch.failRequest', { requestId: e.requestId, errorReason: 'BlockedByClient' })
          : session.send('Fetch.continueRequest', { requestId: e.requestId }),
      )
      .catch(() => {
        /* the request or the browser went away */
      });
  });
  await session.send('Fetch.enable', { patterns });
}
