// What operators watch: every action as it happens (tool, effect, evidence) and the sessions that exist.
// The gateway subscribes; nothing here knows about WebSockets.
import { EventEmitter } from 'node:events';

/** One action as operators see it: declared once, zod first, in contract/wire.ts. */
export type { ActionEntry } from './contract/wire.js';
import type { ActionEntry } from './contract/wire.js';
import { summarizeArgs } from './contract/call-summary.js';

/** How many recent actions are kept for operators who open the Control UI later. */
const KEPT = 500;
/**
 * Characters of thumbnails the kept actions hold in all; past it the oldest lose theirs (their entries
 * stay). 500 JPEGs of a busy page were ~6 MB held for as long as nothing newer came (the soak's heap growth).
 */
export const THUMBNAIL_CHARS_KEPT = 1_500_000;

/** What the activity tells its listeners: an action, a thumbnail added to one, a session list that changed. */
interface ActivityEvents {
  action: [entry: ActionEntry];
  thumbnail: [entry: ActionEntry];
  sessions: [];
}

export class Activity extends EventEmitter<ActivityEvents> {
  private readonly recent: ActionEntry[] = [];
  /** The entries holding a thumbnail, oldest first, and the characters those thumbnails take. */
  private readonly withThumbnail: ActionEntry[] = [];
  private thumbnailChars = 0;
  private nextId = 1;

  record(entry: Omit<ActionEntry, 'id' | 'at'>): ActionEntry {
    // Built field by field: a spread takes V8's slow path, and this runs on every action.
    const full: ActionEntry = {
      id: this.nextId++,
      at: new Date().toISOString(),
      sessionKey: entry.sessionKey,
      tool: entry.tool,
      summary: entry.summary,
      effect: entry.effect,
      refusal: entry.refusal,
      evidence: entry.evidence,
      isError: entry.isError,
    };
    if (entry.labels) full.labels = entry.labels;
    if (entry.approval) full.approval = entry.approval;
    if (entry.auditId !== undefined) full.auditId = entry.auditId;
    if (entry.check) full.check = entry.check;
    this.recent.push(full);
    // Trimmed in steps of 100: shifting a 500-entry array on every action would move all of it each time.
    if (this.recent.length > KEPT + 100)
      for (const gone of this.recent.splice(0, this.recent.length - KEPT)) this.dropThumbnail(gone);
    this.emit('action', full);
    return full;
  }

  /** Adds a thumbnail to an entry after the fact (it is taken after the reply went out). */
  attachThumbnail(entry: ActionEntry, thumbnail: string): void {
    this.dropThumbnail(entry);
    entry.thumbnail = thumbnail;
    this.withThumbnail.push(entry);
    this.thumbnailChars += thumbnail.length;
    while (this.thumbnailChars > THUMBNAIL_CHARS_KEPT && this.withThumbnail.length > 1)
      this.dropThumbnail(this.withThumbnail[0]);
    this.emit('thumbnail', entry);
  }

  /** Characters of thumbnails held now (bounded by THUMBNAIL_CHARS_KEPT, or one larger thumbnail). */
  get thumbnailsHeld(): number {
    return this.thumbnailChars;
  }

  private dropThumbnail(entry: ActionEntry): void {
    if (entry.thumbnail === undefined) return;
    const at = this.withThumbnail.indexOf(entry);
    if (at >= 0) this.withThumbnail.splice(at, 1);
    this.thumbnailChars -= entry.thumbnail.length;
    delete entry.thumbnail;
  }

  list(sessionKey?: string): ActionEntry[] {
    return this.recent.filter((e) => !sessionKey || e.sessionKey === sessionKey).slice(-200);
  }

  get watched(): boolean {
    return this.listenerCount('action') > 0;
  }
}

/** A call's arguments as one line (contract/call-summary.ts): each tool's lead, then `key=value` per argument. */
export { summarizeArgs };

/** A call's arguments as one log line, each known token shown as its label (`element_token=button "Submit claim"`). */
export function labelledSummary(
  args: Record<string, unknown>,
  labels: Record<string, string> | undefined,
  tool?: string,
): string {
  let line = summarizeArgs(args, 60, tool);
  for (const [token, label] of Object.entries(labels ?? {})) line = line.split(token).join(label);
  return line;
}
