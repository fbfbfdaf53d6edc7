// The window the native route acts on: what the transports say of it and its AT-SPI frame, built by the host
// (host.ts) and read by the tree and the actions.
import type { XWindow } from '../transport/x11.js';
import type { AccRef } from './model.js';

/**
 * A window as the native route acts on it: X11 facts (or, for a Wayland-native window, the same facts from
 * AT-SPI and the compositor) plus its AT-SPI frame, when the app exposes one.
 */
export interface WindowInfo extends XWindow {
  /** How it is reached: X11 (XTest, X capture) or Wayland (AT-SPI, and the compositor's protocols). */
  surface: 'x11' | 'wayland';
  /** Whether `bounds` are where it is on the screen (a Wayland window's are known only from the compositor). */
  placed: boolean;
  frame: AccRef | null;
  app: { bus: string; name: string } | null;
  /** Owned by the browser Verity drives over CDP. */
  driven: boolean;
  /** A browser or Electron app (web content there is never confirmed natively). */
  browserLike: boolean;
}
