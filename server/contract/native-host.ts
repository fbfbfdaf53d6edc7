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
  /** Ends the host's connections (the server is shutting down). */
  close(): void;
}

/** The native route: a Driver with its host. */
export interface NativeRoute extends Driver {
  readonly host: NativeHost;
}
