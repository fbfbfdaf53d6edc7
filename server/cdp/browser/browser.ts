// The browser the CDP route drives: launched lazily (the embedded default) or attached with --browser-url.
// A launched browser that dies is relaunched on next use; an attached one is never closed or killed.
// A launched browser is Verity's alone: DevTools over a pipe (no TCP port another local process could
// drive), the sandbox on unless running as root on Linux, and it ends with the server (see lifetime.ts).
import { rmSync } from 'node:fs';
import type { Browser, BrowserContext, CDPSession, ConnectionTransport, Page, Target } from 'puppeteer-core';
import { bounded } from '../../contract/bounded.js';
import { Refusal } from '../../contract/refusal.js';
import type { Policy } from '../../policy.js';
import { PAGE_CALL_TIMEOUT_MS, Tab } from '../tab/tab.js';
import { findBrowser, type Channel } from './discovery.js';
import { guardBrowser } from '../tab/guard.js';
import { attachSession } from '../tab/attach.js';
import { cleanStaleProfiles, newProfile, sandboxArgs, startWatchdog, type Watchdog } from './lifetime.js';
import { checkBrowserArgs, PolicyProxy } from './policy-proxy.js';

/** The download folder and quotas (--download-dir, --download-max-files ...); a missing one is its default. */
export interface DownloadSettings {
  dir?: string;
  maxFiles?: number;
  maxMb?: number;
  totalFiles?: number;
  totalMb?: number;
}

export interface BrowserOptions {
  /**
   * The machine's environment as the CLI hands it down: DISPLAY (a launched browser is headless without one),
   * PATH and the install folders a browser is looked for in (discovery.ts). Absent: none (headless, install paths only).
   */
  env?: Readonly<NodeJS.ProcessEnv>;
  browserUrl?: string;
  chromium?: string;
  headless?: boolean;
  userDataDir?: string;
  log?: (line: string) => void;
  /** Connect over this transport instead (an emulated endpoint, e.g. the extension relay's shared tabs). */
  transport?: () => Promise<ConnectionTransport>;
  /** For a peer source: whether it has tabs to offer now (not asked otherwise). */
  available?: () => boolean;
  /** Which installed browser to launch (discovery.ts); --chromium wins over it. */
  channel?: Channel;
  /** Every page's viewport in CSS pixels (emulated); without it the window's own size. */
  viewport?: { width: number; height: number };
  /**
   * Chromium's --proxy-server for a launched browser; with an origin policy, the policy proxy's upstream
   * instead (policy-proxy.ts: an http proxy only).
   */
  proxyServer?: string;
  /**
   * The origin policy, held for every request of the browser this host opens (tab/guard.ts guardBrowser; for a
   * launched browser, when the policy lists origins, the policy proxy too). A host whose browser is a
   * context of another's (contextOf) is covered by that one's.
   */
  policy?: Policy;
  /** Accept invalid or self-signed TLS certificates. */
  ignoreHttpsErrors?: boolean;
  /** More command-line arguments for a launched browser, after Verity's own. */
  browserArgs?: string[];
  /**
   * One session's own browser context in the browser of this host (--isolated): its tabs are that context's
   * only, and closing it closes the context, never the browser.
   */
  contextOf?: BrowserHost;
  /**
   * With browserUrl: only this browser context of the attached browser (one its owner made, e.g. a test run
   * sharing one Chromium between files): its tabs alone are seen and opened, and it is never closed.
   */
  browserContextId?: string;
  /** Where its tabs' downloads are saved and how much they may keep (--download-*; side-effects.ts reads it). */
  downloads?: DownloadSettings;
  /** No browser of its own: only its peers' tabs (with --browser-endpoint every session's browser is a peer). */
  peersOnly?: string;
}

/** Flags measured to work on this kind of machine (see ARCHITECTURE.md); the sandbox flag is decided apart. */
export const BASE_FLAGS = [
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-default-browser-check',
  '--disable-dev-shm-usage',
  '--force-renderer-accessibility',
  '--window-size=1280,800',
];

