// `verity start`: the gateway (the Control UI, MCP over Streamable HTTP at /mcp, the extension's WebSocket)
// over one core that gets its durable audit trail at construction.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Verity } from '../core.js';
import { fileURLToPath } from 'node:url';
import { extensionIdFromEnv } from './environment.js';
import type { Config } from './options.js';
import {
  checkCredential,
  claimConfigDir,
  configDir,
  loadOrCreateCredential,
  readCredentialFile,
  releaseConfigDir,
} from '../token.js';
import { log, serverOptions, startCore } from './serve.js';

/** The unpacked extension that ships in the package (bin/ and dist/server/ sit beside it). */
const EXTENSION_DIR = fileURLToPath(new URL('../../../extension/', import.meta.url));

export async function runStart(config: Config, env: NodeJS.ProcessEnv): Promise<void> {
  const options = await serverOptions(config, env);
  // The gateway keeps the durable audit trail (the operator's history across restarts).
  const { AuditStore, retentionOf } = await import('../audit/store.js');
  const retention = retentionOf(config['audit-max-age-days'], config['audit-max-mb']);
  const auditUrl = config['audit-store'];
  if (auditUrl) {
    // The shared store (CONTRACT "Audit store"): PostgreSQL only; anything else is named, not guessed at.
    if (!/^postgres(ql)?:\/\//.test(auditUrl)) {
      process.stderr.write(
        'verity start: --audit-store (VERITY_AUDIT_URL): not a postgres://… or postgresql://… URL; leave it out to keep the trail in the config dir\n',
      );
      process.exit(2);
    }
    const { PostgresAuditStore } = await import('../audit/postgres.js');
    const store = new PostgresAuditStore(join(configDir(), 'audit'), retention, {
      url: auditUrl,
      gateway: gatewayName(configDir()),
      spoolFile: join(configDir(), 'audit-spool.jsonl'),
    });
    await store.start();
    options.audit = store;
  } else options.audit = new AuditStore(join(configDir(), 'audit'), retention);
  const { core } = await startCore(options);
  let creds: { operator: string; agent: string };
  try {
    creds = credentials(config, env);
  } catch (e) {
    process.stderr.write(`verity start: ${(e as Error).message}\n`);
    process.exit(2);
  }
  await startGateway(core, config, creds, env);
}

/**
 * The two credentials: from the environment, else a file named by a flag, else the config dir (generated
 * on first start). Read once, then dropped from this process's environment, so the browser, the
 * terminal's shells and any other child never inherit the operator's.
 */
function credentials(config: Config, env: NodeJS.ProcessEnv): { operator: string; agent: string } {
  const tokenFile = config['token-file'],
    agentTokenFile = config['agent-token-file'];
  const operator = env.VERITY_TOKEN
    ? checkCredential(env.VERITY_TOKEN, 'VERITY_TOKEN')
    : tokenFile
      ? readCredentialFile(tokenFile, '--token-file')
      : loadOrCreateCredential('operator', log);
  const agent = env.VERITY_AGENT_TOKEN
    ? checkCredential(env.VERITY_AGENT_TOKEN, 'VERITY_AGENT_TOKEN')
    : agentTokenFile
      ? readCredentialFile(agentTokenFile, '--agent-token-file')
      : loadOrCreateCredential('agent', log);
  if (operator === agent)
    throw new Error(
      'the operator and agent credentials must differ (VERITY_TOKEN / VERITY_AGENT_TOKEN or their files)',
    );
  delete env.VERITY_TOKEN;
  delete env.VERITY_AGENT_TOKEN;
  return { operator, agent };
}

/**
 * This gateway's name in a shared audit trail: the host and a random suffix kept in the config dir, so that
 * it stays the same across restarts (the spool's entries and the database's rows of it keep the name).
 */
function gatewayName(dir: string): string {
  const file = join(dir, 'gateway-name');
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (/^[\w.:-]{1,128}$/.test(kept)) return kept;
  } catch {
    /* first start with a shared store */
  }
  const name = `${hostname().slice(0, 64)}-${randomBytes(3).toString('hex')}`;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(file, `${name}\n`, { mode: 0o600 });
  return name;
}

