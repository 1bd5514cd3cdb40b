/**
 * The element names htmlToText acts on, recognised in place: a tag's name is read from the
 * document by its character codes, case folded as it is read, and looked up by a hash of them,
 * so no copy of the name is made and no lower-cased string is built for each tag. Any other
 * name (most of a real document's tags: `span`, `font`, `a`, `img`) is no element of the table.
 */

/** Elements that end a paragraph (a blank line before and after). */
export const PARAGRAPH = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'dl', 'table', 'pre', 'blockquote', 'figure']);
/** Elements that end a line. */
export const LINE = new Set([
  'div',
  'tr',
  'li',
  'dt',
  'dd',
  'section',
  'article',
  'header',
  'footer',
  'nav',
  'aside',
  'main',
  'form',
  'address',
  'center',
  'fieldset',
  'legend',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'figcaption',
  'details',
  'summary',
  'body',
  'html',
]);
/** Elements dropped with their content. */
export const SKIP = new Set(['script', 'style', 'head', 'title', 'template', 'noscript', 'xml', 'svg', 'object']);
/** Elements with a rule of their own (line break, rule, table cell). */
const OWN_RULE = ['br', 'hr', 'td', 'th'];

/** A known element: its lower-case name (an interned constant) and the sets it is in. */
export interface KnownTag {
  name: string;
  paragraph: boolean;
  line: boolean;
  skip: boolean;
}

/** Names are `[a-zA-Z][a-zA-Z0-9:-]*`: `| 0x20` lower-cases A-Z and leaves every other allowed character as it is. */
function fold(c: number): number {
  return c | 0x20;
}

function hashOf(text: string, start: number, end: number): number {
  let h = end - start;
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + fold(text.charCodeAt(i))) | 0;
  return h;
}

const BY_HASH = new Map<number, KnownTag>();
let longest = 0;
for (const name of new Set([...PARAGRAPH, ...LINE, ...SKIP, ...OWN_RULE])) {
  const h = hashOf(name, 0, name.length);
  const other = BY_HASH.get(h);
  if (other !== undefined) throw new Error(`element names ${other.name} and ${name} share a hash`);
  BY_HASH.set(h, { name, paragraph: PARAGRAPH.has(name), line: LINE.has(name), skip: SKIP.has(name) });
  longest = Math.max(longest, name.length);
}

/** The known element whose name is `text[start, end)` in any case, or undefined. */
export function knownTag(text: string, start: number, end: number): KnownTag | undefined {
  if (end - start > longest) return undefined;
  const known = BY_HASH.get(hashOf(text, start, end));
  if (known === undefined || known.name.length !== end - start) return undefined;
  for (let k = 0; k < known.name.length; k++) if (fold(text.charCodeAt(start + k)) !== known.name.charCodeAt(k)) return undefined;
  return known;
}
