// A bare CDP client over one WebSocket (the `ws` package): the protocol floor, and the bench's own read-backs.
import WebSocket from 'ws';

export interface TargetInfo {
  id: string;
  type: string;
  url: string;
  title: string;
  webSocketDebuggerUrl?: string;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  method: string;
}

export class CdpConnection {
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private closed = false;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: { message: string } };
      if (msg.id === undefined) return; // events: the floor enables no domains, so these are rare
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`));
      else p.resolve(msg.result);
    });
    ws.on('close', () => {
      this.closed = true;
      for (const p of this.pending.values()) p.reject(new Error(`${p.method}: CDP connection closed`));
      this.pending.clear();
    });
  }

  static connect(wsUrl: string, timeoutMs = 10_000): Promise<CdpConnection> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(wsUrl, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error(`CDP connect timeout: ${wsUrl}`));
      }, timeoutMs);
      ws.once('open', () => {
        clearTimeout(timer);
        resolve(new CdpConnection(ws));
      });
      ws.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`${method}: CDP connection closed`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, method });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Runtime.evaluate with awaitPromise + returnByValue; throws on a page exception. */
  async evaluate<T = unknown>(expression: string): Promise<T> {
    const r = await this.send<{
      result: { value?: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    }>('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) {
      throw new Error(`page exception: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    }
    return r.result.value as T;
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
      setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, 1000).unref();
    });
  }
}

/** An expression's value read after the next animation frame (the page has rendered the change). */
export function afterFrame(expr: string): string {
  return `new Promise((r) => requestAnimationFrame(() => r(${expr})))`;
}

export async function listTargets(browserUrl: string): Promise<TargetInfo[]> {
  const res = await fetch(`${browserUrl}/json/list`);
  if (!res.ok) throw new Error(`/json/list: HTTP ${res.status}`);
  return (await res.json()) as TargetInfo[];
}

export async function newPageTarget(browserUrl: string, url: string): Promise<TargetInfo> {
  const res = await fetch(`${browserUrl}/json/new?${encodeURI(url)}`, { method: 'PUT' });
  if (!res.ok) throw new Error(`/json/new: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as TargetInfo;
}

export async function closeTarget(browserUrl: string, id: string): Promise<void> {
  await fetch(`${browserUrl}/json/close/${id}`).catch(() => undefined);
}

/** Waits until some page target shows exactly `url` (the nonce makes it unique). */
export async function findTargetByUrl(browserUrl: string, url: string, timeoutMs = 10_000): Promise<TargetInfo> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const t = (await listTargets(browserUrl)).find((x) => x.type === 'page' && x.url === url);
    if (t?.webSocketDebuggerUrl) return t;
    if (Date.now() > deadline) throw new Error(`no page target at ${url}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Polls until the connected page is at `url` and fully loaded (no domains enabled). */
export async function waitLoaded(cdp: CdpConnection, url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await cdp
      .evaluate<boolean>(`location.href === ${JSON.stringify(url)} && document.readyState === 'complete'`)
      .catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`page did not finish loading ${url}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Independent read-back used to check the tools' claims: opens a fresh connection to the tab
 * currently showing `url`, evaluates, closes. Untimed.
 */
export async function readBack<T>(browserUrl: string, url: string, expression: string): Promise<T> {
  const target = await findTargetByUrl(browserUrl, url);
  const cdp = await CdpConnection.connect(target.webSocketDebuggerUrl!);
  try {
    return await cdp.evaluate<T>(afterFrame(expression));
  } finally {
    await cdp.close();
  }
}
