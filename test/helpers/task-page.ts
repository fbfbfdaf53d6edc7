// The fixed task of the pool tests and the concurrency bench: a page with five labelled fields and a Submit
// button. A click on Submit makes the page itself POST what its fields hold to /report?run=ID on this server,
// so the test reads the truth from the page through a channel that is not Verity's (a pool's browser runs
// elsewhere: no second CDP connection to it).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export const TASK_FIELDS = ['Name', 'Email', 'City', 'Company', 'Note'] as const;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Task</title></head><body>
<form onsubmit="return false">
${TASK_FIELDS.map((f, i) => `<div><label for="f${i}">${f}</label> <input id="f${i}" type="text"></div>`).join('\n')}
<button id="submit" type="button">Submit</button> <span id="status">not sent</span>
</form>
<script>
const run = new URLSearchParams(location.search).get('run') || '';
// Each run leaves a cookie: a report lists every run this browser (or context) has seen on this origin.
document.cookie = 'seen_' + encodeURIComponent(run) + '=1; path=/';
let clicks = 0;
document.getElementById('submit').addEventListener('click', () => {
  clicks++;
  const fields = ${JSON.stringify(TASK_FIELDS)}.map((_, i) => document.getElementById('f' + i).value);
  fetch('/report?run=' + encodeURIComponent(run), { method: 'POST', body: JSON.stringify({ fields, clicks, cookie: document.cookie }) })
    .then(() => { document.getElementById('status').textContent = 'sent ' + clicks; });
});
</script></body></html>`;

export interface Report {
  fields: string[];
  clicks: number;
  cookie: string;
}

export interface TaskServer {
  port: number;
  /** The task page for one run (its reports are kept under that id). */
  url(run: string): string;
  /** The last report of a run, once its page sent one. */
  report(run: string): Report | undefined;
  close(): Promise<void>;
}

/** Reports kept at most (oldest dropped): the bench runs thousands of tasks. */
const MAX_REPORTS = 10_000;

export async function startTaskServer(): Promise<TaskServer> {
  const reports = new Map<string, Report>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/report' && req.method === 'POST') {
      let body = '';
      req.on('data', (c) => {
        if (body.length < 100_000) body += c;
      });
      req.on('end', () => {
        try {
          reports.set(url.searchParams.get('run') ?? '', JSON.parse(body));
        } catch {
          /* not a report */
        }
        if (reports.size > MAX_REPORTS) reports.delete(reports.keys().next().value!);
        res.writeHead(204).end();
      });
      return;
    }
    if (url.pathname === '/task') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      return;
    }
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: (run) => `http://127.0.0.1:${port}/task?run=${encodeURIComponent(run)}`,
    report: (run) => reports.get(run),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
