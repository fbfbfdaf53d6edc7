// What else an action on a tab caused, told in its result (`side_effects`): a tab or popup it opened (with
// the tab_id to drive it), a download (saved in the download folder the operator allowed, told by name and
// size only), a dialog that now blocks the page. One browser-level CDP session hears the browser's target
// and download events. A download is kept only when an agent action on its tab caused it, and within the
// per-session and folder quotas; any other is cancelled and reported refused.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, extname, basename } from 'node:path';
import type { Browser, CDPSession, Protocol } from 'puppeteer-core';
import { browserSession, type BrowserHost, type DownloadSettings } from './browser.js';
import { configDir } from '../../token.js';

export type { DownloadEffect, SideEffect } from '../../contract/wire.js';
import type { DownloadEffect, SideEffect } from '../../contract/wire.js';

/** Where downloads are saved: --download-dir, else `<config dir>/downloads`. */
export function downloadDir(settings: DownloadSettings): string {
  return settings.dir ?? join(configDir(), 'downloads');
}

/** The download quotas (--download-max-files etc.; a bad or missing value is the default). */
export function downloadLimits(settings: DownloadSettings): {
  files: number;
  bytes: number;
  totalFiles: number;
  totalBytes: number;
} {
  const num = (n: number | undefined, fallback: number) => (Number.isSafeInteger(n) && n! >= 1 ? n! : fallback);
  return {
    files: num(settings.maxFiles, DEFAULT_DOWNLOAD_LIMITS.files),
    bytes: num(settings.maxMb, DEFAULT_DOWNLOAD_LIMITS.mb) * MB,
    totalFiles: num(settings.totalFiles, DEFAULT_DOWNLOAD_LIMITS.totalFiles),
    totalBytes: num(settings.totalMb, DEFAULT_DOWNLOAD_LIMITS.totalMb) * MB,
  };
}
export const DEFAULT_DOWNLOAD_LIMITS = { files: 20, mb: 100, totalFiles: 100, totalMb: 500 };
const MB = 1024 * 1024;

/** The browser reports a new target or download a moment after the input that caused it: how long a click's result listens on. */
export const INPUT_SETTLE_MS = 50;
/** How long a navigation the browser aborted listens for the download its response became (the events come on another session). */
export const NAVIGATION_DOWNLOAD_SETTLE_MS = 250;
/** How long a result waits for a download that began to finish (bounded; reported in_progress past it). */
const DOWNLOAD_WAIT_MS = 3_000;
/** How long a download link's click waits for its download to begin (the browser tells it after the click). */
export const DOWNLOAD_BEGIN_WAIT_MS = 2_000;
/** A download that begins this long after an action on its tab ended is still that action's (a script's short delay). */
const CAUSE_GRACE_MS = 2_000;
/** Events of one action window are kept up to this many (a page that opens popups in a loop). */
const MAX_EFFECTS = 20;
/** Downloads no result told (refused ones no action caused, late ones): kept per tab for its next result (bounded). */
const MAX_UNTOLD_PER_TAB = 5;
const MAX_UNTOLD_TABS = 100;
/** Recently ended actions remembered for CAUSE_GRACE_MS (bounded: the oldest go first). */
const MAX_RECENT = 1_000;

interface Window {
  tabId: string;
  owner: string;
  /** The tab's document count when the action began (documentOf): a later document's downloads are not its. */
  document: DocumentMark;
  /**
   * A navigation's window: the one download it causes is its own response, at this URL. A download the page
   * it leaves starts meanwhile (a script's, on a timer) is no gesture of the navigation's.
   */
  onlyUrl?: string;
  effects: SideEffect[];
  downloads: Map<string, { file: string; done: Promise<void>; state: DownloadEffect }>;
  /** Called when a download of this window begins (its `end` may be waiting for one). */
  onDownload?: () => void;
}

/**
 * How long an action's result listens on after it: a fixed moment (ms), or, for a gesture the page said
 * starts a download (a click on an `a[download]` link), until that download begins, bounded.
 */
export type Settle = number | { untilDownloadMs: number };

/** The tab's document count now, and what it was at a moment of the action. */
interface DocumentMark {
  now: () => number;
  at: number;
}
/** Whether the tab still shows the document of the mark. */
const sameDocument = (mark: DocumentMark) => mark.now() === mark.at;