/** How long a SIGTERM'd gateway may take to exit (sessions' hooks get half of it). */
const SHUTDOWN_BOUND_MS = 8_000;

async function startGateway(
  core: Verity,
  config: Config,
  creds: { operator: string; agent: string },
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const host = config.host;
  const [{ Gateway, urlHost }, { EXTENSION_ID: PUBLISHED_EXTENSION_ID }, { removeGatewayFile, writeGatewayFile }] =
    await Promise.all([import('../gateway/server.js'), import('../gateway/extension-id.js'), import('../token.js')]);
  const extensionId = extensionIdFromEnv(env) ?? PUBLISHED_EXTENSION_ID;
  const gateway = new Gateway(core, {
    host,
    port: config.port,
    operatorToken: creds.operator,
    agentToken: creds.agent,
    allowedHosts: config['allowed-hosts'] ?? [],
    log,
    extensionId,
    pairingMaxIdleDays: config['pairing-max-idle-days'],
    env,
  });
  const port = await gateway.listen();
  // One gateway per config dir (its audit segments, gateway.json): a second one is refused before it writes
  // either (after listening, so a used port or a bad address is still the error a second start names).
  try {
    claimConfigDir();
  } catch (e) {
    process.stderr.write(`verity start: ${(e as Error).message}\n`);
    process.exit(2);
  }
  process.once('exit', releaseConfigDir);
  core.policy.setGatewayOrigin(host, port); // agents never drive the gateway's own origin
  const base = `http://${urlHost(host)}:${port}`;
  const mcpUrl = `${base}/mcp`;
  // The extension pairs only with a loopback gateway (extension/pair.js).
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(urlHost(host)) ? urlHost(host) : '127.0.0.1';
  // Contract section 1: the Control UI URL carries the operator credential; the /mcp line the agent's,
  // and so does the entry an HTTP client takes as it is.
  const bearer = `Bearer ${creds.agent}`;
  const entry = { mcpServers: { verity: { type: 'http', url: mcpUrl, headers: { Authorization: bearer } } } };
  // Written before the lines that say the gateway is up: whoever reads them and starts `verity mcp` at once
  // finds the gateway to join (the other way round, a loaded machine showed the lines with no file yet).
  writeGatewayFile({ mcp_url: mcpUrl, token: creds.agent, pid: process.pid });
  process.stdout.write(
    `Verity gateway on ${base}/?token=${creds.operator}\n` +
      `MCP (Streamable HTTP): ${mcpUrl}  (Authorization: ${bearer})\n` +
      `The Chrome extension's folder (chrome://extensions, Developer mode, Load unpacked): ${EXTENSION_DIR}\n` +
      `Pair the Chrome extension: chrome-extension://${extensionId}/pair.html#gateway=${encodeURIComponent(`ws://${loopback}:${port}/gateway`)}&token=${creds.operator}\n` +
      `HTTP client entry (Cursor; VS Code: under "servers" instead of "mcpServers"): ${JSON.stringify(entry)}\n` +
      `Claude Code: claude mcp add --transport http verity ${mcpUrl} --header "Authorization: ${bearer}"\n`,
  );
  // SIGTERM/SIGINT: stop accepting first (the port is free for a restart, kept-alive sockets closed),
  // end the sessions (hooks bounded), close every socket, close Chromium, exit. A watchdog makes sure the
  // process exits within a bound even if a step hangs, killing the Chromium it launched on the way.
  // Sessions end as a shutdown before their connections close (which would end them as disconnects).
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    const watchdog = setTimeout(() => {
      log('shutdown took too long; exiting now');
      if (core.browser.launchedPid)
        try {
          process.kill(core.browser.launchedPid, 'SIGKILL');
        } catch {
          /* gone */
        }
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
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.on('SIGINT', close);
  process.on('SIGTERM', close);
}