/** The flags for a Chromium launched by this process (tests launching their own use these too). */
export const CHROMIUM_FLAGS = [...sandboxArgs(), ...BASE_FLAGS];

/** The root-on-Linux notice is said once per process, not at every relaunch. */
let saidNoSandbox = false;

/** Bound on closing a launched browser; one that takes longer is killed. */
const CLOSE_TIMEOUT_MS = 10_000;

/** Bound on one CDP command (puppeteer's protocolTimeout): a page that never answers fails the call after this. */
export const PROTOCOL_TIMEOUT_MS = 30_000;

/**
 * A CDP session on the browser itself. A browser with several DevTools clients lists a browser target per
 * client, and `browser.target()` is the first listed: possibly another client's, gone by the time it is
 * attached ("No target with given id found", seen with a test run's shared Chromium). Any of them reaches the
 * same browser, and a session outlives the client whose target it is (measured), so each is tried in turn.
 */
export async function browserSession(browser: Browser): Promise<CDPSession> {
  let failure: unknown = new Error('the browser lists no browser target');
  for (const target of browser.targets().filter((t) => t.type() === 'browser')) {
    try {
      return await attachSession(target);
    } catch (e) {
      failure = e;
    }
  }
  throw failure;
}

/** Whether a --browser-url names this machine (its 127.0.0.1 is Verity's). */
function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.toLowerCase();
    return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

export function findChromium(explicit?: string, channel?: Channel, env: Readonly<NodeJS.ProcessEnv> = {}): string {
  return findBrowser({ explicit, channel, env });
}

export class BrowserHost {
  private browser: Browser | null = null;
  private connecting: Promise<Browser> | null = null;
  private tempProfile: string | null = null;
  private watchdog: Watchdog | null = null;
  /** Profiles left by crashed servers, removed before this host launches (started at construction). */
  private readonly staleCleaned: Promise<unknown>;
  private readonly tabs = new WeakMap<Page, Promise<Tab>>();
  private readonly unanswered = new WeakSet<Target>();
  private readonly byId = new Map<string, Tab>();
  /** Told the id of each tab that closes (bookkeeping kept per tab elsewhere, e.g. tab ownership, goes with it). */
  readonly closedListeners = new Set<(tabId: string) => void>();
  /** Told each time a browser is opened (launched or attached): the download guard must hold before any page loads. */
  readonly openedListeners = new Set<() => void>();
  /**
   * Told each time a --isolated session's host (contextOf this one) makes its browser context: settings held
   * per context (the download behaviour) are set for it by whoever watches this browser.
   */
  readonly contextListeners = new Set<(contextId: string) => void>();
  /**
   * More sources of tabs searched by tabs_() and findTab(): the extension relay's shared tabs (`shared`:
   * given to every session), and with --browser-endpoint each session's own browser (for the operator's views).
   */
  private readonly peers: Array<{ host: BrowserHost; shared: boolean }> = [];
  /** The browser context of a --isolated session's host (BrowserOptions.contextOf), or the attached one (browserContextId). */
  private context: BrowserContext | null = null;
  private forgetContext: (() => void) | null = null;
  /** The process id of a browser this host launched (null when attached). */
  launchedPid: number | null = null;
  /** The policy proxy in front of the launched browser (policy-proxy.ts), while that browser runs. */
  private proxy: PolicyProxy | null = null;
  /** The browser contexts --isolated sessions made in this host's browser: theirs are driven contexts too. */
  private readonly madeContexts = new Set<string>();
  /** The policy proxy the --isolated contexts of an attached browser go through (contextProxy). */
  private contextsProxy: Promise<PolicyProxy> | null = null;

  constructor(private readonly options: BrowserOptions) {
    this.staleCleaned = this.attached ? Promise.resolve() : cleanStaleProfiles(undefined, options.log).catch(() => {});
    this.contextListeners.add((contextId) => this.madeContexts.add(contextId));
  }

