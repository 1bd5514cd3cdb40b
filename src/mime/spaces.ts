/** What `\s` matches (and what `String.prototype.trim` removes), tested without a regex. */

/**
 * What `\s` matches (ECMAScript WhiteSpace and LineTerminator): the set the text rules collapse,
 * tested against the regex for every UTF-16 code unit.
 */
export function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Whether `\s` matches the character at `i` (false past the end). */
export function spaceAt(s: string, i: number): boolean {
  return isSpace(s.charCodeAt(i));
}

/** Whether `s` holds a character that `\s` matches (the printable ASCII most text is made of is passed over without a call). */
export function hasSpace(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c <= 32 || c >= 0xa0) && isSpace(c)) return true;
  }
  return false;
}

/** Whether `s.replace(/\s+/g, ' ')` would change `s`: a whitespace character other than a lone space. */
export function needsSpaceCollapse(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 32 ? spaceAt(s, i + 1) : spaceAt(s, i)) return true;
  return false;
}
