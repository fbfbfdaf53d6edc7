// Verity's MCP server in this process, reached by the real MCP SDK client over the SDK's in-memory
// transport: for the tool tests that need no browser (arguments, sessions, refusals, tools/list). The core
// is built as the CLI builds it (new Verity + createMcpServer + connectMcp); its browser starts only when
// a browser tool gets past its checks, and `browserStarted()` says whether that happened.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { Verity, type VerityOptions } from '../../server/core.js';
import { connectMcp, createMcpServer } from '../../server/mcp/server.js';
import { configDir, setConfigDir } from '../../server/token.js';

/** The per-connection context createMcpServer takes (a Control UI binding, the transport). */
type ConnectionContext = NonNullable<Parameters<typeof createMcpServer>[1]>;

export interface Reply {
  isError: boolean;
  structured: any;
  text: string;
}

export interface InMemoryAgent {
  client: Client;
  connectionId: string;
  /** What tools/list gave this connection when it connected. */
  tools: Tool[];
  call(name: string, args?: Record<string, unknown>): Promise<Reply>;
  close(): Promise<void>;
}

export interface InMemoryVerity {
  core: Verity;
  /** One MCP connection (its own connectionId); `ctx` adds to its CallContext (a bound Control UI). */
  connect(ctx?: Partial<ConnectionContext>): Promise<InMemoryAgent>;
  browserStarted(): boolean;
  close(): Promise<void>;
}

/** A core with its own empty config dir (no saved cursor settings, no policy file, no recordings of the user's). */
export async function inMemoryVerity(options: VerityOptions = {}): Promise<InMemoryVerity> {
  const ownDir = mkdtempSync(join(tmpdir(), 'verity-in-memory-'));
  const saved = configDir();
  setConfigDir(ownDir);
  // This process's environment, as the CLI hands its own down (DISPLAY, PATH ...), unless the test gives one.
  const core = new Verity({ env: process.env, ...options });
  const agents = new Set<InMemoryAgent>();
  return {
    core,
    async connect(ctx = {}) {
      const connectionId = ctx.connectionId ?? randomUUID();
      const server = createMcpServer(core, { ...ctx, connectionId });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await connectMcp(server, serverSide, core);
      const client = new Client({ name: 'in-memory-test', version: '1' });
      await client.connect(clientSide);
      // Listing the tools first makes the SDK client check every structuredContent against its outputSchema.
      const { tools } = await client.listTools();
      const agent: InMemoryAgent = {
        client,
        connectionId,
        tools,
        async call(name, args = {}) {
          const r = await client.callTool({ name, arguments: args });
          const text = (r.content as Array<{ type: string; text?: string }>)
            .filter((c) => c.type === 'text')
            .map((c) => c.text)
            .join('\n');
          return { isError: r.isError === true, structured: r.structuredContent, text };
        },
        async close() {
          agents.delete(agent);
          await client.close();
        },
      };
      agents.add(agent);
      return agent;
    },
    browserStarted: () => core.browser.running || core.browser.launchedPid !== null,
    async close() {
      for (const agent of [...agents]) await agent.close();
      await core.close();
      setConfigDir(saved);
      rmSync(ownDir, { recursive: true, force: true });
    },
  };
}