  /** Its download folder and quotas, as the operator set them. */
  get downloads(): DownloadSettings {
    return this.options.downloads ?? {};
  }

  get attached(): boolean {
    return !!this.options.browserUrl || !!this.options.transport || !!this.options.contextOf;
  }

  addPeer(peer: BrowserHost, shared = true): void {
    this.peers.push({ host: peer, shared });
  }

  removePeer(peer: BrowserHost): void {
    const at = this.peers.findIndex((p) => p.host === peer);
    if (at >= 0) this.peers.splice(at, 1);
  }

  /** The peers whose tabs are given to every session (the extension relay's). */
  sharedPeers(): BrowserHost[] {
    return this.peers.filter((p) => p.shared).map((p) => p.host);
  }

  /** Whether a tab comes from a shared peer source (a tab the operator shared through the extension). */
  isShared(tabId: string): boolean {
    return this.peers.some((p) => p.shared && p.host.byId.has(tabId));
  }

  /** Forgets every tab seen so far, returning their ids: a session's browser that went away took them along. */
  forgetTabs(): string[] {
    const ids = [...this.byId.keys()];
    this.byId.clear();
    return ids;
  }

  /**
   * The browser context this host's tabs live in (a --isolated session's, or an attached --browser-context),
   * none when they are the browser's default context. Browser-wide settings such as the download behaviour
   * apply to one context each: the default one unless this is named.
   */
  get contextId(): string | undefined {
    return this.context?.id;
  }

  /** Whether a browser is connected now (without launching one). */
  get running(): boolean {
    if (this.options.peersOnly !== undefined) return this.peers.some((p) => !p.shared && p.host.running);
    return !!this.browser?.connected && (!this.options.contextOf || !!this.context);
  }

