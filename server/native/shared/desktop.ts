// What the nutjs backend asks of the Linux desktop: its windows, focus, display and keyboard map, from
// Verity's own X11 client (nut-js there lists the window manager's frames with empty titles). The Linux side
// implements it (linux/desktop.ts) and server/native/backends.ts hands it over, so nutjs/ imports no linux/.

type Rect = { x: number; y: number; w: number; h: number };

/** A top-level window as the desktop describes it. */
export interface DesktopWindow {
  id: number;
  pid: number | null;
  title: string;
  bounds: Rect;
  viewable: boolean;
}

export interface LinuxDesktop {
  /** Refuses unless the display answers (nut-js without one kills its process). */
  requireDisplay(): Promise<void>;
  /** Drops the display connection (the server is shutting down). */
  close(): void;
  /** The viewable top-level windows. */
  listWindows(): Promise<DesktopWindow[]>;
  /** One window's facts, refused as not found when it is gone. */
  describeWindow(id: number): Promise<DesktopWindow>;
  /** The window with keyboard focus (0: none). */
  activeWindow(): Promise<number>;
  /** Raises and focuses a window, waiting until it is active. */
  activate(id: number): Promise<void>;
  /** The window manager's stacking order, window ids bottom to top (null: none says). */
  stacking(): Promise<number[] | null>;
  /** Asks the window manager to close a window as its close button does; how it asked, or null without one. */
  closeWindow(id: number): Promise<string | null>;
  /** The top-most window at a screen point, or null when nothing says what is on top. */
  topWindowAt(x: number, y: number): Promise<DesktopWindow | null>;
  /** The keyboard map: `perKeycode` keysyms for each keycode, in order. */
  keyboardMapping(): Promise<{ perKeycode: number; keysyms: ArrayLike<number> }>;
}
