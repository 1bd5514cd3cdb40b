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
