/**
 * Characters that a line-based reader or a terminal treats as structure, found in text read from
 * mail: U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR (JSON allows them raw inside
 * strings, but JavaScript and many line readers end a line there, so one record becomes two) and
 * the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069: an override
 * shows `gpj.exe` as `exe.jpg` and reorders whatever follows it on the line).
 */

/** The line separators and the Unicode Bidi_Control characters. */
export const LINE_AND_BIDI_RE = /[\u2028\u2029\p{Bidi_Control}]/gu;
const HAS_LINE_OR_BIDI = /[\u2028\u2029\p{Bidi_Control}]/u;

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * The text with those characters as `\uXXXX` escapes. In JSON text they can only stand inside
 * strings, where the escape means the same character: a JSON reader sees the same value, and the
 * line is one line with nothing that reorders it. In text for a terminal the escape is visible.
 */
export function escapeLineAndBidi(text: string): string {
  return HAS_LINE_OR_BIDI.test(text) ? text.replace(LINE_AND_BIDI_RE, escape) : text;
}
