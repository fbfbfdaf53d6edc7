// What a failed start prints: one line that names what failed and how to fix it.
import { readGatewayFile } from '../token.js';

/**
 * The one line a failed start prints: what failed and how to fix it, for the failures an operator can
 * meet (a used port, an address this machine does not have, an unreadable file); anything else by its
 * message. The stack trace only with --verbose.
 */
export function startFailure(e: unknown, port?: number): string {
  const err = e as NodeJS.ErrnoException & { address?: string; port?: number };
  const bound = err.port ?? port;
  const where = `${err.address ?? 'its address'}${bound ? `:${bound}` : ''}`;
  if (err.code === 'EADDRINUSE') {
    const running = readGatewayFile();
    const ours = running && new URL(running.mcp_url).port === String(bound) && alive(running.pid);
    return `port ${bound} is in use on ${err.address ?? 'this machine'}${ours ? ` by a running verity start (pid ${running.pid})` : ''}: stop what holds it, or choose another port with --port N (--port 0 picks a free one)`;
  }
  if (err.code === 'EADDRNOTAVAIL')
    return `cannot listen on ${where}: ${err.address} is not an address of this machine; choose one it has with --host (default 127.0.0.1)`;
  if (err.code === 'EACCES' && err.syscall === 'listen')
    return `cannot listen on ${where}: binding port ${bound} needs privileges; choose a port above 1023 with --port`;
  if (err.code && err.path)
    return `cannot ${err.syscall ?? 'use'} ${err.path} (${err.code}); check that it exists and is readable and writable by this user (the config dir: --config-dir or VERITY_CONFIG_DIR)`;
  return (err?.message ?? String(e)).split('\n')[0];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
