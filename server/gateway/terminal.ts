// The terminal panel's shell: a real PTY on the host, owned by the Control UI connection that opened it.
// Its environment binds any agent started in it to that Control UI (VERITY_MCP_URL + VERITY_LINK).
import { createRequire } from 'node:module';
import type { IPty } from 'node-pty';

const require = createRequire(import.meta.url);

export interface Terminal { id: string; pty: IPty }

let counter = 0;

export function openTerminal(options: { cols: number; rows: number; env: Record<string, string>; onData: (data: string) => void; onExit: (code: number) => void }): Terminal {
  const pty = require('node-pty') as typeof import('node-pty');
  const shell = process.env.SHELL && process.env.SHELL.length > 0 ? process.env.SHELL : '/bin/bash';
  const term = pty.spawn(shell, ['-i'], {
    name: 'xterm-256color', cols: options.cols, rows: options.rows, cwd: process.env.HOME ?? '/',
    env: { ...process.env as Record<string, string>, ...options.env, TERM: 'xterm-256color' },
  });
  term.onData(options.onData);
  term.onExit(({ exitCode }) => options.onExit(exitCode));
  return { id: `term-${++counter}`, pty: term };
}