/** Files and bytes kept, per session (owner) and in all; all starts from what the folder already holds. */
interface Usage {
  files: number;
  bytes: number;
}

export class SideEffectWatch {
  private session: CDPSession | null = null;
  private browser: Browser | null = null;
  private attaching: Promise<void> | null = null;
  private readonly windows = new Set<Window>();
  private readonly progress = new Map<string, (e: Protocol.Browser.DownloadProgressEvent) => void>();
  /** tab id -> when its last action ended, whose it was, and the document it acted on. */
  private readonly recent = new Map<string, { at: number; owner: string; document: DocumentMark; onlyUrl?: string }>();
  private readonly untold = new Map<string, DownloadEffect[]>();
  private readonly perOwner = new Map<string, Usage>();

  constructor(
    private readonly host: BrowserHost,
    private readonly log: (line: string) => void = (line) => process.stderr.write(`verity: ${line}\n`),
  ) {
    // Downloads are guarded from the moment a browser is there, not from the first action: a page the
    // agent only navigated to must not save files on its own either.
    const guard = () => void this.attach().catch(() => {});
    host.openedListeners.add(guard);
    if (host.running) guard();
    // A --isolated session's context: its downloads go through this same guard (its tabs are this host's).
    host.contextListeners.add((contextId) => void this.guardContext(contextId).catch(() => {}));
  }

  /**
   * Downloads saved under their guid, renamed to their own name once complete (no clobbering), and told as
   * events. Chromium's own prompt for many downloads is skipped by this behaviour: the cause and quota checks
   * below stand in. It holds for one context: the default one unless named (and a context DevTools made
   * denies every download until it is set).
   */
  private async allowDownloads(session: CDPSession, dir: string, browserContextId?: string): Promise<void> {
    await session.send('Browser.setDownloadBehavior', {
      behavior: 'allowAndName',
      downloadPath: dir,
      eventsEnabled: true,
      ...(browserContextId ? { browserContextId } : {}),
    });
  }

  private async guardContext(contextId: string): Promise<void> {
    await this.attach();
    if (this.session) await this.allowDownloads(this.session, downloadDir(this.host.downloads), contextId);
  }

  private async attach(): Promise<void> {
    const browser = await this.host.get();
    if (this.session && this.browser === browser && browser.connected) return;
    this.attaching ??= (async () => {
      const session = await browserSession(browser);
      const dir = downloadDir(this.host.downloads);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      folderTotal(dir); // what it holds before this browser downloads anything
      await this.allowDownloads(session, dir, this.host.contextId);
      await session.send('Target.setDiscoverTargets', { discover: true });
      session.on('Target.targetCreated', (e: Protocol.Target.TargetCreatedEvent) => {
        const info = e.targetInfo;
        if (info.type !== 'page' || !info.openerId) return;
        for (const w of this.windows)
          if (w.tabId === info.openerId) push(w, { kind: 'tab_opened', tab_id: info.targetId, url: info.url });
      });
      session.on('Target.targetInfoChanged', (e: Protocol.Target.TargetInfoChangedEvent) => {
        // A popup's URL is about:blank at creation; its real one arrives with the navigation.
        for (const w of this.windows)
          for (const fx of w.effects)
            if (fx.kind === 'tab_opened' && fx.tab_id === e.targetInfo.targetId && e.targetInfo.url)
              fx.url = e.targetInfo.url;
      });
      session.on('Browser.downloadWillBegin', (e: Protocol.Browser.DownloadWillBeginEvent) =>
        this.downloadBegan(session, dir, e),
      );
      session.on('Browser.downloadProgress', (e: Protocol.Browser.DownloadProgressEvent) =>
        this.progress.get(e.guid)?.(e),
      );
      this.session = session;
      this.browser = browser;
    })().finally(() => {
      this.attaching = null;
    });
    return this.attaching;
  }

