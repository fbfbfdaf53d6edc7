// What else an action on a tab caused, told in its result (`side_effects`): a tab or popup it opened (with
// the tab_id to drive it), a download (saved in the download folder the operator allowed), a dialog that
// now blocks the page. One browser-level CDP session hears the browser's target and download events.
import { mkdirSync, existsSync, renameSync } from 'node:fs';
import { join, extname, basename } from 'node:path';
import type { Browser, CDPSession, Protocol } from 'puppeteer-core';
import type { BrowserHost } from './browser.js';
import { configDir } from '../token.js';

export type SideEffect =
  | { kind: 'tab_opened'; tab_id: string; url: string }
  | { kind: 'download'; file: string; path: string; state: 'completed' | 'in_progress' | 'canceled' }
  | { kind: 'dialog'; type: string; message: string };

/** Where downloads are saved: VERITY_DOWNLOAD_DIR, else `<config dir>/downloads`. */
export function downloadDir(): string {
  return process.env.VERITY_DOWNLOAD_DIR ?? join(configDir(), 'downloads');
}

/** The browser reports a new target or download a moment after the input that caused it: how long a click's result listens on. */
export const INPUT_SETTLE_MS = 50;
/** How long a result waits for a download that began to finish (bounded; reported in_progress past it). */
const DOWNLOAD_WAIT_MS = 3_000;
/** Events of one action window are kept up to this many (a page that opens popups in a loop). */
const MAX_EFFECTS = 20;

interface Window {
  tabId: string;
  effects: SideEffect[];
  downloads: Map<string, { file: string; done: Promise<void>; state: SideEffect & { kind: 'download' } }>;
}

export class SideEffectWatch {
  private session: CDPSession | null = null;
  private browser: Browser | null = null;
  private attaching: Promise<void> | null = null;
  private readonly windows = new Set<Window>();
  private readonly progress = new Map<string, (state: string) => void>();

  constructor(private readonly host: BrowserHost) {}

  private async attach(): Promise<void> {
    const browser = await this.host.get();
    if (this.session && this.browser === browser && browser.connected) return;
    this.attaching ??= (async () => {
      const session = await browser.target().createCDPSession();
      const dir = downloadDir();
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // Saved under the download's guid, renamed to its own name once complete (no clobbering).
      await session.send('Browser.setDownloadBehavior', {
        behavior: 'allowAndName',
        downloadPath: dir,
        eventsEnabled: true,
      });
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
      session.on('Browser.downloadWillBegin', (e: Protocol.Browser.DownloadWillBeginEvent) => {
        for (const w of this.windows) {
          if (w.tabId !== e.frameId && this.windows.size > 1) continue; // iframes' downloads: to the only window
          const state = {
            kind: 'download' as const,
            file: e.suggestedFilename,
            path: join(dir, e.guid),
            state: 'in_progress' as const,
          } as SideEffect & { kind: 'download' };
          const done = new Promise<void>((resolve) => {
            this.progress.set(e.guid, (s) => {
              if (s === 'completed') {
                state.state = 'completed';
                state.path = finish(dir, e.guid, e.suggestedFilename);
              }
              if (s === 'canceled') state.state = 'canceled';
              if (s !== 'inProgress') {
                this.progress.delete(e.guid);
                resolve();
              }
            });
          });
          w.downloads.set(e.guid, { file: e.suggestedFilename, done, state });
          push(w, state);
        }
      });
      session.on('Browser.downloadProgress', (e: Protocol.Browser.DownloadProgressEvent) =>
        this.progress.get(e.guid)?.(e.state),
      );
      this.session = session;
      this.browser = browser;
    })().finally(() => {
      this.attaching = null;
    });
    return this.attaching;
  }

  /** Starts hearing what an action on `tabId` causes; `end` returns it. Never fails the action. */
  async begin(
    tabId: string,
  ): Promise<{ end(dialog: { type: string; message: string } | null, settleMs: number): Promise<SideEffect[]> }> {
    await this.attach().catch(() => {});
    const w: Window = { tabId, effects: [], downloads: new Map() };
    this.windows.add(w);
    return {
      end: async (dialog, settleMs) => {
        try {
          if (settleMs > 0) await new Promise((r) => setTimeout(r, settleMs));
          const pending = [...w.downloads.values()].map((d) => d.done);
          if (pending.length)
            await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, DOWNLOAD_WAIT_MS))]);
          if (dialog) push(w, { kind: 'dialog', type: dialog.type, message: dialog.message });
          return w.effects.map((e) => ({ ...e }));
        } finally {
          this.windows.delete(w);
        }
      },
    };
  }
}

function push(w: Window, effect: SideEffect): void {
  if (w.effects.length < MAX_EFFECTS) w.effects.push(effect);
}

/** Renames a completed download from its guid to its own name, made unique in the folder. */
function finish(dir: string, guid: string, suggested: string): string {
  const safe = basename(suggested || 'download').replace(/[\0/\\]/g, '_') || 'download';
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
