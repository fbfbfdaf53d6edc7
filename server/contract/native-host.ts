// What the router and the tools ask of a native backend beyond the Driver's actions: its windows and apps,
// whose they are, and its connections to close. Both native backends implement it (the Linux AT-SPI host,
// server/native/linux/host.ts, and the nut-js one, server/native/nutjs/host.ts); the router knows no more.
import type { ActionResult, Driver } from './driver.js';

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

/** A launch_app call as the native host takes it (tools/apps.ts): what to start, and who may. */
export interface LaunchRequest {
  /** A desktop-file id, an executable name (PATH) or an absolute path. */
  app: string;
  args: readonly string[];
  /** What the operator lets agents start (--allow-launch): desktop-file ids, executable names or paths. */
  allowed: readonly string[];
  /** The session that launches it: only that session may kill_app it. */
  owner: string;
  /** How long to wait for its first window. */
  timeoutMs: number;
}

/** How a long wait (launch_app, kill_app) reports and is cut short; the tools hand these down, no MCP here. */
export interface WaitHooks {
  progress?: (message: string) => void;
  signal?: AbortSignal;
}

/** launch_app's result: the verdict, the pid started, and its window once one is listed. */
export type LaunchResult = ActionResult & {
  pid: number;
  window?: { kind: 'window'; pid: number; window_id: number; title: string };
};

export interface NativeHost {
  /** The windows agents may drive (the operator's app policy applied). */
  windows(): Promise<NativeWindow[]>;
  /** The same, and why some may be missing (a Wayland session whose XWayland does not answer), or null. */
  windowsAndGaps(): Promise<{ windows: NativeWindow[]; x11Missing: string | null }>;
  /** The window that has the keyboard focus (0: none), or null where the window system does not say (Wayland). */
  activeWindowId?(): Promise<number | null>;
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
  /** Starts an app the operator allows (refused before anything starts otherwise) and waits for its window. */
  launchApp(request: LaunchRequest, hooks: WaitHooks): Promise<LaunchResult>;
  /** Ends an app `owner` launched: its windows closed first, then signals; confirmed once it is gone. */
  killApp(pid: number, owner: string, hooks: WaitHooks): Promise<ActionResult>;
  /** Ends the host's connections (the server is shutting down). */
  close(): void;
}

/** The native route: a Driver with its host. */
export interface NativeRoute extends Driver {
  readonly host: NativeHost;
}
