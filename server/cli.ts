// `verity start` (the gateway: MCP over HTTP at /mcp for now) and `verity mcp` (MCP over stdio).
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Verity, type VerityOptions } from './core.js';
import { allTools, connectMcp, createMcpServer } from './mcp/server.js';
import { PAGE_ACTIONS } from './tools/page.js';
import { Gateway } from './gateway/server.js';
import { loadOrCreateToken, readGatewayFile, removeGatewayFile, writeGatewayFile } from './token.js';
import { EXTENSION_ID } from './gateway/extension-id.js';
import { Policy } from './policy.js';
import { appendFileSync } from 'node:fs';
import { CHANNELS, isChannel } from './cdp/discovery.js';

interface Flags extends VerityOptions { host: string; port: number; token?: string; policyFile?: string }

const USAGE = `usage: verity start [--host 127.0.0.1] [--port 7317] [--token T] [browser options]
       verity mcp [--gateway | --standalone] [browser options]
         with no options it relays to a running 'verity start' (sharing its browser, shown in its Control UI),
         else runs on its own; --gateway requires the gateway, --standalone never uses it
browser options: --browser-url URL | --chromium PATH | --channel NAME | --headless | --headful | --user-data-dir DIR | --allow-javascript
  --viewport WxH | --proxy-server URL | --ignore-https-errors | --browser-arg ARG (repeatable)
  channels: ${CHANNELS.join(', ')}
policy: --policy FILE (default: VERITY_POLICY or <config dir>/policy.json; see policy.sample.json)
tools: --tools default|full (VERITY_TOOLS): full also lists the deprecated tools and every seed argument`;

export function parseFlags(argv: string[], env = process.env): Flags {
  const flags: Flags = {
    host: env.VERITY_HOST ?? '127.0.0.1', port: Number(env.VERITY_PORT ?? 7317), token: env.VERITY_TOKEN,
    browserUrl: env.VERITY_BROWSER_URL, chromium: env.VERITY_CHROMIUM, userDataDir: env.VERITY_USER_DATA_DIR,
    headless: env.VERITY_HEADLESS === undefined ? undefined : env.VERITY_HEADLESS !== '0',
    allowJavascript: env.VERITY_ALLOW_JAVASCRIPT === '1',
    cursor: env.VERITY_CURSOR !== 'off',
    channel: env.VERITY_CHANNEL === undefined ? undefined : channelOf(env.VERITY_CHANNEL, 'VERITY_CHANNEL'),
    viewport: env.VERITY_VIEWPORT === undefined ? undefined : viewportOf(env.VERITY_VIEWPORT, 'VERITY_VIEWPORT'),
    proxyServer: env.VERITY_PROXY_SERVER === undefined ? undefined : proxyOf(env.VERITY_PROXY_SERVER, 'VERITY_PROXY_SERVER'),
    ignoreHttpsErrors: env.VERITY_IGNORE_HTTPS_ERRORS === '1',
    browserArgs: env.VERITY_BROWSER_ARGS === undefined ? undefined : browserArgsOf(env.VERITY_BROWSER_ARGS),
    tools: env.VERITY_TOOLS === 'full' ? 'full' : 'default',
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--host': flags.host = value(); break;
      case '--port': flags.port = Number(value()); break;
      case '--token': flags.token = value(); break;
      case '--browser-url': flags.browserUrl = value(); break;
      case '--chromium': flags.chromium = value(); break;
      case '--user-data-dir': flags.userDataDir = value(); break;
      case '--headless': flags.headless = true; break;
      case '--headful': flags.headless = false; break;
      case '--allow-javascript': flags.allowJavascript = true; break;
      case '--policy': flags.policyFile = value(); break;
      case '--channel': flags.channel = channelOf(value(), flag); break;
      case '--viewport': flags.viewport = viewportOf(value(), flag); break;
      case '--proxy-server': flags.proxyServer = proxyOf(value(), flag); break;
      case '--ignore-https-errors': flags.ignoreHttpsErrors = true; break;
      // Its value may itself start with "--" (it is a Chromium flag), so it is taken as is.
      case '--browser-arg': {
        const arg = argv[++i];
        if (arg === undefined || arg === '') throw new Error(`${flag} needs a value`);
        (flags.browserArgs ??= []).push(arg);
        break;
      }
      case '--tools': {
        const v = value();
        if (v !== 'default' && v !== 'full') throw new Error(`--tools must be default or full, got ${v}`);
        flags.tools = v;
        break;
      }
      case '--no-relay': case '--gateway': case '--standalone': break;
      default: throw new Error(`unknown option ${flag}`);
    }
  }
  if (!Number.isInteger(flags.port) || flags.port < 0 || flags.port > 65535) throw new Error(`--port must be 0..65535, got ${flags.port}`);
  if (flags.browserUrl) {
    const launchOnly = [flags.channel && '--channel', flags.proxyServer && '--proxy-server', flags.browserArgs?.length && '--browser-arg'].filter(Boolean);
    if (launchOnly.length) throw new Error(`${launchOnly.join(', ')} apply to a browser Verity launches, not to one attached with --browser-url`);
  }
  return flags;
}

