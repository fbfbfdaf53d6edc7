// The command line's options: `verity start` (the gateway), `verity mcp` (MCP over stdio), `verity doctor`.
// parse.ts reads them into one typed Config, help.ts writes --help from them, main.ts runs a command.
//
// Every option is one row of OPTIONS: its flag (also its key in a --config file), the commands that take
// it and its help line; its environment variable is VERITY_ and the flag in capitals (--browser-url is
// VERITY_BROWSER_URL). Its value's type is given by its row (its kind, or its parse), and so are the options
// it cannot go with (`conflicts`) and the one it needs (`requires`).
//
// Only the parser is loaded up front: --help, --version and a refused command line answer at once; the
// server's modules (the SDK, puppeteer, the tools) are imported once a command runs.
import { delimiter } from 'node:path';
import type { KindValues } from './kinds.js';
import type { Kind, OptionSpec } from './option-spec.js';
import { CHANNELS } from '../cdp/browser/discovery.js';
import { CAPABILITIES } from '../contract/capabilities.js';
import {
  browserArgsOf,
  channelOf,
  contextIdOf,
  endpointOf,
  headerOf,
  nativeBackendOf,
  proxyOf,
  toolsOf,
  capabilityOf,
  viewportOf,
} from './values.js';

// What a row says, and the commands (their help text), are declared beside this table.
export type { Command, OptionSpec } from './option-spec.js';
export { COMMANDS } from './commands.js';

const BOTH = ['start', 'mcp'] as const;
const START = ['start'] as const;
const MCP = ['mcp'] as const;
/** The browser options `verity doctor` also takes, to check the browser they name. */
const WITH_DOCTOR = ['start', 'mcp', 'doctor'] as const;
const DOCTOR = ['doctor'] as const;

