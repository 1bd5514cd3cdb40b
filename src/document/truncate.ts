/** Cutting text to a character limit without splitting a surrogate pair or, where possible, a line or word. */

/** How far back from the limit a line break or whitespace is looked for before cutting hard. */
export const BREAK_WINDOW = 1024;

/** The largest cut <= limit that does not split a surrogate pair. */
export function safeCut(text: string, limit: number): number {
  if (text.length <= limit) return text.length;
  const c = text.charCodeAt(limit - 1);
  return c >= 0xd800 && c <= 0xdbff ? limit - 1 : limit;
}

/**
 * Text of at most `limit` characters: cut at the last line break within the final
 * BREAK_WINDOW characters before the limit, else at the last whitespace there, else at the
 * limit itself (moved back one character rather than split a surrogate pair).
 * Trailing whitespace at the cut is removed.
 */
export function truncateText(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const hard = safeCut(text, limit);
  const floor = Math.max(0, hard - BREAK_WINDOW);
  const nl = text.lastIndexOf('\n', hard);
  let cut = nl >= floor && nl > 0 ? nl : -1;
  if (cut < 0) {
    for (let i = hard; i > floor; i--) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9) {
        cut = i;
        break;
      }
    }
  }
  // trimEnd, not /\s+$/: that regex retries every whitespace run and is quadratic on a long one.
  return text.slice(0, cut > 0 ? cut : hard).trimEnd();
}

/** HTML of at most `limit` characters, never ending inside a tag: cut at the limit, then before a dangling `<`. */
export function truncateHtml(html: string, limit: number): string {
  if (html.length <= limit) return html;
  const cut = html.slice(0, safeCut(html, limit));
  const open = cut.lastIndexOf('<');
  return open > cut.lastIndexOf('>') ? cut.slice(0, open) : cut;
}

/** A field (attachment name, content type) of at most `limit` characters; names keep a short extension. */
export function truncateField(value: string, limit: number, keepExtension: boolean): string {
  if (value.length <= limit) return value;
  const dot = value.lastIndexOf('.');
  const ext = keepExtension && dot > 0 && value.length - dot <= 16 ? value.slice(dot) : '';
  const stem = value.slice(0, safeCut(value, limit - ext.length));
  return stem + ext;
}
