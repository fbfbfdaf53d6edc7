// A browser from a pool service (browserless and the like) for one MCP session: one WebSocket to the pool's
// endpoint is one browser, given to this connection alone, gone when the socket closes. What the pool does
// is said plainly rather than hidden: a pool that queues the session keeps the WebSocket handshake waiting
// (reported as MCP progress, bounded by --browser-connect-timeout); a full pool answers HTTP 429
// (`browser_pool_full`); a wrong token 401/403 (`browser_pool_unauthorized`); a pool that ends the browser
// later (its session timeout, a crash) just closes the socket, which is remembered here as the reason the
// session's next call is refused `browser_lost`. Nothing is retried here: each connect is tried once.
import WebSocket from 'ws';
import type { ConnectionTransport } from 'puppeteer-core';
import { Refusal } from '../../contract/refusal.js';
import { reportWhile, type Progress } from '../../progress.js';

export interface PoolEndpoint {
  /** ws:// or wss:// URL of the pool (its token may be in the query: ?token=...). */
  url: string;
  /** Sent with the WebSocket handshake (e.g. Authorization: Bearer ...). */
  headers: Record<string, string>;
  /** How long a session waits for the pool to give it a browser (queued included). */
  connectTimeoutMs: number;
}

/** Default for --browser-connect-timeout: long enough to wait in a pool's queue, bounded all the same. */
export const POOL_CONNECT_TIMEOUT_MS = 60_000;
/** The WebSocket's frames can hold a whole screenshot; puppeteer's own transport allows this much. */
const MAX_PAYLOAD = 256 * 1024 * 1024;
/** How much of a refusing HTTP answer's body is quoted (it says why, e.g. browserless's "Too many requests"). */
const BODY_QUOTED = 200;

