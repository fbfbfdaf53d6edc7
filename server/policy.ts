// The permission policy: which origins and apps agents may act on, and which tools need an operator's
// approval. Read from --policy FILE, VERITY_POLICY, or <config dir>/policy.json (see policy.sample.json).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { programKind } from './contract/programs.js';
import { Refusal } from './contract/refusal.js';
import { configDir } from './token.js';

const policySchema = z.strictObject({
  allowed_origins: z
    .array(z.string().min(1))
    .optional()
    .describe('Origins (scheme://host[:port], "*" wildcards) tabs may be on; omitted = any.'),
  blocked_origins: z
    .array(z.string().min(1))
    .optional()
    .describe('Origins (same patterns) tabs may never be on; wins over allowed_origins.'),
  allowed_apps: z
    .array(z.string().min(1))
    .optional()
    .describe(
      'Native apps that may be driven: an app name, executable or command line ("*" wildcards), or a pid as a string; omitted = any (but terminal emulators).',
    ),
  blocked_apps: z
    .array(z.string().min(1))
    .optional()
    .describe('Native apps (same patterns) that may never be driven; wins over allowed_apps.'),
  require_approval: z
    .array(z.string().min(1))
    .default([])
    .describe('Tools (or page actions as "page.<action>") that need an operator\'s approval before they run.'),
});
export type PolicyFile = z.infer<typeof policySchema>;

/** URL schemes an agent may navigate to with no option; everything else needs --allow-url-schemes. */
export const DEFAULT_SCHEMES = ['http', 'https', 'data', 'about'];
/** The browser's own pages: one option word ("chrome") opens them all. */
const CHROME_SCHEMES = ['chrome', 'chrome-extension', 'chrome-untrusted', 'chrome-search', 'devtools', 'view-source'];
/** Schemes a tab can show on its own without an agent having navigated there (not reachable by navigation). */
const PASSIVE_SCHEMES = ['chrome-error', 'blob'];
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'];
/**
 * IPv4-mapped IPv6 spellings of 127.0.0.0/8 and 0.0.0.0 as a parsed URL writes them: WHATWG URL turns
 * `[::ffff:127.0.0.1]` (and `[0:0:0:0:0:ffff:7f00:1]`, `[::FFFF:127.1.2.3]`...) into `[::ffff:7f00:1]`.
 */
const MAPPED_LOOPBACK = /^\[::ffff:(7f[0-9a-f]{2}:[0-9a-f]{1,4}|0:0)\]$/;
/** Fetch URL patterns (globs over the whole URL) for the loopback hosts LOOPBACK_NAMES does not list one by one. */
const LOOPBACK_GLOBS = ['127.*', '*.localhost', '[::ffff:7f*]', '[::ffff:0:0]'];

export class Policy {
  /** Schemes beyond DEFAULT_SCHEMES the operator allowed (--allow-url-schemes / VERITY_ALLOW_URL_SCHEMES). */
  private extraSchemes = new Set<string>();
  /** The gateway's own origins (every loopback spelling of its port): never driven by an agent. */
  private gateway: { host: string; port: number } | null = null;

  constructor(
    readonly rules: PolicyFile = { require_approval: [] },
    readonly source = 'built-in (everything allowed)',
  ) {}

  /** Schemes the operator allows beyond the defaults ("chrome" stands for every chrome-ish scheme). */
  allowSchemes(schemes: string[]): this {
    for (const raw of schemes) {
      const scheme = raw.trim().toLowerCase().replace(/:$/, '');
      if (!scheme) continue;
      for (const s of scheme === 'chrome' ? CHROME_SCHEMES : [scheme]) this.extraSchemes.add(s);
    }
    return this;
  }

  schemeAllowed(scheme: string): boolean {
    return DEFAULT_SCHEMES.includes(scheme) || this.extraSchemes.has(scheme);
  }

  /** Called once by the gateway when it listens: its origin joins the origins no agent may drive. */
  setGatewayOrigin(host: string, port: number): void {
    this.gateway = { host: host.toLowerCase(), port };
  }

