// How many characters one call may type as synthesized keystrokes: both native backends bound a type_text by
// the same budget, so a text refused on one is refused on the other.

/** How long a synthesized keystroke route may take in one call (the transport's budget), and per-key cost. */
export const SYNTHESIS_BUDGET_MS = 10_000;
export const PER_KEY_OVERHEAD_MS = 4;

/** The most characters one call types at `delayMs` between keys within the budget. */
export function maxChunkChars(delayMs: number): number {
  return Math.max(1, Math.floor(SYNTHESIS_BUDGET_MS / (delayMs + PER_KEY_OVERHEAD_MS)));
}
