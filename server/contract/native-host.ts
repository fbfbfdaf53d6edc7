// What the router and the tools ask of a native backend beyond the Driver's actions: its windows and apps,
// whose they are, and its connections to close. Both native backends implement it (the Linux AT-SPI host,
// server/native/linux/host.ts, and the nut-js one, server/native/nutjs/host.ts); the router knows no more.
import type { Driver } from './driver.js';

/** A top-level window as a native host lists it (screen units; pid null where the system names none). */
export interface NativeWindow {
  id: number;
  pid: number | null;
  title: string;
  bounds: { x: number; y: number; w: number; h: number };
}

/** An app behind the windows: `accessibility` false where the backend reads no elements of it (absent: it does). */
export interface NativeApp {
  name: string;
  pid: number | null;
  accessibility?: boolean;
}

/** What a clipboard holds, as text, and the types its owner offers (X11 targets, MIME types). */
export interface ClipboardContent {
  text: string;
  types: string[];
}

/** The desktop as its window manager or compositor says it is now (get_desktop_state). */
export interface DesktopState {
  /** Each screen (monitor) and where it is in the desktop's coordinates. */
  screens: Array<{ width: number; height: number; x: number; y: number }>;
  /** The windows agents may see, bottom to top where the stacking order is known. */
  windows: Array<{
    pid: number | null;
    window_id: number;
    title: string;
    /** The app behind it: its accessibility name, else its process's name ('' when neither is known). */
    app: string;
    frame: { x: number; y: number; w: number; h: number };
    focused: boolean;
    /** Its place in the stacking order among the listed windows (0: bottom); null where nothing says. */
    z: number | null;
  }>;
  focused_window_id: number | null;
  cursor: { x: number; y: number } | null;
  /** What this backend could not say, and why (no stacking order, no cursor), in words. */
  unknown: string[];
}

export interface NativeHost {
  /** The windows agents may drive (the operator's app policy applied). */
  windows(): Promise<NativeWindow[]>;
  /** The same, and why some may be missing (a Wayland session whose XWayland does not answer), or null. */
  windowsAndGaps(): Promise<{ windows: NativeWindow[]; x11Missing: string | null }>;
  /** The apps agents may drive. */
  apps(): Promise<NativeApp[]>;
  /** A window's title (to match a browser window to its tab). */
  windowTitle(windowId: number): Promise<string>;
  /** Whether `pid` is `ancestor` or a process below it (the driven browser's renderers). */
  isDescendant(pid: number, ancestor: number): boolean;
  /** Starts the reads a type_text into this element will need, as its request arrives (`ref`: TargetElement.ref). */
  prefetchField(ref: unknown): void;
  /** The desktop's clipboard: its text ('' when none) and the types its owner offers (clipboard_read). */
  readClipboard(): Promise<ClipboardContent>;
  /** Makes `text` the desktop's clipboard; returns what a separate read then finds there (the write's proof). */
  writeClipboard(text: string): Promise<ClipboardContent>;
  /** Where the pointer is, in screen pixels (get_cursor_position, move_cursor's read-back). */
  pointerPosition(): Promise<{ x: number; y: number }>;
  /** Whether an app policy is in force (some windows may be left out of listings, and are said to be). */
  readonly filtersApps: boolean;
  /** The screens, windows (frame, z-order, focus, app) and cursor (get_desktop_state), the policy's windows left out. */
  desktopState(): Promise<DesktopState>;
  /** Ends the host's connections (the server is shutting down). */
  close(): void;
}

/** The native route: a Driver with its host. */
export interface NativeRoute extends Driver {
  readonly host: NativeHost;
}
