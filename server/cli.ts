// `verity start` (the gateway: MCP over HTTP at /mcp for now) and `verity mcp` (MCP over stdio).
import { createServer } from 'node:http';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Verity, type VerityOptions } from './core.js';
import { createMcpServer } from './mcp/server.js';
import { McpHttpEndpoint } from './mcp/http.js';
import { loadOrCreateToken, tokenMatches } from './token.js';
import { Policy } from './policy.js';
import { appendFileSync } from 'node:fs';

interface Flags extends VerityOptions { host: string; port: number; token?: string; policyFile?: string }

const USAGE = `usage: verity start [--host 127.0.0.1] [--port 7317] [--token T] [browser options]
       verity mcp [browser options]
browser options: --browser-url URL | --chromium PATH | --headless | --headful | --user-data-dir DIR | --allow-javascript
policy: --policy FILE (default: VERITY_POLICY or <config dir>/policy.json; see policy.sample.json)`;

export function parseFlags(argv: string[], env = process.env): Flags {
  const flags: Flags = {
    host: env.VERITY_HOST ?? '127.0.0.1', port: Number(env.VERITY_PORT ?? 7317), token: env.VERITY_TOKEN,
    browserUrl: env.VERITY_BROWSER_URL, chromium: env.VERITY_CHROMIUM, userDataDir: env.VERITY_USER_DATA_DIR,
    headless: env.VERITY_HEADLESS === undefined ? undefined : env.VERITY_HEADLESS !== '0',
    allowJavascript: env.VERITY_ALLOW_JAVASCRIPT === '1',
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
      default: throw new Error(`unknown option ${flag}`);
    }
  }
  if (!Number.isInteger(flags.port) || flags.port < 0 || flags.port > 65535) throw new Error(`--port must be 0..65535, got ${flags.port}`);
  return flags;
}

const log = (line: string) => process.stderr.write(`verity: ${line}\n`);

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  let flags: Flags;
  try {
    if (command !== 'start' && command !== 'mcp') throw new Error(command ? `unknown command ${command}` : 'no command given');
    flags = parseFlags(rest);
    flags.policy = Policy.load(flags.policyFile);
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
  if (command === 'mcp') {
    const server = createMcpServer(core, { connectionId: 'stdio' });
    const transport = new StdioServerTransport();
    transport.onclose = () => { void shutdown(); };
    process.stdin.on('end', () => { void shutdown(); });
    await server.connect(transport);
    log(`MCP on stdio${flags.browserUrl ? `, attached to ${flags.browserUrl}` : ', Chromium launches on the first call that needs a tab'}`);
    return;
  }
  await startGateway(core, flags);
}

async function startGateway(core: Verity, flags: Flags): Promise<void> {
  const token = flags.token ?? loadOrCreateToken(log);
  const mcp = new McpHttpEndpoint(core);
  const http = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    const origin = req.headers.origin;
    if (origin && origin !== `http://${req.headers.host}`) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`origin ${origin} is not allowed; open the Control UI from http://${req.headers.host}/`);
      return;
    }
    if (url.pathname === '/mcp') {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? url.searchParams.get('token') ?? '';
      if (!tokenMatches(bearer, token)) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'missing or wrong token: send "Authorization: Bearer <token>"; the token is in the URL `verity start` printed' }));
        return;
      }
      void mcp.handle(req, res).catch((e) => { if (!res.headersSent) res.writeHead(500).end(String(e)); });
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: MCP is at /mcp');
  });
  await new Promise<void>((resolve, reject) => { http.once('error', reject); http.listen(flags.port, flags.host, resolve); });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : flags.port;
  process.stdout.write(`Verity gateway on http://${flags.host}:${port}/?token=${token}\nMCP (Streamable HTTP): http://${flags.host}:${port}/mcp  (Authorization: Bearer ${token})\n`);
  const close = async () => { await mcp.close(); http.close(); await core.close(); process.exit(0); };
  process.removeAllListeners('SIGINT'); process.removeAllListeners('SIGTERM');
  process.on('SIGINT', close); process.on('SIGTERM', close);
}
