// `verity --help` and `verity <command> --help`, written from the option rows and wrapped for a terminal.
import { PACKAGE_NAME, VERSION } from '../version.js';
import { ENV_ONLY } from './environment.js';
import { COMMANDS, type Command, envName, OPTIONS, type OptionSpec } from './options.js';

const flagOf = (option: OptionSpec) => `--${option.name}`;

/** Help is read in terminals: every line fits this many columns, as its peers' do. */
export const HELP_WIDTH = 80;

/**
 * Words of `text` on lines of at most `width` columns: the first starts with `indent`, the others with `next`
 * (a longer word stays whole).
 */
export function wrap(text: string, indent: string, next = indent, width = HELP_WIDTH): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const lead = lines.length ? next : indent;
    if (line && lead.length + line.length + 1 + word.length > width) {
      lines.push(lead + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push((lines.length ? next : indent) + line);
  return lines;
}

/** A --config file that works for the command it is shown under. */
export const CONFIG_EXAMPLE: Record<Command, string> = {
  start: '{"port": 7317, "headless": true}',
  mcp: '{"headless": true, "viewport": "1280x800"}',
  doctor: '{"channel": "chrome"}',
};

/** One option's help: what it does, how it repeats, its default; each said once. */
function optionHelp(o: OptionSpec, command: Command): string {
  if (o.refused) return `not taken: ${o.refused}`;
  const example = o.name === 'config' ? `, e.g. ${CONFIG_EXAMPLE[command]}` : '';
  const split = o.split === '\n' ? 'one per line' : `${JSON.stringify(o.split)}-separated`;
  const repeat =
    o.kind === 'list' ? ` (repeatable${o.split ? `; in the variable or a string value, ${split}` : ''})` : '';
  return `${o.help}${example}${repeat}${o.default ? ` (default: ${o.default})` : ''}`;
}

/** `verity --help` and `verity <command> --help`, wrapped at HELP_WIDTH. */
export function helpText(command?: Command): string {
  if (!command) {
    return [
      ...wrap(`${PACKAGE_NAME} ${VERSION}: a computer-use driver for AI agents that proves what its actions did`, ''),
      '',
      'usage: verity <command> [options]',
      `       npx -y ${PACKAGE_NAME} <command> [options]`,
      '',
      'commands:',
      ...Object.entries(COMMANDS).flatMap(([name, what]) => {
        return wrap(what.short, `  ${name.padEnd(7)}`, ' '.repeat(9));
      }),
      '',
      'options:',
      '  -h, --help       this help; `verity <command> --help` lists its options',
      '  -V, --version    print the version',
      '',
      ...wrap(
        "Every option is also an environment variable, VERITY_ and the option's name in capitals " +
          '(--browser-url: VERITY_BROWSER_URL), and a key of a --config file (JSON). The command line wins ' +
          'over the environment, the environment over the config file. Booleans: --x / --no-x; in the ' +
          'environment 1/0, true/false, on/off.',
        '',
      ),
    ].join('\n');
  }
  const lines = [
    `usage: verity ${command} [options]`,
    '',
    ...wrap(COMMANDS[command].long, ''),
    '',
    'options (environment variable in brackets):',
  ];
  for (const o of OPTIONS.filter((x) => x.commands.includes(command))) {
    const flag = `${flagOf(o)}${o.arg ? ` ${o.arg}` : o.kind === 'boolean' && o.default === 'on' ? ` / --no-${o.name}` : ''}${o.name === 'headless' ? ' / --headful' : ''}`;
    lines.push(...wrap(`${flag}  [${envName(o)}]`, '  ', '    '), ...wrap(optionHelp(o, command), '      '));
  }
  lines.push('  -h, --help', '      this help', '  -V, --version', '      print the version');
  lines.push('', 'environment only:', ...ENV_ONLY.flatMap((v) => wrap(`${v.env}: ${v.help}`, '  ', '      ')));
  return lines.join('\n');
}
