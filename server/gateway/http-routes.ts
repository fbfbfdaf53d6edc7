// The gateway's HTTP routes as one table: each path names the methods it answers and its handler, and
// whether the Origin check comes first (every route but /pair, whose handler checks the one origin it takes,
// since the extension's origin is not on the allow-list before it is paired). A path in no row is the
// Control UI's (static files, index.html for its client-side routes); a method a route does not answer is
// refused 405 naming the ones it does. The Host check, before any route, is the Gateway's (server.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Response headers of every HTTP answer; the Control UI's pages add their CSP (static-files.ts). */
export const BASE_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };

export interface HttpRoute {
  /** The exact path, or null for the catch-all: the Control UI's files. */
  path: string | null;
  /** The methods answered; null: the handler answers every method itself (MCP's transport, /pair's CORS). */
  methods: readonly string[] | null;
  /** false: the handler decides by the credential and the one origin it takes, before any allow-list. */
  originChecked: boolean;
  handle(req: IncomingMessage, res: ServerResponse, url: URL): void;
}

/** The request's target as a URL, or null when it is not one (`//[` makes the URL parser throw). */
export function requestUrl(req: IncomingMessage): URL | null {
  try {
    return new URL(req.url ?? '/', 'http://gateway');
  } catch {
    return null;
  }
}

/** The row that answers this path: its own, else the catch-all. */
export function routeOf(routes: readonly HttpRoute[], pathname: string): HttpRoute | undefined {
  return routes.find((r) => r.path === pathname) ?? routes.find((r) => r.path === null);
}

/** Whether the route answers this method; when not, the request has been answered 405 with the ones it does. */
export function methodAllowed(route: HttpRoute, req: IncomingMessage, res: ServerResponse, pathname: string): boolean {
  if (!route.methods || route.methods.includes(req.method ?? '')) return true;
  const allowed = route.methods.join(', ');
  res
    .writeHead(405, { 'content-type': 'text/plain', allow: allowed, ...BASE_HEADERS })
    .end(`${req.method} is not answered at ${pathname.slice(0, 100)}: it answers ${allowed}`);
  return false;
}

/** A plain-text answer with the base headers (the refusals before and around the routes). */
export function answerText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain', ...BASE_HEADERS }).end(text);
}
