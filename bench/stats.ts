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
