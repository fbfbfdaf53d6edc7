// The bound of an app's Cache.GetItems, learned from its own answers, and the reading of the rows it returns.
import { LIMITS } from '../../../limits.js';
import type { CacheItem } from './shapes.js';

/**
 * Cache.GetItems answers with the app's whole object cache, every window's, in one reply (measured: idle,
 * LibreOffice with four documents: 7,510 objects in 1.1-1.3 s; past 5 s on two loaded cores), so its bound
 * scales with the app's own last answer: CACHE_SCALE times it, within CACHE_MIN_MS and CACHE_MAX_MS. One
 * not answered within its bound is not waited for: the walk reads the window live instead (walk.ts; the
 * same rows, and one LibreOffice window read live took 0.8-1.4 s), and the next bound is twice as long.
 */
const CACHE_MIN_MS = LIMITS.nativeCacheWaitMs;
const CACHE_MAX_MS = Math.max(CACHE_MIN_MS, 15_000);
const CACHE_SCALE = 4;
const clampCacheBound = (ms: number) => Math.round(Math.min(CACHE_MAX_MS, Math.max(CACHE_MIN_MS, ms)));

/** Each app's next Cache.GetItems bound, keyed by its unique bus name. */
export class CacheBounds {
  private readonly bounds = new Map<string, number>();

  private set(bus: string, ms: number): void {
    this.bounds.delete(bus);
    // Apps come and go over a long session: the oldest go first past this many.
    if (this.bounds.size >= 256) this.bounds.delete(this.bounds.keys().next().value!);
    this.bounds.set(bus, clampCacheBound(ms));
  }

  /** The bound of an app's next Cache.GetItems. */
  bound(bus: string): number {
    return this.bounds.get(bus) ?? CACHE_MIN_MS;
  }

  /** The app answered in `ms`: its next bound is CACHE_SCALE times that. */
  answeredIn(bus: string, ms: number): void {
    this.set(bus, ms * CACHE_SCALE);
  }

  /** Not answered within `bound`: the next bound is twice this one. */
  timedOut(bus: string, bound: number): void {
    this.set(bus, bound * 2);
  }
}

/** The rows of a GetItems reply: a((so)(so)(so)iiassusau). */
export function cacheRows(items: any[]): CacheItem[] {
  return items.map((row) => ({
    ref: { bus: row[0][0], path: row[0][1] },
    parent: { bus: row[2][0], path: row[2][1] },
    indexInParent: row[3],
    childCount: row[4],
    interfaces: row[5],
    name: row[6],
    role: row[7],
    states: [row[9][0] ?? 0, row[9][1] ?? 0],
  }));
}
