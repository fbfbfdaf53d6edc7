// The terminal panel's shell: a real PTY on the host, owned by the Control UI connection that opened it.
// Its environment binds any agent started in it to that Control UI (VERITY_MCP_URL + VERITY_LINK).
// The PTY is @lydell/node-pty: node-pty with prebuilt binaries per platform (optional dependencies), so an
// install needs no compiler and no download of Node headers. A platform without a prebuild loses only the
// terminal panel, with a message saying why.
import { createRequire } from 'node:module';
import type { IPty } from '@lydell/node-pty';
import { GatewayError, type EventPayload } from './protocol.js';

const require = createRequire(import.meta.url);

export interface Terminal {
  id: string;
  pty: IPty;
}

let counter = 0;

/** node-pty, loaded on the first terminal (not at start-up: most runs never open one). */
function loadPty(): typeof import('@lydell/node-pty') {
  try {
    return require('@lydell/node-pty') as typeof import('@lydell/node-pty');
  } catch (e) {
    throw new GatewayError(
      'UNAVAILABLE',
      `the terminal panel is off: its PTY (@lydell/node-pty) does not load on ${process.platform}-${process.arch} (${(e as Error).message.split('\n')[0]}); everything else works`,
    );
  }
}

/**
 * A shell of the user's ($SHELL, else bash) in their home, with `base` (the environment the gateway was
 * started with, handed down by the CLI) and the link's variables in `env`.
 */
export function openTerminal(options: {
  cols: number;
  rows: number;
  env: Record<string, string>;
  base: Readonly<Record<string, string | undefined>>;
}): Terminal {
  const pty = loadPty();
  const { base } = options;
  const shell = base.SHELL && base.SHELL.length > 0 ? base.SHELL : '/bin/bash';
  const term = pty.spawn(shell, ['-i'], {
    name: 'xterm-256color',
    cols: options.cols,
    rows: options.rows,
    cwd: base.HOME ?? '/',
    env: { ...(base as Record<string, string>), ...options.env, TERM: 'xterm-256color' },
  });
  return { id: `term-${++counter}`, pty: term };
}

/** The tail of a shell's output kept for a panel that attaches again (a reload, a hidden panel shown). */
export const TERMINAL_TAIL_CHARS = 64 * 1024;

interface Entry {
  term: Terminal;
  owner: string | null;
  link: string;
  tail: string;
  killTimer: NodeJS.Timeout | null;
}

/**
 * The gateway's shells. A shell is attached to one Control UI connection (its output goes there) or
 * detached (its panel is hidden, or its page reloads): detached, it keeps running for
 * VERITY_TERMINAL_DETACH_MS and keeps the tail of its output; then it is killed. Any operator.admin
 * connection may attach it again by id (the id is only ever given to the operator's Control UI).
 */
export class Terminals {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly send: <E extends 'terminal.data' | 'terminal.exit'>(
      connId: string,
      event: E,
      payload: EventPayload<E>,
    ) => void,
    private readonly detachMs: () => number,
    /** The environment each shell starts from (the gateway's, as the CLI handed it down). */
    readonly baseEnv: () => Readonly<Record<string, string | undefined>> = () => ({}),
  ) {}

  get size(): number {
    return this.entries.size;
  }

  add(term: Terminal, owner: string, link: string): void {
    const entry: Entry = { term, owner, link, tail: '', killTimer: null };
    this.entries.set(term.id, entry);
    term.pty.onData((data) => {
      entry.tail = (entry.tail + data).slice(-TERMINAL_TAIL_CHARS);
      if (entry.owner) this.send(entry.owner, 'terminal.data', { terminalId: term.id, data });
    });
    term.pty.onExit(({ exitCode }) => {
      if (entry.owner) this.send(entry.owner, 'terminal.exit', { terminalId: term.id, code: exitCode });
      this.drop(term.id);
    });
  }

  /** The shell, if this connection holds it (input, resize, close). */
  owned(id: string, connId: string): Terminal {
    const entry = this.entries.get(id);
    if (!entry || entry.owner !== connId)
      throw new GatewayError(
        'NOT_FOUND',
        `no terminal ${id} on this connection; terminal.attach takes back a detached one`,
      );
    return entry.term;
  }

  detach(id: string, connId: string): void {
    const entry = this.entries.get(id);
    if (!entry || entry.owner !== connId) throw new GatewayError('NOT_FOUND', `no terminal ${id} on this connection`);
    this.orphan(entry);
  }

  /** Every shell of a connection that went away is detached (not killed): the page may come back. */
  detachAll(connId: string): void {
    for (const entry of this.entries.values()) if (entry.owner === connId) this.orphan(entry);
  }

  /** Takes a detached shell (or one this connection already holds): the kill timer stops, the tail comes back. */
  attach(id: string, connId: string): { term: Terminal; tail: string; link: string } {
    const entry = this.entries.get(id);
    if (!entry)
      throw new GatewayError(
        'NOT_FOUND',
        `no terminal ${id}: it exited, or stayed detached longer than VERITY_TERMINAL_DETACH_MS and was killed`,
      );
    if (entry.owner !== null && entry.owner !== connId)
      throw new GatewayError('FORBIDDEN', `terminal ${id} is open in another Control UI`);
    if (entry.killTimer) clearTimeout(entry.killTimer);
    entry.killTimer = null;
    entry.owner = connId;
    return { term: entry.term, tail: entry.tail, link: entry.link };
  }

  kill(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    try {
      entry.term.pty.kill();
    } catch {
      /* exited */
    }
    this.drop(id);
  }

  killAll(): void {
    for (const id of [...this.entries.keys()]) this.kill(id);
  }

  private orphan(entry: Entry): void {
    entry.owner = null;
    if (entry.killTimer) clearTimeout(entry.killTimer);
    entry.killTimer = setTimeout(() => this.kill(entry.term.id), this.detachMs());
    entry.killTimer.unref();
  }

  private drop(id: string): void {
    const entry = this.entries.get(id);
    if (entry?.killTimer) clearTimeout(entry.killTimer);
    this.entries.delete(id);
  }
}
