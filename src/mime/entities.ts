/**
 * HTML character references, decoded as an HTML parser decodes text: every named reference of
 * the HTML standard (the `entities` package's table), the legacy ones without `;` (`&amp`,
 * `&copy`) where HTML accepts them, decimal and hex. Numeric references in the C1 range mean
 * their Windows-1252 characters, as in browsers (`&#150;` is an en dash). An unknown `&foo;`
 * stays as written.
 *
 * For text extraction, named spaces (`&nbsp;`, `&ensp;`, `&emsp;`, `&thinsp;`) become a plain
 * space and named invisible format characters (`&shy;`, `&zwnj;`, `&zwj;`, `&lrm;`, `&rlm;`,
 * `&ZeroWidthSpace;`) become nothing.
 */
import { createRequire } from 'node:module';

type Entities = typeof import('entities/decode');

const SPACES = new Set([0xa0, 0x2002, 0x2003, 0x2009]);
const INVISIBLE = new Set([0xad, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f]);

// One decoder for the process, fed one reference at a time: no allocation per call beyond the result.
// A named reference outside the BMP arrives as its two UTF-16 halves, a numeric one as one code point.
let out = '';
let named = false;

/**
 * The decoder, made on the first text holding a `&`: loading the package builds its table of
 * references (a few ms), which a parse worker whose mail has none never needs.
 */
let loaded: { decoder: InstanceType<Entities['HtmlEntityDecoder']>; legacy: Entities['DecodingMode']['Legacy'] } | undefined;

function entities(): NonNullable<typeof loaded> {
  if (loaded !== undefined) return loaded;
  const { DecodingMode, HtmlEntityDecoder } = createRequire(import.meta.url)('entities/decode') as Entities;
  const decoder = new HtmlEntityDecoder((cp: number) => {
    out += named && SPACES.has(cp) ? ' ' : named && INVISIBLE.has(cp) ? '' : String.fromCodePoint(cp);
  });
  return (loaded = { decoder, legacy: DecodingMode.Legacy });
}

export function decodeEntities(text: string): string {
  let at = text.indexOf('&');
  if (at < 0) return text;
  const { decoder, legacy } = entities();
  let last = 0;
  while (at >= 0) {
    out += text.slice(last, at);
    named = text.charCodeAt(at + 1) !== 0x23; // '#'
    decoder.startEntity(legacy);
    const length = decoder.write(text, at + 1);
    if (length < 0) {
      // The text ended inside a reference: what it holds so far is decoded or kept.
      last = at + decoder.end();
      break;
    }
    last = at + length;
    // 0: not a reference; the `&` stays and the search goes on after it.
    at = text.indexOf('&', length === 0 ? last + 1 : last);
  }
  const result = out + text.slice(last);
  out = '';
  return result;
}
