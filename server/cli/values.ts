// How an option's value is checked and converted, for the rows of options.ts that need more than their kind:
// each throws an Error naming where the value came from and what is wrong (parse.ts makes it a UsageError).
import { CHANNELS, isChannel } from '../cdp/browser/discovery.js';
import { CAPABILITIES, type Capability, isCapability } from '../contract/capabilities.js';

/** A pool's endpoint: a ws: or wss: URL (its token is never echoed back in a refusal). */
export function endpointOf(v: string, what: string): string {
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
export function contextIdOf(v: string, what: string): string {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(v))
    throw new Error(`${what} must be a browser context id (letters and digits, e.g. from Target.createBrowserContext)`);
  return v;
}

/** "Name: value" as one header; the value is never echoed back (it is usually a credential). */
export function headerOf(v: string, what: string): [string, string] {
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(v.trim());
  if (!m?.[2])
    throw new Error(`${what} must be "Name: value" (e.g. "Authorization: Bearer ..."); got a value that is not`);
  return [m[1], m[2]];
}

export function channelOf(v: string, what: string) {
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
export function proxyOf(v: string, what: string): string {
  if (!v || /\s/.test(v))
    throw new Error(`${what} must be a proxy like http://host:port or socks5://host:port; got ${JSON.stringify(v)}`);
  return v;
}

/** VERITY_BROWSER_ARGS: a JSON array of strings, or arguments separated by whitespace. */
export function browserArgsOf(v: string): string[] {
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

export function nativeBackendOf(raw: string, from: string): 'auto' | 'nutjs' {
  if (raw !== 'auto' && raw !== 'nutjs') throw new Error(`${from}: must be auto or nutjs, got ${JSON.stringify(raw)}`);
  return raw;
}

export function capabilityOf(raw: string, from: string): Capability {
  if (!isCapability(raw))
    throw new Error(`${from}: ${JSON.stringify(raw)} is no capability (${Object.keys(CAPABILITIES).join(', ')})`);
  return raw;
}

export function toolsOf(raw: string, from: string): 'default' | 'full' {
  if (raw !== 'default' && raw !== 'full')
    throw new Error(`${from}: must be default or full, got ${JSON.stringify(raw)}`);
  return raw;
}
