// Element tokens. A token names one element of one snapshot; a newer snapshot of the same target makes
// every older token of that target stale, and a stale token never falls back to anything.
import type { Snapshot, SnapshotElement, SnapshotText } from '../contract/driver.js';
import type { HeldObservation } from '../contract/changes.js';
import { elementToken, elementTokenPrefix } from '../contract/element-token.js';
import { Refusal } from '../contract/refusal.js';

interface Stored {
  id: string;
  kind: 'tab' | 'window' | 'desktop';
  key: string;
  elements: SnapshotElement[];
  scale: number;
  /** The page's text as last observed (tabs): what an action's `changes` says appeared is compared with it. */
  text?: SnapshotText[];
  /** Elements that went away since the observation (an action's `changes.removed`); their indices stay theirs. */
  gone: Set<number>;
}

/** What a token names, as resolve() found it; a call resolves each of its tokens once and hands this on. */
export interface ResolvedToken {
  kind: Stored['kind'];
  key: string;
  snapshotId: string;
  index: number;
  element: SnapshotElement;
}

const TOKEN = /^(s(?:0|[1-9a-f][0-9a-f]{0,7})):(\d+)$/;
const KEEP = 64; // snapshots remembered, so an old token is told "stale" rather than "invalid"

export class SnapshotRegistry {
  private counter = 0;
  private readonly byId = new Map<string, Stored>();
  private readonly latest = new Map<string, string>();
  /** How many tokens were resolved (a debug stat: the hot-path test counts one per call). */
  resolvedCount = 0;

  nextId(): string {
    this.counter++;
    // Short (s1, s2, … s1f): every token and every element of an action's changes carries it, and a
    // padded one was seven bytes more each time, read by the model for nothing.
    return 's' + this.counter.toString(16);
  }

  record(id: string, kind: Stored['kind'], key: string, snapshot: Snapshot): void {
    // The target's previous snapshot is now stale: only its identity is kept (to say so), not its elements,
    // which on a large page or window are most of the memory a long session holds.
    const previous = this.byId.get(this.latest.get(`${kind}:${key}`) ?? '');
    if (previous) {
      previous.elements = [];
      previous.text = undefined;
    }
    this.byId.set(id, {
      id,
      kind,
      key,
      elements: snapshot.elements,
      scale: snapshot.scale,
      ...(snapshot.text ? { text: snapshot.text } : {}),
      gone: new Set(),
    });
    this.latest.set(`${kind}:${key}`, id);
    // Bounded both ways: the oldest snapshot goes, and with it its target's entry when it was that target's
    // latest (a window long closed), so neither map grows with every target ever seen.
    while (this.byId.size > KEEP) {
      const oldest = this.byId.get(this.byId.keys().next().value!)!;
      this.byId.delete(oldest.id);
      if (this.latest.get(`${oldest.kind}:${oldest.key}`) === oldest.id)
        this.latest.delete(`${oldest.kind}:${oldest.key}`);
    }
  }

  static token(snapshotId: string, index: number): string {
    return elementToken(snapshotId, index);
  }

  /** What every token of a snapshot starts with: the compact get_window_state lists indices only. */
  static tokenPrefix(snapshotId: string): string {
    return elementTokenPrefix(snapshotId);
  }

  /** The element a token names, or the contract's refusal (stale, invalid). */
  resolve(token: string): ResolvedToken {
    this.resolvedCount++;
    const match = TOKEN.exec(token);
    if (!match)
      throw new Refusal(
        'invalid_element_token',
        `element_token ${JSON.stringify(token.length > 40 ? `${token.slice(0, 40)}…` : token)} is not a token: a token is "<snapshot_id>:<element_index>" exactly as get_window_state lists it, e.g. "s1f:12"`,
        { expected_form: 's<hex digits>:<element_index>' },
      );
    const [, id, indexText] = match;
    const stored = this.byId.get(id);
    if (!stored) {
      throw new Refusal('stale_element_token', 'element_token is stale; call get_window_state again to refresh', {
        current_snapshot_ids: [...this.latest.values()],
      });
    }
    const current = this.latest.get(`${stored.kind}:${stored.key}`);
    if (current !== id) {
      throw new Refusal('stale_element_token', 'element_token is stale; call get_window_state again to refresh', {
        current_snapshot_ids: current ? [current] : [],
      });
    }
    const index = Number(indexText);
    const element = stored.elements[index];
    if (!element)
      throw new Refusal(
        'invalid_element_token',
        `element_token element_index ${index} out of range (snapshot had ${stored.elements.length} elements)`,
      );
    return { kind: stored.kind, key: stored.key, snapshotId: id, index, element };
  }

  /**
   * Whether a token resolved earlier in this call still names its target's latest snapshot (a newer
   * snapshot or a closed tab since makes it stale): a map lookup, not a second resolution.
   */
  isCurrent(found: ResolvedToken): boolean {
    return this.latest.get(`${found.kind}:${found.key}`) === found.snapshotId && this.byId.has(found.snapshotId);
  }

  /** The latest snapshot of a target (for the px form's scale), if any. */
  latestOf(kind: Stored['kind'], key: string): Stored | undefined {
    const id = this.latest.get(`${kind}:${key}`);
    return id ? this.byId.get(id) : undefined;
  }

  /**
   * The observation a target's next action is compared against (its latest snapshot, as earlier actions'
   * changes brought it up to date), or null when none is held (never observed, or its tab closed).
   */
  held(kind: Stored['kind'], key: string): HeldObservation | null {
    const stored = this.latestOf(kind, key);
    if (!stored) return null;
    return {
      snapshotId: stored.id,
      scale: stored.scale,
      elements: stored.elements,
      ...(stored.text ? { text: stored.text } : {}),
      gone: stored.gone,
    };
  }

  /**
   * A held observation brought up to date by an action's changes: elements that appeared are appended (their
   * tokens resolve from now on, the observation's other tokens stay good). Ignored when the snapshot is no
   * longer its target's latest (a get_window_state meanwhile is newer).
   */
  update(snapshotId: string, now: { elements: SnapshotElement[]; text?: SnapshotText[]; gone: Set<number> }): void {
    const stored = this.byId.get(snapshotId);
    if (!stored || this.latest.get(`${stored.kind}:${stored.key}`) !== snapshotId) return;
    stored.elements = now.elements;
    if (now.text) stored.text = now.text;
    stored.gone = now.gone;
  }

  /** How many targets and snapshots are held (both bounded by KEEP). */
  get size(): { targets: number; snapshots: number } {
    return { targets: this.latest.size, snapshots: this.byId.size };
  }

  /** Forgets a target's snapshots (its tab closed), so its tokens are refused as stale. */
  forget(kind: Stored['kind'], key: string): void {
    this.latest.delete(`${kind}:${key}`);
  }
}
