// MCP servers under test, spawned over stdio with the real SDK client and torn down by PID.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ProcessRegistry } from './procs.js';
import { PEER_NODE, peerPath } from '../test/helpers/peers.js';

/** The repository root (this file runs as dist/bench/mcp.js). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ToolResult {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [k: string]: unknown;
}

export interface Timed {
  result: ToolResult;
  ms: number;
}

export class McpSession {
  private toolList: Array<{ name: string; inputSchema: Record<string, unknown> }> | null = null;

  constructor(
    readonly name: string,
    private readonly client: Client,
    private readonly transport: StdioClientTransport,
    private readonly stderrTail: () => string,
    private readonly onClose: () => void,
  ) {}

  get pid(): number | null {
    return this.transport.pid;
  }

  async tools(): Promise<Array<{ name: string; inputSchema: Record<string, unknown> }>> {
    this.toolList ??= (await this.client.listTools()).tools as Array<{
      name: string;
      inputSchema: Record<string, unknown>;
    }>;
    return this.toolList;
  }

  async inputProperties(tool: string): Promise<Record<string, unknown>> {
    const t = (await this.tools()).find((x) => x.name === tool);
    if (!t) throw new Error(`${this.name} has no tool ${tool}`);
    return (t.inputSchema.properties ?? {}) as Record<string, unknown>;
  }

  /** The whole callTool round trip, timed. Does not throw on isError (see `call`). */
  async timed(tool: string, args: Record<string, unknown>): Promise<Timed> {
    const t0 = performance.now();
    let result: ToolResult;
    try {
      result = (await this.client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: 120_000,
      })) as ToolResult;
    } catch (e) {
      throw new Error(`${this.name} ${tool} failed: ${(e as Error).message}${this.describeFailure()}`);
    }
    return { result, ms: performance.now() - t0 };
  }

  /** A call that must succeed: throws with the tool's own message when isError is set. */
  async call(tool: string, args: Record<string, unknown>): Promise<ToolResult> {
    const { result } = await this.timed(tool, args);
    assertOk(this.name, tool, result);
    return result;
  }

  describeFailure(): string {
    return summarizeStderr(this.name, this.stderrTail());
  }

  async close(): Promise<void> {
    try {
      await this.client.close(); // SDK: end stdin, then SIGTERM, then SIGKILL
    } finally {
      this.onClose();
    }
  }
}

/** The informative part of a server's stderr: its first error line (stack frames dropped) and its last line. */
export function summarizeStderr(name: string, tail: string): string {
  const lines = tail
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('at ') && !l.startsWith('Node.js v'));
  if (!lines.length) return '';
  const err = lines.find((l) => /error/i.test(l));
  const last = lines[lines.length - 1]!;
  const picked = err && err !== last ? `${err} … ${last}` : last;
  return ` [${name} stderr: ${picked.slice(0, 500)}]`;
}

export function textOf(result: ToolResult): string {
  return (result.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('\n');
}

export function assertOk(server: string, tool: string, result: ToolResult): void {
  if (result.isError) throw new Error(`${server} ${tool} returned isError: ${textOf(result).slice(0, 400)}`);
}

export async function startMcp(
  procs: ProcessRegistry,
  opts: { name: string; command: string; args: string[]; cwd: string },
): Promise<McpSession> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  const transport = new StdioClientTransport({
    command: opts.command,
    args: opts.args,
    cwd: opts.cwd,
    env,
    stderr: 'pipe',
  });
  let tail = '';
  transport.stderr?.on('data', (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4000);
  });
  const client = new Client({ name: 'verity-bench', version: '0.1.0' });
  let pid: number | null = null;
  try {
    await client.connect(transport);
  } catch (e) {
    if (transport.pid) procs.addProcess(transport.pid, opts.name);
    throw new Error(`${opts.name} failed to start: ${(e as Error).message}${summarizeStderr(opts.name, tail)}`);
  }
  pid = transport.pid;
  if (pid) procs.addProcess(pid, opts.name);
  const session = new McpSession(
    opts.name,
    client,
    transport,
    () => tail,
    () => {
      if (pid) procs.forgetProcess(pid);
    },
  );
  procs.addCloser(opts.name, () => session.close().catch(() => undefined));
  return session;
}

export function startVerity(procs: ProcessRegistry, browserUrl: string, extraArgs: string[] = []): Promise<McpSession> {
  return startMcp(procs, {
    name: 'verity',
    command: process.execPath,
    args: [join(REPO_ROOT, 'bin', 'verity.js'), 'mcp', '--browser-url', browserUrl, ...extraArgs],
    cwd: REPO_ROOT,
  });
}

/** Chrome DevTools MCP (chrome-devtools-mcp) attached to the shared Chromium, when it is installed. */
export function startDevtools(
  procs: ProcessRegistry,
  browserUrl: string,
  extraArgs: string[] = [],
): Promise<McpSession> {
  const work = mkdtempSync(join(tmpdir(), 'verity-bench-devtools-'));
  procs.addDir(work);
  return startMcp(procs, {
    name: 'devtools-mcp',
    // A development peer (dev-peers/): it runs on the peers' Node 24, as its lighthouse asks.
    command: PEER_NODE,
    args: [
      peerPath('chrome-devtools-mcp', 'build', 'src', 'bin', 'chrome-devtools-mcp.js'),
      '--browserUrl',
      browserUrl,
      '--usageStatistics',
      'false',
      '--performanceCrux',
      'false',
      ...extraArgs,
    ],
    cwd: work,
  });
}

export function startPlaywright(
  procs: ProcessRegistry,
  browserUrl: string,
  extraArgs: string[] = [],
): Promise<McpSession> {
  // Its own scratch dir as cwd/workspace root and output dir: it writes snapshot .yml files there.
  const work = mkdtempSync(join(tmpdir(), 'verity-bench-pwmcp-'));
  procs.addDir(work);
  return startMcp(procs, {
    name: 'playwright-mcp',
    command: process.execPath,
    args: [
      join(REPO_ROOT, 'node_modules', '@playwright', 'mcp', 'cli.js'),
      '--cdp-endpoint',
      browserUrl,
      '--output-dir',
      join(work, 'out'),
      ...extraArgs,
    ],
    cwd: work,
  });
}
