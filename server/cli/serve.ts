// What `verity mcp` and `verity start` share: the log line, the server's options from the Config (the
// policy loaded, a named browser looked for, the session log), and the core built once with all of them.
import { appendFileSync } from 'node:fs';
import type { Verity, VerityOptions } from '../core.js';
import { broadcastLog } from '../mcp/notify.js';
import { currentProgress } from '../progress.js';
import { configureLimits } from '../limits.js';
import { limitsFromEnv } from './environment.js';
import type { Config } from './options.js';
import { verityOptionsOf } from './parse.js';
import { containStrayRejections } from './stray-rejections.js';

/** A log line: on stderr, to every MCP client (notifications/message), and as progress of the call it arose in. */
export const log = (line: string) => {
  process.stderr.write(`verity: ${line}\n`);
  currentProgress()?.(line);
  broadcastLog('info', line);
};

/**
 * The core's options from the Config: each part handed to what needs it. A policy file that does not load, or
 * a --chromium that is not found, ends the process with exit code 2 (a start error, not a failure at the first call).
 */
export async function serverOptions(config: Config, env: NodeJS.ProcessEnv): Promise<VerityOptions> {
  // The bounds are set before any part that holds one is built (or, for the native route, imported).
  configureLimits(limitsFromEnv(env));
  // The machine's environment (DISPLAY, PATH ...), handed down to what looks at the machine.
  const options: VerityOptions = { ...verityOptionsOf(config), log, env };
  options.downloads = {
    dir: config['download-dir'],
    maxFiles: config['download-max-files'],
    maxMb: config['download-max-mb'],
    totalFiles: config['download-total-files'],
    totalMb: config['download-total-mb'],
  };
  const [{ Policy }, { allTools }, { PAGE_ACTIONS }] = await Promise.all([
    import('../policy.js'),
    import('../mcp/server.js'),
    import('../tools/page.js'),
  ]);
  try {
    options.policy = Policy.load(config.policy);
    options.policy.checkNames([...allTools().map((t) => t.name), ...PAGE_ACTIONS.map((a) => `page.${a}`)]);
  } catch (e) {
    process.stderr.write(`verity: ${(e as Error).message}\n`);
    process.exit(2);
  }
  // An origin policy puts Verity's policy proxy in front of a browser it launches: an upstream it cannot chain
  // to, or a --browser-arg that would take it out of the path, is a start error, not a failure at the first call.
  if (options.policy.filtersOrigins && !config['browser-url'] && !config['browser-endpoint']) {
    const { chainedUpstream, checkBrowserArgs } = await import('../cdp/browser/policy-proxy.js');
    try {
      if (config['proxy-server']) chainedUpstream(config['proxy-server']);
      checkBrowserArgs(config['browser-arg'] ?? []);
    } catch (e) {
      process.stderr.write(`verity: ${(e as Error).message}\n`);
      process.exit(2);
    }
  }
  // A browser binary the operator named is looked for now (a typo is a start error), not at the first call
  // that needs a tab. A --channel, or the default search, is still looked for then: it may be installed later.
  if (config.chromium && !config['browser-url'] && !config['browser-endpoint']) {
    const { findChromium } = await import('../cdp/browser/browser.js');
    try {
      findChromium(config.chromium, undefined, env);
    } catch (e) {
      process.stderr.write(
        `verity: ${(e as Error).message}; install it, or name another with --chromium PATH (VERITY_CHROMIUM)\n`,
      );
      process.exit(2);
    }
  }
  const sessionLog = config['session-log'];
  // An audit line per cleanup hook run, so an operator (and the tests) can see each ran once.
  if (sessionLog)
    options.onSessionEnd = (session, reason, hook) =>
      appendFileSync(
        sessionLog,
        JSON.stringify({ session: session.label ?? 'implicit', connection: session.connectionId, reason, hook }) + '\n',
      );
  return options;
}

/**
 * The core, built once with everything it needs; SIGINT and SIGTERM close it and exit. A promise rejected
 * with no handler is logged and the server goes on (stray-rejections.ts).
 */
export async function startCore(options: VerityOptions): Promise<{ core: Verity; shutdown: () => Promise<void> }> {
  containStrayRejections();
  const { Verity } = await import('../core.js');
  const core = new Verity(options);
  const shutdown = async () => {
    await core.close();
    process.exit(0);
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  return { core, shutdown };
}
