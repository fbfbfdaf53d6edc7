// The shared audit store's spool (postgres-trail.ts): where entries wait, one JSON line each and in order,
// while the database is down, and what a run left unsent for the next start to send first. It holds exactly
// the writer's queue (rewritten through a temporary file, so a crash leaves the old or the new).
import { appendFileSync, existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import type { AuditEntry } from './store.js';

/** An entry waiting for the database, with its stored line. */
export interface Pending {
  entry: AuditEntry;
  /** Its stored line (store.ts storedLine: bounded), without the newline. */
  line: string;
}

export class Spool {
  /** Whether the spool file holds the queue (it is written while the database is down, and at close). */
  held = false;

  constructor(
    readonly file: string,
    private readonly say: (line: string) => void,
  ) {}

  /** A spool's lines as entries, in order; a torn last line (a crash mid-write) is skipped and said. */
  read(): Pending[] {
    const file = this.file;
    const say = this.say;
    if (!existsSync(file)) return [];
    const out: Pending[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        out.push({ entry: JSON.parse(line) as AuditEntry, line });
      } catch {
        say(`the audit spool ${file} has a line that is not JSON (a write cut short): skipped`);
      }
    }
    if (out.length) say(`the audit spool ${file} holds ${out.length} entries from before: sending them first`);
    return out;
  }

  /** The spool holds exactly `queue` (rewritten through a temporary file, so a crash leaves the old or the new). */
  write(queue: Pending[]): void {
    const file = this.file;
    try {
      if (!queue.length) {
        if (existsSync(file)) unlinkSync(file);
        this.held = false;
        return;
      }
      writeFileSync(`${file}.tmp`, queue.map((p) => `${p.line}\n`).join(''), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
      this.held = true;
    } catch (e) {
      this.say(`the audit spool ${file} could not be written: ${(e as Error).message}`);
    }
  }

  /** Adds entries at the end of the spool (while the database is down, each before its call's result says so). */
  append(pending: Pending[]): void {
    try {
      appendFileSync(this.file, pending.map((p) => `${p.line}\n`).join(''), { mode: 0o600 });
    } catch (e) {
      this.say(`the audit spool ${this.file} could not be written: ${(e as Error).message}`);
    }
  }
}
