// Tiny local HTTP server for the fixture pages (127.0.0.1, random port).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProcessRegistry } from './procs.js';

const page = (title: string, body: string, script = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}` +
  (script ? `<script>${script}</script>` : '') +
  `</body></html>`;

export const INPUT_PAGE = page('Input', '<label for="f">Field</label> <input id="f" type="text">');

export const BUTTON_PAGE = page(
  'Button',
  '<button id="b">Press me</button> <span id="count">0</span>',
  `document.getElementById('b').addEventListener('click', () => {
     const c = document.getElementById('count'); c.textContent = String(Number(c.textContent) + 1); });`,
);

/** N interactive elements: a quarter each of buttons, links, labelled text inputs, labelled checkboxes. */
export function manyPage(n: number): string {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    switch (i % 4) {
      case 0:
        parts.push(`<button id="e${i}">Button ${i}</button>`);
        break;
      case 1:
        parts.push(`<a id="e${i}" href="#item-${i}">Link ${i}</a>`);
        break;
      case 2:
        parts.push(`<label for="e${i}">Text ${i}</label><input id="e${i}" type="text">`);
        break;
      default:
        parts.push(`<input id="e${i}" type="checkbox"><label for="e${i}">Check ${i}</label>`);
        break;
    }
  }
  const rows: string[] = [];
  for (let i = 0; i < parts.length; i += 4) rows.push(`<div>${parts.slice(i, i + 4).join(' ')}</div>`);
  return page(`Many (${n})`, `<main>${rows.join('\n')}</main>`);
}

export const FORM_FIELDS = 20;

/** A form of FORM_FIELDS labelled text inputs (#q1..#q20, labels "Question 1".."Question 20"). */
export function formPage(n = FORM_FIELDS): string {
  const rows = Array.from(
    { length: n },
    (_, i) => `<div><label for="q${i + 1}">Question ${i + 1}</label> <input id="q${i + 1}" type="text"></div>`,
  );
  return page('Form', `<form onsubmit="return false">${rows.join('\n')}</form>`);
}

export interface Fixtures {
  baseUrl: string;
  /** A fixture URL with a unique nonce query so each navigation (and its target) is identifiable. */
  url(path: '/input' | '/button' | '/many' | '/form', tag?: string): string;
}

export async function startFixtures(procs: ProcessRegistry, manyCount = 1000): Promise<Fixtures> {
  const routes: Record<string, string> = {
    '/input': INPUT_PAGE,
    '/button': BUTTON_PAGE,
    '/many': manyPage(manyCount),
    '/form': formPage(),
  };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const body = routes[path];
    if (body === undefined) {
      res.writeHead(path === '/favicon.ico' ? 204 : 404, { 'cache-control': 'no-store' });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  procs.addCloser(
    'fixture server',
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let seq = 0;
  return {
    baseUrl,
    url: (path, tag = 'x') => `${baseUrl}${path}?t=${encodeURIComponent(tag)}-${++seq}`,
  };
}
