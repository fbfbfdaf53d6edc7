// The nut-js helper process: nut-js runs in a child process (worker.ts) because Xlib kills its process when
// the X server dies, and a missing binary or a crash must cost a refusal, not the server.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Refusal } from '../../contract/refusal.js';
import type { NutReply } from './worker.js';

/** How long one nut-js operation may take before its helper is taken for hung (and ended). */
const OP_TIMEOUT_MS = 20_000;
/** Requests waiting for the helper at most (actions on one target are queued before this; this bounds the rest). */
const MAX_PENDING = 64;

const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));

/** The nut-js helper process: started on first use, started again after it ended. */
export class NutProcess {
  private child: ChildProcess | null = null;
  constructor(private readonly worker = WORKER) {}

  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout; op: string }
  >();

  private start(): ChildProcess {
    const child = fork(this.worker, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json' });
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr = (stderr + String(d)).slice(-4000); // bounded: the last of what it said
    });
    child.on('message', (m: NutReply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.ok) p.resolve(m.value);
      else p.reject(failure(p.op, m.error));
    });
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      // A module that does not load (nut-js, its binary, or what the helper imports) is said as such.
      const why = /^.*(Cannot find (module|package)|dlopen).*$/m.exec(stderr)?.[0] ?? stderr.trim().split('\n').pop();
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        clearTimeout(p.timer);
        p.reject(
          loadFailure(why ?? '') ??
            new Refusal(
              'unavailable',
              `the nut-js helper process ended (${how}${why ? `: ${why}` : ''}) during ${p.op}; the display it used may be gone. Nothing more was sent; the next call starts it again`,
            ),
        );
      }
    });
    child.on('error', () => undefined); // reported through 'exit'
    // The helper never keeps the server alive by itself: a waiting request holds the loop with its timer.
    child.unref();
    child.channel?.unref();
    return child;
  }

  request<T>(op: string, args: Record<string, unknown> = {}, timeoutMs = OP_TIMEOUT_MS): Promise<T> {
    if (this.pending.size >= MAX_PENDING)
      return Promise.reject(
        new Refusal('target_busy', `${MAX_PENDING} nut-js operations are waiting already; retry`, { retryable: true }),
      );
    this.child ??= this.start();
    const child = this.child;
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Refusal('timeout', `nut-js did not finish ${op} within ${timeoutMs} ms; its helper was ended`));
        if (child.pid) process.kill(child.pid, 'SIGKILL');
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer, op });
      child.send({ id, op, args });
    });
  }

  close(): void {
    const pid = this.child?.pid;
    this.child = null;
    if (pid) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  }
}

/** nut-js (or its binary) not loading, as the refusal that says the backend is off here; null for other errors. */
function loadFailure(message: string): Refusal | null {
  if (!/Cannot find (module|package)|ERR_MODULE_NOT_FOUND|\.node\b|dlopen|libnut/i.test(message)) return null;
  return new Refusal(
    'unavailable',
    `the nutjs native backend is off: @nut-tree-fork/nut-js does not load on ${process.platform}-${process.arch} (${message}); the browser route works`,
  );
}

/** A helper's error as a refusal. */
function failure(op: string, message: string): Refusal {
  return loadFailure(message) ?? new Refusal('unavailable', `nut-js failed at ${op}: ${message}`);
}

/** Whether nut-js loads here and reaches the screen (`verity doctor`); its helper is ended after. */
export async function probeNutjs(timeoutMs: number): Promise<{ width: number; height: number }> {
  const nut = new NutProcess();
  try {
    return await nut.request<{ width: number; height: number }>('screen', {}, timeoutMs);
  } finally {
    nut.close();
  }
}
