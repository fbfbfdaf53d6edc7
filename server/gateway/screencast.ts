// The browser panel: a live CDP screencast of a session's tab, with the operator's clicks, wheel and keys
// forwarded as trusted input (only while the operator has taken control: the Control UI decides that).
//
// The tab's viewport is sized to the panel (Emulation.setDeviceMetricsOverride on the screencast's own
// CDP session, at the panel's device pixel ratio), so the page is shown 1:1 and its text is readable, not
// a 1280x800 page scaled into a narrow panel. The override belongs to that session: stopping the
// screencast (or the panel's connection going away) detaches it and the tab gets its own size back.
import type { Frame, Protocol } from 'puppeteer-core';
import type { Tab } from '../cdp/tab/tab.js';
import { attachSession } from '../cdp/tab/attach.js';
import type { PanelInput } from '../contract/wire.js';

export interface PanelViewport {
  width: number;
  height: number;
  dpr: number;
}
export interface Location {
  tab_id: string;
  url: string;
  title: string;
}
export interface Screencast {
  readonly tab: Tab;
  resize(view: PanelViewport): Promise<void>;
  stop(): void;
}

/** What the panel is told to show, bounded: a tiny or giant panel still gets a usable, affordable frame. */
export function boundedViewport(view: PanelViewport): PanelViewport {
  const clamp = (n: number, lo: number, hi: number) => Math.round(Math.min(hi, Math.max(lo, n)));
  return {
    width: clamp(view.width, 200, 3840),
    height: clamp(view.height, 150, 2160),
    dpr: Math.min(3, Math.max(1, view.dpr)),
  };
}

export async function startScreencast(
  tab: Tab,
  view: PanelViewport | undefined,
  onFrame: (frame: { data: string; width: number; height: number; tab_id: string }) => void,
  onLocation: (location: Location) => void,
): Promise<Screencast> {
  const session = await attachSession(tab.page);
  const handler = (e: Protocol.Page.ScreencastFrameEvent) => {
    onFrame({ data: e.data, width: e.metadata.deviceWidth, height: e.metadata.deviceHeight, tab_id: tab.id });
    void session.send('Page.screencastFrameAck', { sessionId: e.sessionId }).catch(() => {});
  };
  // The URL bar follows the tab: every main-frame navigation (the agent's too) and each load's title.
  const tell = () =>
    void tab.page
      .title()
      .catch(() => '')
      .then((title) => onLocation({ tab_id: tab.id, url: tab.page.url(), title }));
  const navigated = (frame: Frame) => {
    if (frame === tab.page.mainFrame()) tell();
  };
  tab.page.on('framenavigated', navigated);
  tab.page.on('load', tell);
  session.on('Page.screencastFrame', handler);
  let stopped = false;
  const start = async (v: PanelViewport | undefined) => {
    if (v)
      await session.send('Emulation.setDeviceMetricsOverride', {
        width: v.width,
        height: v.height,
        deviceScaleFactor: v.dpr,
        mobile: false,
      });
    const max = v
      ? { maxWidth: Math.round(v.width * v.dpr), maxHeight: Math.round(v.height * v.dpr) }
      : { maxWidth: 1280, maxHeight: 800 };
    await session.send('Page.startScreencast', { format: 'jpeg', quality: 70, ...max, everyNthFrame: 1 });
  };
  await start(view && boundedViewport(view));
  return {
    tab,
    async resize(next) {
      if (stopped) return;
      await session.send('Page.stopScreencast').catch(() => {});
      await start(boundedViewport(next));
    },
    stop() {
      if (stopped) return;
      stopped = true;
      session.off('Page.screencastFrame', handler);
      tab.page.off('framenavigated', navigated);
      tab.page.off('load', tell);
      void session
        .send('Page.stopScreencast')
        .catch(() => {})
        .then(() => session.send('Emulation.clearDeviceMetricsOverride'))
        .catch(() => {})
        .finally(() => session.detach().catch(() => {}));
    },
  };
}

export type HistoryStep = 'back' | 'forward' | 'reload';

/** The URL bar's buttons: history steps through the tab's own navigation history; no wait for the load. */
export async function stepHistory(tab: Tab, step: HistoryStep): Promise<void> {
  const send = tab.session.send.bind(tab.session);
  if (step === 'reload') {
    await send('Page.reload', {});
    return;
  }
  const { currentIndex, entries } = await send('Page.getNavigationHistory');
  const entry = entries[currentIndex + (step === 'back' ? -1 : 1)];
  if (entry) await send('Page.navigateToHistoryEntry', { entryId: entry.id });
}

/** URLs the operator may type in the panel's URL bar: web pages and about:blank (no file:, no javascript:). */
export function operatorUrl(raw: string): string | null {
  const text = raw.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(text) ? text : `https://${text}`;
  try {
    const url = new URL(withScheme);
    return url.protocol === 'http:' || url.protocol === 'https:' || url.href === 'about:blank' ? url.href : null;
  } catch {
    return null;
  }
}

/** Operator input from the panel, in the tab's CSS pixels. */
export async function forwardInput(tab: Tab, input: Omit<PanelInput, 'tab_id'>): Promise<void> {
  const send = tab.session.send.bind(tab.session);
  if (input.type === 'click') {
    const at = { x: input.x ?? 0, y: input.y ?? 0 };
    await send('Input.dispatchMouseEvent', { type: 'mouseMoved', ...at });
    await send('Input.dispatchMouseEvent', { type: 'mousePressed', ...at, button: 'left', clickCount: 1 });
    await send('Input.dispatchMouseEvent', { type: 'mouseReleased', ...at, button: 'left', clickCount: 1 });
  } else if (input.type === 'wheel') {
    await send('Input.dispatchMouseEvent', {
      type: 'mouseWheel',
      x: input.x ?? 0,
      y: input.y ?? 0,
      deltaX: 0,
      deltaY: input.deltaY ?? 0,
    });
  } else if (input.type === 'text' && input.text) {
    await send('Input.insertText', { text: input.text });
  } else if (input.type === 'key' && input.key) {
    await tab.page.keyboard.press(input.key as never);
  }
}
