// The browser route's page-level commands that the router and the tools ask for (tab ownership, window
// matching, the page tool, thumbnails): the CDP they take stays here, in the backend, so the layers
// above never speak the protocol (scripts/check-deps.mjs holds them to it).
import { browserSession, type BrowserHost } from './browser/browser.js';
import type { ClipboardContent } from '../contract/native-host.js';
import { bounded } from '../contract/bounded.js';
import { Refusal } from '../contract/refusal.js';
import type { Tab } from './tab/tab.js';

/** The tab that opened this one (a popup's opener), or null. */
export async function openerIdOf(tab: Tab): Promise<string | null> {
  return tab.session.send('Target.getTargetInfo').then(
    ({ targetInfo }) => targetInfo.openerId ?? null,
    () => null,
  );
}

/** The pid of an attached browser's main process, as CDP reports it (null for older browsers). */
export async function browserProcessPid(host: BrowserHost): Promise<number | null> {
  const browser = await host.get().catch(() => null);
  if (!browser) return null;
  const session = await browserSession(browser);
  try {
    const info = (await session.send('SystemInfo.getProcessInfo')) as {
      processInfo: Array<{ type: string; id: number }>;
    };
    return info.processInfo.find((p) => p.type === 'browser')?.id ?? null;
  } catch {
    return null; /* older browsers: no process info */
  } finally {
    await session.detach().catch(() => undefined);
  }
}

/** Whether the tab is the one shown in its window (document.visibilityState). */
export function isVisible(tab: Tab): Promise<boolean> {
  return tab.page
    .evaluate('document.visibilityState')
    .then((v) => v === 'visible')
    .catch(() => false);
}

/** Runs a script in the page's main world (execute_javascript, javascript: URLs); bounded by CDP's own timeout. */
export async function evaluateInPage(
  tab: Tab,
  expression: string,
  options: { awaitResult: boolean },
): Promise<{ value: unknown; error?: string }> {
  const { result, exceptionDetails } = await tab.session.send('Runtime.evaluate', {
    expression,
    timeout: 10_000,
    ...(options.awaitResult ? { awaitPromise: true, returnByValue: true } : {}),
  });
  if (exceptionDetails) return { value: null, error: exceptionDetails.exception?.description ?? exceptionDetails.text };
  return { value: result.value ?? null };
}

/** Accepts or dismisses the tab's open JavaScript dialog. */
export async function answerDialog(tab: Tab, accept: boolean, promptText?: string): Promise<void> {
  await tab.session.send('Page.handleJavaScriptDialog', {
    accept,
    ...(promptText !== undefined ? { promptText } : {}),
  });
}

/** The browser window holding the tab (0 and no bounds when CDP cannot say). */
export function browserWindowOf(tab: Tab): Promise<{ windowId: number; bounds: unknown }> {
  return tab.session.send('Browser.getWindowForTarget', {}).then(
    ({ windowId, bounds }) => ({ windowId, bounds }),
    () => ({ windowId: 0, bounds: {} }),
  );
}

/** A small JPEG of the tab for the operators' action log. */
export async function thumbnailOf(tab: Tab): Promise<string> {
  const { data } = await tab.withSecretsMasked(() =>
    tab.session.send('Page.captureScreenshot', {
      format: 'jpeg',
      quality: 40,
      clip: undefined,
      optimizeForSpeed: true,
    }),
  );
  return data;
}

/** How long the page's clipboard may take to answer (a write and its read-back). */
const CLIPBOARD_TIMEOUT_MS = 5000;

/**
 * The page's clipboard: navigator.clipboard in Verity's isolated world of the top frame (a page script
 * cannot stand in for it there), with clipboard-read and -write granted to the tab's origin only, in the
 * tab's own browser context. Writes `write` when given, then reads back what the clipboard holds.
 */
export async function pageClipboard(tab: Tab, write: string | null): Promise<ClipboardContent> {
  const url = tab.page.url();
  const origin = URL.canParse(url) ? new URL(url).origin : 'null';
  if (origin === 'null')
    throw new Refusal(
      'not_supported',
      `the page's clipboard is granted to an origin, and this tab's page (${url.slice(0, 80)}) has none: navigate it to an http(s) page, or leave target out for the desktop's clipboard`,
    );
  await tab.page
    .browserContext()
    .overridePermissions(origin, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
  const contextId = await tab.world(tab.topFrame());
  const expression = `(async (text) => {
    if (text !== null) await navigator.clipboard.writeText(text);
    const items = await navigator.clipboard.read();
    const types = [...new Set(items.flatMap((item) => [...item.types]))];
    return { text: types.includes('text/plain') ? await navigator.clipboard.readText() : '', types };
  })(${JSON.stringify(write)})`;
  const { result, exceptionDetails } = await bounded(
    tab.session.send('Runtime.evaluate', {
      expression,
      contextId,
      awaitPromise: true,
      returnByValue: true,
      userGesture: true,
    }),
    CLIPBOARD_TIMEOUT_MS,
    "the page's clipboard (navigator.clipboard) to answer",
  );
  if (exceptionDetails)
    throw new Refusal(
      'unavailable',
      `the page's clipboard refused: ${(exceptionDetails.exception?.description ?? exceptionDetails.text).split('\n')[0]}`,
    );
  return result.value as ClipboardContent;
}
