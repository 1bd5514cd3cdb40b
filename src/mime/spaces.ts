/** What `\s` matches, tested without a regex for ASCII (the regex decides only above it). */

const SPACE_RE = /\s/;

/** Whether `\s` matches the character at `i` (false past the end). */
export function spaceAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c === 32 || (c >= 9 && c <= 13) || (c > 0x7f && SPACE_RE.test(s[i]!));
}

/** Whether `s` holds a character that `\s` matches. */
export function hasSpace(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (spaceAt(s, i)) return true;
  return false;
}

/** Whether `s.replace(/\s+/g, ' ')` would change `s`: a whitespace character other than a lone space. */
export function needsSpaceCollapse(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 32 ? spaceAt(s, i + 1) : spaceAt(s, i)) return true;
  return false;
}
