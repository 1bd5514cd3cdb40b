/**
 * Header fields: splitting a header block into fields, lookups, and (re-exported here so
 * callers need one import) encoded-words, addresses, dates and message ids.
 */
import type { HeaderField } from './types.js';

export { decodeWords } from './encoded-words.js';
export { parseAddressList, formatAddress, type Address } from './address.js';
export { parseDate } from './date.js';
export { parseMessageIds } from './message-ids.js';

/**
 * The name of the field whose line starts at `pos` (`Name: value`, obsolete `Name : value`
 * too), or undefined when the line is not a field. Stops at the first character that cannot
 * be part of a name, so a long line without a colon costs little.
 */
function fieldNameAt(text: string, pos: number, end: number): string | undefined {
  let i = pos;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 58) break;
    if (c === 32 || c === 9) {
      let k = i;
      while (k < end && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9)) k++;
      if (k < end && text.charCodeAt(k) === 58 && i > pos) return text.slice(pos, i);
      return undefined;
    }
    if (c < 33 || c > 126) return undefined;
  }
  return i < end && i > pos ? text.slice(pos, i) : undefined;
}

/** The name of a header line, or undefined when the line is not a field. */
export function fieldName(line: string): string | undefined {
  return fieldNameAt(line, 0, line.length);
}

function makeField(name: string, first: string, rest: string[] | undefined): HeaderField {
  let value = first.slice(first.indexOf(':') + 1);
  if (rest !== undefined) value += rest.join('');
  return { name, key: name.toLowerCase(), value: value.trim(), raw: rest === undefined ? first : `${first}\n${rest.join('\n')}` };
}

/** Rebuild a field from its (re-decoded) raw lines. */
export function fieldFromRaw(raw: string): HeaderField | undefined {
  const lines = raw.split('\n');
  const name = fieldName(lines[0]!);
  return name === undefined ? undefined : makeField(name, lines[0]!, lines.length > 1 ? lines.slice(1) : undefined);
}

/**
 * Scan header lines (LF or CRLF) into fields, up to the first blank line. With `stopAtJunk`,
 * a line that is neither a field nor a continuation also ends the scan; otherwise it is
 * skipped. `end` is the offset where the scan stopped (start of the blank or junk line).
 */
export function scanHeaderFields(text: string, stopAtJunk: boolean): { fields: HeaderField[]; end: number } {
  const fields: HeaderField[] = [];
  let name: string | undefined;
  let first = '';
  let rest: string[] | undefined;
  const push = (): void => {
    if (name !== undefined) fields.push(makeField(name, first, rest));
    name = undefined;
    rest = undefined;
  };
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl < 0) nl = text.length;
    const e = nl > pos && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
    if (e === pos) break;
    const c = text.charCodeAt(pos);
    if (c === 32 || c === 9) {
      if (name !== undefined) (rest ??= []).push(text.slice(pos, e));
      else if (stopAtJunk) break;
    } else {
      push();
      const found = fieldNameAt(text, pos, e);
      if (found !== undefined) {
        name = found;
        first = text.slice(pos, e);
      } else if (stopAtJunk) break;
    }
    pos = nl + 1;
  }
  push();
  return { fields, end: Math.min(pos, text.length) };
}

/**
 * Split a header block (LF or CRLF line breaks) into fields: unfolded values, original
 * lines kept in `raw`. Stops at the first blank line; lines that are neither a field nor a
 * continuation are skipped (the message parser ends the header block at such a line).
 */
export function parseHeaderBlock(block: string): HeaderField[] {
  return scanHeaderFields(block, false).fields;
}

/** The first field of that name (case-insensitive), or undefined. */
export function getHeader(headers: readonly HeaderField[], name: string): string | undefined {
  const key = name.toLowerCase();
  for (const h of headers) if (h.key === key) return h.value;
  return undefined;
}

/** Every field of that name, in order. */
export function getHeaders(headers: readonly HeaderField[], name: string): string[] {
  const key = name.toLowerCase();
  const out: string[] = [];
  for (const h of headers) if (h.key === key) out.push(h.value);
  return out;
}
