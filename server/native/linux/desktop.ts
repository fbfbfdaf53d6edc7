// The Linux desktop as the nutjs backend asks it (shared/desktop.ts): Verity's own X11 client, with the
// Wayland compositor's answers where it says (x11.ts asks it).
import type { LinuxDesktop } from '../shared/desktop.js';
import { closeXServer, requireDisplay, xServer } from './transport/env.js';
import { activate, activeWindow, describeWindow, listWindows, stackingOrder, topWindowAt } from './transport/x11.js';
import { requestClose, windowManager } from './transport/ewmh.js';

export const linuxDesktop: LinuxDesktop = {
  requireDisplay,
  close: closeXServer,
  listWindows,
  describeWindow,
  activeWindow,
  activate,
  topWindowAt,
  stacking: stackingOrder,
  async closeWindow(id) {
    const wm = await windowManager();
    if (!wm) return null;
    await requestClose(id);
    return `_NET_CLOSE_WINDOW to ${wm}`;
  },
  keyboardMapping: async () => (await xServer()).keyboardMapping(),
};
