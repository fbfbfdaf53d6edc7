// The desktop as the window manager or compositor keeps it (host.ts desktopState, for get_desktop_state):
// the screens, the stacking order, the focused window and the pointer, read together; what could not be read
// is said, and shared/desktop-state.ts orders the windows by it.
import type { DesktopState } from '../../contract/native-host.js';
import { Refusal } from '../../contract/refusal.js';
import { orderDesktop } from '../shared/desktop-state.js';
import { processName } from '../shared/processes.js';
import type { WindowInfo } from './atspi/window.js';
import { screenSize } from './transport/input.js';
import { compositorOrder, session, waylandOutputs } from './transport/wayland.js';
import { activeWindow, pointerPosition, stackingOrder } from './transport/x11.js';

/**
 * On X11 its stacking order (_NET_CLIENT_LIST_STACKING), active window (_NET_ACTIVE_WINDOW) and the pointer
 * (QueryPointer); on sway its IPC tree and outputs. `windows` are those list_windows lists (the policy's left out).
 */
export async function readDesktopState({
  windows,
  x11Missing,
}: {
  windows: WindowInfo[];
  x11Missing: string | null;
}): Promise<DesktopState> {
  const unknown: string[] = [];
  if (x11Missing) unknown.push(x11Missing);
  const wayland = session().kind === 'wayland';
  const said = <T>(what: string, read: Promise<T>): Promise<T | null> =>
    read.catch((e: unknown) => {
      if (!(e instanceof Refusal)) throw e;
      unknown.push(`${what}: ${e.message}`);
      return null;
    });
  const [screens, order, focused, cursor] = await Promise.all([
    said(
      'screens',
      wayland ? waylandOutputs() : screenSize().then(({ width, height }) => [{ x: 0, y: 0, width, height }]),
    ),
    said('z', wayland ? compositorOrder() : stackingOrder()),
    said('focused', activeWindow()),
    said('cursor', pointerPosition()),
  ]);
  if (!order)
    unknown.push(
      wayland
        ? 'z: the compositor does not say how its windows are stacked'
        : 'z: no window manager keeps a stacking order on this display (_NET_CLIENT_LIST_STACKING is empty)',
    );
  const appOf = (w: WindowInfo) => w.app?.name ?? (w.pid !== null ? processName(w.pid) : '');
  return orderDesktop(windows, appOf, order, focused ?? 0, { screens: screens ?? [], cursor, unknown });
}
