/**
 * From a message's BODYSTRUCTURE, decide what crosses the wire: the whole source, or only the
 * header, the MIME headers of every part, the content of text parts and small parts, and a
 * short tail of each large base64 attachment (enough to compute its decoded size exactly).
 */
import type { FetchBodyPartQuery, MessageStructureObject } from 'imapflow';

/** Messages smaller than this are fetched whole without asking for their structure first. */
export const PIECES_MIN_MESSAGE_BYTES = 32_768;
/**
 * Bytes of every source asked for together with the sizes: a message this small is complete
 * in that first FETCH; a larger one costs at most this much extra on the wire.
 */
export const FIRST_FETCH_SOURCE_BYTES = 8192;
/** Attachments smaller than this (encoded octets) are fetched whole rather than stubbed. */
export const STUB_MIN_BYTES = 8192;
/** Bytes fetched from the end of a stubbed part: the last line, the one before, and slack. */
export const TAIL_BYTES = 512;
/** Asked past the expected end, so that reaching the end of the part is visible (answer shorter than asked). */
export const TAIL_ASK = TAIL_BYTES + 64;
/** Bytes fetched from the start of a stubbed part: proves the first lines have the common length. */
export const HEAD_BYTES = 256;
/** More leaf parts than this: fetch the whole source (one round trip beats a huge FETCH list). */
export const MAX_PIECE_PARTS = 256;

export interface MultipartNode {
  kind: 'multipart';
  /** IMAP part number; undefined for the message itself. */
  part: string | undefined;
  boundary: string;
  children: PlanNode[];
}

export interface LeafNode {
  kind: 'leaf';
  part: string;
  /** `content`: fetch the part body as is; `stub`: omit it, fetch only a tail to size it. */
  fetch: 'content' | 'stub';
  /** Encoded size (octets) from BODYSTRUCTURE. */
  size: number;
}

export type PlanNode = MultipartNode | LeafNode;

export type MessagePlan = { mode: 'source'; reason: string } | { mode: 'pieces'; root: MultipartNode; stubs: number };

function lower(v: string | undefined): string {
  return (v ?? '').toLowerCase();
}

function isBodyText(node: MessageStructureObject): boolean {
  const type = lower(node.type);
  return (type === 'text/plain' || type === 'text/html') && lower(node.disposition) !== 'attachment';
}

class Unplannable extends Error {}

function planNode(node: MessageStructureObject, counter: { leaves: number; stubs: number }): PlanNode {
  const type = lower(node.type);
  if (type.startsWith('multipart/')) {
    const boundary = node.parameters?.['boundary'];
    const children = node.childNodes ?? [];
    if (boundary === undefined || boundary === '' || children.length === 0) throw new Unplannable(`multipart without boundary or parts`);
    return { kind: 'multipart', part: node.part, boundary, children: children.map((c) => planNode(c, counter)) };
  }
  // An attached message would need its own reconstruction: take the whole source instead.
  if (type.startsWith('message/')) throw new Unplannable(`contains ${type}`);
  if (node.part === undefined || typeof node.size !== 'number' || !Number.isInteger(node.size) || node.size < 0) {
    throw new Unplannable('part without number or size');
  }
  counter.leaves += 1;
  const stub = !isBodyText(node) && lower(node.encoding) === 'base64' && node.size >= STUB_MIN_BYTES;
  if (stub) counter.stubs += 1;
  return { kind: 'leaf', part: node.part, fetch: stub ? 'stub' : 'content', size: node.size };
}

export function planMessage(structure: MessageStructureObject | undefined): MessagePlan {
  if (structure === undefined) return { mode: 'source', reason: 'no BODYSTRUCTURE' };
  if (!lower(structure.type).startsWith('multipart/')) return { mode: 'source', reason: 'single part' };
  const counter = { leaves: 0, stubs: 0 };
  let root: PlanNode;
  try {
    root = planNode(structure, counter);
  } catch (err) {
    if (err instanceof Unplannable) return { mode: 'source', reason: err.message };
    throw err;
  }
  if (root.kind !== 'multipart') return { mode: 'source', reason: 'single part' };
  if (counter.stubs === 0) return { mode: 'source', reason: 'nothing to omit' };
  if (counter.leaves > MAX_PIECE_PARTS) return { mode: 'source', reason: 'too many parts' };
  return { mode: 'pieces', root: { ...root, part: undefined }, stubs: counter.stubs };
}

