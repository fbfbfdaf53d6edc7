// The raw protocol floor: one bare CDP WebSocket to the page target, no domains enabled.
import { afterFrame, CdpConnection, closeTarget, newPageTarget, waitLoaded } from '../cdp.js';
import { measure } from '../stats.js';
import type { BenchContext } from '../types.js';
import { COUNT_VALUE, expectEqual, FIELD_VALUE, type ActionDriver, type DriverFactory } from './driver.js';

export const floorDriver: DriverFactory = {
  column: 'floor',
  label: 'raw CDP',
  async open(ctx: BenchContext): Promise<ActionDriver> {
    const first = ctx.fixtures.url('/input', 'floor');
    const target = await newPageTarget(ctx.browserUrl, first);
    const cdp = await CdpConnection.connect(target.webSocketDebuggerUrl!);
    await waitLoaded(cdp, first);

    const navigate = async (url: string) => {
      await cdp.send('Page.navigate', { url });
      await waitLoaded(cdp, url);
    };

    return {
      async typeText(text) {
        await navigate(ctx.fixtures.url('/input', 'floor'));
        return measure(ctx.config, {
          // Untimed: empty and focus the field (the floor has no element resolution to do).
          prepare: async () => {
            await cdp.evaluate(`(() => { const f = document.getElementById('f'); f.value = ''; f.focus(); })()`);
          },
          act: async () => {
            await cdp.send('Input.insertText', { text });
            return cdp.evaluate<string>(afterFrame(FIELD_VALUE));
          },
          check: async (value) => expectEqual('floor type', value, text),
        });
      },

      async click() {
        await navigate(ctx.fixtures.url('/button', 'floor'));
        const { x, y } = await cdp.evaluate<{ x: number; y: number }>(
          `(() => { const r = document.getElementById('b').getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`,
        );
        let expected = 0;
        return measure(ctx.config, {
          act: async () => {
            const mouse = { x, y, button: 'left', clickCount: 1 };
            await cdp.send('Input.dispatchMouseEvent', { type: 'mousePressed', ...mouse });
            await cdp.send('Input.dispatchMouseEvent', { type: 'mouseReleased', ...mouse });
            return cdp.evaluate<number>(afterFrame(COUNT_VALUE));
          },
          check: async (count) => expectEqual('floor click counter', count, ++expected),
        });
      },

      notes: () => [],

      async close() {
        await cdp.close();
        await closeTarget(ctx.browserUrl, target.id);
      },
    };
  },
};
