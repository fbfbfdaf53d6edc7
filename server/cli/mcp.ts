// `verity mcp`: MCP over stdio. It relays to a gateway when one is meant (the Control UI terminal's
// variables, --gateway, or a running `verity start` and no option that configures a server of its own),
// else it serves on its own core.
import { type Config, OPTIONS, type OptionValues, type Source } from './options.js';
import { givenBy } from './parse.js';
import { readGatewayFile } from '../token.js';
import { log, serverOptions, startCore } from './serve.js';

export async function runMcp(
  config: Config,
  sources: Partial<Record<keyof OptionValues, Source>>,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const options = await serverOptions(config, env);
  if (config.relay !== false && env.VERITY_MCP_URL && env.VERITY_LINK && env.VERITY_TOKEN)
    return relayToGateway(env.VERITY_MCP_URL, env.VERITY_LINK, env.VERITY_TOKEN);
  if (config.gateway) {
    const running = readGatewayFile();
    if (!running) {
      process.stderr.write(
        'verity mcp --gateway: no running gateway found; start one with `verity start` (or `npm start`)\n',
      );
      process.exit(2);
    }
    return relayToGateway(running.mcp_url, null, running.token);
  }
  // A plain `verity mcp` joins a running gateway, so every agent shows up in the operator's Control UI
  // and shares its browser; an option that configures a server of its own (or --standalone) keeps it apart.
  const own = OPTIONS.some((o) => o.own && givenBy(sources, o));
  if (!own && !config.standalone) {
    const running = readGatewayFile();
    if (running) return relayToGateway(running.mcp_url, null, running.token);
  }
  const { core, shutdown } = await startCore(options);
  const [{ StdioServerTransport }, { connectMcp, createMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../mcp/server.js'),
  ]);
  // A gateway running beside this standalone server is still never driven by its agent.
  const running = readGatewayFile();
  if (running)
    try {
      const u = new URL(running.mcp_url);
      core.policy.setGatewayOrigin(u.hostname, Number(u.port));
    } catch {
      /* no gateway */
    }
  const server = createMcpServer(core, { connectionId: 'stdio', transport: 'stdio' });
  const transport = new StdioServerTransport();
  transport.onclose = () => {
    void shutdown();
  };
  // The client went away: its sessions end as a disconnect (each hook once), then the server exits.
  process.stdin.on('end', () => {
    void core.sessions.disconnect('stdio').finally(shutdown);
  });
  await connectMcp(server, transport, core);
  log(
    `MCP on stdio${options.browserEndpoint ? ', a browser from the pool (--browser-endpoint) on the first call that needs a tab' : options.browserUrl ? `, attached to ${options.browserUrl}` : ', Chromium launches on the first call that needs a tab'}`,
  );
}

/**
 * `verity mcp` started from the Control UI's terminal: relay stdio to the gateway's /mcp with the
 * terminal's link, so the agent is bound to that Control UI (and shows up in its session list).
 */
async function relayToGateway(url: string, link: string | null, token: string): Promise<void> {
  const [{ StreamableHTTPClientTransport }, { StdioServerTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
  ]);
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    ...(link ? { 'x-verity-link': link } : {}),
  };
  const up = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const down = new StdioServerTransport();
  down.onmessage = (message) => {
    void up.send(message).catch((e) => log(`relay to ${url} failed: ${(e as Error).message}`));
  };
  up.onmessage = (message) => {
    void down.send(message);
  };
  const stop = () => {
    void up.close().finally(() => process.exit(0));
  };
  down.onclose = stop;
  up.onerror = (e) => log(`gateway connection: ${e.message}`);
  process.stdin.on('end', stop);
  await up.start();
  await down.start();
  log(
    `MCP on stdio, relayed to the gateway at ${url}${link ? ' (bound to the Control UI that opened this terminal)' : ''}`,
  );
}
