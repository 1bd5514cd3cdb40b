/**
 * Rebuilds an RFC 5322 message from the pieces a "pieces" plan fetched: the header, the MIME
 * header of every part, the content of text and small parts; each omitted attachment becomes
 * a stub part that keeps its original MIME header plus the marker
 *
 *     X-Mailgate-Omitted-Size: <decoded bytes>
 *
 * and has an empty body. mailgate's parser reports the marker's value as the attachment
 * size, so the document is the same as from the full source (docs/imap.md, "Stub parts").
 */
import type { LeafNode, MultipartNode, PlanNode } from './structure.js';
import { TAIL_ASK, TAIL_BYTES } from './structure.js';

export const OMITTED_SIZE_HEADER = 'X-Mailgate-Omitted-Size';

export class AssembleError extends Error {}

/**
 * Whether `line` is base64 text: letters, digits, `+` and `/`, then at most two `=` (what
 * /^[A-Za-z0-9+/]*={0,2}$/ accepts, without a regular expression run per line).
 */
function isBase64Line(line: string): boolean {
  let i = 0;
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i);
    const alphabet = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f;
    if (!alphabet) break;
  }
  const pad = line.length - i;
  if (pad > 2) return false;
  for (; i < line.length; i++) if (line.charCodeAt(i) !== 0x3d) return false;
  return true;
}

/** Decoded size of a base64 body whose lines all have the same length, from its head and tail. */
export function base64DecodedSize(head: Buffer, tail: Buffer, tailStart: number, tailAsked: number): number | undefined {
  if (tail.length >= tailAsked) return undefined; // the end of the part was not reached
  const end = tailStart + tail.length;
  const tailText = tail.toString('latin1');
  const trimmed = tailText.replace(/[\r\n\t ]+$/, '');
  const contentEnd = end - (tailText.length - trimmed.length);
  if (tailStart === 0) return wholeSize(trimmed);
  const sep = trimmed.includes('\r\n') ? '\r\n' : '\n';
  const tailLines = trimmed.split(sep);
  // tailLines[0] may start mid-line; the last line is the (possibly short) final one.
  if (tailLines.length < 3) return undefined;
  const last = tailLines[tailLines.length - 1] ?? '';
  const full = tailLines.slice(1, -1);
  const lineLen = full[0]?.length ?? 0;
  if (lineLen === 0 || full.some((l) => l.length !== lineLen || !isBase64Line(l))) return undefined;
  if (!isBase64Line(last) || last.length > lineLen) return undefined;
  const headLines = head.toString('latin1').split(sep).slice(0, -1); // complete lines only
  if (headLines.length === 0 || headLines.some((l) => l.length !== lineLen || !isBase64Line(l))) return undefined;
  const fullBytes = contentEnd - last.length;
  if (fullBytes % (lineLen + sep.length) !== 0) return undefined;
  const chars = (fullBytes / (lineLen + sep.length)) * lineLen + last.length;
  return charsToBytes(chars, last);
}

function wholeSize(text: string): number | undefined {
  const compact = text.replace(/[\r\n\t ]+/g, '');
  if (!isBase64Line(compact)) return undefined;
  return charsToBytes(compact.length, compact);
}

function charsToBytes(chars: number, ending: string): number | undefined {
  if (chars % 4 !== 0) return undefined;
  const pad = ending.endsWith('==') ? 2 : ending.endsWith('=') ? 1 : 0;
  return (chars / 4) * 3 - pad;
}

/** Fetched sections by lowercase part key ("2", "2.mime"); heads of stubbed parts apart. */
interface Pieces {
  get(key: string): Buffer | undefined;
  head(part: string): Buffer | undefined;
}

function pieces(parts: Map<string, Buffer> | undefined, heads: Map<string, Buffer> | undefined): Pieces {
  const norm = new Map<string, Buffer>();
  for (const [k, v] of parts ?? []) norm.set(k.toLowerCase(), v);
  return { get: (key) => norm.get(key.toLowerCase()), head: (part) => heads?.get(part) };
}

const CRLF = Buffer.from('\r\n');

/** The MIME header without its trailing line breaks (every trailing CRLF or LF), then the marker and a blank line. */
function withMarker(mimeHeader: Buffer, size: number): Buffer {
  let end = mimeHeader.length;
  while (end > 0 && mimeHeader[end - 1] === 0x0a) {
    end -= 1;
    if (end > 0 && mimeHeader[end - 1] === 0x0d) end -= 1;
  }
  if (end === mimeHeader.length) throw new AssembleError('MIME header without terminating blank line');
  return Buffer.concat([mimeHeader.subarray(0, end), Buffer.from(`\r\n${OMITTED_SIZE_HEADER}: ${size}\r\n\r\n`)]);
}

function leaf(node: LeafNode, get: Pieces, out: Buffer[]): void {
  const mime = get.get(`${node.part}.mime`);
  if (mime === undefined) throw new AssembleError(`part ${node.part}: MIME header missing`);
  if (node.fetch === 'content') {
    const content = get.get(node.part);
    if (content === undefined) throw new AssembleError(`part ${node.part}: content missing`);
    out.push(mime, content);
    return;
  }
  const tailStart = Math.max(0, node.size - TAIL_BYTES);
  const head = get.head(node.part);
  const tail = get.get(node.part);
  if (head === undefined || tail === undefined) throw new AssembleError(`part ${node.part}: head or tail missing`);
  const size = base64DecodedSize(head, tail, tailStart, TAIL_ASK);
  if (size === undefined) throw new AssembleError(`part ${node.part}: base64 size not computable`);
  out.push(withMarker(mime, size));
}

function multipart(node: MultipartNode, header: Buffer, get: Pieces, out: Buffer[]): void {
  if (!/\r?\n\r?\n$/.test(header.subarray(-4).toString('latin1'))) throw new AssembleError('header without terminating blank line');
  out.push(header);
  for (const child of node.children) {
    out.push(Buffer.from(`--${node.boundary}\r\n`, 'latin1'));
    walk(child, get, out);
    out.push(CRLF);
  }
  out.push(Buffer.from(`--${node.boundary}--\r\n`, 'latin1'));
}

function walk(node: PlanNode, get: Pieces, out: Buffer[]): void {
  if (node.kind === 'leaf') return leaf(node, get, out);
  const header = get.get(`${node.part}.mime`);
  if (header === undefined) throw new AssembleError(`part ${node.part}: MIME header missing`);
  multipart(node, header, get, out);
}

/** The synthesized message. Throws AssembleError when a piece is missing or unusable. */
export function assemble(
  root: MultipartNode,
  header: Buffer | undefined,
  parts: Map<string, Buffer> | undefined,
  heads: Map<string, Buffer> | undefined,
): Buffer {
  if (header === undefined) throw new AssembleError('message header missing');
  const out: Buffer[] = [];
  multipart(root, header, pieces(parts, heads), out);
  return Buffer.concat(out);
}
