// What one row of the option table (options.ts OPTIONS) says: its flag, the commands that take it, its help
// line, its value's kind or parse, its default, and the options it conflicts with or requires. parse.ts and
// help.ts read rows through this shape; options.ts types each row's value from its own literal row.
import type { VerityOptions } from '../core.js';
import type { KindValues } from './kinds.js';

export type Command = 'start' | 'mcp' | 'doctor';

/**
 * string; boolean (--x, --no-x; env and config: 1/0, true/false, yes/no, on/off); port 0..65535; a positive
 * integer; list (the flag may repeat, each value split at `split`; the environment variable is split the same
 * way; a config value is an array or a string). Their value types are zod schemas (cli/kinds.ts), taken here
 * as types only.
 */
export type Kind = keyof KindValues;

export interface OptionSpec {
  /** The flag without its dashes; also the option's key in a --config file. */
  name: string;
  kind: Kind;
  commands: readonly Command[];
  help: string;
  /** The value's placeholder in --help. */
  arg?: string;
  /** What applies when the option is not given (for --help and docs/options.md). */
  default?: string;
  /** That default as a value, where it is one (Config holds it when no layer gives the option). */
  value?: unknown;
  /** The VerityOptions field the value goes to (the others are read by name below). */
  key?: keyof VerityOptions;
  /** Configures a server of its own: `verity mcp` given it (any way) does not join a running gateway. */
  own?: true;
  /** The environment variable, when it is not VERITY_ and the name in capitals. */
  env?: string;
  /** list: where a value is split into several (e.g. ','). */
  split?: string;
  /** Checks and converts one value (string or list item); throws an Error naming `from` and what is wrong. */
  parse?: (raw: string, from: string) => unknown;
  /** list: reads the whole environment variable (instead of splitting it at `split`). */
  envParse?: (raw: string, from: string) => unknown[];
  /** Its value may itself start with "--" (a Chromium flag): `--browser-arg --lang=fr` takes the next word as is. */
  dashValue?: true;
  /** Not taken: refused with this message wherever it is given (e.g. a secret that would show in `ps`). */
  refused?: string;
  /**
   * Options refused beside this one, when both are given (as something: not false, not an empty list). The
   * refusal names those given, then says `why`.
   */
  conflicts?: { options: readonly string[]; why: string };
  /** The option this one needs: given without it, it is refused as `--<name> <why>, which is not given`. */
  requires?: { option: string; why: string };
}
