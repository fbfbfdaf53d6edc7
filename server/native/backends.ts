// The native route's composition: the one module the router loads (on the first native call), which builds
// the backend a --native-backend choice means. It alone sees both backends: the nutjs one is handed the Linux
// desktop here, so nutjs/ imports nothing of linux/. Each backend is imported only when chosen.
import type { NativeRoute } from '../contract/native-host.js';
import type { AppFacts } from '../policy.js';

export interface NativeRouteOptions {
  /** The pid of the browser Verity drives over CDP (launched or attached), or null when there is none. */
  drivenBrowserPid(): Promise<number | null>;
  /** Why the operator's policy keeps agents off an app (null: they may drive it); absent: no app policy. */
  appRefusal?(app: AppFacts): string | null;
  /** Native apps are called on their own AT-SPI socket when they offer one (--atspi-direct; the AT-SPI backend). */
  atspiDirect?: boolean;
}

/** The native route of `backend`: AT-SPI with X11 or Wayland (Linux), or nut-js's pixels and keys. */
export async function loadNativeRoute(backend: 'atspi' | 'nutjs', options: NativeRouteOptions): Promise<NativeRoute> {
  if (backend === 'nutjs') {
    const { NutjsDriver } = await import('./nutjs/driver.js');
    const desktop = process.platform === 'linux' ? (await import('./linux/desktop.js')).linuxDesktop : undefined;
    return new NutjsDriver({ ...options, desktop });
  }
  const { NativeDriver } = await import('./linux/driver.js');
  return new NativeDriver(options);
}
