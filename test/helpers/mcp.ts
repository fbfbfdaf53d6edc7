// Spawns `verity mcp` and talks to it with the real MCP SDK client over stdio.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { join } from 'node:path';
import { ROOT } from './fixtures.js';
import type { ChildProcess } from 'node:child_process';
import { exitReport, wrap } from './gateway.js';

export interface Verity {
  client: Client;
  pid: number;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

export interface ToolResult {
  isError: boolean;
  structured: any;
  text: string;
  images: number;
}

export async function startVerity(args: string[] = [], env: Record<string, string> = {}): Promise<Verity> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, 'bin', 'verity.js'), 'mcp', '--headless', ...args],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  const stderr: string[] = [];
  transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
  const client = new Client({ name: 'verity-test', version: '1' });
  await client.connect(transport);
  const pid = transport.pid!;
  // The SDK keeps its child process to itself: its exit status is read from it here, so that a call
  // failing because the server went away says how it ended (a crash, a native abort, a signal).
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  let ended: string | null = null;
  child?.once('close', (code, signal) => {
    ended = exitReport('verity mcp', pid, code, signal, stderr.join(''));
  });
  return {
    client,
    pid,
    stderr: () => stderr.join(''),
    call: wrap(client, () => ended),
    async close() {
      await client.close().catch(() => {});
      // The server closes its own browser when stdin ends; make sure by PID.
      await new Promise((r) => setTimeout(r, 200));
      try {
        process.kill(pid, 0);
        process.kill(pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    },
  };
}

/** get_window_state of the current tab, and a lookup of tokens by a label/role substring. */
export async function snapshot(v: Pick<Verity, 'call'>, args: Record<string, unknown> = {}) {
  const r = await v.call('get_window_state', {
    format: 'full',
    include_screenshot: false,
    max_elements: 2000,
    ...args,
  });
  if (r.isError) throw new Error(`get_window_state refused: ${r.text}`);
  const elements = r.structured.elements as Array<{
    element_token: string;
    role: string;
    label: string;
    value?: string;
    frame: any;
  }>;
  const find = (pred: (e: (typeof elements)[number]) => boolean, what: string) => {
    const found = elements.find(pred);
    if (!found) throw new Error(`no element ${what} in ${JSON.stringify(elements.map((e) => `${e.role}:${e.label}`))}`);
    return found;
  };
  return {
    result: r,
    elements,
    find,
    token: (label: string) =>
      find((e) => e.label === label || e.label.includes(label), `labelled ${label}`).element_token,
  };
}
