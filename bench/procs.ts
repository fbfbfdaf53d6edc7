// Everything the bench starts is registered here and torn down by PID (never by name).
import { rmSync } from 'node:fs';

interface Tracked {
  pid: number;
  name: string;
  /** Spawned detached as its own process group: signal the group (-pid) so helpers die too. */
  group: boolean;
}

type Closer = { name: string; close: () => Promise<void> | void };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(t: Tracked, sig: NodeJS.Signals): void {
  try {
    process.kill(t.group ? -t.pid : t.pid, sig);
  } catch {
    /* already gone */
  }
}

export class ProcessRegistry {
  private procs: Tracked[] = [];
  private dirs: string[] = [];
  private closers: Closer[] = [];

  addProcess(pid: number, name: string, group = false): void {
    this.procs.push({ pid, name, group });
  }

  /** The processes tracked now (e.g. to measure the memory of the bench's Chromium). */
  pids(): Array<{ pid: number; name: string }> {
    return this.procs.map((p) => ({ pid: p.pid, name: p.name }));
  }

  forgetProcess(pid: number): void {
    this.procs = this.procs.filter((p) => p.pid !== pid);
  }

  addDir(dir: string): void {
    this.dirs.push(dir);
  }

  /** Async teardown (HTTP servers, MCP clients) run first, newest first. */
  addCloser(name: string, close: () => Promise<void> | void): void {
    this.closers.push({ name, close });
  }

  /** Graceful: closers, then SIGTERM, up to 3 s grace, then SIGKILL; then temp dirs. */
  async cleanup(): Promise<void> {
    for (const c of this.closers.splice(0).reverse()) {
      try {
        await Promise.race([c.close(), new Promise((r) => setTimeout(r, 5000).unref())]);
      } catch {
        /* best effort */
      }
    }
    const procs = this.procs.splice(0).reverse();
    for (const p of procs) signal(p, 'SIGTERM');
    const deadline = Date.now() + 3000;
    while (procs.some((p) => alive(p.pid)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const p of procs) if (alive(p.pid)) signal(p, 'SIGKILL');
    this.removeDirs();
  }

  /** Synchronous last resort (signal handlers, process 'exit'): SIGKILL everything still tracked. */
  killNow(): void {
    for (const p of this.procs.splice(0).reverse()) signal(p, 'SIGKILL');
    this.removeDirs();
  }

  private removeDirs(): void {
    for (const d of this.dirs.splice(0)) {
      try {
        rmSync(d, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        /* best effort */
      }
    }
  }
}