/** The endpoint as it may be shown to agents and logs: scheme, host and path, never a user, password or query (the token). */
export function redactEndpoint(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? ' (query hidden)' : ''}`;
  } catch {
    return '(an unparsable URL)';
  }
}

/** Where the credential for the pool comes from, for a refusal that names it without showing it. */
function credentialPlace(endpoint: PoolEndpoint): string {
  const inQuery = (() => {
    try {
      return [...new URL(endpoint.url).searchParams.keys()].filter((k) => /token|key|auth/i.test(k));
    } catch {
      return [];
    }
  })();
  const header = Object.keys(endpoint.headers).find((h) => /authorization|token|key/i.test(h));
  const places = [
    ...inQuery.map((k) => `the ${k}= parameter of --browser-endpoint`),
    ...(header ? [`the ${header} header of --browser-header`] : []),
  ];
  return places.length
    ? places.join(' and ')
    : 'no token (--browser-endpoint has no ?token= and --browser-header no Authorization)';
}

/** Why a pool's browser went away, as the session's next call tells it. */
export interface PoolLoss {
  code: number;
  reason: string;
  aliveMs: number;
}

/** A connected pool browser's WebSocket as puppeteer's transport; `onLost` hears a close this side did not ask for. */
export class PoolTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  private closedByUs = false;
  private readonly openedAt = Date.now();

  constructor(
    private readonly ws: WebSocket,
    onLost: (loss: PoolLoss) => void,
  ) {
    ws.on('message', (data) => {
      this.onmessage?.(data.toString());
    });
    ws.on('close', (code, reason) => {
      if (!this.closedByUs)
        onLost({ code, reason: reason.toString().slice(0, BODY_QUOTED), aliveMs: Date.now() - this.openedAt });
      this.onclose?.();
    });
    ws.on('error', () => {
      /* a close follows */
    });
  }

  send(message: string): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(message);
  }

  close(): void {
    this.closedByUs = true;
    this.ws.close();
    // A pool that does not answer the close handshake still loses the socket (and so frees the browser).
    setTimeout(() => this.ws.terminate(), 2000).unref();
  }
}

/**
 * Opens one WebSocket to the pool (one browser), waiting at most `connectTimeoutMs` and reporting progress
 * each second while the pool keeps it waiting. The pool's refusals become Verity's, naming the endpoint
 * without its query (the token) and never quoting a header.
 */
export async function connectToPool(
  endpoint: PoolEndpoint,
  onLost: (loss: PoolLoss) => void,
  progress?: Progress,
): Promise<PoolTransport> {
  const where = redactEndpoint(endpoint.url);
  const ws = new WebSocket(endpoint.url, {
    headers: endpoint.headers,
    perMessageDeflate: false,
    maxPayload: MAX_PAYLOAD,
    followRedirects: false,
  });
  ws.on('error', () => {
    /* handled below, or by the transport's close */
  });
  let timer: NodeJS.Timeout | undefined;
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < BODY_QUOTED) {
          chunks.push(c);
          size += c.length;
        }
      });
      const settle = () => {
        const body = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim().slice(0, BODY_QUOTED);
        reject(refusalForStatus(status, body, where, endpoint));
        ws.terminate();
      };
      res.once('end', settle);
      res.once('error', settle);
      res.once('close', settle);
    });
    ws.once('error', (e) =>
      reject(
        new Refusal('unavailable', `could not reach the browser pool at ${where}: ${e.message.slice(0, 200)}`, {
          retryable: true,
          endpoint: where,
        }),
      ),
    );
    timer = setTimeout(() => {
      reject(
        new Refusal(
          'timeout',
          `the browser pool at ${where} gave this session no browser within ${endpoint.connectTimeoutMs} ms (a busy pool queues new sessions until a browser is free); nothing was done: retry later, or raise --browser-connect-timeout`,
          {
            retryable: true,
            waited_ms: endpoint.connectTimeoutMs,
            option: '--browser-connect-timeout',
            endpoint: where,
          },
        ),
      );
      // Leaving the queue: the pool must not start a browser nobody will drive.
      ws.terminate();
    }, endpoint.connectTimeoutMs);
  });
  try {
    await reportWhile(
      progress,
      `waiting for a browser from the pool at ${where} (a busy pool queues the session)`,
      opened,
    );
  } catch (e) {
    ws.terminate();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  return new PoolTransport(ws, onLost);
}

/** The pool's HTTP answer to the handshake as a refusal. */
export function refusalForStatus(status: number, body: string, where: string, endpoint: PoolEndpoint): Refusal {
  const said = body ? ` (it said: ${JSON.stringify(body)})` : '';
  if (status === 429) {
    return new Refusal(
      'browser_pool_full',
      `the browser pool at ${where} is full: every browser is busy and its queue is full (HTTP 429)${said}; nothing was done: retry in a while`,
      { retryable: true, status, endpoint: where },
    );
  }
  if (status === 401 || status === 403) {
    return new Refusal(
      'browser_pool_unauthorized',
      `the browser pool at ${where} refused the token (HTTP ${status})${said}; the token comes from ${credentialPlace(endpoint)}: check it with whoever runs the pool`,
      { retryable: false, status, endpoint: where },
    );
  }
  return new Refusal(
    'unavailable',
    `the browser pool at ${where} answered HTTP ${status} instead of a browser${said}`,
    { retryable: status >= 500, status, endpoint: where },
  );
}

/** What the session is told after its browser went away without being asked to. */
export function lossMessage(where: string, loss: PoolLoss): string {
  const why =
    loss.code === 1000 || loss.code === 1001 || loss.code === 1005 || loss.code === 1006
      ? 'the pool closed it (pools end a browser when its time is up, e.g. browserless TIMEOUT, or when it crashes)'
      : 'the pool closed it';
  const detail = `WebSocket close ${loss.code}${loss.reason ? ` "${loss.reason}"` : ''}`;
  return `this session's browser from the pool at ${where} went away ${Math.round(loss.aliveMs / 1000)} s after it was given: ${why} (${detail}). Its tabs and element tokens are gone, and no action in flight was confirmed. The next call connects a fresh browser; open your page again`;
}