function channelOf(v: string, what: string) {
  if (!isChannel(v)) throw new Error(`${what} must be one of ${CHANNELS.join(', ')}, got ${JSON.stringify(v)}`);
  return v;
}

/** WxH in CSS pixels, each side 1..10000. */
export function viewportOf(v: string, what: string): { width: number; height: number } {
  const m = /^(\d{1,5})x(\d{1,5})$/.exec(v.trim());
  const [width, height] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (!m || width < 1 || height < 1 || width > 10000 || height > 10000) throw new Error(`${what} must be WIDTHxHEIGHT in pixels (1..10000 each), e.g. 1280x800; got ${JSON.stringify(v)}`);
  return { width, height };
}

/** What Chromium's --proxy-server takes: [scheme://]host:port (or a per-scheme list); checked for shape only. */
function proxyOf(v: string, what: string): string {
  if (!v || /\s/.test(v)) throw new Error(`${what} must be a proxy like http://host:port or socks5://host:port; got ${JSON.stringify(v)}`);
  return v;
}

/** VERITY_BROWSER_ARGS: a JSON array of strings, or arguments separated by whitespace. */
function browserArgsOf(v: string): string[] {
  if (v.trim().startsWith('[')) {
    let parsed: unknown;
    try { parsed = JSON.parse(v); } catch { parsed = null; }
    if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new Error('VERITY_BROWSER_ARGS must be a JSON array of strings or whitespace-separated arguments');
    return parsed;
  }
  return v.split(/\s+/).filter(Boolean);
}

const log = (line: string) => process.stderr.write(`verity: ${line}\n`);

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  let flags: Flags;
  try {
    if (command !== 'start' && command !== 'mcp') throw new Error(command ? `unknown command ${command}` : 'no command given');
    flags = parseFlags(rest);
    flags.policy = Policy.load(flags.policyFile);
    flags.policy.checkNames([...allTools().map((t) => t.name), ...PAGE_ACTIONS.map((a) => `page.${a}`)]);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  const sessionLog = process.env.VERITY_SESSION_LOG;
  const core = new Verity({
    ...flags, log,
    sessionIdleMs: process.env.VERITY_SESSION_IDLE_MS ? Number(process.env.VERITY_SESSION_IDLE_MS) : undefined,
    // An audit line per cleanup hook run, so an operator (and the tests) can see each ran once.
    onSessionEnd: sessionLog ? (session, reason, hook) => appendFileSync(sessionLog, JSON.stringify({ session: session.label ?? 'implicit', connection: session.connectionId, reason, hook }) + '\n') : undefined,
  });
  const shutdown = async () => { await core.close(); process.exit(0); };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  if (command === 'mcp' && process.env.VERITY_MCP_URL && process.env.VERITY_LINK && process.env.VERITY_TOKEN && !rest.includes('--no-relay')) {
    return relayToGateway(process.env.VERITY_MCP_URL, process.env.VERITY_LINK, process.env.VERITY_TOKEN);
  }
  if (command === 'mcp' && rest.includes('--gateway')) {
    const running = readGatewayFile();
    if (!running) { process.stderr.write('verity mcp --gateway: no running gateway found; start one with `verity start` (or `npm start`)\n'); process.exit(2); }
    return relayToGateway(running.mcp_url, null, running.token);
  }
  // A plain `verity mcp` joins a running gateway, so every agent shows up in the operator's Control UI
  // and shares its browser; any browser or policy option (or --standalone) keeps it on its own.
  const ownBrowserFromEnv = ['VERITY_BROWSER_URL', 'VERITY_CHROMIUM', 'VERITY_HEADLESS', 'VERITY_USER_DATA_DIR', 'VERITY_POLICY',
    'VERITY_CHANNEL', 'VERITY_VIEWPORT', 'VERITY_PROXY_SERVER', 'VERITY_IGNORE_HTTPS_ERRORS', 'VERITY_BROWSER_ARGS'].some((k) => process.env[k]);
  if (command === 'mcp' && rest.length === 0 && !ownBrowserFromEnv && process.env.VERITY_STANDALONE !== '1') {
    const running = readGatewayFile();
    if (running) return relayToGateway(running.mcp_url, null, running.token);
  }
  if (command === 'mcp') {
    const server = createMcpServer(core, { connectionId: 'stdio', transport: 'stdio' });
    const transport = new StdioServerTransport();
    transport.onclose = () => { void shutdown(); };
    // The client went away: its sessions end as a disconnect (each hook once), then the server exits.
    process.stdin.on('end', () => { void core.sessions.disconnect('stdio').finally(shutdown); });
    await connectMcp(server, transport, core);
    log(`MCP on stdio${flags.browserUrl ? `, attached to ${flags.browserUrl}` : ', Chromium launches on the first call that needs a tab'}`);
    return;
  }
  await startGateway(core, flags);
}

