// The action drivers the latency section runs: one per column, same fixture pages, same checks.
import type { Sample } from '../stats.js';
import type { BenchContext, Column } from '../types.js';
import { closeTarget, listTargets } from '../cdp.js';

export interface ActionDriver {
  /** Median round trip of typing `text` into the empty #f of the input page, verified by read-back. */
  typeText(text: string): Promise<Sample>;
  /** Median round trip of clicking #b on the button page, verified by the counter. */
  click(): Promise<Sample>;
  /** Extra lines for the notes under the table. */
  notes(): string[];
  close(): Promise<void>;
}

export interface DriverFactory {
  column: Column;
  label: string;
  open(ctx: BenchContext): Promise<ActionDriver>;
}

/** Closes page targets that appeared since `before` (a phase's tabs), leaving the browser as it was. */
export async function closeNewPages(browserUrl: string, before: Set<string>): Promise<void> {
  const now = await listTargets(browserUrl).catch(() => []);
  for (const t of now) if (t.type === 'page' && !before.has(t.id)) await closeTarget(browserUrl, t.id);
}

export async function pageIds(browserUrl: string): Promise<Set<string>> {
  return new Set((await listTargets(browserUrl)).filter((t) => t.type === 'page').map((t) => t.id));
}

export const FIELD_VALUE = `document.getElementById('f').value`;
export const COUNT_VALUE = `Number(document.getElementById('count').textContent)`;

export function expectEqual<T>(what: string, got: T, want: T): void {
  if (got !== want) {
    const show = (v: T) =>
      typeof v === 'string' && v.length > 40 ? `${v.slice(0, 40)}… (${v.length} chars)` : JSON.stringify(v);
    throw new Error(`${what}: read back ${show(got)}, expected ${show(want)}`);
  }
}
