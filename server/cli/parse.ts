// The command line, the environment and a --config file read into one typed Config, once: a value comes
// from the command line, else the environment, else the --config file (JSON), else its row's default. An
// option the command does not take, an unknown one, a value that does not parse, or options that do not go
// together (the rows' `conflicts` and `requires`) are refused with a UsageError naming them (exit code 2).
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import type { VerityOptions } from '../core.js';
import {
  ALIASES,
  COMMANDS,
  type Command,
  type Config,
  envName,
  OPTIONS,
  type OptionSpec,
  type OptionValues,
  type Source,
} from './options.js';

/** A command line that cannot run: the message names what is wrong; exit code 2. */
export class UsageError extends Error {}

export type Parsed =
  | { kind: 'help'; command?: Command }
  | { kind: 'version' }
  | {
      kind: 'run';
      command: Command;
      /** The options given: a flag over the environment over the --config file. */
      values: OptionValues;
      /** How each given option was given. */
      sources: Partial<Record<keyof OptionValues, Source>>;
      /** `values` over the defaults: what the command runs with. */
      config: Config;
    };

function convert(option: OptionSpec, raw: unknown, from: string): unknown {
  const bad = (why: string) => new UsageError(`${from}: ${why}, got ${JSON.stringify(raw)}`);
  const custom = (one: string) => {
    if (!option.parse) return one;
    try {
      return option.parse(one, from);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  };
  if (option.refused) throw new UsageError(`${from}: ${option.refused}`);
  switch (option.kind) {
    case 'string':
      if (typeof raw !== 'string' || raw === '') throw bad('expected a non-empty string');
      return custom(raw);
    case 'list': {
      if (option.envParse && typeof raw === 'string' && from === envName(option)) {
        try {
          return option.envParse(raw, from);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
      }
      const items = Array.isArray(raw) ? raw : [raw];
      if (items.some((i) => typeof i !== 'string')) throw bad('expected a string or a list of strings');
      return (items as string[])
        .flatMap((i) => (option.split ? i.split(option.split) : [i]))
        .map((i) => i.trim())
        .filter(Boolean)
        .map(custom);
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      const word = String(raw).toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(word)) return true;
      if (['0', 'false', 'no', 'off'].includes(word)) return false;
      throw bad('expected 1/0, true/false, yes/no or on/off');
    }
    case 'port':
    case 'positive': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (option.kind === 'port' && (!Number.isInteger(n) || n < 0 || n > 65535))
        throw bad('expected a port, 0..65535');
      if (option.kind === 'positive' && (!Number.isSafeInteger(n) || n < 1)) throw bad('expected a positive integer');
      return n;
    }
  }
}

function refuseForCommand(option: OptionSpec, command: Command, via: string): never {
  const others = option.commands.map((c) => `verity ${c}`).join(' and ');
  throw new UsageError(`verity ${command} does not take ${via} (an option of ${others})`);
}