/** Where a part's content starts: after the blank line ending its header (at once when it has none); -1 when not in `text`. */
function contentStart(text: string, from: number): number {
  if (text.startsWith('\r\n', from)) return from + 2;
  if (text.startsWith('\n', from)) return from + 1;
  const crlf = text.indexOf('\r\n\r\n', from);
  const lf = text.indexOf('\n\n', from);
  if (crlf !== -1 && (lf === -1 || crlf < lf)) return crlf + 4;
  return lf === -1 ? -1 : lf + 2;
}

/** Start of the next line that begins with the delimiter `--boundary`, from `from`; -1 when none in `text`. */
function delimiterAt(text: string, delimiter: string, from: number): number {
  for (let i = text.indexOf(delimiter, from); i !== -1; i = text.indexOf(delimiter, i + 1)) {
    if (i === 0 || text[i - 1] === '\n') return i;
  }
  return -1;
}

function headsIn(node: MultipartNode, text: string, from: number, buf: Buffer, out: Map<string, Buffer>): void {
  const delimiter = `--${node.boundary}`;
  let at = delimiterAt(text, delimiter, from);
  for (const child of node.children) {
    if (at === -1) return;
    const eol = text.indexOf('\n', at);
    if (eol === -1) return;
    const next = delimiterAt(text, delimiter, eol + 1);
    const end = next === -1 ? text.length : next;
    const start = contentStart(text, eol + 1);
    if (start !== -1 && start <= end) {
      if (child.kind === 'multipart') headsIn(child, text.slice(0, end), start, buf, out);
      else if (child.fetch === 'stub' && start + HEAD_BYTES <= end) out.set(child.part, buf.subarray(start, start + HEAD_BYTES));
    }
    at = next;
  }
}

/**
 * The heads of stubbed parts that lie within the first bytes of the source (fetched with the
 * sizes anyway): part number → the first HEAD_BYTES of its content, the bytes
 * `BODY[<part>]<0.HEAD_BYTES>` would return. Usually the text comes first and the attachment's
 * head is in the first few KiB, so no FETCH is needed for it. A part not found is left out
 * (its head is fetched); a wrong window cannot pass the base64 line check (assemble.ts).
 */
export function headsFromPrefix(root: MultipartNode, prefix: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const text = prefix.toString('latin1');
  const body = contentStart(text, 0);
  if (body !== -1) headsIn(root, text, body, prefix, out);
  return out;
}

/** Part numbers of the stubbed parts (their heads are fetched separately: see fetcher.ts). */
export function stubParts(root: MultipartNode): string[] {
  const out: string[] = [];
  const walk = (node: PlanNode): void => {
    if (node.kind === 'multipart') node.children.forEach(walk);
    else if (node.fetch === 'stub') out.push(node.part);
  };
  walk(root);
  return out;
}

/**
 * The FETCH body sections a pieces plan needs besides BODY.PEEK[HEADER]: every MIME header,
 * the content of fetched parts, the tail of stubbed ones. (The head of a stubbed part comes in
 * another FETCH: imapflow files two partial answers of one section under the same key.)
 */
export function sectionsFor(root: MultipartNode): FetchBodyPartQuery[] {
  const out: FetchBodyPartQuery[] = [];
  const walk = (node: PlanNode): void => {
    if (node.part !== undefined) out.push({ key: `${node.part}.MIME` });
    if (node.kind === 'multipart') {
      node.children.forEach(walk);
    } else if (node.fetch === 'content') {
      out.push({ key: node.part });
    } else {
      const start = Math.max(0, node.size - TAIL_BYTES);
      out.push({ key: node.part, start, maxLength: TAIL_ASK });
    }
  };
  walk(root);
  return out;
}
