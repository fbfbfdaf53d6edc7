// What a tab's page did: the requests it sent and the console messages and uncaught exceptions it raised,
// kept per tab in bounded buffers from the first time a session drives the tab (guard.ts starts it). Two
// readers: an action's result tells what started inside the action's window (`caused`: the requests it
// started, failed ones first, the console errors and exceptions, a navigation), and `page console_messages`
// / `network_requests` list the buffers with filters. Both show URLs as `shownUrl` does: no credentials,
// no fragment, secret-looking query values masked, a blocked origin's URL cut to its origin.
//
// The events come from puppeteer's own Page (it has the Network and Runtime domains enabled on every
// page and its out-of-process iframes anyway): listening costs no CDP command and no round trip on the
// action's path. Which entries an action caused is decided by order of arrival (a sequence number taken
// when the action begins), so a request started before the action is never its, even when it ends during it.
import type { ConsoleMessage, Frame as PuppeteerFrame, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import type { ActionCaused } from '../../contract/driver.js';
import type { ConsoleFilter, NetworkFilter } from '../../contract/browser-route.js';

/** How many requests and console messages each tab keeps; past it the oldest go and are counted. */
export const MAX_REQUESTS_KEPT = 500;
export const MAX_CONSOLE_KEPT = 500;
/** What one action's result lists at most; the rest are counted (`more_requests`, `more_console`). */
export const MAX_CAUSED_REQUESTS = 6;
export const MAX_CAUSED_CONSOLE = 4;
/** How long a result waits for a document, fetch or XHR request the action started to be answered (and a
 * main-frame page it was answered with, to be shown). */
export const CAUSED_REQUEST_WAIT_MS = 1_000;
/** A console message or exception is cut here (its length said). */
const TEXT_MAX = 300;
/** A shown URL is cut here. */
const URL_MAX = 200;
/** What a buffer keeps of one URL or console text (a page can log megabytes, or load a data: URL of them). */
const KEPT_MAX = 4_096;

export type ConsoleLevel = NonNullable<ActionCaused['console']>[number]['level'];
/** Most severe first: a level filter takes its level and every one above it. */
const LEVELS: readonly ConsoleLevel[] = ['exception', 'error', 'warning', 'info', 'debug'];

export interface RequestEntry {
  seq: number;
  at: number;
  method: string;
  url: string;
  /** The URL's whole length when `url` keeps only its start (KEPT_MAX). */
  length?: number;
  type: string;
  status?: number;
  /** The network error (net::ERR_…) of a request that got no answer. */
  error?: string;
  done: boolean;
}

export interface ConsoleEntry {
  seq: number;
  at: number;
  level: ConsoleLevel;
  text: string;
  source?: string;
  /** Raised during an action on a secret field: its text is masked wherever it is shown. */
  secret?: boolean;
  /** Written by the browser, not the page's scripts (a failed load, an intervention): no console call's arguments. */
  browser?: boolean;
}

/** What the origin policy says of a request's URL (policy.ts; requests it refuses are blocked by guard.ts). */
export interface RequestPolicy {
  requestAllowed(url: string): boolean;
}

/** A request as a result or a listing shows it. */
export type ShownRequest = NonNullable<ActionCaused['requests']>[number];
/** What an action caused on its tab, beside side_effects; absent when nothing happened. */
export type Caused = ActionCaused;

// The filters console_messages and network_requests take, as the router's contract declares them.
export type { ConsoleFilter, NetworkFilter } from '../../contract/browser-route.js';

const SECRET_PARAM_WORDS = new Set([
  'token',
  'secret',
  'password',
  'passwd',
  'pass',
  'pwd',
  'auth',
  'authorization',
  'key',
  'apikey',
  'sig',
  'signature',
  'session',
  'sessionid',
  'sid',
  'code',
  'credential',
  'credentials',
  'jwt',
  'otp',
  'ticket',
  'bearer',
]);

/** Whether a query parameter's name says its value is a credential (access_token, apiKey, X-Amz-Signature…). */
export function isSecretParam(name: string): boolean {
  const words = name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.some((w) => SECRET_PARAM_WORDS.has(w)) || SECRET_PARAM_WORDS.has(words.join(''));
}

/** The text cut at `max`, saying its whole length (`length`, when the text is already a kept start of it). */
function cut(text: string, max: number, length = text.length): string {
  return text.length > max ? `${text.slice(0, max)}… (${Math.max(length, text.length)} chars)` : text;
}

/**
 * A URL as an agent may be told it: a blocked origin (the policy refuses it) by its origin only; otherwise
 * without user and password or fragment, each secret-looking query value as •••, a data: URL by its type
 * and length, cut at URL_MAX.
 */
export function shownUrl(url: string, policy?: RequestPolicy, length = url.length): string {
  if (url.startsWith('data:')) return `data:${url.slice(5).split(/[;,]/)[0]},… (${length} chars)`;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return cut(url, URL_MAX, length);
  }
  if (policy && !policy.requestAllowed(url)) return `${u.protocol}//${u.host}/… (blocked by the origin policy)`;
  u.username = '';
  u.password = '';
  u.hash = '';
  const params = [...u.searchParams.entries()];
  const whole = length + u.href.length - url.length; // what the cut-off tail adds
  if (!params.some(([name]) => isSecretParam(name))) return cut(u.href, URL_MAX, whole);
  const query = params
    .map(([name, value]) => `${encodeURIComponent(name)}=${isSecretParam(name) ? '•••' : encodeURIComponent(value)}`)
    .join('&');
  u.search = '';
  return cut(`${u.href}?${query}`, URL_MAX, whole);
}

