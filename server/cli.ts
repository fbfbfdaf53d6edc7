// The command line's options: `verity start` (the gateway), `verity mcp` (MCP over stdio), `verity doctor`.
// What each command does is in server/cli/ (main.ts reads the command line and runs one).
//
// Every option is one row of OPTIONS: its flag (also its key in a --config file), the commands that take
// it and its help line; its environment variable is VERITY_ and the flag in capitals (--browser-url is
// VERITY_BROWSER_URL). A value comes from the command line, else the environment, else the --config file
// (JSON), else the default: one typed Config, each value's type given by its row (its kind, or its parse). node:util's parseArgs reads the command line; an option the command does not
// take, an unknown one, or a value that does not parse is refused with exit code 2, naming it.
//
// Only the parser is loaded up front: --help, --version and a refused command line answer at once; the
// server's modules (the SDK, puppeteer, the tools) are imported once a command runs.
import { parseArgs } from 'node:util';
import { delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import type { VerityOptions } from './core.js';
import { readGatewayFile } from './token.js';
import type { KindValues } from './cli/kinds.js';
import { PACKAGE_NAME, VERSION } from './version.js';
import { CHANNELS, isChannel } from './cdp/browser/discovery.js';

export type Command = 'start' | 'mcp' | 'doctor';

/** The unpacked extension that ships in the package (bin/ and dist/server/ sit beside it). */
export const EXTENSION_DIR = fileURLToPath(new URL('../../extension/', import.meta.url));
/**
 * string; boolean (--x, --no-x; env and config: 1/0, true/false, yes/no, on/off); port 0..65535; a positive
 * integer; list (the flag may repeat, each value split at `split`; the environment variable is split the same
 * way; a config value is an array or a string). Their value types are zod schemas (cli/kinds.ts), taken here
 * as types only.
 */
type Kind = keyof KindValues;

export interface OptionSpec {
  /** The flag without its dashes; also the option's key in a --config file. */
  name: string;
  kind: Kind;
  commands: readonly Command[];
  help: string;
  /** The value's placeholder in --help. */
  arg?: string;
  /** What applies when the option is not given (for --help and the README). */
  default?: string;
  /** That default as a value, where it is one (Config holds it when no layer gives the option). */
  value?: unknown;
  /** The VerityOptions field the value goes to (the others are read by name below). */
  key?: keyof VerityOptions;
  /** Read from process.env by the module that uses it: the CLI writes the resolved value there. */
  exportEnv?: true;
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
}

const BOTH = ['start', 'mcp'] as const;
const START = ['start'] as const;
const MCP = ['mcp'] as const;
/** The browser options `verity doctor` also takes, to check the browser they name. */
const WITH_DOCTOR = ['start', 'mcp', 'doctor'] as const;
const DOCTOR = ['doctor'] as const;

/** Every option, one line each. Adding a flag: add its line here (and to the README's table); Config types it. */
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
  { name: 'standalone', kind: 'boolean', commands: MCP, help: 'run on its own even when a `verity start` is running' },
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
  },
  {
    name: 'isolated',
    key: 'isolated',
    own: true,
    kind: 'boolean',
    commands: BOTH,
    default: 'off',
    help: 'each MCP session gets its own browser context (own tabs, cookies and storage) in the one launched or attached browser',
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
    exportEnv: true,
    kind: 'string',
    commands: BOTH,
    arg: 'DIR',
    default: '<config dir>/downloads',
    help: 'where files a driven tab downloads are saved (results name them and their size, never the folder)',
  },
  {
    name: 'download-max-files',
    own: true,
    exportEnv: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'N',
    default: '20',
    help: 'downloads one session may keep; more are cancelled (download_quota_exceeded)',
  },
  {
    name: 'download-max-mb',
    own: true,
    exportEnv: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'MB',
    default: '100',
    help: 'megabytes of downloads one session may keep; a download past it is cancelled (download_quota_exceeded)',
  },
  {
    name: 'download-total-files',
    own: true,
    exportEnv: true,
    kind: 'positive',
    commands: BOTH,
    arg: 'N',
    default: '100',
    help: 'files the download folder may hold (what it holds at start counts); more are cancelled',
  },
  {
    name: 'download-total-mb',
    own: true,
    exportEnv: true,
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
    own: true,
    exportEnv: true,
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
    name: 'pairing-max-idle-days',
    exportEnv: true,
    kind: 'positive',
    commands: START,
    arg: 'DAYS',
    default: '30',
    help: 'an extension pairing whose relay has not connected for this many days is removed (pair again to use it)',
  },
  {
    name: 'atspi-direct',
    own: true,
    exportEnv: true,
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
    exportEnv: true,
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

/** Variables read from the environment that are not options (set by Verity itself, or for development). */
export const ENV_ONLY: ReadonlyArray<{ env: string; help: string }> = [
  {
    env: 'VERITY_MCP_URL',
    help: "set in the Control UI terminal's shells: the gateway's /mcp, so `verity mcp` started there relays to it",
  },
  {
    env: 'VERITY_LINK',
    help: "set in the Control UI terminal's shells: binds an agent started there to that Control UI",
  },
  {
    env: 'VERITY_TOKEN',
    help: "for `verity start`: the operator credential (else --token-file or the config dir); in the Control UI terminal's shells: the agent credential for the relay",
  },
  {
    env: 'VERITY_AGENT_TOKEN',
    help: 'for `verity start`: the agent credential (else --agent-token-file or the config dir)',
  },
  // Bounds (server/limits.ts): each has a named refusal when reached.
  {
    env: 'VERITY_MAX_SEND_BUFFER_BYTES',
    help: 'unsent bytes a gateway socket may hold before it is closed 4010 "too slow" (default 4194304)',
  },
  {
    env: 'VERITY_MAX_GATEWAY_CONNECTIONS',
    help: 'gateway WebSocket connections at once; more are refused 503 TOO_MANY (default 32)',
  },
  {
    env: 'VERITY_MAX_LINKS_PER_CONNECTION',
    help: 'agent links (agent.link) one Control UI connection may hold; more are refused TOO_MANY (default 32)',
  },
  { env: 'VERITY_MAX_LINKS', help: 'agent links in all (default 256)' },
  {
    env: 'VERITY_RESUME_GRACE_MS',
    help: "how long a Control UI's single-use resume ticket (for a reload) stays valid after its connection closed (default 300000, 5 min)",
  },
  {
    env: 'VERITY_MAX_HTTP_SESSIONS_PER_CLIENT',
    help: 'MCP sessions over HTTP one client (its agent link, else its clientInfo and address) may hold; more are refused 429 too_many_sessions (default 32)',
  },
  {
    env: 'VERITY_MAX_HTTP_SESSIONS_UNLINKED',
    help: 'MCP sessions over HTTP of all clients without an agent link together; the rest is kept for agents linked from the Control UI (default three quarters of VERITY_MAX_HTTP_SESSIONS)',
  },
  {
    env: 'VERITY_MAX_PENDING_CALLS_PER_CLIENT',
    help: 'requests one MCP client may have in flight; more are refused too_many_pending_calls (default 16)',
  },
  {
    env: 'VERITY_MAX_PENDING_CALLS_UNLINKED',
    help: 'requests in flight of all clients without an agent link together (default 128)',
  },
  {
    env: 'VERITY_MAX_NATIVE_WALK_NODES',
    help: "accessibility nodes one native window's tree walk reads at most; past it the snapshot says it is incomplete (default 20000)",
  },
  {
    env: 'VERITY_MAX_NATIVE_MANAGED_CHILDREN',
    help: 'children read by index from one container that manages its own (a document, a sheet) at most (default 2000)',
  },
  { env: 'VERITY_LINK_TTL_MS', help: 'how long an agent link lasts (default 86400000, 24 h)' },
  {
    env: 'VERITY_MAX_LABELS_PER_CONNECTION',
    help: 'session labels one MCP connection may hold; more are refused too_many_sessions (default 64)',
  },
  { env: 'VERITY_MAX_SESSIONS', help: 'sessions in all; more are refused too_many_sessions (default 1024)' },
  {
    env: 'VERITY_MAX_HTTP_SESSIONS',
    help: 'MCP sessions over HTTP at once; more are refused 503 too_many_sessions (default 256)',
  },
  {
    env: 'VERITY_HTTP_SESSION_IDLE_MS',
    help: 'an HTTP MCP session idle this long is closed (default twice the session idle time, at least 60 s)',
  },
  {
    env: 'VERITY_HTTP_ABANDONED_MS',
    help: 'an HTTP MCP session whose GET stream closed and that sent no request since is closed after this long, its pool browser freed (default 30000)',
  },
  {
    env: 'VERITY_MAX_PENDING_APPROVALS',
    help: 'calls waiting for an operator at once; more are refused too_many_approvals (default 64)',
  },
  {
    env: 'VERITY_EXTENSION_ID',
    help: "the companion extension's id, for a build of it signed with another key (default aehmmekdcffbjdehcemegbhmemnbmdmh)",
  },
];

export const envName = (option: OptionSpec) => option.env ?? `VERITY_${option.name.toUpperCase().replace(/-/g, '_')}`;
/** Flags that are another spelling of an option: --headful is --no-headless. */
const ALIASES: Record<string, { name: string; value: boolean }> = { headful: { name: 'headless', value: false } };

export const COMMANDS: Record<Command, { short: string; long: string }> = {
  mcp: {
    short: 'MCP over stdio, for clients that start their servers (Claude Code, Claude Desktop, Cursor, VS Code, Codex)',
    long:
      'MCP over stdio, for clients that start their servers (Claude Code, Claude Desktop, Cursor, VS Code,\n' +
      'Codex). With a `verity start` running and no option that configures a server of its own, it joins\n' +
      'that gateway (its browser, its Control UI); --standalone keeps it apart.',
  },
  doctor: {
    short: 'what works on this machine (browser, display, AT-SPI) and how to fix the rest',
    long:
      'What works on this machine and what to do about the rest: the browser found (path, version, how it was ' +
      'found), the native backend and why, the display server (X11, Wayland, XWayland), the AT-SPI bus, and ' +
      'the OS permissions native input needs. Exits 0 unless it cannot run; --json for programs.',
  },
  start: {
    short: "the gateway: the Control UI, MCP over Streamable HTTP at /mcp, the extension's WebSocket",
    long:
      'The gateway, on one loopback port: the Control UI at /, MCP over Streamable HTTP at /mcp (with a\n' +
      "Bearer token), the companion extension's WebSocket at /gateway. It prints the URLs, the token and\n" +
      'an entry for HTTP MCP clients.',
  },
};

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

const flagOf = (option: OptionSpec) => `--${option.name}`;

function refuseForCommand(option: OptionSpec, command: Command, via: string): never {
  const others = option.commands.map((c) => `verity ${c}`).join(' and ');
  throw new UsageError(`verity ${command} does not take ${via} (an option of ${others})`);
}

/** Reads the command line, the environment and the config file into one value per given option. */
export function parseCommandLine(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
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
  refuseTogether(values);
  return { kind: 'run', command: cmd, values, sources, config: withDefaults(values, table, cmd) };
}

/** Options that do not go together, named. */
function refuseTogether(values: OptionValues): void {
  if (values.gateway === true && values.standalone === true)
    throw new UsageError('--gateway and --standalone exclude each other');
  // Given, and not as nothing (false, or an empty list).
  const named = (names: ReadonlyArray<keyof OptionValues>) =>
    names
      .filter((n) => {
        const v = values[n];
        return v !== undefined && v !== false && !(Array.isArray(v) && v.length === 0);
      })
      .map((n) => `--${n}`);
  if (values['browser-endpoint'] !== undefined) {
    const local = named([
      'browser-url',
      'chromium',
      'channel',
      'proxy-server',
      'browser-arg',
      'user-data-dir',
      'isolated',
    ]);
    if (local.length)
      throw new UsageError(
        `${local.join(', ')} apply to a browser of this machine, not to --browser-endpoint (every session gets its own browser from the pool already)`,
      );
  } else if (values['browser-header']?.length || values['browser-connect-timeout'] !== undefined) {
    throw new UsageError(
      '--browser-header and --browser-connect-timeout apply to --browser-endpoint, which is not given',
    );
  }
  if (values['browser-context'] !== undefined) {
    if (values['browser-url'] === undefined)
      throw new UsageError(
        '--browser-context names a context of the browser attached with --browser-url, which is not given',
      );
    if (values.isolated === true)
      throw new UsageError(
        '--browser-context and --isolated exclude each other (--isolated makes a context per session)',
      );
  }
  if (values['browser-url'] !== undefined) {
    const launchOnly = named(['channel', 'proxy-server', 'browser-arg']);
    if (launchOnly.length)
      throw new UsageError(
        `${launchOnly.join(', ')} apply to a browser Verity launches, not to one attached with --browser-url`,
      );
  }
}

/** The given values over each row's default `value` (for the options the command takes). */
function withDefaults(values: OptionValues, table: readonly OptionSpec[], command: Command): Config {
  const defaults = Object.fromEntries(
    table.filter((o) => o.value !== undefined && o.commands.includes(command)).map((o) => [o.name, o.value]),
  );
  return { ...defaults, ...values } as Config;
}

/** A pool's endpoint: a ws: or wss: URL (its token is never echoed back in a refusal). */
function endpointOf(v: string, what: string): string {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new Error(`${what} must be a ws:// or wss:// URL (e.g. ws://127.0.0.1:3000/chromium?token=...)`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    throw new Error(`${what} must be a ws:// or wss:// URL, got a ${url.protocol} URL`);
  return v;
}

/** A DevTools browser context id (Chromium's are 32 hex digits): letters, digits, '-' and '_' only. */
function contextIdOf(v: string, what: string): string {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(v))
    throw new Error(`${what} must be a browser context id (letters and digits, e.g. from Target.createBrowserContext)`);
  return v;
}

/** "Name: value" as one header; the value is never echoed back (it is usually a credential). */
function headerOf(v: string, what: string): [string, string] {
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(v.trim());
  if (!m?.[2])
    throw new Error(`${what} must be "Name: value" (e.g. "Authorization: Bearer ..."); got a value that is not`);
  return [m[1], m[2]];
}

function channelOf(v: string, what: string) {
  if (!isChannel(v)) throw new Error(`${what} must be one of ${CHANNELS.join(', ')}, got ${JSON.stringify(v)}`);
  return v;
}

/** WxH in CSS pixels, each side 1..10000. */
export function viewportOf(v: string, what: string): { width: number; height: number } {
  const m = /^(\d{1,5})x(\d{1,5})$/.exec(v.trim());
  const [width, height] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (!m || width < 1 || height < 1 || width > 10000 || height > 10000)
    throw new Error(`${what} must be WIDTHxHEIGHT in pixels (1..10000 each), e.g. 1280x800; got ${JSON.stringify(v)}`);
  return { width, height };
}

/** What Chromium's --proxy-server takes: [scheme://]host:port (or a per-scheme list); checked for shape only. */
function proxyOf(v: string, what: string): string {
  if (!v || /\s/.test(v))
    throw new Error(`${what} must be a proxy like http://host:port or socks5://host:port; got ${JSON.stringify(v)}`);
  return v;
}

/** VERITY_BROWSER_ARGS: a JSON array of strings, or arguments separated by whitespace. */
function browserArgsOf(v: string): string[] {
  if (v.trim().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      parsed = null;
    }
    if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string'))
      throw new Error('VERITY_BROWSER_ARGS must be a JSON array of strings or whitespace-separated arguments');
    return parsed;
  }
  return v.split(/\s+/).filter(Boolean);
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
  env: NodeJS.ProcessEnv = process.env,
): VerityOptions & { ignoreHttpsErrors: boolean } {
  const parsed = parseCommandLine(['mcp', ...argv], env);
  if (parsed.kind !== 'run') throw new UsageError('expected options, not --help or --version');
  return { ...verityOptionsOf(parsed.values), ignoreHttpsErrors: parsed.values['ignore-https-errors'] === true };
}

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

