/**
 * BODYSTRUCTURE read on the narrow path (first-bytes.ts has the hook): the FETCH fetcher.ts asks
 * for the plans of large messages answers `* n FETCH (UID u [MODSEQ (m)] BODYSTRUCTURE (…))`.
 * imapflow reads it generically — token parser, a compile back to text for its log, a walk that
 * decodes every parameter and disposition — and that was the largest part of the client's CPU
 * per attachment message. This reads the same line into exactly the fields planMessage
 * (structure.ts) looks at, numbered and lower-cased as imapflow does; anything it does not know
 * for certain (a literal, 8-bit bytes, an encoded or continued boundary, another item) is left to
 * imapflow, so a plan never depends on which path read the answer.
 */
import type { MessageStructureObject } from 'imapflow';

/** A token of the response: an atom or string, NIL, or a parenthesized list. */
type Token = string | null | Token[];

/** One message's answer: the fields the plan needs. */
export interface StructureAnswer {
  uid: number;
  modseq?: bigint;
  bodyStructure: MessageStructureObject;
}

class Declined extends Error {}

const HEAD = /^\* \d{1,10} FETCH /;

const SPACE = 0x20;
const OPEN = 0x28;
const CLOSE = 0x29;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CURLY = 0x7b;
const CR = 0x0d;
const LF = 0x0a;

/** Whether `c` ends an atom: space, parenthesis, quote, `{` or a line break (NaN past the end does too). */
function endsAtom(c: number): boolean {
  return c === SPACE || c === OPEN || c === CLOSE || c === QUOTE || c === CURLY || c === CR || c === LF || Number.isNaN(c);
}

/**
 * The quoted string whose opening quote is at `text[at]`, unescaped, and where it ends. Runs
 * between escapes are sliced, not built a character at a time: a structure holds dozens of
 * strings. A line break or the end of the text inside it: Declined.
 */
function quoted(text: string, at: number): [string, number] {
  let value = '';
  let from = at + 1;
  for (let i = from; ; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return [value + text.slice(from, i), i + 1];
    if (Number.isNaN(c) || c === CR || c === LF) throw new Declined();
    if (c === BACKSLASH) {
      // The escaped character is taken as it is, whatever it is.
      if (i + 1 >= text.length) throw new Declined();
      value += text.slice(from, i) + text[i + 1]!;
      i++;
      from = i + 1;
    }
  }
}

/** The parenthesized list at `text[at]`, and where it ends. Throws Declined on anything unusual. */
function list(text: string, at: number): [Token[], number] {
  const out: Token[] = [];
  let i = at + 1;
  for (;;) {
    const c = text.charCodeAt(i);
    if (Number.isNaN(c)) throw new Declined();
    if (c === CLOSE) return [out, i + 1];
    if (c === SPACE) {
      i++;
    } else if (c === OPEN) {
      const [inner, end] = list(text, i);
      out.push(inner);
      i = end;
    } else if (c === QUOTE) {
      const [value, end] = quoted(text, i);
      out.push(value);
      i = end;
    } else {
      const start = i;
      while (!endsAtom(text.charCodeAt(i))) i++;
      if (i === start) throw new Declined(); // a literal, or a line break inside the response
      const atom = text.slice(start, i);
      out.push(atom.length === 3 && atom.toUpperCase() === 'NIL' ? null : atom);
    }
  }
}

const str = (t: Token | undefined): string => (typeof t === 'string' ? t : '');

/** The boundary as imapflow's parameter decoding gives it, or Declined where that decoding could change it. */
function boundaryOf(params: Token | undefined): string | undefined {
  if (params === null || params === undefined) return undefined;
  if (!Array.isArray(params)) throw new Declined();
  let boundary: string | undefined;
  for (let j = 0; j + 1 < params.length; j += 2) {
    const key = str(params[j]).toLowerCase();
    if (key.startsWith('boundary*')) throw new Declined();
    if (key === 'boundary') boundary = str(params[j + 1]);
  }
  if (boundary !== undefined && boundary.includes('=?')) throw new Declined();
  return boundary;
}

/** One body of the structure, as imapflow's parseBodystructure numbers and names it (the plan's fields only). */
function body(node: Token[], path: number[]): MessageStructureObject {
  const out: Partial<MessageStructureObject> & Record<string, unknown> = {};
  if (path.length > 0) out.part = path.join('.');
  let i = 0;
  if (Array.isArray(node[0])) {
    out.childNodes = [];
    for (let part = 1; Array.isArray(node[i]); i++, part++) out.childNodes.push(body(node[i] as Token[], [...path, part]));
    out.type = `multipart/${str(node[i++]).toLowerCase()}`;
    if (i < node.length) {
      const boundary = boundaryOf(node[i]);
      if (node[i] !== null) out.parameters = boundary === undefined ? {} : { boundary };
      i++;
    }
  } else {
    out.type = `${str(node[0]).toLowerCase()}/${str(node[1]).toLowerCase()}`;
    i = 5;
    if (node[i] !== null && node[i] !== undefined) out.encoding = str(node[i]).toLowerCase();
    i++;
    if (node[i] !== null && node[i] !== undefined) out.size = Number(str(node[i])) || 0;
    i++;
    if (out.type === 'message/rfc822') i += 3; // envelope, body, lines: the plan stops at the type
    if (out.type.startsWith('text/') && !(node.length === 11 && Array.isArray(node[i + 1]) && !Array.isArray(node[i + 2]))) i++;
    if (i < node.length) i++; // md5
  }
  if (i < node.length) {
    const disposition = node[i];
    if (Array.isArray(disposition) && disposition.length > 0) out.disposition = str(disposition[0]).toLowerCase();
  }
  return out as MessageStructureObject;
}

/** One message's BODYSTRUCTURE answer, or undefined when the response has any other shape. */
export function readStructure(payload: Buffer, literals: Buffer[]): StructureAnswer | undefined {
  if (literals.length !== 0 || payload.length > 65_536) return undefined;
  const text = payload.toString('latin1');
  const head = HEAD.exec(text);
  // eslint-disable-next-line no-control-regex
  if (head === null || text[head[0].length] !== '(' || /[^\x00-\x7f]/.test(text)) return undefined;
  try {
    const [items, end] = list(text, head[0].length);
    if (end !== text.length || items.length % 2 !== 0) return undefined;
    let uid: number | undefined;
    let modseq: bigint | undefined;
    let structure: Token[] | undefined;
    for (let j = 0; j < items.length; j += 2) {
      const key = str(items[j]).toUpperCase();
      const value = items[j + 1];
      if (key === 'UID' && typeof value === 'string' && /^\d{1,10}$/.test(value)) uid = Number(value);
      else if (key === 'MODSEQ' && Array.isArray(value) && typeof value[0] === 'string' && /^\d{1,20}$/.test(value[0]))
        modseq = BigInt(value[0]);
      else if (key === 'BODYSTRUCTURE' && Array.isArray(value)) structure = value;
      else return undefined;
    }
    if (uid === undefined || uid < 1 || structure === undefined) return undefined;
    return { uid, ...(modseq === undefined ? {} : { modseq }), bodyStructure: body(structure, []) };
  } catch (err) {
    if (err instanceof Declined || err instanceof RangeError) return undefined;
    throw err;
  }
}