/** Every option, one line each. Adding a flag: add its line here (and to docs/options.md's table); Config types it. */
const TABLE = [
  {
    name: 'config',
    kind: 'string',
    commands: WITH_DOCTOR,
    arg: 'FILE',
    // The example is the command's own (helpText puts it in): `mcp` takes no --port.
    help: 'read options from a JSON file whose keys are the option names',
  },
  {
    name: 'host',
    kind: 'string',
    commands: START,
    arg: 'ADDR',
    default: '127.0.0.1',
    value: '127.0.0.1',
    help: 'the address the gateway listens on',
  },
  {
    name: 'port',
    kind: 'port',
    commands: START,
    arg: 'N',
    default: '7317',
    value: 7317,
    help: "the gateway's port (0: any free port)",
  },
  // A credential on the command line is readable by every local user (`ps`): never taken there.
  {
    name: 'token',
    kind: 'string',
    commands: START,
    arg: 'T',
    help: 'refused: a credential on the command line shows in `ps`; use VERITY_TOKEN or --token-file',
    refused:
      '--token is not accepted (the command line shows in `ps`): set VERITY_TOKEN (operator) / VERITY_AGENT_TOKEN (agent) in the environment, or use --token-file FILE / --agent-token-file FILE',
  },
  {
    name: 'token-file',
    kind: 'string',
    commands: START,
    arg: 'FILE',
    default: 'VERITY_TOKEN, else <config dir>/token (generated once)',
    help: 'a file holding the operator credential (the Control UI, the gateway WebSocket, pairing)',
  },
  {
    name: 'agent-token-file',
    kind: 'string',
    commands: START,
    arg: 'FILE',
    default: 'VERITY_AGENT_TOKEN, else <config dir>/agent-token (generated once)',
    help: 'a file holding the agent credential (MCP at /mcp only)',
  },
  {
    name: 'allowed-hosts',
    kind: 'list',
    split: ',',
    commands: START,
    arg: 'LIST',
    default: 'loopback names only',
    help: 'more Host names (NAME or NAME:PORT) the gateway answers to, when bound beyond loopback',
  },
  {
    name: 'gateway',
    kind: 'boolean',
    commands: MCP,
    help: 'relay to the running `verity start` (its browser, its Control UI); exit when none runs',
  },
  {
    name: 'standalone',
    kind: 'boolean',
    commands: MCP,
    help: 'run on its own even when a `verity start` is running',
    conflicts: { options: ['gateway'], why: 'and --standalone exclude each other' },
  },
  {
    name: 'relay',
    kind: 'boolean',
    commands: MCP,
    default: 'on',
    value: true,
    help: '--no-relay: ignore the VERITY_MCP_URL/VERITY_LINK/VERITY_TOKEN a Control UI terminal sets',
  },
  {
    name: 'browser-url',
    key: 'browserUrl',
    own: true,
    kind: 'string',
    commands: WITH_DOCTOR,
    arg: 'URL',
    help: 'attach to a running Chromium (its DevTools endpoint, e.g. http://127.0.0.1:9222); it is never closed',
    conflicts: {
      options: ['channel', 'proxy-server', 'browser-arg'],
      why: 'apply to a browser Verity launches, not to one attached with --browser-url',
    },
  },
  {
    name: 'browser-context',
    key: 'browserContextId',
    own: true,
    kind: 'string',
    commands: BOTH,
    arg: 'ID',
    help: 'with --browser-url: only this browser context of the attached Chromium (an id from its Target.createBrowserContext): its tabs alone are listed and opened, and it is never closed',
    parse: contextIdOf,
    requires: { option: 'browser-url', why: 'names a context of the browser attached with --browser-url' },
  },
  {
    name: 'browser-endpoint',
    key: 'browserEndpoint',
    own: true,
    kind: 'string',
    commands: BOTH,
    arg: 'URL',
    help: "a browser pool's WebSocket endpoint (ws:// or wss://, e.g. browserless's ws://host:3000/chromium?token=T): every MCP session gets its own browser from it, connected on its first browser call and closed when it ends (prefer the variable or --config: a token on the command line shows in `ps`)",
    parse: endpointOf,
    conflicts: {
      options: ['browser-url', 'chromium', 'channel', 'proxy-server', 'browser-arg', 'user-data-dir', 'isolated'],
      why: 'apply to a browser of this machine, not to --browser-endpoint (every session gets its own browser from the pool already)',
    },
  },
  {
    name: 'browser-header',
    key: 'browserHeaders',
    own: true,
    kind: 'list',
    env: 'VERITY_BROWSER_HEADERS',
    split: '\n',
    commands: BOTH,
    arg: '"NAME: VALUE"',
    help: 'a header for the pool\'s WebSocket handshake, e.g. "Authorization: Bearer T"',
    parse: headerOf,
    requires: { option: 'browser-endpoint', why: 'applies to --browser-endpoint' },
  },
  {
    name: 'browser-connect-timeout',
    key: 'browserConnectTimeoutMs',
    own: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'MS',
    default: '60000',
    help: 'how long a session waits for the pool to give it a browser (a busy pool queues it; progress is reported meanwhile), then it is refused `timeout`',
    requires: { option: 'browser-endpoint', why: 'applies to --browser-endpoint' },
  },
  {
    name: 'isolated',
    key: 'isolated',
    own: true,
    kind: 'boolean',
    commands: BOTH,
    default: 'off',
    help: 'each MCP session gets its own browser context (own tabs, cookies and storage) in the one launched or attached browser',
    conflicts: {
      options: ['browser-context'],
      why: 'and --isolated exclude each other (--isolated makes a context per session)',
    },
  },
  {
    name: 'chromium',
    key: 'chromium',
    own: true,
    kind: 'string',
    commands: WITH_DOCTOR,
    arg: 'PATH',
    default: 'see --channel',
    help: 'the browser to launch on the first call that needs a tab (a path, or a command on PATH); wins over --channel',
  },
  {
    name: 'channel',
    key: 'channel',
    own: true,
    kind: 'string',
    commands: WITH_DOCTOR,
    arg: 'NAME',
    default: 'Chromium, then Chrome, then Edge, then previews',
    help: `the browser to launch, found at the usual install paths of Linux, macOS and Windows and on PATH: ${CHANNELS.join(', ')}`,
    parse: channelOf,
  },
  {
    name: 'viewport',
    key: 'viewport',
    own: true,
    kind: 'string',
    commands: BOTH,
    arg: 'WxH',
    default: "the window's own size",
    help: "every page's viewport in CSS pixels (e.g. 1280x800)",
    parse: viewportOf,
  },
  {
    name: 'proxy-server',
    key: 'proxyServer',
    own: true,
    kind: 'string',
    commands: BOTH,
    arg: 'URL',
    help: "the launched Chromium's proxy (http://host:port, socks5://host:port)",
    parse: proxyOf,
  },
  {
    name: 'ignore-https-errors',
    key: 'ignoreHttpsErrors',
    own: true,
    kind: 'boolean',
    commands: BOTH,
    default: 'off',
    help: 'accept self-signed and invalid certificates',
  },
  {
    name: 'browser-arg',
    key: 'browserArgs',
    own: true,
    kind: 'list',
    env: 'VERITY_BROWSER_ARGS',
    dashValue: true,
    envParse: browserArgsOf,
    commands: BOTH,
    arg: 'ARG',
    help: 'one more argument for the launched Chromium (`--browser-arg --lang=fr`); the variable is a JSON array, or arguments separated by spaces',
  },
  {
    name: 'headless',
    key: 'headless',
    own: true,
    kind: 'boolean',
    commands: BOTH,
    default: 'headless without DISPLAY',
    help: 'launch Chromium headless; --headful (or --no-headless) with a window',
  },
  {
    name: 'user-data-dir',
    key: 'userDataDir',
    own: true,
    kind: 'string',
    commands: BOTH,
    arg: 'DIR',
    default: 'a fresh temporary profile',
    help: 'the profile of the launched Chromium',
  },
  {
    name: 'allow-javascript',
    key: 'allowJavascript',
    own: true,
    kind: 'boolean',
    commands: BOTH,
    default: 'off',
    help: 'enable `page execute_javascript`',
  },
  {
    name: 'allow-clipboard-read',
    key: 'allowClipboardRead',
    own: true,
    kind: 'boolean',
    commands: BOTH,
    default: 'off',
    help: 'let agents read the clipboard (`clipboard_read`, with --caps clipboard); what is read is masked like results',
  },
  {
    name: 'allow-launch',
    key: 'allowLaunch',
    own: true,
    kind: 'list',
    split: ',',
    commands: BOTH,
    arg: 'LIST',
    default: 'none (launch_app refused)',
    help: 'apps agents may start with launch_app (with --caps apps): desktop-file ids, executable names or absolute paths, each named exactly; a terminal, shell or interpreter only when named itself',
  },
  {
    name: 'allow-url-schemes',
    key: 'allowUrlSchemes',
    own: true,
    kind: 'list',
    split: ',',
    commands: BOTH,
    arg: 'LIST',
    default: 'none',
    help: 'URL schemes agents may open beyond http, https, data and about:blank: file, javascript, chrome',
  },
  {
    name: 'upload-root',
    key: 'uploadRoots',
    own: true,
    kind: 'list',
    env: 'VERITY_UPLOAD_ROOTS',
    split: delimiter,
    commands: BOTH,
    arg: 'DIR',
    default: 'none (uploads refused)',
    help: 'a folder page set_input_files may read from',
  },
  {
    name: 'tools',
    key: 'tools',
    own: true,
    kind: 'string',
    commands: BOTH,
    arg: 'SET',
    default: 'default',
    help: 'what tools/list sends: default (lean) or full (also the deprecated tools and every seed argument)',
    parse: toolsOf,
  },
  {
    name: 'caps',
    key: 'caps',
    own: true,
    kind: 'list',
    split: ',',
    commands: BOTH,
    arg: 'LIST',
    default: 'none',
    help: `families of rarely needed tools tools/list also sends: ${Object.keys(CAPABILITIES).join(', ')} (--tools full sends every one)`,
    parse: capabilityOf,
  },
  {
    name: 'native-backend',
    key: 'nativeBackend',
    own: true,
    kind: 'string',
    commands: WITH_DOCTOR,
    arg: 'NAME',
    default: 'auto',
    help: "the native route's backend: auto (AT-SPI on Linux, nutjs on macOS and Windows) or nutjs (pixels and keys on any OS, every action unverifiable)",
    parse: nativeBackendOf,
  },
  {
    name: 'download-dir',
    own: true,
    kind: 'string',
    commands: BOTH,
    arg: 'DIR',
    default: '<config dir>/downloads',
    help: 'where files a driven tab downloads are saved (results name them and their size, never the folder)',
  },
  {
    name: 'download-max-files',
    own: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'N',
    default: '20',
    help: 'downloads one session may keep; more are cancelled (download_quota_exceeded)',
  },
  {
    name: 'download-max-mb',
    own: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'MB',
    default: '100',
    help: 'megabytes of downloads one session may keep; a download past it is cancelled (download_quota_exceeded)',
  },
  {
    name: 'download-total-files',
    own: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'N',
    default: '100',
    help: 'files the download folder may hold (what it holds at start counts); more are cancelled',
  },
  {
    name: 'download-total-mb',
    own: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'MB',
    default: '500',
    help: 'megabytes the download folder may hold (what it holds at start counts); a download past it is cancelled',
  },
  {
    name: 'policy',
    own: true,
    kind: 'string',
    commands: BOTH,
    arg: 'FILE',
    default: '<config dir>/policy.json',
    help: 'the permission policy (see policy.sample.json)',
  },
  {
    name: 'cursor',
    key: 'cursor',
    own: true,
    kind: 'boolean',
    commands: BOTH,
    default: 'on',
    help: 'the agent cursor in driven tabs (--no-cursor: off)',
  },
  {
    name: 'reduced-motion',
    key: 'reducedMotion',
    own: true,
    kind: 'boolean',
    commands: BOTH,
    default: 'off',
    help: 'the agent cursor jumps instead of gliding',
  },
  {
    name: 'session-idle-ms',
    key: 'sessionIdleMs',
    own: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'MS',
    default: '300000',
    help: 'a session idle this long ends (its cleanup hooks run)',
  },
  {
    name: 'approval-timeout-s',
    key: 'approvalTimeoutS',
    own: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'S',
    default: '55',
    help: "a call the policy holds waits this long for an operator, then is refused; 55 s is under an MCP SDK client's 60 s request timeout (a client that resets its timeout on progress, resetTimeoutOnProgress, can wait longer)",
  },
  {
    name: 'session-log',
    own: true,
    kind: 'string',
    commands: BOTH,
    arg: 'FILE',
    help: 'append one JSON line per session cleanup hook run (an audit trail)',
  },
  {
    name: 'audit-max-age-days',
    kind: 'positive',
    commands: START,
    arg: 'DAYS',
    default: '30',
    help: 'the audit trail (<config dir>/audit/) keeps entries this many days',
  },
  {
    name: 'audit-max-mb',
    kind: 'positive',
    commands: START,
    arg: 'MB',
    default: '256',
    help: "the audit trail's size cap: agents' calls are refused before it would be passed; entries leave only by age",
  },
  {
    name: 'audit-store',
    kind: 'string',
    commands: START,
    arg: 'URL',
    env: 'VERITY_AUDIT_URL',
    help: 'postgres://… keeps the audit trail in PostgreSQL, shared by every gateway given the same URL (entries wait in <config dir>/audit-spool.jsonl while it is down); without it, the JSONL files in <config dir>/audit/',
  },
  {
    name: 'pairing-max-idle-days',
    kind: 'positive',
    commands: START,
    arg: 'DAYS',
    default: '30',
    help: 'an extension pairing whose relay has not connected for this many days is removed (pair again to use it)',
  },
  {
    name: 'atspi-direct',
    key: 'atspiDirect',
    own: true,
    kind: 'boolean',
    commands: BOTH,
    default: 'on',
    help: 'call native apps on their own AT-SPI socket when they offer one (--no-atspi-direct: always through the bus)',
  },
  {
    name: 'verbose',
    kind: 'boolean',
    commands: BOTH,
    default: 'off',
    help: 'a failed start also prints the stack trace of its error (else one line says what failed and how to fix it)',
  },
  {
    name: 'config-dir',
    kind: 'string',
    commands: BOTH,
    arg: 'DIR',
    default: '$XDG_CONFIG_HOME/verity or ~/.config/verity',
    help: "where the token, policy.json, config.json and the running gateway's address are kept",
  },
  { name: 'json', kind: 'boolean', commands: DOCTOR, help: 'print the findings as one JSON object, for programs' },
] as const satisfies readonly OptionSpec[];
export const OPTIONS: readonly OptionSpec[] = TABLE;

