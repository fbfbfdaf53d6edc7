// Tiny local HTTP server for the fixture pages (127.0.0.1, random port).
import { readFileSync } from 'node:fs';
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

/** The reference task's facts: what its instructions ask for, and what the page holds once it is done. */
export const TASK = {
  name: 'Grace Hopper',
  email: 'grace@example.com',
  shipping: 'Express',
  date: { month: 'March', day: 15, year: 2025, iso: '2025-03-15' },
};

/**
 * The reference task (issue #24 item 8): instructions to read on the page, a form (two text fields and a
 * list), a jQuery UI date picker that opens on the date field, a menu that opens on hover, and a confirm
 * dialog before the order is placed. The page's truth is window.__task().
 */
export const TASK_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>Delivery booking</title>' +
  '<link rel="stylesheet" href="/lib/jquery-ui.css">' +
  '<style>body{font:15px/1.4 sans-serif;margin:20px} h1{font-size:22px;margin:0 0 8px} form div{margin:6px 0} label{display:inline-block;width:8em}' +
  '.menu{position:relative;display:inline-block;margin-top:12px} .menu .items{display:none;position:absolute;left:0;top:100%;background:#fff;border:1px solid #888}' +
  '.menu:hover .items{display:block} .items button{display:block;width:9em;text-align:left}</style></head><body>' +
  '<h1>Delivery booking</h1>' +
  `<p>Book a delivery for ${TASK.name}. Email: ${TASK.email}. Shipping: ${TASK.shipping}. ` +
  `Delivery date: ${TASK.date.month} ${TASK.date.day}, ${TASK.date.year}. Then open the Actions menu, choose Place order and confirm it.</p>` +
  '<form onsubmit="return false">' +
  '<div><label for="name">Full name</label><input id="name"></div>' +
  '<div><label for="email">Email</label><input id="email" type="email"></div>' +
  '<div><label for="ship">Shipping</label><select id="ship"><option>Standard</option><option>Express</option><option>Overnight</option></select></div>' +
  '<div><label for="date">Delivery date</label><input id="date" autocomplete="off"></div>' +
  '</form>' +
  '<div class="menu"><button type="button" id="actions">Actions</button>' +
  '<div class="items"><button type="button" id="draft">Save draft</button><button type="button" id="place">Place order</button></div></div>' +
  '<p id="status" role="status"></p>' +
  '<script src="/lib/jquery.js"></script><script src="/lib/jquery-ui.js"></script><script>' +
  // No open/close animation: a picker still fading out when the next observation is read would make the
  // bytes depend on the machine's speed (both peers read the same page).
  "$('#date').datepicker({ defaultDate: new Date(2025, 2, 1), dateFormat: 'yy-mm-dd', showAnim: '' });" +
  'let placed = 0, drafts = 0;' +
  'const v = (id) => document.getElementById(id).value;' +
  "document.getElementById('draft').addEventListener('click', () => { drafts++; });" +
  "document.getElementById('place').addEventListener('click', () => {" +
  "  if (!confirm('Place the order for ' + v('name') + ' on ' + v('date') + '?')) return;" +
  "  placed++; document.getElementById('status').textContent = 'Order placed for ' + v('name') + ', delivery ' + v('date'); });" +
  "window.__task = () => ({ name: v('name'), email: v('email'), shipping: v('ship'), date: v('date'), placed, drafts," +
  " status: document.getElementById('status').textContent });" +
  '</script></body></html>';

/** The page libraries the task page loads, served from node_modules (jQuery and jQuery UI). */
const LIBRARIES: Record<string, { file: string; type: string }> = {
  '/lib/jquery.js': { file: 'jquery/dist/jquery.min.js', type: 'text/javascript' },
  '/lib/jquery-ui.js': { file: 'jquery-ui/dist/jquery-ui.min.js', type: 'text/javascript' },
  '/lib/jquery-ui.css': { file: 'jquery-ui/dist/themes/base/jquery-ui.min.css', type: 'text/css' },
};

export interface Fixtures {
  baseUrl: string;
  /** A fixture URL with a unique nonce query so each navigation (and its target) is identifiable. */
  url(path: '/input' | '/button' | '/many' | '/form' | '/task', tag?: string): string;
}

export async function startFixtures(procs: ProcessRegistry, manyCount = 1000): Promise<Fixtures> {
  const routes: Record<string, string> = {
    '/input': INPUT_PAGE,
    '/button': BUTTON_PAGE,
    '/many': manyPage(manyCount),
    '/form': formPage(),
    '/task': TASK_PAGE,
  };
  const libraries = new Map(
    Object.entries(LIBRARIES).map(([path, { file, type }]) => [
      path,
      { body: readFileSync(new URL(`../../node_modules/${file}`, import.meta.url)), type },
    ]),
  );
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const library = libraries.get(path);
    if (library) {
      res.writeHead(200, { 'content-type': library.type, 'cache-control': 'max-age=3600' });
      res.end(library.body);
      return;
    }
    const body = routes[path];
    if (body === undefined) {
      // jQuery UI's theme asks for icon images the task page does without.
      res.writeHead(path === '/favicon.ico' || path.startsWith('/lib/images/') ? 204 : 404, {
        'cache-control': 'no-store',
      });
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