  /** The live browser, launching or attaching on first use, relaunching after a crash. */
  async get(): Promise<Browser> {
    if (this.options.peersOnly !== undefined) throw new Refusal('unavailable', this.options.peersOnly);
    if (this.running) return this.browser!;
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<Browser> {
    const log = this.options.log ?? (() => {});
    // Loaded at the first browser use, not at start: puppeteer is about 150 modules, and a server that never
    // touches a browser (a desktop-only session, a gateway, `--help`) should not pay for loading them.
    const { default: puppeteer } = await import('puppeteer-core');
    let browser: Browser;
    const defaultViewport = this.options.viewport ?? null;
    const acceptInsecureCerts = !!this.options.ignoreHttpsErrors;
    if (this.options.contextOf) {
      // A context of the parent's browser, made again when that browser was relaunched.
      browser = await this.options.contextOf.get();
      this.context = await browser.createBrowserContext(await this.options.contextOf.contextProxy());
      const context = this.context;
      const gone = () => {
        if (this.context === context) {
          this.context = null;
          this.browser = null;
        }
      };
      browser.once('disconnected', gone);
      this.forgetContext = () => browser.off('disconnected', gone);
      this.browser = browser;
      if (context.id) for (const listener of this.options.contextOf.contextListeners) listener(context.id);
      return browser;
    } else if (this.options.transport) {
      const transport = await this.options.transport();
      // A transport puppeteer could not use is closed here (a pool's browser would otherwise wait for nobody).
      browser = await puppeteer
        .connect({ transport, defaultViewport, protocolTimeout: PROTOCOL_TIMEOUT_MS })
        .catch((e) => {
          transport.close();
          throw e;
        });
    } else if (this.options.browserUrl) {
      log(`attaching to the browser at ${this.options.browserUrl}`);
      try {
        browser = await puppeteer.connect({
          browserURL: this.options.browserUrl,
          defaultViewport,
          acceptInsecureCerts,
          protocolTimeout: PROTOCOL_TIMEOUT_MS,
        });
      } catch (e) {
        throw new Refusal(
          'unavailable',
          `could not attach to the browser at ${this.options.browserUrl}: ${(e as Error).message}`,
          { retryable: true },
        );
      }
      const wanted = this.options.browserContextId;
      if (wanted) {
        this.context = browser.browserContexts().find((c) => c.id === wanted) ?? null;
        if (!this.context) {
          await browser.disconnect().catch(() => {});
          throw new Refusal(
            'unavailable',
            `the browser at ${this.options.browserUrl} has no browser context ${wanted} (closed by its owner?)`,
          );
        }
      }
    } else {
      const executablePath = findChromium(this.options.chromium, this.options.channel, this.options.env);
      const headless = this.options.headless ?? !this.options.env?.DISPLAY;
      await this.staleCleaned;
      this.watchdog?.release();
      this.watchdog = null;
      if (!this.options.userDataDir) {
        if (this.tempProfile) rmSync(this.tempProfile, { recursive: true, force: true });
        this.tempProfile = newProfile();
      }
      const sandbox = sandboxArgs();
      if (sandbox.length && !saidNoSandbox) {
        saidNoSandbox = true;
        log(
          'running as root: Chromium runs without its sandbox (--no-sandbox); run Verity as a normal user to keep it',
        );
      }
      // With an origin list, every request goes through the policy proxy, which chains to the operator's
      // --proxy-server; its flags come last, so that no --browser-arg could override them (checked at start too).
      const policy = this.options.policy;
      let proxy: PolicyProxy | null = null;
      if (policy?.filtersOrigins) {
        try {
          checkBrowserArgs(this.options.browserArgs ?? []);
          proxy = await PolicyProxy.start({ policy, upstream: this.options.proxyServer });
        } catch (e) {
          throw new Refusal(
            'unavailable',
            `could not put the origin policy in front of the browser: ${(e as Error).message}`,
          );
        }
      }
      const args = [
        ...sandbox,
        ...BASE_FLAGS,
        ...(this.options.proxyServer && !proxy ? [`--proxy-server=${this.options.proxyServer}`] : []),
        ...(this.options.browserArgs ?? []),
        ...(proxy?.chromiumArgs ?? []),
      ];
      log(`launching ${executablePath} (${headless ? 'headless' : 'headful'})`);
      browser = await puppeteer
        .launch({
          executablePath,
          headless,
          defaultViewport,
          acceptInsecureCerts,
          args,
          // The pipe: DevTools on fds 3/4 only, no TCP port for another local process to drive; and
          // Chromium exits when the pipe closes, i.e. when this process dies however it dies.
          pipe: true,
          userDataDir: this.options.userDataDir ?? this.tempProfile!,
          protocolTimeout: PROTOCOL_TIMEOUT_MS,
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
        })
        .catch((e: Error) => {
          void proxy?.close();
          // Where user namespaces are off (some containers), Chromium's sandbox cannot start as a normal user.
          const hint =
            !sandbox.length && /sandbox|namespace/i.test(e.message)
              ? " (its sandbox could not start here: fix the host's user namespaces, or pass --browser-arg --no-sandbox knowing what it turns off)"
              : '';
          throw new Refusal(
            'unavailable',
            `could not launch ${executablePath}${hint}: ${e.message.split('\n').slice(0, 6).join(' ')}`,
            { retryable: true },
          );
        });
      this.proxy = proxy;
      const child = browser.process();
      // Nobody reads Chromium's output over the pipe transport: drain it, or a full stderr pipe blocks Chromium.
      child?.stdout?.resume();
      child?.stderr?.resume();
      this.launchedPid = child?.pid ?? null;
      if (this.launchedPid)
        this.watchdog = startWatchdog(this.launchedPid, this.options.userDataDir ? null : this.tempProfile);
    }
    const watchdog = this.watchdog;
    const proxy = this.proxy;
    browser.on('disconnected', () => {
      if (this.browser === browser) this.browser = null;
      // The policy proxy goes with its browser (a relaunch starts another).
      if (proxy) {
        void proxy.close();
        if (this.proxy === proxy) this.proxy = null;
      }
      // Closing on purpose: closeNow() ends the process and lets the watchdog go after the profile is gone.
      if (this.attached || this.closing) return;
      // A launched browser we lost the pipe to is of no more use: make sure it is gone, then let its
      // watchdog go (it must never act later on a pid the system may have given to another process).
      const child = browser.process();
      if (child && child.exitCode === null && child.signalCode === null)
        try {
          child.kill('SIGKILL');
        } catch {
          /* gone */
        }
      watchdog?.release();
      if (this.watchdog === watchdog) this.watchdog = null;
    });
    try {
      await this.guardWholeBrowser(browser);
    } catch (e) {
      if (!this.attached) {
        // A launched browser whose guard did not hold is not handed out (the next use launches again).
        await browser.close().catch(() => browser.process()?.kill('SIGKILL'));
        throw new Refusal('unavailable', `could not guard the launched browser's requests: ${(e as Error).message}`, {
          retryable: true,
        });
      }
      // An attached source without a browser target or its Fetch domain (an emulated endpoint) keeps the per-tab guard.
    }
    this.browser = browser;
    for (const listener of this.openedListeners) listener();
    return browser;
  }

  /**
   * The proxy settings of a context a --isolated session makes in this host's browser. A launched browser's
   * contexts inherit its policy proxy; in an attached browser on this machine (a loopback --browser-url),
   * with an origin list, they get a policy proxy of their own, which also sees their WebSockets (CDP does
   * not). An attached browser elsewhere could not reach Verity's 127.0.0.1: its contexts have CDP's guard only.
   */
  async contextProxy(): Promise<{ proxyServer: string; proxyBypassList: string[] } | undefined> {
    const policy = this.options.policy;
    const url = this.options.browserUrl;
    if (!policy?.filtersOrigins || !url || !isLoopbackUrl(url)) return undefined;
    this.contextsProxy ??= PolicyProxy.start({ policy });
    this.contextsProxy.catch(() => {
      this.contextsProxy = null; // tried again by the next context
    });
    const proxy = await this.contextsProxy.catch((e: Error) => {
      throw new Refusal(
        'unavailable',
        `could not put the origin policy in front of a new browser context: ${e.message}`,
      );
    });
    return { proxyServer: proxy.proxyServer, proxyBypassList: ['<-loopback>'] };
  }

  /**
   * The browser-level guard (tab/guard.ts guardBrowser), in place before any caller gets the browser: for a
   * launched browser over every request, for an attached one over the shared and service workers of the
   * contexts this host drives (its --browser-context, or the default one, and the contexts of --isolated
   * sessions made in it).
   */
  private async guardWholeBrowser(browser: Browser): Promise<void> {
    const policy = this.options.policy;
    if (!policy) return;
    const session = await browserSession(browser);
    if (!this.attached) return guardBrowser(session, policy, { kind: 'whole-browser' });
    const own = this.context?.id;
    await guardBrowser(session, policy, {
      kind: 'workers',
      covers: async (contextId) => {
        if (contextId !== undefined && this.madeContexts.has(contextId)) return true;
        if (own) return contextId === own;
        // The default context is the one not made with Target.createBrowserContext.
        const { browserContextIds } = await session.send('Target.getBrowserContexts');
        return contextId === undefined || !browserContextIds.includes(contextId);
      },
    });
  }

  /**
   * All page tabs with their Verity contexts. A tab whose renderer never answers (a script stuck in a loop
   * before Verity first saw it) is left out after a bound, rather than failing every call while it is open.
   */
  async tabs_(): Promise<Tab[]> {
    const own = await this.ownTabs();
    const shared = await Promise.all(
      this.peers.filter((p) => p.host.options.available?.() ?? true).map((p) => p.host.ownTabs().catch(() => [])),
    );
    return [...own, ...shared.flat()];
  }

  private async ownTabs(): Promise<Tab[]> {
    if (this.options.peersOnly !== undefined) return [];
    const browser = await this.get();
    const targets = (this.context ?? browser).targets().filter((t) => t.type() === 'page');
    const tabs = await Promise.all(
      targets.map(async (target) => {
        if (this.unanswered.has(target)) return null;
        const tab = target.page().then((page) => (page ? this.tabFor(page) : null));
        return bounded(tab, PAGE_CALL_TIMEOUT_MS, `tab ${target.url()} to answer`).catch((e) => {
          if (!browser.connected) throw e;
          this.unanswered.add(target); // not waited for again unless it answers after all
          tab.then(
            () => this.unanswered.delete(target),
            () => {},
          );
          return null;
        });
      }),
    );
    return tabs.filter((tab): tab is Tab => tab !== null);
  }

  async tabFor(page: Page): Promise<Tab> {
    let tab = this.tabs.get(page);
    if (!tab) {
      // A context's page is the parent's tab too: one Tab (one CDP session, one page agent) per page.
      tab = this.options.contextOf ? this.options.contextOf.tabFor(page) : Tab.open(page);
      this.tabs.set(page, tab);
      tab.then(
        (t) => {
          this.byId.set(t.id, t);
          page.once('close', () => {
            this.byId.delete(t.id);
            for (const listener of this.closedListeners) listener(t.id);
          });
        },
        () => this.tabs.delete(page),
      );
    }
    return tab;
  }

  /** How many times a tab was looked up by id (a debug stat: the hot-path test counts one per call). */
  foundCount = 0;

  async findTab(tabId: string): Promise<Tab> {
    this.foundCount++;
    // Hot path of every action: a tab seen before is answered without asking the browser.
    for (const host of [this, ...this.peers.map((p) => p.host)]) {
      const known = host.byId.get(tabId);
      if (known && !known.closed && host.browser?.connected) return known;
    }
    const tabs = await this.tabs_();
    const tab = tabs.find((t) => t.id === tabId);
    if (!tab)
      throw new Refusal(
        'target_not_found',
        `no tab with tab_id ${tabId}; call page {action:"list_tabs"} for the open tabs`,
        { tab_ids: tabs.map((t) => t.id) },
      );
    return tab;
  }

  async newTab(url?: string): Promise<Tab> {
    const browser = await this.get();
    const page = await (this.context ?? browser).newPage();
    const tab = await this.tabFor(page);
    if (url) await tab.navigate(url);
    return tab;
  }

  private closing: Promise<void> | null = null;

  /**
   * Closes what this host started; an attached browser is only disconnected from. A second close while the
   * first is under way (a SIGTERM after stdin ended) waits for it, so the profile goes only after Chromium did.
   */
  close(): Promise<void> {
    this.closing ??= this.closeNow().finally(() => {
      this.closing = null;
    });
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    const browser = this.browser;
    this.browser = null;
    const context = this.context;
    this.context = null;
    this.forgetContext?.();
    this.forgetContext = null;
    if (context && this.options.contextOf) {
      // Only the session's context: the browser is the parent's (and may serve other sessions).
      await bounded(context.close(), CLOSE_TIMEOUT_MS, 'the browser context to close').catch(() => {});
    } else if (browser) {
      if (this.attached) await browser.disconnect().catch(() => {});
      else
        await bounded(browser.close(), CLOSE_TIMEOUT_MS, 'the browser to close').catch(() => {
          try {
            browser.process()?.kill('SIGKILL');
          } catch {
            /* gone */
          }
        });
    }
    await this.proxy?.close();
    this.proxy = null;
    const contextsProxy = this.contextsProxy;
    this.contextsProxy = null;
    await contextsProxy?.then((p) => p.close()).catch(() => {});
    if (this.tempProfile) {
      rmSync(this.tempProfile, { recursive: true, force: true });
      this.tempProfile = null;
    }
    // Only now: a server killed while removing the profile (a SIGKILL after a slow SIGTERM) leaves the rest to the watchdog.
    this.watchdog?.release();
    this.watchdog = null;
  }
}
