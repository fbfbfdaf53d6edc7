// The desktop as the nutjs backend reads it around each action (native/shared/background.ts): nut-js's own
// mouse position, the focused window (the Linux desktop's on Linux, nut-js's elsewhere) and the stacking
// order where the window manager says it (Linux). Its deliveries are foreground (real OS input), so
// nothing is put back: what moved is said.
import type { DeskProbe, DeskView } from '../shared/background.js';
import type { NutjsHost } from './host.js';

const first = (e: Error) => e.message.split('\n')[0];

export function nutjsDeskProbe(host: NutjsHost): DeskProbe {
  return {
    async read(): Promise<DeskView> {
      const unread: NonNullable<DeskView['unread']> = {};
      const [pointer, focus, stacking] = await Promise.all([
        host.pointerPosition().catch((e: Error) => {
          unread.pointer = `nut-js could not read the mouse position: ${first(e)}`;
          return undefined;
        }),
        host.activeWindow().catch((e: Error) => {
          unread.focus = `the focused window could not be read: ${first(e)}`;
          return undefined;
        }),
        host.stacking().catch((e: Error) => {
          unread.z_order = `the stacking order could not be read: ${first(e)}`;
          return undefined;
        }),
      ]);
      if (stacking === null)
        unread.z_order = host.linux
          ? 'no window manager says the stacking order here (_NET_CLIENT_LIST_STACKING is empty)'
          : 'nut-js does not say the stacking order of windows';
      return {
        ...(pointer ? { pointer: { x: Math.round(pointer.x), y: Math.round(pointer.y) } } : {}),
        ...(focus !== undefined ? { focus } : {}),
        ...(stacking ? { stacking } : {}),
        ...(Object.keys(unread).length ? { unread } : {}),
      };
    },
  };
}
