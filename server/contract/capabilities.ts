// Capabilities: families of rarely needed tools that tools/list leaves out unless the operator turns them
// on (`--caps LIST`, as Playwright MCP's --caps does; `--tools full` turns on every one). Clients send every
// definition to the model on every turn, so the default surface stays lean (docs/benchmarks.md holds it at
// most 0.5x Playwright MCP's bytes); a tool of a capability that is off is refused, naming the flag.
export const CAPABILITIES = {
  apps: 'launch_app, kill_app',
  windows: 'bring_to_front, set_window_frame, set_window_state, get_desktop_state',
  clipboard: 'clipboard_read, clipboard_write',
  cursor: 'move_cursor, get_cursor_position',
  menus: 'invoke_menu',
  zoom: 'zoom',
} as const;
export type Capability = keyof typeof CAPABILITIES;

export function isCapability(name: string): name is Capability {
  return Object.hasOwn(CAPABILITIES, name);
}

/** What tools/list offers: the surface (`--tools`) and the capabilities turned on (`--caps`). */
export interface ToolSurface {
  surface: 'default' | 'full';
  caps: readonly Capability[];
}

/** Whether a tool of capability `cap` (none: an ordinary tool) is on for `on`. */
export function capabilityOn(cap: Capability | undefined, on: ToolSurface): boolean {
  return cap === undefined || on.surface === 'full' || on.caps.includes(cap);
}

/** Why a tool of a capability that is off is refused: what turns it on. */
export function capabilityOffMessage(tool: string, cap: Capability): string {
  return `name: ${tool} is off on this server; the operator turns it on with --caps ${cap} (or --tools full)`;
}

/** The surface the operator's options choose (`--tools`, `--caps`). */
export function surfaceOf(options: { tools?: 'default' | 'full'; caps?: readonly Capability[] }): ToolSurface {
  return { surface: options.tools === 'full' ? 'full' : 'default', caps: options.caps ?? [] };
}