/** Text with every URL in it shown as shownUrl shows it (a page may print a token-bearing URL). */
export function scrubUrls(text: string, policy?: RequestPolicy): string {
  return text.replace(/\b(?:https?|wss?):\/\/[^\s"'<>)]+/g, (url) => shownUrl(url, policy));
}

/** A failed request: no answer (a network error, blocked), or an HTTP error status. */
function failed(e: RequestEntry): boolean {
  return e.error !== undefined || (e.status !== undefined && e.status >= 400);
}

export function showRequest(e: RequestEntry, policy?: RequestPolicy): ShownRequest {
  const out: ShownRequest = { method: e.method, url: shownUrl(e.url, policy, e.length) };
  if (e.error !== undefined)
    out.failed = policy && !policy.requestAllowed(e.url) ? 'blocked by the origin policy' : e.error;
  else if (e.status !== undefined) out.status = e.status;
  else if (!e.done) out.pending = true;
  return out;
}

export function showConsole(e: ConsoleEntry, policy?: RequestPolicy): { level: ConsoleLevel; text: string } {
  const text = cut(scrubUrls(e.text, policy), TEXT_MAX);
  return { level: e.level, text: e.secret ? '•'.repeat(Math.min(e.text.length, TEXT_MAX)) : text };
}

/**
 * What an action caused, from the entries that arrived inside its window: requests failed first (then in
 * the order they started), at most MAX_CAUSED_REQUESTS with the rest counted; console errors and
 * exceptions likewise; the last top-level navigation. Undefined when nothing happened. Pure.
 */
export function causedOf(
  requests: RequestEntry[],
  messages: ConsoleEntry[],
  navigated: string | undefined,
  counts: { requests: number },
  policy?: RequestPolicy,
): Caused | undefined {
  const out: Caused = {};
  if (navigated !== undefined) out.navigated = shownUrl(navigated, policy);
  // data: and blob: URLs are read from the page itself: no request left it. An image, font, style sheet or
  // media file that loaded is the page's decoration, not an effect of the action worth the model's bytes
  // (network_requests still lists it); one that failed is shown.
  const sent = requests.filter((e) => !/^(data|blob):/.test(e.url) && (failed(e) || !DECORATION_TYPES.has(e.type)));
  const ordered = [...sent.filter(failed), ...sent.filter((e) => !failed(e))];
  if (ordered.length) out.requests = ordered.slice(0, MAX_CAUSED_REQUESTS).map((e) => showRequest(e, policy));
  const moreRequests = counts.requests - (requests.length - sent.length) - (out.requests?.length ?? 0);
  if (moreRequests > 0) out.more_requests = moreRequests;
  // The browser's "Failed to load resource" says again what the request line says.
  const errors = messages.filter(
    (m) => (m.level === 'exception' || m.level === 'error') && !(m.browser && /^Failed to load resource/.test(m.text)),
  );
  if (errors.length) out.console = errors.slice(0, MAX_CAUSED_CONSOLE).map((m) => showConsole(m, policy));
  if (errors.length > MAX_CAUSED_CONSOLE) out.more_console = errors.length - MAX_CAUSED_CONSOLE;
  return Object.keys(out).length ? out : undefined;
}

/** The console entries a filter asks for (level and above, text substring), the latest `limit`. Pure. */
export function filterConsole(entries: ConsoleEntry[], filter: ConsoleFilter, policy?: RequestPolicy) {
  const floor = filter.level ? LEVELS.indexOf(filter.level as ConsoleLevel) : LEVELS.length - 1;
  const shown = entries
    .filter((e) => LEVELS.indexOf(e.level) <= floor)
    .map((e) => ({
      ...showConsole(e, policy),
      ...(e.source ? { source: shownUrl(e.source, policy) } : {}),
      at: iso(e.at),
    }))
    .filter((e) => !filter.text || e.text.includes(filter.text));
  return { matched: shown.length, messages: shown.slice(-filter.limit) };
}

/** The requests a filter asks for (a status, failed ones, a substring of the shown URL), the latest `limit`. Pure. */
export function filterRequests(entries: RequestEntry[], filter: NetworkFilter, policy?: RequestPolicy) {
  const shown = entries
    .filter((e) => filter.status === undefined || e.status === filter.status)
    .filter((e) => filter.failed === undefined || failed(e) === filter.failed)
    .map((e) => ({ ...showRequest(e, policy), type: e.type, at: iso(e.at) }))
    .filter((e) => !filter.url || e.url.includes(filter.url));
  return { matched: shown.length, requests: shown.slice(-filter.limit) };
}

function iso(at: number): string {
  return new Date(at).toISOString();
}

/** Console API types (puppeteer's ConsoleMessage.type()) to the levels shown. */
function levelOf(type: string): ConsoleLevel {
  if (type === 'error' || type === 'assert') return 'error';
  if (type === 'warn' || type === 'warning') return 'warning';
  if (type === 'debug' || type === 'verbose' || type === 'trace') return 'debug';
  return 'info';
}

/** Request types a result waits for (bounded) to be answered: the ones that say whether the action's work landed. */
const AWAITED_TYPES = new Set(['document', 'xhr', 'fetch']);
/** Resource types that only dress the page (puppeteer's resourceType()). */
const DECORATION_TYPES = new Set(['image', 'font', 'stylesheet', 'media']);

/** A tab's buffers and the events that fill them. */
export class PageActivity {
  private policy: RequestPolicy | undefined;
  private started = false;
  private seq = 0;
  private readonly requests: RequestEntry[] = [];
  private readonly messages: ConsoleEntry[] = [];
  private readonly byRequest = new WeakMap<HTTPRequest, RequestEntry>();
  /** The main frame's document requests answered with a page it will show: a navigation is on its way. */
  private readonly committing = new WeakSet<RequestEntry>();
  /** Every entry ever recorded (the dropped included): an action's counts survive the bound. */
  private requestTotal = 0;
  private navigation: { seq: number; url: string } | null = null;
  droppedRequests = 0;
  droppedConsole = 0;

  constructor(private readonly page: Page) {}

  /** Starts recording (once; later calls only update the policy): called when a session first drives the tab. */
  start(policy: RequestPolicy): void {
    this.policy = policy;
    if (this.started) return;
    this.started = true;
    const page = this.page;
    page.on('request', (req: HTTPRequest) => {
      const url = req.url();
      const entry: RequestEntry = {
        seq: ++this.seq,
        at: Date.now(),
        method: req.method(),
        url: url.slice(0, KEPT_MAX),
        type: req.resourceType(),
        done: false,
      };
      if (url.length > KEPT_MAX) entry.length = url.length;
      this.byRequest.set(req, entry);
      this.requestTotal++;
      this.requests.push(entry);
      if (this.requests.length > MAX_REQUESTS_KEPT) {
        this.requests.shift();
        this.droppedRequests++;
      }
    });
    page.on('response', (res: HTTPResponse) => {
      const req = res.request();
      const entry = this.byRequest.get(req);
      if (!entry) return;
      const status = res.status();
      entry.status = status;
      if (!req.isNavigationRequest() || req.frame() !== page.mainFrame()) return;
      // A download, an empty answer or a redirect shows no new page; anything else commits a navigation soon
      // after its answer (later under load), which the action's window waits for.
      const shown =
        !(status >= 300 && status < 400) &&
        status !== 204 &&
        status !== 205 &&
        !/attachment/i.test(res.headers()['content-disposition'] ?? '');
      if (shown) this.committing.add(entry);
    });
    page.on('requestfinished', (req: HTTPRequest) => {
      const entry = this.byRequest.get(req);
      if (entry) entry.done = true;
    });
    page.on('requestfailed', (req: HTTPRequest) => {
      const entry = this.byRequest.get(req);
      if (!entry) return;
      entry.done = true;
      entry.error = req.failure()?.errorText ?? 'failed';
    });
    page.on('console', (msg: ConsoleMessage) => {
      // The text is all that is kept: the message's handles would hold its objects alive in the page.
      const args = msg.args();
      this.note(levelOf(msg.type()), msg.text(), msg.location()?.url, args.length === 0);
      for (const arg of args) void arg.dispose().catch(() => {});
    });
    page.on('pageerror', (error: unknown) => {
      const text =
        error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
      this.note('exception', text, undefined, false);
    });
    page.on('framenavigated', (frame: PuppeteerFrame) => {
      if (frame === page.mainFrame()) this.navigation = { seq: ++this.seq, url: frame.url() };
    });
  }

  private note(level: ConsoleLevel, text: string, source: string | undefined, browser: boolean): void {
    const kept = text.length > KEPT_MAX ? `${text.slice(0, KEPT_MAX)}… (${text.length} chars)` : text;
    const entry: ConsoleEntry = { seq: ++this.seq, at: Date.now(), level, text: kept };
    if (source) entry.source = source.slice(0, KEPT_MAX);
    if (browser) entry.browser = true;
    this.messages.push(entry);
    if (this.messages.length > MAX_CONSOLE_KEPT) {
      this.messages.shift();
      this.droppedConsole++;
    }
  }

  /** Where an action's window begins: what arrives after this is the action's. */
  mark(): { seq: number; requests: number } {
    return { seq: this.seq, requests: this.requestTotal };
  }

  /**
   * What arrived since `mark` (the action's window), waiting (bounded) for the documents, fetches and XHRs
   * it started to be answered. `secret`: the action was on a secret field; its console texts are masked,
   * here and in later listings.
   */
  async causedSince(
    mark: ReturnType<PageActivity['mark']>,
    secret = false,
    navigating = false,
  ): Promise<Caused | undefined> {
    if (!this.started) return undefined;
    const mine = () => this.requests.filter((e) => e.seq > mark.seq);
    const navigatedSince = () => !!this.navigation && this.navigation.seq > mark.seq;
    const unanswered = (e: RequestEntry) => !e.done && e.status === undefined && AWAITED_TYPES.has(e.type);
    const uncommitted = (e: RequestEntry) => this.committing.has(e) && !navigatedSince();
    // `navigating`: the page said the action's default loads another document here (a link, a form's
    // submit). Its request starts when the browser gets to it, later on a busy machine: until it has (or the
    // tab has navigated), there is something still to come.
    const notYetStarted = () => navigating && !navigatedSince() && !mine().some((e) => e.type === 'document');
    for (const end = Date.now() + CAUSED_REQUEST_WAIT_MS; Date.now() < end; ) {
      if (!notYetStarted() && !mine().some((e) => unanswered(e) || uncommitted(e))) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const messages = this.messages.filter((m) => m.seq > mark.seq);
    if (secret) for (const m of messages) m.secret = true;
    const navigated = navigatedSince() ? this.navigation?.url : undefined;
    return causedOf(mine(), messages, navigated, { requests: this.requestTotal - mark.requests }, this.policy);
  }

  /** What arrived after `since` (verify_state's console and request predicates), shown as results show it. */
  since(since: number) {
    // The oldest sequence number each buffer still holds; everything before a dropped entry is gone too.
    const firstKept = Math.max(
      this.droppedRequests ? (this.requests[0]?.seq ?? this.seq + 1) : 0,
      this.droppedConsole ? (this.messages[0]?.seq ?? this.seq + 1) : 0,
    );
    const errors = this.messages
      .filter(
        (m) =>
          m.seq > since &&
          (m.level === 'exception' || m.level === 'error') &&
          !(m.browser && /^Failed to load resource/.test(m.text)),
      )
      .map((m) => ({ seq: m.seq, text: showConsole(m, this.policy).text }));
    const requests = this.requests
      .filter((e) => e.seq > since)
      .map((e) => {
        const shown = showRequest(e, this.policy);
        return {
          seq: e.seq,
          url: shown.url,
          ...(e.status !== undefined ? { status: e.status } : {}),
          ...(shown.failed ? { failed: shown.failed } : {}),
          done: e.done,
        };
      });
    return { recording: this.started, firstKept, errors, requests };
  }

  consoleMessages(filter: ConsoleFilter) {
    return {
      ...filterConsole(this.messages, filter, this.policy),
      kept: this.messages.length,
      dropped: this.droppedConsole,
      bound: MAX_CONSOLE_KEPT,
      recording: this.started,
    };
  }

  networkRequests(filter: NetworkFilter) {
    return {
      ...filterRequests(this.requests, filter, this.policy),
      kept: this.requests.length,
      dropped: this.droppedRequests,
      bound: MAX_REQUESTS_KEPT,
      recording: this.started,
    };
  }
}
