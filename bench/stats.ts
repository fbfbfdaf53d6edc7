// Timing helpers: warmups, warm iterations, median.
import type { BenchConfig } from './types.js';

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface Sample {
  median: number;
  min: number;
  max: number;
  n: number;
}

/**
 * Runs `prepare` (untimed) then `act` (timed) then `check` (untimed) warmup+iterations times;
 * returns stats over the warm iterations only. `act` returns whatever `check` needs.
 */
export async function measure<T>(
  config: BenchConfig,
  step: {
    prepare?: (i: number) => Promise<void>;
    act: (i: number) => Promise<T>;
    check?: (result: T, i: number) => Promise<void>;
  },
): Promise<Sample> {
  const times: number[] = [];
  const total = config.warmup + config.iterations;
  for (let i = 0; i < total; i++) {
    if (step.prepare) await step.prepare(i);
    const t0 = performance.now();
    const result = await step.act(i);
    const dt = performance.now() - t0;
    if (step.check) await step.check(result, i);
    if (i >= config.warmup) times.push(dt);
  }
  return { median: median(times), min: Math.min(...times), max: Math.max(...times), n: times.length };
}

export function describe(s: Sample): string {
  return `median of ${s.n}, min ${s.min.toFixed(1)}, max ${s.max.toFixed(1)}`;
}

/** One side of a measurement taken in turns (see `measureInTurns`). */
export interface Side<T = unknown> {
  prepare?: () => Promise<void>;
  act: () => Promise<T>;
  check?: (result: T) => Promise<void>;
}

export interface TurnsResult {
  /** Per side, over the warm iterations. */
  samples: Sample[];
  /** Per side, the median of each block of `block` calls from the first: how it warmed up. */
  curve: number[][];
}

/**
 * Times several sides in turns, one call of each per round, so that every side sees the same machine at
 * the same moment (a shared VM's speed drifts by a fifth over seconds; blocks run one after another would
 * put that drift into the ratio). Each round starts with the next side: where a call falls in the round
 * matters too (two identical servers measured 0.02-0.13 ms apart by their places). Warm-up rounds first,
 * then the measured rounds.
 */
export async function measureInTurns(config: BenchConfig, sides: Side<any>[], block = 100): Promise<TurnsResult> {
  const all: number[][] = sides.map(() => []);
  const total = config.warmup + config.iterations;
  for (let i = 0; i < total; i++) {
    for (let turn = 0; turn < sides.length; turn++) {
      const k = (i + turn) % sides.length;
      const side = sides[k]!;
      if (side.prepare) await side.prepare();
      const t0 = performance.now();
      const result = await side.act();
      all[k]!.push(performance.now() - t0);
      if (side.check) await side.check(result);
    }
  }
  const samples = all.map((times) => {
    const warm = times.slice(config.warmup);
    return { median: median(warm), min: Math.min(...warm), max: Math.max(...warm), n: warm.length };
  });
  const curve = all.map((times) => {
    const medians: number[] = [];
    for (let at = 0; at < times.length; at += block) medians.push(median(times.slice(at, at + block)));
    return medians;
  });
  return { samples, curve };
}
