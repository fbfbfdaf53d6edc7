// Which native backend a --native-backend choice means on this platform, and why (the router loads it,
// `verity doctor` reports it). A leaf: it imports nothing.

export type NativeBackendChoice = 'auto' | 'nutjs';
/** The backend a choice means on a platform: `auto` is AT-SPI on Linux and nut-js on macOS and Windows. */
export function nativeBackendOf(
  choice: NativeBackendChoice = 'auto',
  platform: string = process.platform,
): { backend: 'atspi' | 'nutjs' | 'none'; why: string } {
  if (choice === 'nutjs')
    return {
      backend: 'nutjs',
      why: '--native-backend nutjs: pixels and keys through nut-js, every action unverifiable',
    };
  if (platform === 'linux')
    return {
      backend: 'atspi',
      why: 'auto on Linux: AT-SPI for elements and read-back, X11 or Wayland for windows and input',
    };
  if (platform === 'darwin' || platform === 'win32')
    return {
      backend: 'nutjs',
      why: `auto on ${platform}: pixels and keys through nut-js (no accessibility backend here yet), every action unverifiable`,
    };
  return { backend: 'none', why: `auto on ${platform}: no native backend for this system; the browser route works` };
}
