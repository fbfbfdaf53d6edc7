// Chrome's accessibility roles and Verity's role words. Chrome's tree speaks ARIA's words (lowercase:
// "textbox", "checkbox") and, for what ARIA has no word for, its own internal names (capitalized:
// "Iframe", "Date", "DateTime", "ColorWell", "InputTime", "DisclosureTriangle"). Verity lists ARIA's words
// as Chrome gives them and, for the rest, the word a model reads (the <input> type: "date", "month").

/** Chrome's internal role names and the Verity words each may stand for (first: the usual one). */
export const CHROME_ROLE_WORDS: Readonly<Record<string, readonly string[]>> = {
  Iframe: ['iframe'],
  IframePresentational: ['iframe'],
  DisclosureTriangle: ['button'], // <summary>: pressed to open its <details>
  Date: ['date'],
  DateTime: ['datetime-local', 'month', 'week'],
  InputTime: ['time'],
  ColorWell: ['color'],
};

/** Roles that say nothing about what an element does: Verity's own word stands (a clickable, an editor). */
export function saysNothing(chromeRole: string): boolean {
  return /^(generic|none|presentation|GenericContainer|Unknown|)$/.test(chromeRole);
}

/**
 * The role Verity lists for an element the page agent named `agentRole` and Chrome's tree `chromeRole`:
 * Chrome's ARIA word (ElementInternals, a role only the tree knows), else the agent's word, which already
 * is Verity's word for Chrome's internal ones.
 */
export function mergedRole(agentRole: string, chromeRole: unknown): string {
  if (typeof chromeRole !== 'string' || saysNothing(chromeRole) || /^[A-Z]/.test(chromeRole)) return agentRole;
  return chromeRole;
}