  /**
   * A download began: kept only when an agent action on its tab is in flight or just ended, and within the
   * quotas of that action's session and of the folder; otherwise cancelled and said so (a refused side
   * effect in that action's result, or in the tab's next action's result when no action caused it).
   */
  private downloadBegan(session: CDPSession, dir: string, e: Protocol.Browser.DownloadWillBeginEvent): void {
    const file = safeName(e.suggestedFilename);
    // A download is an action's only while its tab shows the document the action acted on: a page the
    // action navigated to (a click on a link, a key that submits) that starts downloads as it loads is a
    // page's script, not a gesture. A navigation whose own response is the file commits no document.
    const causes = (w: { document: DocumentMark; onlyUrl?: string }) =>
      sameDocument(w.document) && (w.onlyUrl === undefined || w.onlyUrl === e.url);
    const windows = [...this.windows].filter((w) => w.tabId === e.frameId && causes(w));
    // An iframe's download names its frame, not its tab: it goes to the only action in flight.
    if (!windows.length && this.windows.size === 1 && causes([...this.windows][0])) windows.push(...this.windows);
    const recent = this.recent.get(e.frameId);
    const owner =
      windows[0]?.owner ??
      (recent && Date.now() - recent.at <= CAUSE_GRACE_MS && causes(recent) ? recent.owner : undefined);
    const cancel = () => {
      void session.send('Browser.cancelDownload', { guid: e.guid }).catch(() => {});
      removeQuietly(join(dir, e.guid));
    };
    if (owner === undefined) {
      cancel();
      this.log(`download ${JSON.stringify(file)} refused: no agent action on its tab caused it`);
      const note: DownloadEffect = {
        kind: 'download',
        file,
        state: 'refused',
        code: 'download_without_action',
        detail: 'the page started it with no agent action on the tab in flight; it was cancelled, nothing was saved',
      };
      this.tellLater(e.frameId, note);
      return;
    }
    const limits = downloadLimits(this.host.downloads);
    const mine = this.perOwner.get(owner) ?? { files: 0, bytes: 0 };
    this.perOwner.delete(owner); // kept in order of use: the least recently used session goes first past the bound
    this.perOwner.set(owner, mine);
    if (this.perOwner.size > MAX_RECENT) this.perOwner.delete(this.perOwner.keys().next().value!);
    const total = folderTotal(dir);
    const state: DownloadEffect = { kind: 'download', file, state: 'in_progress' };
    const refuse = (detail: string) => {
      cancel();
      state.state = 'refused';
      state.code = 'download_quota_exceeded';
      state.detail = `${detail}; it was cancelled and nothing of it kept (the operator sets --download-max-files, --download-max-mb, --download-total-files, --download-total-mb)`;
      this.log(`download ${JSON.stringify(file)} refused: ${detail}`);
    };
    const overCount =
      mine.files >= limits.files
        ? `this session has kept ${mine.files} downloads, its quota (--download-max-files ${limits.files})`
        : total.files >= limits.totalFiles
          ? `the download folder holds ${total.files} files, its quota (--download-total-files ${limits.totalFiles})`
          : null;
    let done: Promise<void> = Promise.resolve();
    if (overCount) refuse(overCount);
    else {
      // Counted when it begins (so many at once cannot all pass), its bytes as they arrive.
      mine.files++;
      total.files++;
      let counted = 0;
      const overBytes = (bytes: number) =>
        mine.bytes - counted + bytes > limits.bytes
          ? `it would take this session's downloads past ${limits.bytes / MB} MB (--download-max-mb)`
          : total.bytes - counted + bytes > limits.totalBytes
            ? `it would take the download folder past ${limits.totalBytes / MB} MB (--download-total-mb)`
            : null;
      const account = (bytes: number) => {
        mine.bytes += bytes - counted;
        total.bytes += bytes - counted;
        counted = bytes;
      };
      const release = () => {
        account(0);
        mine.files--;
        total.files--;
      };
      done = new Promise<void>((resolve) => {
        const finished = () => {
          this.progress.delete(e.guid);
          resolve();
        };
        this.progress.set(e.guid, (p) => {
          const over = overBytes(Math.max(p.receivedBytes, p.totalBytes || 0));
          if (over && state.state === 'in_progress') {
            refuse(over);
            release();
            return finished();
          }
          account(p.receivedBytes);
          state.size_bytes = p.receivedBytes;
          if (p.state === 'completed') {
            state.state = 'completed';
            finish(dir, e.guid, file);
          }
          if (p.state === 'canceled' && state.state === 'in_progress') {
            state.state = 'canceled';
            release();
          }
          if (p.state !== 'inProgress') finished();
        });
      });
    }
    for (const w of windows) {
      w.downloads.set(e.guid, { file, done, state });
      push(w, state);
      w.onDownload?.();
    }
    // Caused by an action that has ended (a script's short delay): the tab's next result tells it.
    if (!windows.length) this.tellLater(e.frameId, state);
  }

