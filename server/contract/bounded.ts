import { Refusal } from './refusal.js';

/** Runs `work`, refusing with `timeout` (naming what was awaited) if it takes longer than `ms`. */
export async function bounded<T>(work: Promise<T>, ms: number, waitingFor: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Refusal('timeout', `gave up after ${ms} ms waiting for ${waitingFor}`, { retryable: true })),
      ms,
    );
  });
  try {
    return await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}
