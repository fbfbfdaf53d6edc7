// The program: reads the command line into one typed Config (parse.ts) and runs its command. Only the
// parser is loaded up front: --help, --version and a refused command line answer at once; each command's
// module (and through it the SDK, puppeteer, the tools) is imported once it runs. This is the one module that
// reads the process's environment: each command is handed it (scripts/check-deps.mjs holds it so).
import { startFailure } from './failures.js';
import { helpText } from './help.js';
import { COMMANDS } from './options.js';
import { parseCommandLine, UsageError, type Parsed } from './parse.js';
import { setConfigDir } from '../token.js';
import { VERSION } from '../version.js';
import { configDirFrom } from './environment.js';

export async function main(argv: string[]): Promise<void> {
  const env = process.env;
  try {
    await run(argv, env);
  } catch (e) {
    // --verbose may not have been parsed (the failure may be in parsing): read it from the words themselves.
    const verbose = argv.includes('--verbose') || /^(1|true|yes|on)$/i.test(env.VERITY_VERBOSE ?? '');
    const command = argv.find((a) => a in COMMANDS);
    process.stderr.write(`verity${command ? ` ${command}` : ''}: ${startFailure(e)}\n`);
    if (verbose) process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  }
}

async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const parsed = readCommandLine(argv, env);
  if (parsed.kind === 'help') return void process.stdout.write(`${helpText(parsed.command)}\n`);
  if (parsed.kind === 'version') return void process.stdout.write(`${VERSION}\n`);
  const { command, config, sources } = parsed;
  setConfigDir(configDirFrom(config['config-dir'], env));
  // A dir the operator named is also their children's (the Control UI terminal's shells: a `verity mcp` there).
  if (config['config-dir'] !== undefined) env.VERITY_CONFIG_DIR = config['config-dir'];
  if (command === 'doctor') {
    const { runDoctor, doctorText } = await import('../doctor.js');
    const report = await runDoctor(
      {
        chromium: config.chromium,
        channel: config.channel,
        browserUrl: config['browser-url'],
        nativeBackend: config['native-backend'],
      },
      env,
    );
    process.stdout.write(config.json ? `${JSON.stringify(report, null, 2)}\n` : `${doctorText(report)}\n`);
    // The native parts it opened (D-Bus, X11) are closed; exit now rather than wait on a stray timer.
    process.exit(0);
  }
  if (command === 'mcp') return (await import('./mcp.js')).runMcp(config, sources, env);
  return (await import('./start.js')).runStart(config, env);
}

/** The command line read, or a refusal naming what is wrong (exit code 2). */
function readCommandLine(argv: string[], env: NodeJS.ProcessEnv): Parsed {
  try {
    return parseCommandLine(argv, env);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    const command = argv.find((a) => a in COMMANDS);
    process.stderr.write(
      `verity: ${e.message} (\`verity ${command ? `${command} ` : ''}--help\` lists the ${command ? 'options' : 'commands and options'})\n`,
    );
    process.exit(2);
  }
}
