// The Control UI's files (control-ui/dist), served at every path no other route has: a path that names no
// file gets index.html (the UI's client-side routes), never a file outside the folder. Assets are
// content-hashed (cached for good); pages carry the CSP below and are never framed.
import type { ServerResponse } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { answerText, BASE_HEADERS } from './http-routes.js';

const UI_DIR = fileURLToPath(new URL('../../../control-ui/dist/', import.meta.url));
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
};

/**
 * The Control UI loads only its own scripts, styles and sockets; images are its own, data: (thumbnails,
 * screencast frames, the icon) and blob:; inline styles are needed by Lit/xterm's runtime style elements.
 * It is never framed (clickjacking the Approve button).
 */
export const CONTROL_UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function serveStatic(pathname: string, res: ServerResponse): void {
  const safe = normalize(pathname).replace(/^(\.\.[/\\])+/, '');
  let file = join(UI_DIR, safe === '/' ? 'index.html' : safe);
  if (!file.startsWith(UI_DIR) || !existsSync(file) || statSync(file).isDirectory()) file = join(UI_DIR, 'index.html');
  if (!existsSync(file))
    return answerText(res, 503, 'the Control UI is not built; run `npm start` (or `npx vite build control-ui`)');
  const immutable = file.includes(`${join(UI_DIR, 'assets')}`);
  res.writeHead(200, {
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'cache-control': immutable ? 'max-age=31536000, immutable' : 'no-cache',
    'content-security-policy': CONTROL_UI_CSP,
    'x-frame-options': 'DENY',
    ...BASE_HEADERS,
  });
  res.end(readFileSync(file));
}
