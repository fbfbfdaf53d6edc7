// The commands `verity` runs (start, mcp, doctor) and what --help says of each: a line in the command list,
// a paragraph in the command's own help (help.ts writes them; main.ts names them).
import type { Command } from './option-spec.js';

export const COMMANDS: Record<Command, { short: string; long: string }> = {
  mcp: {
    short: 'MCP over stdio, for clients that start their servers (Claude Code, Claude Desktop, Cursor, VS Code, Codex)',
    long:
      'MCP over stdio, for clients that start their servers (Claude Code, Claude Desktop, Cursor, VS Code,\n' +
      'Codex). With a `verity start` running and no option that configures a server of its own, it joins\n' +
      'that gateway (its browser, its Control UI); --standalone keeps it apart.',
  },
  doctor: {
    short: 'what works on this machine (browser, display, AT-SPI) and how to fix the rest',
    long:
      'What works on this machine and what to do about the rest: the browser found (path, version, how it was ' +
      'found), the native backend and why, the display server (X11, Wayland, XWayland), the AT-SPI bus, and ' +
      'the OS permissions native input needs. Exits 0 unless it cannot run; --json for programs.',
  },
  start: {
    short: "the gateway: the Control UI, MCP over Streamable HTTP at /mcp, the extension's WebSocket",
    long:
      'The gateway, on one loopback port: the Control UI at /, MCP over Streamable HTTP at /mcp (with a\n' +
      "Bearer token), the companion extension's WebSocket at /gateway. It prints the URLs, the token and\n" +
      'an entry for HTTP MCP clients.',
  },
};