  /** Whether a URL is on the gateway's own HTTP address (any loopback spelling of its port). */
  isGateway(url: string): boolean {
    if (!this.gateway) return false;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    if (
      parsed.protocol !== 'http:' &&
      parsed.protocol !== 'https:' &&
      parsed.protocol !== 'ws:' &&
      parsed.protocol !== 'wss:'
    )
      return false;
    const port = Number(parsed.port || (parsed.protocol === 'https:' || parsed.protocol === 'wss:' ? 443 : 80));
    if (port !== this.gateway.port) return false;
    const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
    const gwHost =
      this.gateway.host.includes(':') && !this.gateway.host.startsWith('[')
        ? `[${this.gateway.host}]`
        : this.gateway.host;
    return (
      host === gwHost ||
      LOOPBACK_NAMES.includes(host) ||
      /^127\.\d+\.\d+\.\d+$/.test(host) ||
      MAPPED_LOOPBACK.test(host) ||
      host.endsWith('.localhost')
    );
  }

  /** The Fetch URL patterns of the gateway's origins (what the browser must never load). */
  gatewayPatterns(): string[] {
    if (!this.gateway) return [];
    const hosts = new Set([
      ...LOOPBACK_NAMES,
      ...LOOPBACK_GLOBS,
      this.gateway.host.includes(':') && !this.gateway.host.startsWith('[')
        ? `[${this.gateway.host}]`
        : this.gateway.host,
    ]);
    return [...hosts].map((h) => `*://${h}:${this.gateway!.port}/*`);
  }

  /** Whether the browser must see every request (an origin list is set) or only the gateway's. */
  get filtersOrigins(): boolean {
    return !!this.rules.allowed_origins || !!this.rules.blocked_origins?.length;
  }

  /**
   * A URL an agent asked to go to (navigate, new_tab): its scheme must be allowed, and then it must pass
   * the same checks as a tab's current URL. javascript: is refused here, before anything runs.
   */
  checkNavigation(url: string, what = 'the URL'): void {
    const scheme = schemeOf(url);
    if (!this.schemeAllowed(scheme) || (PASSIVE_SCHEMES.includes(scheme) && !this.extraSchemes.has(scheme))) {
      throw new Refusal(
        'not_permitted',
        `${what} uses the ${scheme}: scheme, which agents may not open unless the operator allows it (verity start --allow-url-schemes ${optionWord(scheme)}, or VERITY_ALLOW_URL_SCHEMES=${optionWord(scheme)}); allowed: ${[...DEFAULT_SCHEMES, ...this.extraSchemes].map((s) => `${s}:`).join(', ')}`,
        { scheme, option: '--allow-url-schemes' },
      );
    }
    if (scheme === 'about' && !/^about:blank([?#]|$)/i.test(url) && !this.extraSchemes.has('about')) {
      throw new Refusal('not_permitted', `${what} is ${url}; of about: URLs agents may open about:blank only`, {
        scheme,
      });
    }
    if (scheme === 'view-source') this.checkNavigation(url.slice('view-source:'.length), what);
    if (scheme === 'javascript') return; // runs in the tab's current page, which the caller checks
    this.checkUrl(url, what);
  }
  static load(explicit?: string): Policy {
    const file = explicit ?? join(configDir(), 'policy.json');
    if (!existsSync(file)) {
      if (explicit)
        throw new Error(`policy file ${file} does not exist; create it (see policy.sample.json) or leave out --policy`);
      return new Policy();
    }
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new Error(
        `policy file ${file} cannot be read (${(e as Error).message}); make it a readable file, or name another with --policy`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new Error(`policy file ${file}: not valid JSON (${(e as Error).message})`);
    }
    const parsed = policySchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`policy file ${file}: ${issue.path.join('.') || 'root'}: ${issue.message}`);
    }
    return new Policy(parsed.data, file);
  }

  /** Refuses a policy whose require_approval names no tool (a typo would silently let the tool through). */
  checkNames(known: string[]): void {
    const unknown = this.rules.require_approval.filter((name) => !known.includes(name));
    if (unknown.length) {
      throw new Error(
        `policy file ${this.source}: require_approval: unknown tool ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${known.join(', ')}`,
      );
    }
  }

  /** Whether the policy holds this tool (or page action) for an operator's approval. */
  needsApproval(tool: string, action?: string): boolean {
    return (
      this.rules.require_approval.includes(tool) ||
      (!!action && this.rules.require_approval.includes(`${tool}.${action}`))
    );
  }

