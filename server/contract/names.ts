// Names an agent chooses (session labels, recording folders, theme ids, pane keys) and its client's name
// are shown to operators as they are: a name is plain text, or a label could be made to read as something
// the operator wrote (a right-to-left override turning "txt.exe" around, a NUL or a newline that starts a
// fake line, a zero-width character that makes two labels look the same). Pure: unit-tested.

/**
 * Controls (Cc), format characters (Cf: bidi overrides and isolates, zero-width spaces and joiners, the
 * byte-order mark, soft hyphen) and the line and paragraph separators (Zl, Zp).
 */
const NOT_PLAIN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** Why `text` is not plain text (the first such character, as U+XXXX, and where), or null when it is. */
export function notPlain(text: string): string | null {
  const match = NOT_PLAIN.exec(text);
  if (!match) return null;
  const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  const kind = /\p{Cc}/u.test(match[0])
    ? 'a control character'
    : /\p{Cf}/u.test(match[0])
      ? 'a format (bidi or zero-width) character'
      : 'a line or paragraph separator';
  return `must be plain text: it holds U+${code} (${kind}) at position ${match.index}`;
}

/** `text` with every character that is not plain replaced by U+FFFD, for names that are shown but not refused. */
export function plainOf(text: string): string {
  return text.replace(new RegExp(NOT_PLAIN.source, 'gu'), '\uFFFD');
}
