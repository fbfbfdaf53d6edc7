// The browser-level half of the origin policy: every tab a session drives has its requests checked by the
// browser before they leave (CDP Fetch interception on the tab's session and on each out-of-process
// iframe's session). Requests to the gateway's own origin, and (when the policy lists origins) to any
// origin the policy refuses, fail with BlockedByClient: a redirect or a link cannot reach them either.
import type { CDPSession, Protocol } from 'puppeteer-core';
import type { Policy } from '../policy.js';
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
