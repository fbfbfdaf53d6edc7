// Serves test/fixtures over HTTP on two loopback origins (127.0.0.1 and 127.0.0.2 on one port), so a
// page can embed a truly cross-origin iframe. `/respond?status=N&delay=MS` answers any method with that
// status after that delay (a form whose POST fails, a slow request); `/hang` never answers (until the server
// closes): a page that asks it synchronously is frozen without spending a core, as a busy loop would.
// `/attachment?name=F&kb=N` answers with a file to save (Content-Disposition: attachment), N KiB of one letter.
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = join(ROOT, 'test', 'fixtures');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.woff2': 'font/woff2',
  '.png': 'image/png',
};

export interface FixtureServer {
  url(path: string): string;
  crossUrl(path: string): string;
  port: number;
  close(): Promise<void>;
}

export async function serveFixtures(): Promise<FixtureServer> {
  const handler = async (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const asked = new URL(req.url ?? '/', 'http://x');
    if (asked.pathname === '/hang') {
      req.resume();
      return;
    }
    if (asked.pathname === '/respond') {
      req.resume(); // a POST's body is read and dropped
      const status = Number(asked.searchParams.get('status') ?? 200);
      const delay = Math.min(Number(asked.searchParams.get('delay') ?? 0), 10_000);
      setTimeout(() => {
        res
          .writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'access-control-allow-origin': '*' })
          .end(`<!doctype html><title>Answer ${status}</title><p>${req.method} answered ${status}</p>`);
      }, delay);
      return;
    }
    if (asked.pathname === '/attachment') {
      const name = (asked.searchParams.get('name') ?? 'file.bin').replace(/[^\w.-]/g, '_');
      const kib = Math.min(Number(asked.searchParams.get('kb') ?? 1), 4096);
      res
        .writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-disposition': `attachment; filename="${name}"`,
        })
        .end('n'.repeat(kib * 1024));
      return;
    }
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    try {
      const body = await readFile(join(FIXTURES, path));
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  };
  const first = createServer(handler);
  await new Promise<void>((r) => first.listen(0, '127.0.0.1', r));
  const port = (first.address() as { port: number }).port;
  const second: Server = createServer(handler);
  await new Promise<void>((r, reject) => {
    second.once('error', reject);
    second.listen(port, '127.0.0.2', r);
  });
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}/${path}`,
    crossUrl: (path) => `http://127.0.0.2:${port}/${path}`,
    close: async () => {
      await Promise.all(
        [first, second].map(
          (s) =>
            new Promise((r) => {
              s.closeAllConnections();
              s.close(r);
            }),
        ),
      );
    },
  };
}
