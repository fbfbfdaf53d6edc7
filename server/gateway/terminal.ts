// The terminal panel's shell: a real PTY on the host, owned by the Control UI connection that opened it.
// Its environment binds any agent started in it to that Control UI (VERITY_MCP_URL + VERITY_LINK).
// The PTY is @lydell/node-pty: node-pty with prebuilt binaries per platform (optional dependencies), so an
// install needs no compiler and no download of Node headers. A platform without a prebuild loses only the
// terminal panel, with a message saying why.
import { createRequire } from 'node:module';
import type { IPty } from '@lydell/node-pty';
import { GatewayError } from './protocol.js';

const require = createRequire(import.meta.url);

export interface Terminal { id: string; pty: IPty }

let counter = 0;

/** node-pty, loaded on the first terminal (not at start-up: most runs never open one). */
function loadPty(): typeof import('@lydell/node-pty') {
  try {
    return require('@lydell/node-pty') as typeof import('@lydell/node-pty');
  } catch (e) {
    throw new GatewayError('UNAVAILABLE', `the terminal panel is off: its PTY (@lydell/node-pty) does not load on ${process.platform}-${process.arch} (${(e as Error).message.split('\n')[0]}); everything else works`);
  }
}

export function openTerminal(options: { cols: number; rows: number; env: Record<string, string>; onData: (data: string) => void; onExit: (code: number) => void }): Terminal {
  const pty = loadPty();
  const shell = process.env.SHELL && process.env.SHELL.length > 0 ? process.env.SHELL : '/bin/bash';
  const term = pty.spawn(shell, ['-i'], {
    name: 'xterm-256color', cols: options.cols, rows: options.rows, cwd: process.env.HOME ?? '/',
    env: { ...process.env as Record<string, string>, ...options.env, TERM: 'xterm-256color' },
  });
  term.onData(options.onData);
  term.onExit(({ exitCode }) => options.onExit(exitCode));
  return { id: `term-${++counter}`, pty: term };
}