type Row = (typeof TABLE)[number];

/** A name in a row's `conflicts` or `requires` that is no option's is a type error here. */
type Named<O> = O extends { conflicts: { options: readonly (infer N)[] } } ? N : never;
type Required<O> = O extends { requires: { option: infer N } } ? N : never;
const EVERY_NAMED_OPTION_EXISTS: [Named<Row> | Required<Row>] extends [Row['name']] ? true : never = true;
void EVERY_NAMED_OPTION_EXISTS;
type ValueOf<O> = O extends { parse: (raw: string, from: string) => infer R }
  ? O extends { kind: 'list' }
    ? R[]
    : R
  : O extends { kind: infer K extends Kind }
    ? KindValues[K]
    : never;
/** The options given (by a flag, the environment or the --config file), each typed by its row of OPTIONS. */
export type OptionValues = { -readonly [O in Row as O['name']]?: ValueOf<O> };
/** Every option's value for a command: those given, else the row's default `value` (those always have one). */
export type Config = OptionValues & {
  -readonly [O in Row as O extends { value: unknown } ? O['name'] : never]: ValueOf<O>;
};
/** Where a given option's value came from. */
export type Source = 'flag' | 'env' | 'config';

export const envName = (option: OptionSpec) => option.env ?? `VERITY_${option.name.toUpperCase().replace(/-/g, '_')}`;
/** Flags that are another spelling of an option: --headful is --no-headless. */
export const ALIASES: Record<string, { name: string; value: boolean }> = {
  headful: { name: 'headless', value: false },
};