/** Reads the command line, the environment and the config file into one value per given option. */
export function parseCommandLine(
  argv: string[],
  env: NodeJS.ProcessEnv,
  table: readonly OptionSpec[] = OPTIONS,
): Parsed {
  // Read generically over `table` (tests pass their own); each value is checked by convert against its row.
  const byName = new Map(table.map((o) => [o.name, o]));
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'V' },
  };
  for (const o of table)
    options[o.name] = {
      type: o.kind === 'boolean' ? 'boolean' : 'string',
      ...(o.kind === 'list' ? { multiple: true } : {}),
    };
  for (const alias of Object.keys(ALIASES)) options[alias] = { type: 'boolean' };
  // `--browser-arg --lang=fr`: parseArgs would take --lang=fr for an option; it is the value.
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const dashed = table.find((o) => o.dashValue && argv[i] === `--${o.name}`);
    if (dashed && i + 1 < argv.length) args.push(`--${dashed.name}=${argv[++i]}`);
    else args.push(argv[i]);
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, allowNegative: true, strict: true, tokens: true });
  } catch (e) {
    const err = e as Error & { code?: string };
    const unknown = /Unknown option '([^']+)'/.exec(err.message)?.[1];
    if (unknown) throw new UsageError(`unknown option ${unknown}`);
    const missing = /Option '(?:-\w, )?(--[\w-]+)(?: <value>)?' argument missing/.exec(err.message)?.[1];
    if (missing) throw new UsageError(`${missing} needs a value`);
    throw new UsageError(err.message.split('.')[0]);
  }
  const [command, ...extra] = parsed.positionals;
  const tokens = parsed.tokens!.filter((t) => t.kind === 'option');
  // `verity help [command]` is `--help`.
  if (command === 'help') {
    if (extra[0] !== undefined && !(extra[0] in COMMANDS)) throw new UsageError(`unknown command ${extra[0]}`);
    return { kind: 'help', command: extra[0] as Command | undefined };
  }
  if (command !== undefined && !(command in COMMANDS)) throw new UsageError(`unknown command ${command}`);
  if (parsed.values.help) return { kind: 'help', command: command as Command | undefined };
  if (parsed.values.version) return { kind: 'version' };
  if (command === undefined)
    throw new UsageError(tokens.length ? `${tokens[0].rawName} needs a command before it` : 'no command given');
  const cmd = command as Command;
  if (extra.length)
    throw new UsageError(`verity ${cmd} takes no argument ${JSON.stringify(extra[0])} (options start with --)`);

  const given: Record<string, unknown> = {};
  const sources: Record<string, Source> = {};
  // 1. The command line.
  for (const t of tokens) {
    const alias = ALIASES[t.name];
    const option = byName.get(alias?.name ?? t.name)!;
    if (!option.commands.includes(cmd)) refuseForCommand(option, cmd, t.rawName);
    const name = option.name;
    const negated = t.rawName.startsWith('--no-');
    if (option.refused) throw new UsageError(`${t.rawName}: ${option.refused}`);
    // The last of repeated flags wins, except a list's, which add up.
    given[name] = alias
      ? negated
        ? !alias.value
        : alias.value
      : option.kind === 'boolean'
        ? !negated
        : option.kind === 'list'
          ? [...((given[name] as unknown[] | undefined) ?? []), ...(convert(option, t.value, t.rawName) as unknown[])]
          : convert(option, t.value, t.rawName);
    sources[name] = 'flag';
  }
  // 2. The environment (empty means unset; variables of the other command's options are not this command's concern).
  for (const option of table) {
    const raw = env[envName(option)];
    // A refused option's variable may be read elsewhere (a credential is taken from the environment, never argv).
    if (sources[option.name] || raw === undefined || raw === '' || !option.commands.includes(cmd) || option.refused)
      continue;
    given[option.name] = convert(option, raw, envName(option));
    sources[option.name] = 'env';
  }
  // 3. The config file.
  const configFile = given.config as string | undefined;
  if (configFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(configFile, 'utf8');
    } catch (e) {
      throw new UsageError(
        `--config ${configFile} cannot be read (${(e as Error).message.split('\n')[0]}); name a readable JSON file`,
      );
    }
    let config: unknown;
    try {
      config = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`--config ${configFile}: not valid JSON (${(e as Error).message.split('\n')[0]})`);
    }
    if (!config || typeof config !== 'object' || Array.isArray(config))
      throw new UsageError(`--config ${configFile}: expected a JSON object whose keys are option names`);
    for (const [key, raw] of Object.entries(config)) {
      const option = byName.get(key);
      if (!option || key === 'config')
        throw new UsageError(
          `--config ${configFile}: unknown option "${key}" (keys are the options' names without dashes, as in --help)`,
        );
      if (!option.commands.includes(cmd)) refuseForCommand(option, cmd, `"${key}" (in --config ${configFile})`);
      if (sources[key]) continue;
      given[key] = convert(option, raw, `--config ${configFile}: "${key}"`);
      sources[key] = 'config';
    }
  }
  // Each value was checked by convert against its row: from here on the values are read by their types.
  const values = given as OptionValues;
  refuseTogether(values, table);
  return { kind: 'run', command: cmd, values, sources, config: withDefaults(values, table, cmd) };
}

/** The rows' `conflicts` and `requires`, over the options given: the first one broken is refused, naming them. */
function refuseTogether(values: OptionValues, table: readonly OptionSpec[]): void {
  // Given, and not as nothing (false, or an empty list).
  const given = (name: string) => {
    const v = (values as Readonly<Record<string, unknown>>)[name];
    return v !== undefined && v !== false && !(Array.isArray(v) && v.length === 0);
  };
  for (const option of table) {
    if (!given(option.name)) continue;
    if (option.requires && !given(option.requires.option))
      throw new UsageError(`--${option.name} ${option.requires.why}, which is not given`);
    const others = option.conflicts?.options.filter(given) ?? [];
    if (option.conflicts && others.length)
      throw new UsageError(`${others.map((n) => `--${n}`).join(', ')} ${option.conflicts.why}`);
  }
}

/** The given values over each row's default `value` (for the options the command takes). */
function withDefaults(values: OptionValues, table: readonly OptionSpec[], command: Command): Config {
  const defaults = Object.fromEntries(
    table.filter((o) => o.value !== undefined && o.commands.includes(command)).map((o) => [o.name, o.value]),
  );
  return { ...defaults, ...values } as Config;
}

/** One option's value, for code driven by the table (each row read the same way); typed readers use Config's fields. */
export const optionValue = (values: OptionValues, option: OptionSpec): unknown =>
  (values as Readonly<Record<string, unknown>>)[option.name];

/** How one option was given, if it was (for code driven by the table). */
export const givenBy = (sources: Partial<Record<keyof OptionValues, Source>>, option: OptionSpec): Source | undefined =>
  (sources as Readonly<Record<string, Source | undefined>>)[option.name];

/** The VerityOptions fields the options with a `key` give (browser headers as one object). */
export function verityOptionsOf(values: OptionValues): VerityOptions {
  const options: Record<string, unknown> = {};
  for (const o of OPTIONS) if (o.key && optionValue(values, o) !== undefined) options[o.key] = optionValue(values, o);
  if (values['browser-header']) options.browserHeaders = Object.fromEntries(values['browser-header']);
  return options as VerityOptions;
}

/** The options of `verity mcp` as VerityOptions (for tests of single flags); refusals throw UsageError. */
export function parseFlags(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
): VerityOptions & { ignoreHttpsErrors: boolean } {
  const parsed = parseCommandLine(['mcp', ...argv], env);
  if (parsed.kind !== 'run') throw new UsageError('expected options, not --help or --version');
  return { ...verityOptionsOf(parsed.values), ignoreHttpsErrors: parsed.values['ignore-https-errors'] === true };
}