/**
 * The one line a failed start prints: what failed and how to fix it, for the failures an operator can
 * meet (a used port, an address this machine does not have, an unreadable file); anything else by its
 * message. The stack trace only with --verbose.
 */
export function startFailure(e: unknown, port?: number): string {
  const err = e as NodeJS.ErrnoException & { address?: string; port?: number };
  const bound = err.port ?? port;
  const where = `${err.address ?? 'its address'}${bound ? `:${bound}` : ''}`;
  if (err.code === 'EADDRINUSE') {
    const running = readGatewayFile();
    const ours = running && new URL(running.mcp_url).port === String(bound) && alive(running.pid);
    return `port ${bound} is in use on ${err.address ?? 'this machine'}${ours ? ` by a running verity start (pid ${running.pid})` : ''}: stop what holds it, or choose another port with --port N (--port 0 picks a free one)`;
  }
  if (err.code === 'EADDRNOTAVAIL')
    return `cannot listen on ${where}: ${err.address} is not an address of this machine; choose one it has with --host (default 127.0.0.1)`;
  if (err.code === 'EACCES' && err.syscall === 'listen')
    return `cannot listen on ${where}: binding port ${bound} needs privileges; choose a port above 1023 with --port`;
  if (err.code && err.path)
    return `cannot ${err.syscall ?? 'use'} ${err.path} (${err.code}); check that it exists and is readable and writable by this user (the config dir: --config-dir or VERITY_CONFIG_DIR)`;
  return (err?.message ?? String(e)).split('\n')[0];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function nativeBackendOf(raw: string, from: string): 'auto' | 'nutjs' {
  if (raw !== 'auto' && raw !== 'nutjs') throw new Error(`${from}: must be auto or nutjs, got ${JSON.stringify(raw)}`);
  return raw;
}

function toolsOf(raw: string, from: string): 'default' | 'full' {
  if (raw !== 'default' && raw !== 'full')
    throw new Error(`${from}: must be default or full, got ${JSON.stringify(raw)}`);
  return raw;
}
