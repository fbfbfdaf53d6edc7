// The browser panel: a live CDP screencast of a session's tab, with the operator's clicks, wheel and keys
// forwarded as trusted input.
import type { Protocol } from 'puppeteer-core';
import type { Tab } from '../cdp/tab.js';

export async function startScreencast(tab: Tab, onFrame: (frame: { data: string; width: number; height: number; tab_id: string }) => void): Promise<() => void> {
  const session = await tab.page.createCDPSession();
  const handler = (e: Protocol.Page.ScreencastFrameEvent) => {
    onFrame({ data: e.data, width: e.metadata.deviceWidth, height: e.metadata.deviceHeight, tab_id: tab.id });
    void session.send('Page.screencastFrameAck', { sessionId: e.sessionId }).catch(() => {});
  };
  session.on('Page.screencastFrame', handler);
  await session.send('Page.startScreencast', { format: 'jpeg', quality: 60, maxWidth: 1280, maxHeight: 800, everyNthFrame: 1 });
  return () => {
    session.off('Page.screencastFrame', handler);
    void session.send('Page.stopScreencast').catch(() => {}).finally(() => session.detach().catch(() => {}));
  };
}

export interface PanelInput { type: 'click' | 'wheel' | 'key' | 'text'; x?: number; y?: number; deltaY?: number; key?: string; text?: string }

/** Operator input from the panel, in the tab's CSS pixels. */
export async function forwardInput(tab: Tab, input: PanelInput): Promise<void> {
  const send = tab.session.send.bind(tab.session);
  if (input.type === 'click') {
    const at = { x: input.x ?? 0, y: input.y ?? 0 };
    await send('Input.dispatchMouseEvent', { type: 'mouseMoved', ...at });
    await send('Input.dispatchMouseEvent', { type: 'mousePressed', ...at, button: 'left', clickCount: 1 });
    await send('Input.dispatchMouseEvent', { type: 'mouseReleased', ...at, button: 'left', clickCount: 1 });
  } else if (input.type === 'wheel') {
    await send('Input.dispatchMouseEvent', { type: 'mouseWheel', x: input.x ?? 0, y: input.y ?? 0, deltaX: 0, deltaY: input.deltaY ?? 0 });
  } else if (input.type === 'text' && input.text) {
    await send('Input.insertText', { text: input.text });
  } else if (input.type === 'key' && input.key) {
    await tab.page.keyboard.press(input.key as never);
  }
}