  /**
   * A tab may be acted on only while its page (its CURRENT url, after redirects and clicks) is on a scheme
   * the operator allows, not on the gateway's own origin, and on an origin the policy allows.
   */
  checkUrl(url: string, what = 'the tab'): void {
    if (url === '' || /^about:blank([?#]|$)/i.test(url)) return;
    if (this.isGateway(url)) {
      throw new Refusal(
        'not_permitted',
        `${what} is on the Verity gateway's own address (${originOf(url)}); agents never drive the Control UI or the gateway`,
        { origin: originOf(url), gateway: true },
      );
    }
    const scheme = schemeOf(url);
    if (!this.schemeAllowed(scheme) && !PASSIVE_SCHEMES.includes(scheme) && scheme !== 'javascript') {
      throw new Refusal(
        'not_permitted',
        `${what} is on a ${scheme}: URL, which agents may not act on unless the operator allows it (--allow-url-schemes ${optionWord(scheme)} or VERITY_ALLOW_URL_SCHEMES)`,
        { scheme, option: '--allow-url-schemes' },
      );
    }
    const why = this.originRefusal(url);
    if (why)
      throw new Refusal('not_permitted', `${what} is on ${originOf(url)}, which ${why}`, { origin: originOf(url) });
  }

  /** Why the origin lists refuse this URL (null when they allow it). */
  private originRefusal(url: string): string | null {
    const { allowed_origins: allowed, blocked_origins: blocked } = this.rules;
    if (!allowed && !blocked?.length) return null;
    const origin = originOf(url);
    if (blocked?.some((pattern) => matches(pattern, origin)))
      return `the policy (${this.source}) blocks; blocked: ${blocked.join(', ')}`;
    if (allowed && !allowed.some((pattern) => matches(pattern, origin)))
      return `the policy (${this.source}) does not allow; allowed: ${allowed.join(', ')}`;
    return null;
  }

  /** Whether the browser may load this request at all (the Fetch interception asks for every request it sees). */
  requestAllowed(url: string): boolean {
    if (this.isGateway(url)) return false;
    if (!/^(https?|wss?):/i.test(url)) return true; // data:, blob: and the like carry no origin of their own to fetch from
    return this.originRefusal(url) === null;
  }

  /**
   * Whether a tunnel to host:port may be opened (the policy proxy's CONNECT, which is all a browser says of
   * an https, ws or wss request it sends through a proxy): only when the policy allows an http, https, ws or
   * wss origin at exactly that host and port, and never to the gateway's own. `host` is a name, an IPv4
   * address or a bracketed IPv6 one, as a URL's `host` writes it; anything else (a path, credentials, an
   * empty name, a port out of range) is refused.
   */
  hostPortAllowed(host: string, port: number): boolean {
    if (!Number.isInteger(port) || port < 1 || port > 65535) return false;
    if (!/^([a-z0-9_.-]+|\[[0-9a-f:.]+\])$/i.test(host)) return false;
    let parsed: URL;
    try {
      parsed = new URL(`http://${host}:${port}/`);
    } catch {
      return false;
    }
    // The URL parser normalizes (case, IPv4 spellings): the caller connects to the name it checked, so the two must agree.
    if (parsed.hostname !== host.toLowerCase()) return false;
    return ['http', 'https', 'ws', 'wss'].some((scheme) => this.requestAllowed(`${scheme}://${host}:${port}/`));
  }

  /**
   * Why the native route must not touch this app's windows (null when it may). The one rule for every
   * native call: the native host asks it where windows and apps are listed and where targets are found.
   * The Control UI's own window is never driven (like the gateway's origin on tabs); blocked_apps wins;
   * then allowed_apps, when given, must name the app; a terminal emulator (a shell as the user) needs an
   * allowed_apps entry that names it, not just "*".
   */
  appRefusal(app: AppFacts): string | null {
    if (app.browserLike && app.title !== undefined && isControlUiTitle(app.title))
      return "it shows the Verity Control UI (the operator's console), which agents never drive";
    if (app.driven) return null;
    const { allowed_apps: allowed, blocked_apps: blocked } = this.rules;
    const blockedBy = blocked?.find((entry) => appMatches(entry, app));
    if (blockedBy !== undefined) return `the policy (${this.source}) blocks it (blocked_apps: ${blockedBy})`;
    const allowedBy = allowed?.filter((entry) => appMatches(entry, app));
    if (allowed && !allowedBy?.length)
      return `the policy (${this.source}) does not allow it; allowed_apps: ${allowed.join(', ')}`;
    if (isTerminal(app) && !allowedBy?.some((entry) => entry.trim() !== '*'))
      return 'it is a terminal emulator (commands typed there run as the user), which agents may drive only when allowed_apps names it';
    return null;
  }

  /** What the operator's console shows of the active policy (gateway method policy.get). */
  summary(): PolicySummary {
    const r = this.rules;
    return {
      source: this.source,
      allowed_origins: r.allowed_origins ?? null,
      blocked_origins: r.blocked_origins ?? [],
      url_schemes: [...DEFAULT_SCHEMES, ...this.extraSchemes],
      allowed_apps: r.allowed_apps ?? null,
      blocked_apps: r.blocked_apps ?? [],
      require_approval: r.require_approval,
      always_refused: [
        "the gateway's own origin and the Control UI's window",
        'terminal emulators, unless allowed_apps names them',
      ],
    };
  }
}

/** The policy as the Control UI shows it: null lists mean "any". */
export interface PolicySummary {
  source: string;
  allowed_origins: string[] | null;
  blocked_origins: string[];
  url_schemes: string[];
  allowed_apps: string[] | null;
  blocked_apps: string[];
  require_approval: string[];
  always_refused: string[];
}

/**
 * What the native route knows of the process behind a window or an AT-SPI app (read from /proc by the
 * native host). Names and command lines are what a process says about itself; its executable's path is
 * what the kernel says.
 */
export interface AppFacts {
  pid: number | null;
  /** Its AT-SPI application names (the toolkit's program name), when it has any. */
  names: string[];
  /** /proc/<pid>/exe resolved ('' when unreadable). */
  exe: string;
  /** /proc/<pid>/comm. */
  comm: string;
  /** /proc/<pid>/cmdline. */
  argv: string[];
  /** The window's title and whether a browser draws it (the Control UI rule), when a window is asked about. */
  title?: string;
  browserLike?: boolean;
  /** The browser Verity drives over CDP: the origin policy governs it, so the app lists do not. */
  driven?: boolean;
}

/** The Control UI's document title (control-ui/index.html): a browser window showing it is titled with it first. */
export const CONTROL_UI_TITLE = 'Verity Control';
const isControlUiTitle = (title: string) => title === CONTROL_UI_TITLE || title.startsWith(`${CONTROL_UI_TITLE} `);

const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** Whether any name the process goes by is a terminal emulator's (more names can only refuse more). */
export function isTerminal(app: AppFacts): boolean {
  const names = [...app.names, basename(app.exe), app.comm, basename(app.argv[0] ?? '')];
  return names.some((name) => programKind(name) === 'terminal');
}

/**
 * Whether one allowed_apps/blocked_apps entry names this app: a pid (digits), else a pattern ("*" any
 * characters, any case) matching the whole of an AT-SPI name, the executable (path or file name), the
 * process name, argv[0] (path or file name), or the command line (arguments joined by spaces).
 */
export function appMatches(entry: string, app: AppFacts): boolean {
  const pattern = entry.trim();
  if (/^\d+$/.test(pattern)) return app.pid !== null && Number(pattern) === app.pid;
  const regex = globRegex(pattern, '.*', 'is');
  const argv0 = app.argv[0] ?? '';
  const candidates = [...app.names, app.exe, basename(app.exe), app.comm, argv0, basename(argv0), app.argv.join(' ')];
  return candidates.some((c) => c !== '' && regex.test(c));
}

function matches(pattern: string, origin: string): boolean {
  return globRegex(pattern, '[^/]*').test(origin);
}

/** A pattern whose "*" stands for `wildcard` (a regex), every other character for itself, matched whole. */
function globRegex(pattern: string, wildcard: string, flags = ''): RegExp {
  const parts = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'));
  return new RegExp(`^${parts.join(wildcard)}$`, flags);
}

function schemeOf(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(url.trim());
  return m ? m[1].toLowerCase() : '';
}

function originOf(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? `${schemeOf(url)}:` : origin;
  } catch {
    return url.slice(0, 200);
  }
}

/** The word an operator passes to --allow-url-schemes to allow this scheme. */
function optionWord(scheme: string): string {
  return CHROME_SCHEMES.includes(scheme) ? 'chrome' : scheme;
}