  private tellLater(tabId: string, note: DownloadEffect): void {
    if (!this.untold.has(tabId) && this.untold.size >= MAX_UNTOLD_TABS) return;
    const notes = this.untold.get(tabId) ?? [];
    if (notes.length < MAX_UNTOLD_PER_TAB) notes.push(note);
    this.untold.set(tabId, notes);
  }

  /** Starts hearing what an action on `tabId` (of session `owner`) causes; `end` returns it. Never fails the action. */
  async begin(
    tabId: string,
    owner = 'default',
    documentOf: () => number = () => 0,
    onlyUrl?: string,
  ): Promise<{ end(dialog: { type: string; message: string } | null, settle: Settle): Promise<SideEffect[]> }> {
    await this.attach().catch(() => {});
    const w: Window = {
      tabId,
      owner,
      document: { now: documentOf, at: documentOf() },
      ...(onlyUrl === undefined ? {} : { onlyUrl }),
      effects: [],
      downloads: new Map(),
    };
    // Downloads refused on this tab since its last action: this result tells them.
    for (const note of this.untold.get(tabId) ?? []) push(w, note);
    this.untold.delete(tabId);
    this.windows.add(w);
    return {
      end: async (dialog, settle) => {
        try {
          if (typeof settle === 'number') {
            if (settle > 0) await new Promise((r) => setTimeout(r, settle));
          } else if (!w.downloads.size) {
            // The browser tells a download a moment after the click, later on a busy machine: wait on it.
            let timer: NodeJS.Timeout | undefined;
            await new Promise<void>((r) => {
              w.onDownload = r;
              timer = setTimeout(r, settle.untilDownloadMs);
            });
            clearTimeout(timer);
          }
          const pending = [...w.downloads.values()].map((d) => d.done);
          if (pending.length)
            await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, DOWNLOAD_WAIT_MS))]);
          if (dialog) push(w, { kind: 'dialog', type: dialog.type, message: dialog.message });
          return w.effects.map((e) => ({ ...e }));
        } finally {
          this.windows.delete(w);
          this.recent.delete(tabId);
          // The document the action acted on, not the one it ended on: a page it led to is not its.
          this.recent.set(tabId, { at: Date.now(), owner, document: w.document, onlyUrl });
          if (this.recent.size > MAX_RECENT) this.recent.delete(this.recent.keys().next().value!);
        }
      },
    };
  }
}

/** Each download folder's use, shared by every watch (a pool gives each session a browser and a watch of its own). */
const folderTotals = new Map<string, Usage>();
function folderTotal(dir: string): Usage {
  let total = folderTotals.get(dir);
  if (!total) folderTotals.set(dir, (total = folderUsage(dir)));
  return total;
}

/** What the download folder holds already (files and bytes), counted against the total quota. */
function folderUsage(dir: string): Usage {
  const usage = { files: 0, bytes: 0 };
  try {
    for (const name of readdirSync(dir)) {
      const st = statSync(join(dir, name));
      if (!st.isFile()) continue;
      usage.files++;
      usage.bytes += st.size;
    }
  } catch {
    /* an unreadable folder holds nothing we can count */
  }
  return usage;
}

function removeQuietly(path: string): void {
  // Chromium may still be writing it: removed now and once more after its last write would have landed.
  const remove = () => rmSync(path, { force: true });
  try {
    remove();
  } catch {
    /* gone already */
  }
  setTimeout(() => {
    try {
      remove();
    } catch {
      /* gone already */
    }
  }, 1_000).unref();
}

function safeName(suggested: string): string {
  return basename(suggested || 'download').replace(/[\0/\\]/g, '_') || 'download';
}

function push(w: Window, effect: SideEffect): void {
  if (w.effects.length < MAX_EFFECTS) w.effects.push(effect);
}

/** Renames a completed download from its guid to its own name, made unique in the folder. */
function finish(dir: string, guid: string, suggested: string): string {
  const safe = safeName(suggested);
  const ext = extname(safe),
    stem = safe.slice(0, safe.length - ext.length);
  let name = safe;
  for (let n = 1; existsSync(join(dir, name)) && n < 1000; n++) name = `${stem} (${n})${ext}`;
  try {
    renameSync(join(dir, guid), join(dir, name));
    return join(dir, name);
  } catch {
    return join(dir, guid);
  }
}
