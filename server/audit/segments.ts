// The trail's files: append-only JSONL segments named by their first entry's id (audit-<12 digits>.jsonl),
// read back line by line at start (a torn last line, a crash mid-write, is skipped) and one line at a time
// by where the index says it lies. The index over them, the room and the retention are the store's (store.ts).
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditEntry } from '../gateway/protocol.js';

/** One segment file: its name, its first entry's id, its size, its newest entry's time and how many rows it holds. */
export interface Segment {
  file: string;
  firstId: number;
  bytes: number;
  lastAtMs: number;
  rows: number;
}

/** Where an entry's line lies: its segment, offset and length in bytes. */
export interface LinePlace {
  seg: Segment;
  offset: number;
  length: number;
}

/** A new, empty segment whose first entry will be `firstId`. */
export function newSegment(firstId: number): Segment {
  return { file: `audit-${String(firstId).padStart(12, '0')}.jsonl`, firstId, bytes: 0, lastAtMs: Date.now(), rows: 0 };
}

/**
 * Reads the segments in `dir`, oldest first, one line at a time (the files are never all in memory): each
 * whole entry goes to `onEntry` with where its line lies (its segment's rows and newest time are the
 * caller's to count). Returns the segments, and whether the last one ends in a torn line.
 */
export function readSegments(
  dir: string,
  onEntry: (entry: AuditEntry, place: LinePlace) => void,
): { segments: Segment[]; tornEnd: boolean } {
  const files = readdirSync(dir)
    .filter((f) => /^audit-\d{12}\.jsonl$/.test(f))
    .sort();
  const segments: Segment[] = [];
  let lastByte: number | undefined;
  for (const file of files) {
    const path = join(dir, file);
    const data = readFileSync(path);
    const seg: Segment = {
      file,
      firstId: Number(file.slice(6, 18)),
      bytes: data.length,
      lastAtMs: statSync(path).mtimeMs,
      rows: 0,
    };
    let offset = 0;
    while (offset < data.length) {
      let end = data.indexOf(10, offset);
      if (end < 0) end = data.length; // a torn last line (a crash mid-write) is skipped below
      const length = end + 1 - offset;
      try {
        const entry = JSON.parse(data.subarray(offset, end).toString('utf8')) as AuditEntry;
        if (typeof entry.id === 'number') onEntry(entry, { seg, offset, length });
      } catch {
        /* not a whole line */
      }
      offset = end + 1;
    }
    segments.push(seg);
    lastByte = data.at(-1);
  }
  const last = segments.at(-1);
  return { segments, tornEnd: !!last && last.bytes > 0 && lastByte !== 10 };
}

/** One entry's line as written, or null when its segment is gone. */
export function readLineAt(dir: string, place: LinePlace): string | null {
  const path = join(dir, place.seg.file);
  if (!existsSync(path)) return null;
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(place.length);
    readSync(fd, buf, 0, place.length, place.offset);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}
