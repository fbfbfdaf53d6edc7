// The soak's look inside the server's heap (issue #22: tell a leak from allocator/V8 retention). The server
// runs with the inspector on a loopback port of its own (--inspect=127.0.0.1:0); over it the soak forces
// full garbage collections (HeapProfiler.collectGarbage) and reads process.memoryUsage() after them. A leak
// is what stays reachable: heap used after a forced GC. RSS above that is memory V8 and the allocator keep
// for reuse, which a forced GC largely gives back.
import { createWriteStream } from 'node:fs';
import WebSocket from 'ws';

export interface HeapFigures {
  /** Bytes, as process.memoryUsage() says them after two forced full GCs. */
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** The inspector's WebSocket URL from the server's stderr ("Debugger listening on ws://..."), or null. */
export function inspectorUrl(stderr: string): string | null {
  return /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(stderr)?.[1] ?? null;
}

const PROBE_BOUND_MS = 120_000;

type Call = (method: string, params?: Record<string, unknown>) => Promise<any>;

/** Runs `use` over one inspector session of the server, within a bound. */
async function overInspector<T>(url: string, use: (call: Call, ws: WebSocket) => Promise<T>): Promise<T> {
  const ws = new WebSocket(url);
  const replies = new Map<number, (m: { result?: any; error?: { message: string } }) => void>();
  let next = 0;
  ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.id === undefined) return;
    replies.get(m.id)?.(m);
    replies.delete(m.id);
  });
  const call: Call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      replies.set(id, (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)));
      ws.send(JSON.stringify({ id, method, params }));
    });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the server's inspector did not answer in ${PROBE_BOUND_MS} ms`)),
      PROBE_BOUND_MS,
    );
  });
  try {
    return await Promise.race([
      timeout,
      (async () => {
        await new Promise<void>((resolve, reject) => {
          ws.once('open', () => resolve());
          ws.once('error', reject);
        });
        return use(call, ws);
      })(),
    ]);
  } finally {
    clearTimeout(timer);
    ws.terminate();
  }
}

/** Forces full GCs in the server and reads its memory after them. */
export function heapAfterGc(url: string): Promise<HeapFigures> {
  return overInspector(url, async (call) => {
    // Two passes: the first can leave objects only a finalizer or a weak callback frees.
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const { result } = await call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    });
    return JSON.parse(result.value) as HeapFigures;
  });
}

/**
 * Writes a heap snapshot of the server (for Chrome DevTools' Memory tab) to `file`. For looking into a
 * growth only: making one costs the server a lot of native memory, which its RSS keeps afterwards.
 */
export function writeHeapSnapshot(url: string, file: string): Promise<void> {
  return overInspector(url, async (call, ws) => {
    const out = createWriteStream(file);
    ws.on('message', (d) => {
      const m = JSON.parse(String(d));
      if (m.method === 'HeapProfiler.addHeapSnapshotChunk') out.write(m.params.chunk);
    });
    await call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    await new Promise((resolve) => out.end(resolve));
  });
}