/** How long a SIGTERM'd gateway may take to exit (sessions' hooks get half of it). */
const SHUTDOWN_BOUND_MS = 8_000;

async function startGateway(core: Verity, flags: Flags): Promise<void> {
  const token = flags.token ?? loadOrCreateToken(log);
  const gateway = new Gateway(core, { host: flags.host, port: flags.port, token, log });
  const port = await gateway.listen();
  const base = `http://${flags.host}:${port}`;
  process.stdout.write(`Verity gateway on ${base}/?token=${token}\n` +
    `MCP (Streamable HTTP): ${base}/mcp  (Authorization: Bearer ${token})\n` +
    `Pair the Chrome extension: chrome-extension://${EXTENSION_ID}/pair.html#gateway=${encodeURIComponent(`ws://${flags.host}:${port}/gateway`)}&token=${token}\n`);
  // Sessions end as a shutdown before their connections close (which would end them as disconnects).
  writeGatewayFile({ mcp_url: `${base}/mcp`, token, pid: process.pid });
  // SIGTERM/SIGINT: stop accepting first (the port is free for a restart, kept-alive sockets closed),
  // end the sessions (hooks bounded), close every socket, close Chromium, exit. A watchdog makes sure the
  // process exits within a bound even if a step hangs, killing the Chromium it launched on the way.
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    const watchdog = setTimeout(() => {
      log('shutdown took too long; exiting now');
      if (core.browser.launchedPid) try { process.kill(core.browser.launchedPid, 'SIGKILL'); } catch { /* gone */ }
      process.exit(1);
    }, SHUTDOWN_BOUND_MS);
    watchdog.unref();
    removeGatewayFile();
    gateway.stopAccepting();
    await Promise.race([core.sessions.shutdown(), new Promise((r) => setTimeout(r, SHUTDOWN_BOUND_MS / 2).unref())]);
    await gateway.close();
    await core.close();
    process.exit(0);
  };
  process.removeAllListeners('SIGINT'); process.removeAllListeners('SIGTERM');
  process.on('SIGINT', close); process.on('SIGTERM', close);
}

/**
 * `verity mcp` started from the Control UI's terminal: relay stdio to the gateway's /mcp with the
 * terminal's link, so the agent is bound to that Control UI (and shows up in its session list).
 */
async function relayToGateway(url: string, link: string | null, token: string): Promise<void> {
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(link ? { 'x-verity-link': link } : {}) };
  const up = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const down = new StdioServerTransport();
  down.onmessage = (message) => { void up.send(message).catch((e) => log(`relay to ${url} failed: ${(e as Error).message}`)); };
  up.onmessage = (message) => { void down.send(message); };
  const stop = () => { void up.close().finally(() => process.exit(0)); };
  down.onclose = stop;
  up.onerror = (e) => log(`gateway connection: ${e.message}`);
  process.stdin.on('end', stop);
  await up.start();
  await down.start();
  log(`MCP on stdio, relayed to the gateway at ${url}${link ? ' (bound to the Control UI that opened this terminal)' : ''}`);
}
